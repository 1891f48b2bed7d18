//! Admission for PersistentPodState (upstream `pkg/webhook/persistentpodstate/validating`,
//! `vpersistentpodstate.kb.io`): CREATE and UPDATE at both served versions are checked with
//! `kruise_crds::validation::validate_persistentpodstate_{v1alpha1,v1beta1}_with_whitelist`
//! (a complete targetRef to a StatefulSet or a kind of `PPS_Watch_Custom_Workload_WhiteList`,
//! at least one topology, an immutable targetRef), and, as upstream, a second
//! PersistentPodState targeting the workload another one in the namespace already targets is
//! refused. A refusal is a 422 naming every field.
//!
//! The decision is a pure function of the request and of [`PersistentPodStateLookups`], which
//! the server reads beforehand (the other PersistentPodStates of the namespace and the white
//! list).

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    field::{ErrorList, FieldError, FieldPath, quoted},
    resource::APPS_GROUP,
    validation::{
        validate_persistentpodstate_v1alpha1_with_whitelist,
        validate_persistentpodstate_v1beta1_with_whitelist,
    },
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::admission::{allowed, check, errored, invalid, object_value, object_version};
use crate::persistentpodstate::core::{WhiteList, same_target};

/// The kind's name.
const KIND: &str = "PersistentPodState";

/// What validation reads from the cluster.
#[derive(Clone, Debug, Default)]
pub struct PersistentPodStateLookups {
    /// The PersistentPodStates of the request's namespace.
    pub others: Vec<v1beta1::PersistentPodState>,
    /// `PPS_Watch_Custom_Workload_WhiteList` of `kruise-configuration`.
    pub whitelist: WhiteList,
}

/// The conflict with another PersistentPodState of the namespace targeting the same workload
/// (upstream `validatePerConflict`; the object itself, by name, does not count).
pub fn conflicts(
    name: &str,
    target: &v1beta1::TargetReference,
    others: &[v1beta1::PersistentPodState],
) -> ErrorList {
    others
        .iter()
        .filter(|other| other.metadata.name.as_deref() != Some(name))
        .find(|other| same_target(target, &other.spec.target_reference))
        .map(|other| {
            let path = FieldPath::root("spec").child("targetRef");
            let value = quoted(&format!("{}/{}/{}", target.api_version, target.kind, target.name));
            let detail = format!(
                "targetRef is in conflict with other PersistentPodState {}",
                other.metadata.name.as_deref().unwrap_or_default()
            );
            vec![FieldError::invalid(&path, value, detail)]
        })
        .unwrap_or_default()
}

