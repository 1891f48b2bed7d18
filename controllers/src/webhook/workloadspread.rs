//! WorkloadSpread admission (upstream `pkg/webhook/workloadspread/validating`,
//! `vworkloadspread.kb.io`, and the WorkloadSpread parts of the pod webhooks, upstream
//! `pkg/webhook/pod/{mutating,validating}/workloadspread.go`):
//!
//! - [`validate`]: CREATE and UPDATE of a WorkloadSpread at both served versions, checked with
//!   `kruise_crds::validation::validate_workloadspread_*` plus the rule that needs the cluster:
//!   no other WorkloadSpread of the namespace may target the same workload. Refused with every
//!   field path, or with 403 while the `WorkloadSpread` feature gate is off.
//! - [`assign_pod`] (pod CREATE): when the pod's controller (or its controller's controller, as
//!   a Deployment's ReplicaSet) is a WorkloadSpread's target and its filter selects the pod, the
//!   first schedulable subset with room is chosen and the pod recorded in that subset's
//!   `creatingPods`, with an optimistic status write retried on conflict; the pod webhook then
//!   injects the subset ([`crate::workloadspread::core::inject_into_pod`]).
//! - [`record_pod_deletion`] (pod DELETE and eviction): the pod is recorded in its subset's
//!   `deletingPods` so that the subset's place is free for a replacement at once.
//!
//! Dry runs change nothing.

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock},
    time::Duration,
};

use k8s_openapi::{
    api::core::v1::{ConfigMap, Pod},
    apimachinery::pkg::apis::meta::v1::{OwnerReference, Time},
};
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    resource::APPS_GROUP,
    validation::{
        validate_workloadspread_v1alpha1_with_whitelist, validate_workloadspread_v1beta1_with_whitelist,
    },
};
use kube::{
    Api, Client,
    api::{ApiResource, PostParams},
    core::{
        DynamicObject, GroupVersionKind,
        admission::{AdmissionRequest, AdmissionResponse, Operation as AdmissionOperation},
    },
};
use serde_json::Value;

use super::admission::{allowed, check, errored, invalid, object_value, object_version};
use crate::workloadspread::core::{
    CUSTOM_WORKLOAD_WHITELIST_KEY, CustomWorkloadWhiteList, InjectWorkloadSpread, Operation, api_group,
    has_percent_subset, injected, is_pod_selected, matches_reference, same_reference,
    statefulset_subset_for_pod, update_subset_for_pod,
};

/// The kind's name.
const KIND: &str = "WorkloadSpread";
/// Attempts at a status write that keeps meeting conflicts (upstream `retry.DefaultBackoff`).
const STATUS_ATTEMPTS: u32 = 5;

/// The validating webhook; `gate_enabled` is upstream's `WorkloadSpread` feature gate; `others`
/// are the WorkloadSpreads of the object's namespace and `custom` the configured whitelist.
pub fn validate(
    request: &AdmissionRequest<DynamicObject>,
    gate_enabled: bool,
    others: &[v1beta1::WorkloadSpread],
    custom: &CustomWorkloadWhiteList,
) -> AdmissionResponse {
    if !matches!(request.operation, AdmissionOperation::Create | AdmissionOperation::Update) {
        return allowed(request);
    }
    if !gate_enabled {
        return errored(request, 403, "feature-gate WorkloadSpread is not enabled");
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old.filter(|_| request.operation == AdmissionOperation::Update)),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let whitelist: Vec<(&str, &str)> =
        custom.workloads.iter().map(|workload| (workload.group.as_str(), workload.kind.as_str())).collect();
    let result = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => check::<v1beta1::WorkloadSpread>(KIND, &raw, old.as_ref(), |object, old| {
            validate_workloadspread_v1beta1_with_whitelist(object, old, &whitelist)
        }),
        "v1alpha1" => check::<v1alpha1::WorkloadSpread>(KIND, &raw, old.as_ref(), |object, old| {
            validate_workloadspread_v1alpha1_with_whitelist(object, old, &whitelist)
        }),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    let mut errors = match result {
        Ok(errors) => errors,
        Err(message) => return errored(request, 400, &message),
    };
    let name = raw.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(&request.name).to_string();
    if let Some(error) = conflict(&raw, &name, others) {
        errors.push(error);
    }
    if errors.is_empty() { allowed(request) } else { invalid(request, APPS_GROUP, KIND, &name, &errors) }
}

