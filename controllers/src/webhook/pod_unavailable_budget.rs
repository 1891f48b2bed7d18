//! The pod webhook's PodUnavailableBudget part (upstream `pkg/webhook/pod/validating/
//! pod_unavailable_budget.go` and `pkg/webhook/pod/mutating/pod_unavailable_budget.go`).
//!
//! Validating (`/validate-pod`, registered as `vpod.kb.io` for pod UPDATE and DELETE and as
//! `vpodeviction.kb.io` for CREATE of `pods/eviction`): an eviction or a deletion (gate
//! `PodUnavailableBudgetDeleteGate`) and an in-place change that can make the pod unavailable
//! (gate `PodUnavailableBudgetUpdateGate`) spend one disruption of the pod's budget through
//! [`Guard::validate_pod`], or are refused with 403 and upstream's message
//! (`podunavailablebudget.policy.kruise.io "<name>" is forbidden: pub unavailable allowed is
//! negative`). Metadata-only updates, subresource deletes and pods without a budget pass.
//!
//! Mutating (on pod CREATE, from `/mutate-pod`): a new pod that a budget guards gets the
//! `pub.kruise.io/related-pub` annotation (and its older twin), so the check above finds the
//! budget without a search.

use std::collections::BTreeMap;

use k8s_openapi::api::{apps::v1::ReplicaSet, core::v1::Pod};
use kruise_crds::policy::v1beta1::{PodUnavailableBudget, PubOperation, TargetReference};
use kube::{
    Api, Client,
    core::{
        DynamicObject,
        admission::{AdmissionRequest, AdmissionResponse, Operation},
    },
};
use serde_json::Value;

use super::admission::{allowed, decode, errored, object_value};
use crate::podunavailablebudget::{
    admit::{Guard, Verdict},
    core::{
        can_resize_in_place, controller_of, is_pod_unavailable_changed, matching_budget, related_pub_name,
    },
};

/// The gates of the pod webhook's budget checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PubGates {
    /// `PodUnavailableBudgetDeleteGate`: guard evictions and deletions.
    pub delete: bool,
    /// `PodUnavailableBudgetUpdateGate`: guard in-place updates.
    pub update: bool,
    /// `InPlacePodVerticalScaling`: a resize is not an update.
    pub vertical_scaling: bool,
}

impl PubGates {
    /// Whether any budget check runs.
    pub fn any(&self) -> bool {
        self.delete || self.update
    }
}

/// What a request asks of the budget check, decided from the request alone.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// Nothing to check.
    Allow,
    /// Check `operation` on this pod (the pod as it was before the request).
    Pod {
        /// The pod.
        pod: Box<Pod>,
        /// The operation guarded.
        operation: PubOperation,
        /// A dry run spends nothing.
        dry_run: bool,
    },
    /// An eviction: read the pod named in the request, then check EVICT.
    Eviction {
        /// A dry run spends nothing.
        dry_run: bool,
    },
    /// The request cannot be decoded (answered 400, as upstream's `Errored`).
    Invalid(String),
}

fn decode_pod(value: Option<&DynamicObject>) -> Result<Option<Pod>, String> {
    match object_value(value).map_err(|error| error.to_string())? {
        Some(raw) if !raw.is_null() => decode::<Pod>("Pod", &raw).map(Some),
        _ => Ok(None),
    }
}

