//! The PodUnavailableBudget decisions, free of I/O (upstream `pkg/control/pubcontrol` and the
//! pure parts of `pkg/controller/podunavailablebudget`): which pods a budget guards and how
//! many it expects, how many are available, what the status must say, which pod changes can
//! make a pod unavailable, and whether one more disruption fits the budget.
//!
//! The controller ([`super::controller`]) and the pod webhook ([`super::admit`]) feed these
//! functions with what they read from the cluster.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::{Container, Pod},
    apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference, Time},
    jiff::{SignedDuration, Timestamp},
};
use kruise_crds::{
    intstr::scaled_value,
    policy::v1beta1::{
        DEPRECATED_POD_RELATED_PUB_KEY, POD_PUB_NO_PROTECTION_KEY, POD_RELATED_PUB_KEY,
        PUB_PROTECT_OPERATIONS_KEY, PodUnavailableBudget, PodUnavailableBudgetStatus, PubOperation,
        TargetReference,
    },
    selector,
};

use crate::{
    inplace::{InPlaceGates, check_update_completed},
    sidecarset::core::SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION,
    workload::pods::{is_pod_active, is_pod_ready as has_ready_condition, is_running},
};

/// How long a pod recorded in `disruptedPods` may take to disappear before the record is
/// dropped (upstream `DeletionTimeout`).
pub const DELETION_TIMEOUT: SignedDuration = SignedDuration::from_secs(20);
/// How long a pod recorded in `unavailablePods` stays recorded, covering the informer lag after
/// an in-place update (upstream `UpdatedDelayCheckTime`).
pub const UPDATED_DELAY_CHECK_TIME: SignedDuration = SignedDuration::from_secs(10);
/// Most entries `disruptedPods` and `unavailablePods` may hold together before every further
/// disruption is refused (upstream `MaxUnavailablePodSize`).
pub const MAX_UNAVAILABLE_POD_SIZE: usize = 2000;
/// Label prefix that marks a pod unavailable on purpose (upstream `PubUnavailablePodLabelPrefix`).
pub const UNAVAILABLE_LABEL_PREFIX: &str = "unavailable-pod.kruise.io/";
/// The user the CloneSet controller's own check is charged to.
pub const MANAGER_USER: &str = "kruise-manager";

/// Whether a pod carries a `unavailable-pod.kruise.io/` label (upstream `HasUnavailableLabel`).
pub fn has_unavailable_label(labels: Option<&BTreeMap<String, String>>) -> bool {
    labels.is_some_and(|labels| labels.keys().any(|key| key.starts_with(UNAVAILABLE_LABEL_PREFIX)))
}

/// Whether the pod counts as ready for a budget (upstream `commonControl.IsPodReady`): Running,
/// Ready, and not labelled unavailable.
pub fn is_pod_ready(pod: &Pod) -> bool {
    is_running(pod) && has_ready_condition(pod) && !has_unavailable_label(pod.metadata.labels.as_ref())
}

fn containers(pod: &Pod) -> &[Container] {
    pod.spec.as_ref().map(|spec| spec.containers.as_slice()).unwrap_or_default()
}

/// The digest of an image reference written by digest (`repo@sha256:...`).
fn image_digest(image: &str) -> Option<&str> {
    image.split_once('@').map(|(_, digest)| digest).filter(|digest| digest.contains(':'))
}

/// Whether the pod's containers run what its spec says (upstream `IsPodStateConsistent`): when
/// every image is written by digest, the reported imageIDs must carry those digests; otherwise
/// no sidecar and no in-place update may still be in flight.
pub fn is_pod_state_consistent(pod: &Pod) -> bool {
    let specs = containers(pod);
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_deref()).unwrap_or_default();
    let mut all_digest = true;
    for container in specs {
        let Some(digest) = container.image.as_deref().and_then(image_digest) else {
            all_digest = false;
            continue;
        };
        let reported = statuses.iter().find(|status| status.name == container.name);
        if reported.is_none_or(|status| image_digest(&status.image_id) != Some(digest)) {
            return false;
        }
    }
    if all_digest {
        return true;
    }
    if !sidecar_updates_completed(pod) {
        return false;
    }
    check_update_completed(pod, &InPlaceGates::default()).is_ok()
}