/// Another WorkloadSpread of the namespace that targets the same workload (upstream
/// `validateWorkloadSpreadConflict`).
fn conflict(
    raw: &Value,
    name: &str,
    others: &[v1beta1::WorkloadSpread],
) -> Option<kruise_crds::field::FieldError> {
    let target: v1beta1::TargetReference =
        serde_json::from_value(raw.pointer("/spec/targetRef")?.clone()).ok()?;
    let other = others.iter().find(|other| {
        other.metadata.name.as_deref() != Some(name)
            && other.spec.target_reference.as_ref().is_some_and(|theirs| {
                api_group(&theirs.api_version) == api_group(&target.api_version)
                    && theirs.kind == target.kind
                    && theirs.name == target.name
            })
    })?;
    Some(kruise_crds::field::FieldError::invalid(
        &kruise_crds::field::FieldPath::root("spec").child("targetRef"),
        format!("{}/{}/{}", target.api_version, target.kind, target.name),
        format!(
            "ws.spec.targetRef is in conflict with other WorkloadSpread {}",
            other.metadata.name.as_deref().unwrap_or_default()
        ),
    ))
}

/// Reads the whitelist from `kruise-configuration` in `namespace` (empty when absent or
/// malformed, as upstream).
pub async fn custom_workloads(client: &Client, namespace: &str) -> CustomWorkloadWhiteList {
    let Ok(Some(config)) =
        Api::<ConfigMap>::namespaced(client.clone(), namespace).get_opt("kruise-configuration").await
    else {
        return CustomWorkloadWhiteList::default();
    };
    config
        .data
        .and_then(|data| data.get(CUSTOM_WORKLOAD_WHITELIST_KEY).cloned())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// The WorkloadSpreads of a namespace, read from the API (none when the CRD is missing).
pub async fn list_spreads(client: &Client, namespace: &str) -> Result<Vec<v1beta1::WorkloadSpread>, String> {
    match Api::<v1beta1::WorkloadSpread>::namespaced(client.clone(), namespace)
        .list(&Default::default())
        .await
    {
        Ok(list) => Ok(list.items),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Vec::new()),
        Err(error) => Err(format!("failed to list WorkloadSpreads: {error}")),
    }
}

/// The decision for a pod being created: which WorkloadSpread and subset it goes to.
#[derive(Clone, Debug)]
pub struct SpreadAssignment {
    /// The matched WorkloadSpread (as read when the decision was taken).
    pub spread: v1beta1::WorkloadSpread,
    /// The subset chosen.
    pub subset: String,
    /// The `creatingPods` key made up for a pod without a name.
    pub generated_uid: String,
}

/// The plural resource of a kind (lower case + `s`; the built-in workload kinds all follow it).
fn api_resource(api_version: &str, kind: &str) -> ApiResource {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    ApiResource::from_gvk_with_plural(&gvk, &format!("{}s", kind.to_ascii_lowercase()))
}

async fn get_object(
    client: &Client,
    namespace: &str,
    api_version: &str,
    kind: &str,
    name: &str,
) -> Result<Option<DynamicObject>, kube::Error> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &api_resource(api_version, kind));
    api.get_opt(name).await
}