/// The validating webhook.
pub fn validate(
    request: &AdmissionRequest<DynamicObject>,
    lookups: &PersistentPodStateLookups,
) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old.filter(|_| request.operation == Operation::Update)),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let name = raw.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(&request.name).to_string();
    let custom = lookups.whitelist.group_kinds();
    let errors = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => check::<v1beta1::PersistentPodState>(KIND, &raw, old.as_ref(), |object, old| {
            let mut errors = validate_persistentpodstate_v1beta1_with_whitelist(object, old, &custom);
            errors.extend(conflicts(&name, &object.spec.target_reference, &lookups.others));
            errors
        }),
        "v1alpha1" => check::<v1alpha1::PersistentPodState>(KIND, &raw, old.as_ref(), |object, old| {
            let mut errors = validate_persistentpodstate_v1alpha1_with_whitelist(object, old, &custom);
            let target = &object.spec.target_reference;
            let target = v1beta1::TargetReference {
                api_version: target.api_version.clone(),
                kind: target.kind.clone(),
                name: target.name.clone(),
            };
            errors.extend(conflicts(&name, &target, &lookups.others));
            errors
        }),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match errors {
        Ok(errors) if errors.is_empty() => allowed(request),
        Ok(errors) => invalid(request, APPS_GROUP, KIND, &name, &errors),
        Err(message) => errored(request, 400, &message),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;
    use crate::webhook::testing::{fields, review};

    /// Upstream's `ppsDemo` of the validating tests, at `version`.
    fn pps_demo(version: &str) -> Value {
        let keys = if version == "v1alpha1" { "nodeTopologyKeys" } else { "keys" };
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "PersistentPodState",
            "metadata": {"name": "pps-test", "namespace": "ns-test"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "statefulset-test"},
                "requiredPersistentTopology": {keys: ["topology.kubernetes.io/zone"]},
                "preferredPersistentTopology": [{"weight": 100, "preference": {keys: ["kubernetes.io/hostname"]}}],
            },
        })
    }

    fn other(name: &str, namespace: &str, target: &str) -> v1beta1::PersistentPodState {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": target}},
        }))
        .unwrap()
    }

    fn run(
        version: &str,
        operation: &str,
        object: Value,
        old: Value,
        lookups: &PersistentPodStateLookups,
    ) -> AdmissionResponse {
        let request = review(KIND, "persistentpodstates", "pps-test", (operation, version), object, old);
        validate(&request, lookups)
    }

    /// Upstream `TestValidatingPer` (field paths instead of counts), at both versions.
    #[test]
    fn validating_per() {
        let lookups = PersistentPodStateLookups::default();
        for version in ["v1alpha1", "v1beta1"] {
            let mut empty_target = pps_demo(version);
            empty_target["spec"]["targetRef"] = json!({});
            let mut deployment = pps_demo(version);
            deployment["spec"]["targetRef"] =
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "test"});
            let mut no_topology = pps_demo(version);
            no_topology["spec"].as_object_mut().unwrap().remove("requiredPersistentTopology");
            no_topology["spec"].as_object_mut().unwrap().remove("preferredPersistentTopology");
            let cases: [(&str, Value, &[&str]); 4] = [
                ("valid per, TargetReference", pps_demo(version), &[]),
                (
                    "invalid per, TargetReference are nil",
                    empty_target,
                    &["spec.targetRef.apiVersion", "spec.targetRef.kind", "spec.targetRef.name"],
                ),
                ("invalid per, targetRef Deployment", deployment, &["spec.targetRef.kind"]),
                (
                    "invalid per, TopologyConstraint and TopologyPreference are nil",
                    no_topology,
                    &["spec.requiredPersistentTopology"],
                ),
            ];
            for (name, object, expected) in cases {
                let response = run(version, "CREATE", object, Value::Null, &lookups);
                assert_eq!(response.allowed, expected.is_empty(), "{version} {name}");
                assert_eq!(fields(&response), *expected, "{version} {name}");
            }
        }
    }

    /// Upstream `TestPerConflictWithOthers`.
    #[test]
    fn per_conflict_with_others() {
        let cases: [(&str, Vec<v1beta1::PersistentPodState>, &[&str]); 3] = [
            (
                "no conflict with other pers, and TargetReference",
                vec![
                    other("pps1", "ns-test", "statefulset-test1"),
                    other("pps2", "ns-test", "statefulset-test2"),
                ],
                &[],
            ),
            (
                "invalid conflict with other pers, and TargetReference",
                vec![
                    other("pps1", "ns-test", "statefulset-test"),
                    other("pps2", "ns-test", "statefulset-test2"),
                ],
                &["spec.targetRef"],
            ),
            // The server lists only the request's namespace; the object itself never conflicts.
            (
                "no conflict with other pers, and Selector, other namespace",
                vec![other("pps-test", "ns-test", "statefulset-test")],
                &[],
            ),
        ];
        for version in ["v1alpha1", "v1beta1"] {
            for (name, others, expected) in &cases {
                let lookups =
                    PersistentPodStateLookups { others: others.clone(), whitelist: WhiteList::default() };
                let response = run(version, "CREATE", pps_demo(version), Value::Null, &lookups);
                assert_eq!(fields(&response), *expected, "{version} {name}");
                if !expected.is_empty() {
                    assert!(
                        response.result.message.contains("in conflict with other PersistentPodState pps1"),
                        "{}",
                        response.result.message
                    );
                }
            }
        }
    }

    /// Upstream `TestValidatingUpdatePer`.
    #[test]
    fn validating_update_per() {
        let lookups = PersistentPodStateLookups::default();
        for version in ["v1alpha1", "v1beta1"] {
            let mut changed = pps_demo(version);
            changed["spec"]["targetRef"]["name"] = json!("statefulset-changed");
            let cases: [(&str, Value, &[&str]); 2] = [
                ("valid per, targetRef not changed", pps_demo(version), &[]),
                ("invalid per, targetRef changed", changed, &["spec.targetRef"]),
            ];
            for (name, object, expected) in cases {
                let response = run(version, "UPDATE", object, pps_demo(version), &lookups);
                assert_eq!(fields(&response), *expected, "{version} {name}");
            }
        }
    }

    #[test]
    fn whitelisted_custom_workloads_are_accepted() {
        let whitelist = WhiteList::parse(Some(
            r#"{"workloads":[{"Group":"apps.kruise.io","Version":"v1beta1","Kind":"StatefulSetLikeTest"}]}"#,
        ))
        .unwrap();
        let mut custom = pps_demo("v1beta1");
        custom["spec"]["targetRef"] =
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSetLikeTest", "name": "x"});
        let refused =
            run("v1beta1", "CREATE", custom.clone(), Value::Null, &PersistentPodStateLookups::default());
        assert_eq!(fields(&refused), ["spec.targetRef.kind"]);
        let lookups = PersistentPodStateLookups { others: Vec::new(), whitelist };
        assert!(run("v1beta1", "CREATE", custom, Value::Null, &lookups).allowed);
    }
}