/// Whether the sidecars a SidecarSet updated in place report new images (upstream
/// `IsSidecarContainerUpdateCompleted`): a sidecar recorded with its old imageID must no longer
/// report it.
fn sidecar_updates_completed(pod: &Pod) -> bool {
    let Some(text) =
        pod.metadata.annotations.as_ref().and_then(|a| a.get(SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION))
    else {
        return true;
    };
    let Ok(states) = serde_json::from_str::<BTreeMap<String, serde_json::Value>>(text) else {
        return false;
    };
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_deref()).unwrap_or_default();
    for state in states.values() {
        let Some(last) = state.get("lastContainerStatuses").and_then(|v| v.as_object()) else { continue };
        for (name, old) in last {
            let old_id = old.get("imageID").and_then(|v| v.as_str()).unwrap_or_default();
            let Some(status) = statuses.iter().find(|status| &status.name == name) else { continue };
            if !old_id.is_empty() && status.image_id == old_id {
                return false;
            }
        }
    }
    true
}

/// Whether an update from `old` to `new` may make the pod unavailable (upstream
/// `IsPodUnavailableChanged`): a spec change, or a new unavailable label. Other metadata changes
/// do not.
pub fn is_pod_unavailable_changed(old: &Pod, new: &Pod) -> bool {
    if old.spec != new.spec {
        return true;
    }
    !has_unavailable_label(old.metadata.labels.as_ref())
        && has_unavailable_label(new.metadata.labels.as_ref())
}

/// The pod's QoS class as the kubelet computes it (Guaranteed, Burstable or BestEffort).
fn qos_class(pod: &Pod) -> &'static str {
    let mut any = false;
    let mut guaranteed = true;
    for container in containers(pod) {
        let resources = container.resources.clone().unwrap_or_default();
        let requests = resources.requests.unwrap_or_default();
        let limits = resources.limits.unwrap_or_default();
        for name in ["cpu", "memory"] {
            let limit = limits.get(name);
            let request = requests.get(name).or(limit);
            if request.is_some() || limit.is_some() {
                any = true;
            }
            if limit.is_none() || request != limit {
                guaranteed = false;
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// Whether the change from `old` to `new` is a resize the pod absorbs without restarting
/// (upstream `CanResizeInplace`): only container cpu/memory changed, the pod is no static pod,
/// its QoS class stays, and no changed resource asks for a container restart.
pub fn can_resize_in_place(old: &Pod, new: &Pod) -> bool {
    if !has_unavailable_label(old.metadata.labels.as_ref())
        && has_unavailable_label(new.metadata.labels.as_ref())
    {
        return false;
    }
    let without_resources = |pod: &Pod| {
        let mut spec = pod.spec.clone().unwrap_or_default();
        for container in &mut spec.containers {
            container.resources = None;
        }
        spec
    };
    if without_resources(old) != without_resources(new) {
        return false;
    }
    let is_static = |pod: &Pod| {
        pod.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("kubernetes.io/config.source"))
            .is_some_and(|source| source != "api")
    };
    if is_static(old) || is_static(new) || qos_class(old) != qos_class(new) {
        return false;
    }
    let (old_containers, new_containers) = (containers(old), containers(new));
    if old_containers.len() != new_containers.len() {
        return false;
    }
    for container in new_containers {
        let Some(before) = old_containers.iter().find(|c| c.name == container.name) else { return false };
        let (was, is) =
            (before.resources.clone().unwrap_or_default(), container.resources.clone().unwrap_or_default());
        let names: BTreeSet<String> = [&was.requests, &was.limits, &is.requests, &is.limits]
            .into_iter()
            .flatten()
            .flat_map(|list| list.keys().cloned())
            .collect();
        for name in names {
            let changed = was.requests.as_ref().and_then(|r| r.get(&name))
                != is.requests.as_ref().and_then(|r| r.get(&name))
                || was.limits.as_ref().and_then(|l| l.get(&name))
                    != is.limits.as_ref().and_then(|l| l.get(&name));
            if !changed {
                continue;
            }
            if name != "cpu" && name != "memory" {
                return false;
            }
            let policy = container
                .resize_policy
                .iter()
                .flatten()
                .find(|policy| policy.resource_name == name)
                .map(|policy| policy.restart_policy.as_str())
                .unwrap_or_default();
            if !(policy.is_empty() || policy == "NotRequired") {
                return false;
            }
        }
    }
    true
}

/// The PUB named on the pod (`pub.kruise.io/related-pub`, else the older `kruise.io/related-pub`).
pub fn related_pub_name(pod: &Pod) -> Option<&str> {
    let annotations = pod.metadata.annotations.as_ref()?;
    annotations
        .get(POD_RELATED_PUB_KEY)
        .filter(|name| !name.is_empty())
        .or_else(|| annotations.get(DEPRECATED_POD_RELATED_PUB_KEY))
        .map(String::as_str)
        .filter(|name| !name.is_empty())
}

/// Whether the pod opted out with `pub.kruise.io/no-protect` set to a Go true value.
pub fn is_pod_no_protection(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(POD_PUB_NO_PROTECTION_KEY))
        .is_some_and(|value| matches!(value.as_str(), "1" | "t" | "T" | "true" | "TRUE" | "True"))
}

/// The operations the budget guards (upstream `getPubProtectOperations`): `spec.protectOperations`,
/// else the deprecated annotation, else DELETE, UPDATE and EVICT.
pub fn protect_operations(budget: &PodUnavailableBudget) -> BTreeSet<PubOperation> {
    if !budget.spec.protect_operations.is_empty() {
        return budget.spec.protect_operations.iter().cloned().collect();
    }
    let from_annotation: BTreeSet<PubOperation> = budget
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PUB_PROTECT_OPERATIONS_KEY))
        .map(|value| {
            value
                .split(',')
                .filter(|item| !item.is_empty())
                .map(|item| serde_json::from_value(serde_json::Value::String(item.into())))
                .filter_map(Result::ok)
                .collect()
        })
        .unwrap_or_default();
    if !from_annotation.is_empty() {
        return from_annotation;
    }
    [PubOperation::Delete, PubOperation::Update, PubOperation::Evict].into()
}