fn controller_of(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<OwnerReference> {
    meta.owner_references.iter().flatten().find(|owner| owner.controller == Some(true)).cloned()
}

/// Whether the WorkloadSpread's target is `owner` or, following controller owners of
/// supported kinds, one of its ancestors (upstream `isReferenceEqual`). `Err(true)` when an
/// owner was not found.
async fn reference_equal(
    client: &Client,
    target: &v1beta1::TargetReference,
    owner: &OwnerReference,
    namespace: &str,
    custom: &CustomWorkloadWhiteList,
) -> Result<bool, (bool, String)> {
    let mut owner = owner.clone();
    for _ in 0..5 {
        if same_reference(target, &owner) {
            return Ok(true);
        }
        if !matches_reference(&owner, custom) {
            return Ok(false);
        }
        let object = match get_object(client, namespace, &owner.api_version, &owner.kind, &owner.name).await {
            Ok(Some(object)) => object,
            Ok(None) => return Err((true, format!("{} {namespace}/{} not found", owner.kind, owner.name))),
            Err(error) => return Err((false, error.to_string())),
        };
        match controller_of(&object.metadata) {
            Some(next) => owner = next,
            None => return Ok(false),
        }
    }
    Ok(false)
}

/// The workload's replica count for percentage caps (upstream `getWorkloadReplicas`): 0 when
/// no cap is a percentage or the workload is missing.
async fn workload_replicas(
    client: &Client,
    spread: &v1beta1::WorkloadSpread,
    custom: &CustomWorkloadWhiteList,
) -> Result<i32, String> {
    let Some(target) = spread.spec.target_reference.as_ref() else { return Ok(0) };
    if !has_percent_subset(spread) {
        return Ok(0);
    }
    let namespace = spread.metadata.namespace.clone().unwrap_or_default();
    let object = match get_object(client, &namespace, &target.api_version, &target.kind, &target.name).await {
        Ok(Some(object)) => serde_json::to_value(object).map_err(|error| error.to_string())?,
        Ok(None) => return Ok(0),
        Err(error) => return Err(error.to_string()),
    };
    Ok(crate::workloadspread::controller::replicas_of(&object, spread, target, custom))
}

/// Per-WorkloadSpread locks: the webhook's status writes of one WorkloadSpread are made one at
/// a time in this process (upstream `GlobalKeyedMutex`), so that concurrent pod creations do not
/// all meet conflicts.
static LOCKS: LazyLock<parking_lot::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(Default::default);

fn lock_for(key: &str) -> Arc<tokio::sync::Mutex<()>> {
    LOCKS.lock().entry(key.to_string()).or_default().clone()
}

fn now() -> Time {
    let now = k8s_openapi::jiff::Timestamp::now();
    Time(k8s_openapi::jiff::Timestamp::from_second(now.as_second()).unwrap_or(now))
}

fn new_uid() -> String {
    let bytes: [u8; 16] = rand::random();
    let hex = hex::encode(bytes);
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// Records the pod in `spread`'s status and returns the subset (upstream
/// `acquireSuitableSubset`): StatefulSet pods by ordinal, without a write; others through an
/// optimistic status update retried on conflict with a fresh read.
async fn acquire_subset(
    client: &Client,
    spread: &v1beta1::WorkloadSpread,
    pod: &Pod,
    injected: Option<&InjectWorkloadSpread>,
    operation: Operation,
    custom: &CustomWorkloadWhiteList,
) -> Result<(Option<String>, String), String> {
    if spread.spec.subsets.len() == 1
        && let Some(only) = spread.spec.subsets.first().filter(|subset| subset.max_replicas.is_none())
    {
        return Ok((Some(only.name.clone()), String::new()));
    }
    if operation == Operation::Create
        && spread.spec.target_reference.as_ref().is_some_and(|target| target.kind == "StatefulSet")
    {
        let name = pod.metadata.name.clone().unwrap_or_default();
        return Ok((statefulset_subset_for_pod(spread, &name), String::new()));
    }
    let namespace = spread.metadata.namespace.clone().unwrap_or_default();
    let name = spread.metadata.name.clone().unwrap_or_default();
    let api: Api<v1beta1::WorkloadSpread> = Api::namespaced(client.clone(), &namespace);
    let lock = lock_for(&format!("{namespace}/{name}"));
    let _guard = lock.lock().await;
    let mut current = spread.clone();
    let mut refresh = true;
    for attempt in 0..STATUS_ATTEMPTS {
        if refresh {
            current = match api.get_opt(&name).await {
                Ok(Some(fresh)) => fresh,
                Ok(None) => return Ok((None, String::new())),
                Err(error) => {
                    return Err(format!("failed to get WorkloadSpread {namespace}/{name}: {error}"));
                }
            };
        }
        let replicas = workload_replicas(client, &current, custom).await?;
        let update =
            update_subset_for_pod(&mut current, pod, injected, operation, replicas, &now(), &new_uid);
        if !update.changed {
            return Ok((update.subset, update.generated_uid));
        }
        match api.replace_status(&name, &PostParams::default(), &current).await {
            Ok(_) => {
                tracing::debug!(workloadspread = %name, %namespace, subset = ?update.subset, ?operation, "recorded a pod in the WorkloadSpread status");
                return Ok((update.subset, update.generated_uid));
            }
            Err(kube::Error::Api(status)) if status.code == 409 => {
                refresh = true;
                tokio::time::sleep(Duration::from_millis(10 * u64::from(attempt + 1))).await;
            }
            Err(error) => {
                return Err(format!("failed to update WorkloadSpread {namespace}/{name} status: {error}"));
            }
        }
    }
    Err(format!("WorkloadSpread {namespace}/{name}: the status write kept conflicting"))
}

/// The pod webhook's WorkloadSpread step on CREATE (upstream `HandlePodCreation`): `None` when
/// the pod is not spread (inactive, no controller, no matching WorkloadSpread, no subset with
/// room).
pub async fn assign_pod(
    client: &Client,
    namespace: &str,
    pod: &Pod,
    manager_namespace: &str,
) -> Result<Option<SpreadAssignment>, String> {
    if !crate::workload::pods::is_pod_active(pod) {
        return Ok(None);
    }
    let Some(owner) = controller_of(&pod.metadata) else { return Ok(None) };
    let custom = custom_workloads(client, manager_namespace).await;
    if !matches_reference(&owner, &custom) {
        return Ok(None);
    }
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let mut matched = None;
    for spread in list_spreads(client, namespace).await? {
        if spread.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let Some(target) = spread.spec.target_reference.as_ref() else { continue };
        match reference_equal(client, target, &owner, namespace, &custom).await {
            Ok(true) => {}
            Ok(false) => continue,
            // Upstream skips the pod when an owner is missing.
            Err((true, message)) => {
                tracing::info!(%namespace, %message, "WorkloadSpread: the pod's owner chain is incomplete; pod not spread");
                return Ok(None);
            }
            Err((false, message)) => {
                tracing::warn!(%namespace, %message, "WorkloadSpread: cannot follow the pod's owners");
                continue;
            }
        }
        if is_pod_selected(spread.spec.target_filter.as_ref(), &labels) {
            matched = Some(spread);
            break;
        }
    }
    let Some(spread) = matched else { return Ok(None) };
    let (subset, generated_uid) =
        acquire_subset(client, &spread, pod, None, Operation::Create, &custom).await?;
    Ok(subset.map(|subset| SpreadAssignment { spread, subset, generated_uid }))
}

/// The pod webhook's WorkloadSpread step on DELETE and eviction (upstream
/// `HandlePodDeletion`).
pub async fn record_pod_deletion(
    client: &Client,
    pod: &Pod,
    operation: Operation,
    manager_namespace: &str,
) -> Result<(), String> {
    let Some(injected) = injected(pod) else { return Ok(()) };
    if !crate::workload::pods::is_pod_active(pod) || controller_of(&pod.metadata).is_none() {
        return Ok(());
    }
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let spread = match Api::<v1beta1::WorkloadSpread>::namespaced(client.clone(), &namespace)
        .get_opt(&injected.name)
        .await
    {
        Ok(Some(spread)) => spread,
        Ok(None) => return Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
        Err(error) => {
            return Err(format!("failed to get WorkloadSpread {namespace}/{}: {error}", injected.name));
        }
    };
    let custom = custom_workloads(client, manager_namespace).await;
    acquire_subset(client, &spread, pod, Some(&injected), operation, &custom).await.map(|_| ())
}

/// The pod (for DELETE, the old object; for an eviction, read from the API) and the operation
/// the validating pod webhook should record; `None` when there is nothing to do.
pub async fn pod_for_validation(
    client: &Client,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<Option<(Pod, Operation)>, String> {
    if request.dry_run {
        return Ok(None);
    }
    let sub_resource = request.sub_resource.as_deref().unwrap_or("");
    match request.operation {
        AdmissionOperation::Delete if sub_resource.is_empty() => {
            let Some(old) = object_value(request.old_object.as_ref()).map_err(|error| error.to_string())?
            else {
                return Ok(None);
            };
            let pod: Pod = serde_json::from_value(old).map_err(|error| error.to_string())?;
            Ok(Some((pod, Operation::Delete)))
        }
        AdmissionOperation::Create if sub_resource == "eviction" => {
            let dry_run = request
                .object
                .as_ref()
                .and_then(|object| object.data.pointer("/deleteOptions/dryRun"))
                .and_then(Value::as_array)
                .is_some_and(|values| !values.is_empty());
            if dry_run {
                return Ok(None);
            }
            let namespace = request.namespace.clone().unwrap_or_default();
            match Api::<Pod>::namespaced(client.clone(), &namespace).get_opt(&request.name).await {
                Ok(Some(pod)) => Ok(Some((pod, Operation::Eviction))),
                Ok(None) => Err(format!("pods \"{}\" not found", request.name)),
                Err(error) => Err(error.to_string()),
            }
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;
    use crate::webhook::testing::review;

    fn spread(version: &str, name: &str, target: &str) -> Value {
        let (required, preferred) = if version == "v1alpha1" {
            ("requiredNodeSelectorTerm", "preferredNodeSelectorTerms")
        } else {
            ("requiredNodeSelector", "preferredNodeSelector")
        };
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "WorkloadSpread",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": target},
                "subsets": [
                    {"name": "subset-a", required: {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]},
                     preferred: [{"weight": 5, "preference": {"matchExpressions": [{"key": "node", "operator": "In", "values": ["x"]}]}}],
                     "maxReplicas": 3, "patch": {"metadata": {"labels": {"subset": "subset-a"}}}},
                    {"name": "subset-b", "maxReplicas": 2}
                ]
            }
        })
    }

    fn run(
        version: &str,
        operation: &str,
        object: Value,
        old: Value,
        others: &[v1beta1::WorkloadSpread],
    ) -> AdmissionResponse {
        let request = review(KIND, "workloadspreads", "ws", (operation, version), object, old);
        validate(&request, true, others, &CustomWorkloadWhiteList::default())
    }

    fn beta(value: Value) -> v1beta1::WorkloadSpread {
        let mut value = value;
        value["apiVersion"] = json!("apps.kruise.io/v1beta1");
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn valid_workloadspreads_are_admitted_at_both_versions() {
        for version in ["v1alpha1", "v1beta1"] {
            let response = run(version, "CREATE", spread(version, "ws", "web"), Value::Null, &[]);
            assert!(response.allowed, "{version}: {:?}", response.result);
        }
    }

    #[test]
    fn invalid_workloadspreads_are_refused_with_field_paths() {
        let cases: Vec<(&str, &str, Value, &str)> = vec![
            (
                "no subsets",
                "v1beta1",
                {
                    let mut object = spread("v1beta1", "ws", "web");
                    object["spec"]["subsets"] = json!([]);
                    object
                },
                "spec.subsets",
            ),
            (
                "duplicate subset names",
                "v1alpha1",
                {
                    let mut object = spread("v1alpha1", "ws", "web");
                    object["spec"]["subsets"][1]["name"] = json!("subset-a");
                    object
                },
                "spec.subsets[1].name",
            ),
            (
                "unsupported target kind",
                "v1beta1",
                {
                    let mut object = spread("v1beta1", "ws", "web");
                    object["spec"]["targetRef"]["kind"] = json!("DaemonSet");
                    object
                },
                "spec.targetRef",
            ),
        ];
        for (name, version, object, field) in cases {
            let response = run(version, "CREATE", object, Value::Null, &[]);
            assert!(!response.allowed, "{name}");
            assert!(response.result.message.contains(field), "{name}: {}", response.result.message);
        }
    }

    #[test]
    fn a_second_workloadspread_of_the_same_workload_is_refused() {
        let existing = beta(spread("v1beta1", "first", "web"));
        let response = run(
            "v1beta1",
            "CREATE",
            spread("v1beta1", "ws", "web"),
            Value::Null,
            std::slice::from_ref(&existing),
        );
        assert!(!response.allowed);
        assert!(response.result.message.contains("spec.targetRef"), "{}", response.result.message);
        assert!(response.result.message.contains("in conflict with other WorkloadSpread first"));
        let response = run("v1beta1", "CREATE", spread("v1beta1", "ws", "other"), Value::Null, &[existing]);
        assert!(response.allowed);
    }

    #[test]
    fn the_target_cannot_change() {
        let old = spread("v1beta1", "ws", "web");
        let response = run("v1beta1", "UPDATE", spread("v1beta1", "ws", "other"), old, &[]);
        assert!(!response.allowed);
        assert!(response.result.message.contains("spec.targetRef"), "{}", response.result.message);
    }

    #[test]
    fn writes_are_refused_while_the_gate_is_off() {
        let request = review(
            KIND,
            "workloadspreads",
            "ws",
            ("CREATE", "v1beta1"),
            spread("v1beta1", "ws", "web"),
            Value::Null,
        );
        let response = validate(&request, false, &[], &CustomWorkloadWhiteList::default());
        assert!(!response.allowed);
        assert_eq!(response.result.code, 403);
    }
}