/// Classifies a `/validate-pod` request (upstream `validatingPodFn` and
/// `podUnavailableBudgetValidatingPod`).
pub fn classify(request: &AdmissionRequest<DynamicObject>, gates: PubGates) -> Check {
    let sub_resource = request.sub_resource.as_deref().unwrap_or_default();
    match request.operation {
        Operation::Update if gates.update => {
            if !sub_resource.is_empty() {
                return Check::Allow;
            }
            let (new, old) =
                match (decode_pod(request.object.as_ref()), decode_pod(request.old_object.as_ref())) {
                    (Ok(Some(new)), Ok(Some(old))) => (new, old),
                    (Ok(_), Ok(_)) => return Check::Invalid("there is no content to decode".into()),
                    (Err(message), _) | (_, Err(message)) => return Check::Invalid(message),
                };
            if related_pub_name(&new).is_none() || !is_pod_unavailable_changed(&old, &new) {
                return Check::Allow;
            }
            let operation =
                if can_resize_in_place(&old, &new) { PubOperation::Resize } else { PubOperation::Update };
            Check::Pod { pod: Box::new(old), operation, dry_run: request.dry_run }
        }
        Operation::Delete if gates.delete => {
            if !sub_resource.is_empty() {
                return Check::Allow;
            }
            match decode_pod(request.old_object.as_ref()) {
                // No old object (very old API servers): nothing to check, as upstream.
                Ok(None) => Check::Allow,
                Ok(Some(pod)) => Check::Pod {
                    pod: Box::new(pod),
                    operation: PubOperation::Delete,
                    dry_run: request.dry_run,
                },
                Err(message) => Check::Invalid(message),
            }
        }
        Operation::Create if gates.delete => {
            if sub_resource != "eviction" {
                return Check::Allow;
            }
            let eviction = object_value(request.object.as_ref()).ok().flatten().unwrap_or(Value::Null);
            let dry_run = request.dry_run
                || eviction
                    .pointer("/deleteOptions/dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|items| !items.is_empty());
            Check::Eviction { dry_run }
        }
        _ => Check::Allow,
    }
}

/// Answers a `/validate-pod` request: classifies it, reads the evicted pod when needed and
/// lets the guard decide.
pub async fn validate(
    request: &AdmissionRequest<DynamicObject>,
    gates: PubGates,
    client: &Client,
    guard: &Guard,
) -> AdmissionResponse {
    let (pod, operation, dry_run) = match classify(request, gates) {
        Check::Allow => return allowed(request),
        Check::Invalid(message) => return errored(request, 400, &message),
        Check::Pod { pod, operation, dry_run } => (*pod, operation, dry_run),
        Check::Eviction { dry_run } => {
            let namespace = request.namespace.clone().unwrap_or_default();
            match Api::<Pod>::namespaced(client.clone(), &namespace).get(&request.name).await {
                Ok(pod) => (pod, PubOperation::Evict, dry_run),
                Err(kube::Error::Api(status)) => return errored(request, 400, &status.message),
                Err(error) => return errored(request, 400, &error.to_string()),
            }
        }
    };
    if related_pub_name(&pod).is_none() {
        return allowed(request);
    }
    match guard
        .validate_pod(&pod, &operation, &request.user_info.username.clone().unwrap_or_default(), dry_run)
        .await
    {
        Ok(Verdict::Allowed) => allowed(request),
        Ok(Verdict::Refused(message)) => errored(request, 403, &message),
        Err(error) => errored(request, 400, &error.to_string()),
    }
}

/// The budget guarding a pod being created, for its `pub.kruise.io/related-pub` annotation
/// (upstream `pubMutatingPod` and `GetPubForPod`): budgets are listed in the pod's namespace;
/// only when one names a workload is the pod's owner resolved (a ReplicaSet to its Deployment).
pub async fn related_budget_for_new_pod(
    client: &Client,
    request: &AdmissionRequest<DynamicObject>,
    gates: PubGates,
) -> Result<Option<String>, String> {
    let sub_resource = request.sub_resource.as_deref().unwrap_or_default();
    if !gates.any()
        || request.operation != Operation::Create
        || !sub_resource.is_empty()
        || request.resource.resource != "pods"
    {
        return Ok(None);
    }
    let Some(pod) = decode_pod(request.object.as_ref())? else { return Ok(None) };
    let namespace = pod
        .metadata
        .namespace
        .clone()
        .or_else(|| request.namespace.clone())
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".into());
    let budgets = match Api::<PodUnavailableBudget>::namespaced(client.clone(), &namespace)
        .list(&Default::default())
        .await
    {
        Ok(list) => list.items,
        // No PUB CRD installed: nothing guards the pod.
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(None),
        Err(error) => return Err(format!("failed to list PodUnavailableBudgets: {error}")),
    };
    if budgets.is_empty() {
        return Ok(None);
    }
    let workload = if budgets.iter().any(|b| b.spec.target_reference.is_some()) {
        workload_of_pod(client, &pod, &namespace).await
    } else {
        None
    };
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    Ok(matching_budget(budgets.iter(), &namespace, workload.as_ref(), &labels)
        .and_then(|b| b.metadata.name.clone()))
}

/// The workload owning a new pod: its controller owner, a ReplicaSet resolved to the
/// Deployment that controls it.
async fn workload_of_pod(client: &Client, pod: &Pod, namespace: &str) -> Option<TargetReference> {
    let owner = controller_of(pod.metadata.owner_references.as_ref())?;
    if owner.kind == "ReplicaSet" && owner.api_version.starts_with("apps/") {
        let rs = Api::<ReplicaSet>::namespaced(client.clone(), namespace)
            .get_opt(&owner.name)
            .await
            .ok()
            .flatten();
        if let Some(deployment) =
            rs.as_ref().and_then(|rs| controller_of(rs.metadata.owner_references.as_ref()))
            && deployment.kind == "Deployment"
        {
            return Some(TargetReference {
                api_version: deployment.api_version.clone(),
                kind: deployment.kind.clone(),
                name: deployment.name.clone(),
            });
        }
    }
    Some(TargetReference {
        api_version: owner.api_version.clone(),
        kind: owner.kind.clone(),
        name: owner.name.clone(),
    })
}

/// Writes the related-budget annotations into a pod (JSON, edited in place).
pub fn annotate_related_pub(pod: &mut Value, budget: &str) {
    use kruise_crds::policy::v1beta1::{DEPRECATED_POD_RELATED_PUB_KEY, POD_RELATED_PUB_KEY};
    let Some(metadata) = pod.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    let annotations = metadata.entry("annotations").or_insert_with(|| Value::Object(Default::default()));
    if annotations.is_null() {
        *annotations = Value::Object(Default::default());
    }
    if let Some(annotations) = annotations.as_object_mut() {
        let mut entries: BTreeMap<&str, &str> = BTreeMap::new();
        entries.insert(POD_RELATED_PUB_KEY, budget);
        entries.insert(DEPRECATED_POD_RELATED_PUB_KEY, budget);
        for (key, value) in entries {
            annotations.insert(key.to_string(), Value::String(value.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    const ALL: PubGates = PubGates { delete: true, update: true, vertical_scaling: false };

    fn pod(image: &str, related: bool) -> Value {
        let annotations = if related { json!({"pub.kruise.io/related-pub": "pub-test"}) } else { json!({}) };
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "test-pod", "namespace": "default", "labels": {"app": "nginx"}, "annotations": annotations},
            "spec": {"containers": [{"name": "nginx", "image": image}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        })
    }

    fn review(
        operation: &str,
        sub: &str,
        object: Value,
        old: Value,
        dry_run: bool,
    ) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "subResource": sub,
                "name": "test-pod", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"}, "dryRun": dry_run,
                "object": object, "oldObject": old,
            }
        });
        super::super::admission::parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn kind(check: &Check) -> String {
        match check {
            Check::Allow => "allow".into(),
            Check::Pod { operation, dry_run, .. } => {
                format!("{}{}", operation.as_str(), if *dry_run { " dry" } else { "" })
            }
            Check::Eviction { dry_run } => format!("EVICT{}", if *dry_run { " dry" } else { "" }),
            Check::Invalid(_) => "invalid".into(),
        }
    }

    /// Upstream `TestValidateUpdatePodForPub`, `TestValidateEvictPodForPub` and
    /// `TestValidateDeletePodForPub`: which requests reach the budget, as which operation.
    #[test]
    fn test_validate_pod_for_pub() {
        let mut labelled = pod("nginx:v1", true);
        labelled["metadata"]["labels"]["unavailable-pod.kruise.io/x"] = json!("true");
        let mut annotated = pod("nginx:v1", true);
        annotated["metadata"]["annotations"]["other"] = json!("x");
        let cases = [
            (
                "valid update pod, allow",
                review("UPDATE", "", pod("nginx:v2", true), pod("nginx:v1", true), false),
                ALL,
                "UPDATE",
            ),
            (
                "valid update pod, no matched pub, allow",
                review("UPDATE", "", pod("nginx:v2", false), pod("nginx:v1", false), false),
                ALL,
                "allow",
            ),
            (
                "valid update pod, label and annotations, ignore",
                review("UPDATE", "", annotated, pod("nginx:v1", true), false),
                ALL,
                "allow",
            ),
            (
                "valid update pod, pod status subresource, ignore",
                review("UPDATE", "status", pod("nginx:v2", true), pod("nginx:v1", true), false),
                ALL,
                "allow",
            ),
            (
                "update pod, add unavailable label",
                review("UPDATE", "", labelled, pod("nginx:v1", true), false),
                ALL,
                "UPDATE",
            ),
            (
                "update pod, dry run",
                review("UPDATE", "", pod("nginx:v2", true), pod("nginx:v1", true), true),
                ALL,
                "UPDATE dry",
            ),
            (
                "update pod, update gate off",
                review("UPDATE", "", pod("nginx:v2", true), pod("nginx:v1", true), false),
                PubGates { update: false, ..ALL },
                "allow",
            ),
            (
                "delete pod, reject",
                review("DELETE", "", Value::Null, pod("nginx:v1", true), false),
                ALL,
                "DELETE",
            ),
            (
                "delete pod, dry run",
                review("DELETE", "", Value::Null, pod("nginx:v1", true), true),
                ALL,
                "DELETE dry",
            ),
            (
                "delete pod, subresource ignore",
                review("DELETE", "status", Value::Null, pod("nginx:v1", true), false),
                ALL,
                "allow",
            ),
            (
                "delete pod without old object, allow",
                review("DELETE", "", Value::Null, Value::Null, false),
                ALL,
                "allow",
            ),
            (
                "delete pod, delete gate off",
                review("DELETE", "", Value::Null, pod("nginx:v1", true), false),
                PubGates { delete: false, ..ALL },
                "allow",
            ),
            (
                "evict pod, reject",
                review(
                    "CREATE",
                    "eviction",
                    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "test-pod", "namespace": "default"}}),
                    Value::Null,
                    false,
                ),
                ALL,
                "EVICT",
            ),
            (
                "evict pod, dry run",
                review(
                    "CREATE",
                    "eviction",
                    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "test-pod"}, "deleteOptions": {"dryRun": ["All"]}}),
                    Value::Null,
                    false,
                ),
                ALL,
                "EVICT dry",
            ),
            (
                "create pod, ignore",
                review("CREATE", "", pod("nginx:v1", true), Value::Null, false),
                ALL,
                "allow",
            ),
        ];
        for (name, request, gates, expected) in cases {
            assert_eq!(kind(&classify(&request, gates)), expected, "{name}");
        }
    }

    #[test]
    fn resize_is_told_apart_from_update() {
        let mut old = pod("nginx:v1", true);
        old["spec"]["containers"][0]["resources"] =
            json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}});
        let mut new = old.clone();
        new["spec"]["containers"][0]["resources"] =
            json!({"requests": {"cpu": "150m"}, "limits": {"cpu": "300m"}});
        assert_eq!(kind(&classify(&review("UPDATE", "", new, old, false), ALL)), "RESIZE");
    }

    #[test]
    fn annotating_a_pod_without_annotations() {
        let mut value = json!({"metadata": {"name": "p"}});
        annotate_related_pub(&mut value, "pub-test");
        assert_eq!(
            value["metadata"]["annotations"],
            json!({"pub.kruise.io/related-pub": "pub-test", "kruise.io/related-pub": "pub-test"})
        );
    }
}