/// Whether the budget guards `operation` (upstream `isNeedPubProtection`); without in-place
/// vertical scaling a resize restarts containers, so guarding UPDATE guards RESIZE too.
pub fn is_need_pub_protection(
    budget: &PodUnavailableBudget,
    operation: &PubOperation,
    vertical_scaling: bool,
) -> bool {
    let mut operations = protect_operations(budget);
    if !vertical_scaling && operations.contains(&PubOperation::Update) {
        operations.insert(PubOperation::Resize);
    }
    operations.contains(operation)
}

/// Whether the budget's `ignoredPodSelector` exempts the pod (an empty selector exempts nobody).
pub fn is_pod_matched_ignored_selector(budget: &PodUnavailableBudget, pod: &Pod) -> bool {
    let Some(ignored) = &budget.spec.ignored_pod_selector else { return false };
    if selector::is_empty(ignored) || !selector_is_valid(ignored) {
        return false;
    }
    selector::matches(ignored, pod.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()))
}

/// Whether the pod already holds a disruption of this budget.
pub fn is_pod_recorded(pod_name: &str, status: &PodUnavailableBudgetStatus) -> bool {
    status.unavailable_pods.contains_key(pod_name) || status.disrupted_pods.contains_key(pod_name)
}

fn selector_is_valid(selector: &LabelSelector) -> bool {
    selector.match_expressions.iter().flatten().all(|requirement| {
        let values = requirement.values.as_deref().unwrap_or_default();
        match requirement.operator.as_str() {
            "In" | "NotIn" => !values.is_empty(),
            "Exists" | "DoesNotExist" => values.is_empty(),
            _ => false,
        }
    })
}

/// What the pre-checks of a guarded operation decided, before any quota is spent (upstream's
/// early returns in `PodUnavailableBudgetValidatePod`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Precheck {
    /// Allowed without touching a budget; the reason is for the logs.
    Allow(&'static str),
    /// Look up the budget named here and decide with [`budget_precheck`].
    LookUp(String),
}

/// The checks on the pod alone.
pub fn pod_precheck(pod: &Pod) -> Precheck {
    if is_pod_no_protection(pod) {
        return Precheck::Allow("the pod is exempt from PUB protection");
    }
    if !is_pod_ready(pod) || !is_pod_state_consistent(pod) {
        return Precheck::Allow("the pod is not ready or its state is inconsistent");
    }
    match related_pub_name(pod) {
        Some(name) => Precheck::LookUp(name.to_string()),
        None => Precheck::Allow("the pod has no PodUnavailableBudget"),
    }
}

/// The checks on the pod and its budget; `None` means the quota must be spent.
pub fn budget_precheck(
    pod: &Pod,
    budget: &PodUnavailableBudget,
    operation: &PubOperation,
    vertical_scaling: bool,
) -> Option<&'static str> {
    let status = budget.status.clone().unwrap_or_default();
    if is_pod_matched_ignored_selector(budget, pod) {
        Some("the pod matches the budget's ignoredPodSelector")
    } else if status.desired_available == 0 {
        Some("the budget wants no pod available")
    } else if !is_need_pub_protection(budget, operation, vertical_scaling) {
        Some("the budget does not guard this operation")
    } else if is_pod_recorded(pod.metadata.name.as_deref().unwrap_or_default(), &status) {
        Some("the pod already holds a disruption of the budget")
    } else {
        None
    }
}

/// Why a disruption does not fit the budget; the text is upstream's Forbidden error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No disruption left.
    #[error(
        "podunavailablebudget.policy.kruise.io \"{0}\" is forbidden: pub unavailable allowed is negative"
    )]
    NoneAllowed(String),
    /// Too many disruptions recorded and not yet confirmed.
    #[error(
        "podunavailablebudget.policy.kruise.io \"{0}\" is forbidden: DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller"
    )]
    TooManyRecorded(String),
}

/// Spends one disruption of the budget on `pod_name` (upstream `checkAndDecrement`): an UPDATE
/// is recorded in `unavailablePods`, anything else in `disruptedPods`, at `now`.
pub fn check_and_decrement(
    budget_name: &str,
    pod_name: &str,
    status: &mut PodUnavailableBudgetStatus,
    operation: &PubOperation,
    now: Timestamp,
) -> Result<(), Refusal> {
    if status.unavailable_allowed <= 0 {
        return Err(Refusal::NoneAllowed(budget_name.to_string()));
    }
    if status.disrupted_pods.len() + status.unavailable_pods.len() > MAX_UNAVAILABLE_POD_SIZE {
        return Err(Refusal::TooManyRecorded(budget_name.to_string()));
    }
    status.unavailable_allowed -= 1;
    let at = Time(now);
    if *operation == PubOperation::Update {
        status.unavailable_pods.insert(pod_name.to_string(), at);
    } else {
        status.disrupted_pods.insert(pod_name.to_string(), at);
    }
    Ok(())
}

/// The group of an `apiVersion` (`apps/v1` -> `apps`, `v1` -> ``), `None` when malformed.
fn group_of(api_version: &str) -> Option<&str> {
    match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [version] if !version.is_empty() => Some(""),
        [group, version] if !group.is_empty() && !version.is_empty() => Some(group),
        _ => None,
    }
}

/// Whether two references name the same workload: same group, kind and name, any version
/// (upstream `IsReferenceEqual`).
pub fn is_reference_equal(a: &TargetReference, b: &TargetReference) -> bool {
    match (group_of(&a.api_version), group_of(&b.api_version)) {
        (Some(ga), Some(gb)) => ga == gb && a.kind == b.kind && a.name == b.name,
        _ => false,
    }
}

/// The first budget that guards a workload (by `targetRef`) or pods with `labels` (by
/// selector), as upstream's `GetPubForPod` and `SetEnqueueRequestForPUB` pick it. A budget with
/// an empty or invalid selector matches nothing.
pub fn matching_budget<'a>(
    budgets: impl IntoIterator<Item = &'a PodUnavailableBudget>,
    namespace: &str,
    workload: Option<&TargetReference>,
    labels: &BTreeMap<String, String>,
) -> Option<&'a PodUnavailableBudget> {
    budgets.into_iter().find(|budget| {
        if budget.metadata.namespace.as_deref().unwrap_or_default() != namespace {
            return false;
        }
        if let (Some(target), Some(workload)) = (&budget.spec.target_reference, workload) {
            return is_reference_equal(workload, target);
        }
        if budget.spec.target_reference.is_some() && workload.is_none() {
            // Upstream falls through to the selector, which a targetRef budget lacks.
            return false;
        }
        budget
            .spec
            .selector
            .as_ref()
            .is_some_and(|s| !selector::is_empty(s) && selector_is_valid(s) && selector::matches(s, labels))
    })
}

/// The controller owner of an object.
pub fn controller_of(owners: Option<&Vec<OwnerReference>>) -> Option<&OwnerReference> {
    owners?.iter().find(|owner| owner.controller == Some(true))
}

/// A workload as the controller finder sees it (upstream `ScaleAndSelector`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    /// `apiVersion` of the workload.
    pub api_version: String,
    /// Kind of the workload.
    pub kind: String,
    /// Name of the workload.
    pub name: String,
    /// UID of the workload.
    pub uid: String,
    /// `spec.replicas`.
    pub replicas: i32,
    /// Being deleted.
    pub deleting: bool,
    /// The UIDs whose pods are this workload's: its own, or those of its ReplicaSets for a
    /// Deployment that has any.
    pub pod_owner_uids: Vec<String>,
}

/// What the controller finder can look up (the controller implements it over its caches).
pub trait WorkloadFinder {
    /// The workload a reference names in `namespace`, resolving a ReplicaSet owned by a
    /// Deployment to that Deployment (upstream `GetScaleAndSelectorForRef`).
    fn workload(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<Workload>;
}

/// The pods of a budget and the replica count it budgets against (upstream `GetPodsForPub`):
/// a `targetRef` budget takes its workload's active pods and replicas; a selector budget the
/// active pods its selector matches and the sum of their workloads' replicas.
/// `spec.protectTotalReplicas` overrides the count.
pub fn pods_for_budget<'a>(
    budget: &PodUnavailableBudget,
    pods: &[&'a Pod],
    finder: &dyn WorkloadFinder,
) -> (Vec<&'a Pod>, i32) {
    let namespace = budget.metadata.namespace.as_deref().unwrap_or_default();
    let total_override = budget.spec.protect_total_replicas;
    if let Some(target) = &budget.spec.target_reference {
        let workload = finder
            .workload(&target.api_version, &target.kind, namespace, &target.name)
            .filter(|workload| !workload.deleting);
        let (matched, replicas) = match workload {
            Some(workload) if workload.replicas != 0 => {
                let matched = pods
                    .iter()
                    .copied()
                    .filter(|pod| pod.metadata.namespace.as_deref().unwrap_or_default() == namespace)
                    .filter(|pod| is_pod_active(pod))
                    .filter(|pod| {
                        pod.metadata
                            .owner_references
                            .iter()
                            .flatten()
                            .any(|owner| workload.pod_owner_uids.contains(&owner.uid))
                    })
                    .collect();
                (matched, workload.replicas)
            }
            Some(workload) => (Vec::new(), workload.replicas),
            None => (Vec::new(), 0),
        };
        return (matched, total_override.unwrap_or(replicas));
    }
    let Some(pod_selector) = budget.spec.selector.as_ref().filter(|s| selector_is_valid(s)) else {
        return (Vec::new(), 0);
    };
    let empty = BTreeMap::new();
    let matched: Vec<&Pod> = pods
        .iter()
        .copied()
        .filter(|pod| pod.metadata.namespace.as_deref().unwrap_or_default() == namespace)
        .filter(|pod| selector::matches(pod_selector, pod.metadata.labels.as_ref().unwrap_or(&empty)))
        .filter(|pod| is_pod_active(pod))
        .collect();
    if let Some(total) = total_override {
        return (matched, total);
    }
    (matched.clone(), expected_scale_for_pods(&matched, finder))
}

/// The sum of the replicas of the distinct live workloads owning `pods` (upstream
/// `GetExpectedScaleForPods`); pods without a workload add nothing.
pub fn expected_scale_for_pods(pods: &[&Pod], finder: &dyn WorkloadFinder) -> i32 {
    let mut seen = BTreeSet::new();
    let mut scales: BTreeMap<String, i32> = BTreeMap::new();
    for pod in pods {
        let Some(owner) = controller_of(pod.metadata.owner_references.as_ref()) else { continue };
        if !seen.insert(owner.uid.clone()) {
            continue;
        }
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        if let Some(workload) = finder.workload(&owner.api_version, &owner.kind, namespace, &owner.name)
            && !workload.deleting
        {
            scales.insert(workload.uid.clone(), workload.replicas);
        }
    }
    scales.values().fold(0i32, |sum, replicas| sum.saturating_add(*replicas))
}

/// Why the desired count cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field}: {message}")]
pub struct DesiredError {
    field: &'static str,
    message: String,
}

/// The pods that must stay available (upstream `getDesiredAvailableForPub`): `expected` minus
/// `maxUnavailable` (a percent rounded up, floor 0), else `minAvailable` (a percent rounded up),
/// else 0.
pub fn desired_available(budget: &PodUnavailableBudget, expected: i32) -> Result<i32, DesiredError> {
    if let Some(max) = &budget.spec.max_unavailable {
        let max = scaled_value(max, expected, true)
            .map_err(|e| DesiredError { field: "maxUnavailable", message: e.to_string() })?;
        return Ok((expected - max).max(0));
    }
    if let Some(min) = &budget.spec.min_available {
        return scaled_value(min, expected, true)
            .map_err(|e| DesiredError { field: "minAvailable", message: e.to_string() });
    }
    Ok(0)
}

/// The records still valid at `now` and when to look again (upstream
/// `buildDisruptedAndUnavailablePods`): a disruption record lasts [`DELETION_TIMEOUT`] while its
/// pod is still active (the pods it outlived are returned to be reported as `NotDeleted`), an
/// in-place update record [`UPDATED_DELAY_CHECK_TIME`]; records of pods gone are dropped.
pub fn build_disrupted_and_unavailable(
    pods: &[&Pod],
    status: &PodUnavailableBudgetStatus,
    now: Timestamp,
) -> Records {
    let mut records = Records::default();
    for pod in pods.iter().filter(|pod| is_pod_active(pod)) {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        if let Some(at) = status.disrupted_pods.get(name) {
            let expected = at.0.checked_add(DELETION_TIMEOUT).unwrap_or(at.0);
            if expected < now {
                records.not_deleted.push(name.to_string());
            } else {
                records.disrupted.insert(name.to_string(), at.clone());
                records.recheck = Some(records.recheck.map_or(expected, |r| r.min(expected)));
            }
        }
        if let Some(at) = status.unavailable_pods.get(name) {
            let expected = at.0.checked_add(UPDATED_DELAY_CHECK_TIME).unwrap_or(at.0);
            if expected >= now {
                records.unavailable.insert(name.to_string(), at.clone());
                records.recheck = Some(records.recheck.map_or(expected, |r| r.min(expected)));
            }
        }
    }
    records
}

/// The outcome of [`build_disrupted_and_unavailable`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    /// The `disruptedPods` still valid.
    pub disrupted: BTreeMap<String, Time>,
    /// The `unavailablePods` still valid.
    pub unavailable: BTreeMap<String, Time>,
    /// When the earliest record expires.
    pub recheck: Option<Timestamp>,
    /// Pods allowed a disruption that were not deleted in time.
    pub not_deleted: Vec<String>,
}

/// The active pods that are ready, consistent and hold no disruption (upstream
/// `countAvailablePods`).
pub fn count_available_pods(
    pods: &[&Pod],
    disrupted: &BTreeMap<String, Time>,
    unavailable: &BTreeMap<String, Time>,
) -> i32 {
    let count = pods
        .iter()
        .filter(|pod| is_pod_active(pod))
        .filter(|pod| {
            let name = pod.metadata.name.as_deref().unwrap_or_default();
            !disrupted.contains_key(name) && !unavailable.contains_key(name)
        })
        .filter(|pod| is_pod_state_consistent(pod) && is_pod_ready(pod))
        .count();
    i32::try_from(count).unwrap_or(i32::MAX)
}

/// The status a budget must show (upstream `syncPodUnavailableBudget` + `updatePubStatus`).
pub fn compute_status(
    budget: &PodUnavailableBudget,
    pods: &[&Pod],
    expected: i32,
    desired: i32,
    now: Timestamp,
) -> (PodUnavailableBudgetStatus, Records) {
    let current = budget.status.clone().unwrap_or_default();
    let records = build_disrupted_and_unavailable(pods, &current, now);
    let available = count_available_pods(pods, &records.disrupted, &records.unavailable);
    let status = PodUnavailableBudgetStatus {
        observed_generation: budget.metadata.generation.unwrap_or_default(),
        disrupted_pods: records.disrupted.clone(),
        unavailable_pods: records.unavailable.clone(),
        unavailable_allowed: (available - desired).max(0),
        current_available: available,
        desired_available: desired,
        total_replicas: expected,
    };
    (status, records)
}

/// Whether a pod update changes what the budget counts, and after how long to look (upstream
/// `isPodAvailableChanged`): a deletion starting (after 5 s) or a readiness change (at once).
pub fn is_pod_available_changed(old: &Pod, new: &Pod) -> Option<std::time::Duration> {
    let (old_deleting, new_deleting) =
        (old.metadata.deletion_timestamp.is_some(), new.metadata.deletion_timestamp.is_some());
    if !old_deleting && new_deleting {
        return Some(std::time::Duration::from_secs(5));
    }
    if old_deleting {
        return None;
    }
    let ready = |pod: &Pod| is_pod_ready(pod) && is_pod_state_consistent(pod);
    (ready(old) != ready(new)).then_some(std::time::Duration::ZERO)
}

#[cfg(test)]
#[path = "core_tests.rs"]
mod tests;
