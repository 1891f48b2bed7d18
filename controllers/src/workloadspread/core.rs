//! WorkloadSpread decisions, free of I/O (upstream `pkg/util/workloadspread` and the decisions
//! inside `pkg/controller/workloadspread`):
//!
//! - which workloads a WorkloadSpread can target and whether a pod's owner is one
//!   ([`matches_reference`], [`is_pod_selected`]);
//! - on pod creation, the subset with room and the bookkeeping in the status
//!   ([`update_subset_for_pod`], [`statefulset_subset_for_pod`]), and what the pod gets
//!   ([`inject_into_pod`]);
//! - on pod deletion or eviction, the `deletingPods` record ([`update_subset_for_pod`] again);
//! - the controller's status ([`calculate_status`]) with `missingReplicas`, the clean-up of
//!   stale `creatingPods`/`deletingPods`, the Adaptive strategy's `Schedulable` condition and the
//!   pods it gives up on;
//! - pods created before the WorkloadSpread: the subset whose nodes they run on
//!   ([`matches_subset`], [`existing_pod_patch`]);
//! - the `controller.kubernetes.io/pod-deletion-cost` of each pod ([`deletion_costs`]), so that
//!   a scale-in removes pods of later subsets, and pods beyond a subset's cap, first.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{Node, NodeSelectorRequirement, NodeSelectorTerm, Pod},
    apimachinery::pkg::{
        apis::meta::v1::{Condition, LabelSelector, OwnerReference, Time},
        util::intstr::IntOrString,
    },
    jiff::{SignedDuration, Timestamp},
};
use kruise_crds::{
    apps::v1beta1::{
        TargetFilter, TargetReference, WORKLOADSPREAD_SUBSET_SCHEDULABLE, WorkloadSpread,
        WorkloadSpreadScheduleStrategyType, WorkloadSpreadStatus, WorkloadSpreadSubset,
        WorkloadSpreadSubsetStatus,
    },
    common::well_known::{CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH},
    intstr::scaled_value,
    selector,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    daemonset::core::nodes::tolerates,
    workload::{
        pods::{is_pod_active, node_name},
        revision::short_hash,
        update_order::compare_active,
    },
};

/// Pod annotation naming the WorkloadSpread and subset a pod was placed in (upstream
/// `MatchedWorkloadSpreadSubsetAnnotations`); the controller counts pods by it.
pub const MATCHED_WORKLOADSPREAD_ANNOTATION: &str = "apps.kruise.io/matched-workloadspread";
/// WorkloadSpread annotation: do not copy a subset's `patch.metadata` onto pods that existed
/// before the WorkloadSpread (only the matched annotation is added).
pub const IGNORE_PATCH_EXISTING_PODS_ANNOTATION: &str =
    "workloadspread.kruise.io/ignore-patch-existing-pods-metadata";
/// The version key of pods whose workload keeps no per-revision statuses.
pub const VERSION_IGNORED: &str = "versionIgnored";
/// Where the controller puts pods that belong to no subset.
pub const FAKE_SUBSET_NAME: &str = "kruise.io/workloadspread-fake-subset-name";
/// How long a `creatingPods` record waits for its pod before it is dropped.
pub const CREATE_POD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a `deletingPods` record waits for its pod to go before it is dropped.
pub const DELETE_POD_TIMEOUT: Duration = Duration::from_secs(15);
/// How long an Adaptive subset stays unschedulable once a pod timed out there.
pub const MAX_SCHEDULED_FAILED_DURATION: Duration = Duration::from_secs(300);
/// Deletion cost step of pods within their subset's cap (times subsets after it, plus one).
pub const POD_DELETION_COST_POSITIVE: i32 = 100;
/// Deletion cost step of pods beyond their subset's cap or in no subset.
pub const POD_DELETION_COST_NEGATIVE: i32 = -100;
/// Workload kinds whose pods are counted per revision (upstream flag
/// `--ws-enabled-versioned-status`, default `deployment` which implies `replicaset`).
pub const VERSIONED_KINDS: &[&str] = &["Deployment", "ReplicaSet"];

/// The kinds a WorkloadSpread spreads without configuration, with the API groups accepted for
/// each (upstream `workloads`).
pub const BUILTIN_WORKLOADS: &[(&str, &[&str])] = &[
    ("Deployment", &["apps"]),
    ("CloneSet", &["apps.kruise.io"]),
    ("ReplicaSet", &["apps"]),
    ("Job", &["batch"]),
    ("StatefulSet", &["apps", "apps.kruise.io"]),
];

/// The value of [`MATCHED_WORKLOADSPREAD_ANNOTATION`] (upstream `InjectWorkloadSpread`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectWorkloadSpread {
    /// The WorkloadSpread's name.
    #[serde(default)]
    pub name: String,
    /// The subset's name.
    #[serde(default)]
    pub subset: String,
    /// The key of the `creatingPods` record of a pod created with only `generateName`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
}

impl InjectWorkloadSpread {
    /// The annotation value (upstream `json.Marshal`: name, subset, then uid when set).
    pub fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The WorkloadSpread record of a pod, when it has a well-formed one.
pub fn injected(pod: &Pod) -> Option<InjectWorkloadSpread> {
    let value = pod.metadata.annotations.as_ref()?.get(MATCHED_WORKLOADSPREAD_ANNOTATION)?;
    serde_json::from_str(value).ok()
}

/// What happens to a pod the webhook is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// The pod is being created.
    Create,
    /// The pod is being deleted.
    Delete,
    /// The pod is being evicted.
    Eviction,
}

/// The group of an `apiVersion` (`apps/v1` -> `apps`, `v1` -> ``).
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map(|(group, _)| group).unwrap_or("")
}

/// Whether (`api_version`, `kind`) is `expected_kind` in one of `groups` (upstream
/// `VerifyGroupKind`).
pub fn verify_group_kind(api_version: &str, kind: &str, expected_kind: &str, groups: &[&str]) -> bool {
    kind == expected_kind && groups.contains(&api_group(api_version))
}

/// A workload kind allowed by `kruise-configuration`'s
/// `WorkloadSpread_Watch_Custom_Workload_WhiteList`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct CustomWorkload {
    /// API group.
    #[serde(rename = "Group", alias = "group", default)]
    pub group: String,
    /// API version.
    #[serde(rename = "Version", alias = "version", default)]
    pub version: String,
    /// Kind.
    #[serde(rename = "Kind", alias = "kind", default)]
    pub kind: String,
    /// Kinds between the workload and its pods (their owners are followed).
    #[serde(rename = "subResources", alias = "SubResources", default)]
    pub sub_resources: Vec<GroupVersionKind>,
    /// Dotted path of the replica count in the workload.
    #[serde(rename = "replicasPath", alias = "ReplicasPath", default)]
    pub replicas_path: String,
}

/// A group, version and kind as Go marshals `schema.GroupVersionKind`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct GroupVersionKind {
    /// API group.
    #[serde(rename = "Group", alias = "group", default)]
    pub group: String,
    /// API version.
    #[serde(rename = "Version", alias = "version", default)]
    pub version: String,
    /// Kind.
    #[serde(rename = "Kind", alias = "kind", default)]
    pub kind: String,
}

/// The whitelist in `kruise-configuration` (`{"workloads":[...]}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct CustomWorkloadWhiteList {
    /// The allowed kinds.
    #[serde(default)]
    pub workloads: Vec<CustomWorkload>,
}

/// Key of the whitelist in `kruise-configuration`.
pub const CUSTOM_WORKLOAD_WHITELIST_KEY: &str = "WorkloadSpread_Watch_Custom_Workload_WhiteList";

/// Whether a pod's controller owner is a kind WorkloadSpread handles (upstream
/// `matchReference`).
pub fn matches_reference(owner: &OwnerReference, custom: &CustomWorkloadWhiteList) -> bool {
    BUILTIN_WORKLOADS
        .iter()
        .any(|(kind, groups)| verify_group_kind(&owner.api_version, &owner.kind, kind, groups))
        || custom.workloads.iter().any(|workload| {
            std::iter::once((&workload.group, &workload.kind))
                .chain(workload.sub_resources.iter().map(|sub| (&sub.group, &sub.kind)))
                .any(|(group, kind)| *kind == owner.kind && group == api_group(&owner.api_version))
        })
}

/// Whether a target and an owner reference name the same object (same group, kind, name;
/// versions may differ).
pub fn same_reference(target: &TargetReference, owner: &OwnerReference) -> bool {
    api_group(&target.api_version) == api_group(&owner.api_version)
        && target.kind == owner.kind
        && target.name == owner.name
}

/// Whether the WorkloadSpread's filter selects a pod with these labels (upstream
/// `IsPodSelected`: no filter selects everything, a filter without a selector nothing).
pub fn is_pod_selected(filter: Option<&TargetFilter>, labels: &BTreeMap<String, String>) -> bool {
    let Some(filter) = filter else { return true };
    match &filter.selector {
        Some(selector) => selector_valid(selector) && selector::matches(selector, labels),
        None => false,
    }
}

fn selector_valid(selector: &LabelSelector) -> bool {
    selector.match_expressions.iter().flatten().all(|requirement| match requirement.operator.as_str() {
        "In" | "NotIn" => requirement.values.as_ref().is_some_and(|values| !values.is_empty()),
        "Exists" | "DoesNotExist" => requirement.values.as_ref().is_none_or(Vec::is_empty),
        _ => false,
    })
}

/// Whether a subset's cap is a percentage (then the workload's replicas are needed).
pub fn has_percent_subset(spread: &WorkloadSpread) -> bool {
    spread.spec.subsets.iter().any(
        |subset| matches!(&subset.max_replicas, Some(IntOrString::String(value)) if value.ends_with('%')),
    )
}

/// A subset's cap against `replicas` (`None`: unlimited; `Err`: not a count or percentage).
pub fn subset_max_replicas(subset: &WorkloadSpreadSubset, replicas: i32) -> Result<Option<i32>, String> {
    match &subset.max_replicas {
        None => Ok(None),
        Some(value) => scaled_value(value, replicas, true).map(Some).map_err(|error| error.to_string()),
    }
}

/// The per-revision key of a pod's bookkeeping (upstream `GetPodVersion`): the pod-template
/// hash of a Deployment's or ReplicaSet's pod, else [`VERSION_IGNORED`].
pub fn pod_version(pod: &Pod) -> String {
    let owned_by_versioned = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))
        .is_some_and(|owner| VERSIONED_KINDS.contains(&owner.kind.as_str()));
    if !owned_by_versioned {
        return VERSION_IGNORED.to_string();
    }
    let labels = pod.metadata.labels.as_ref();
    if let Some(version) = labels.and_then(|labels| labels.get(POD_TEMPLATE_HASH)) {
        return version.clone();
    }
    if let Some(version) = labels.and_then(|labels| labels.get(CONTROLLER_REVISION_HASH)) {
        return short_hash(version).to_string();
    }
    VERSION_IGNORED.to_string()
}

/// Fresh subset statuses before the controller has written any (upstream
/// `initializedSubsetStatuses`): `missingReplicas` is the cap, -1 when unlimited.
pub fn initialized_subset_statuses(
    spread: &WorkloadSpread,
    replicas: i32,
) -> Vec<WorkloadSpreadSubsetStatus> {
    spread
        .spec
        .subsets
        .iter()
        .map(|subset| WorkloadSpreadSubsetStatus {
            name: subset.name.clone(),
            missing_replicas: match &subset.max_replicas {
                None => -1,
                Some(value) => scaled_value(value, replicas, true).unwrap_or(0),
            },
            ..Default::default()
        })
        .collect()
}

fn schedulable(status: &WorkloadSpreadSubsetStatus) -> bool {
    !status
        .conditions
        .iter()
        .any(|condition| condition.type_ == WORKLOADSPREAD_SUBSET_SCHEDULABLE && condition.status == "False")
}

/// The first subset that is not marked unschedulable and has room (upstream
/// `getSuitableSubset`).
pub fn suitable_subset(statuses: &[WorkloadSpreadSubsetStatus]) -> Option<usize> {
    statuses.iter().position(|status| {
        schedulable(status) && (status.missing_replicas > 0 || status.missing_replicas == -1)
    })
}

/// The subset whose `creatingPods` or `deletingPods` already records `pod_name`.
pub fn recorded_subset<'a>(
    statuses: &'a [WorkloadSpreadSubsetStatus],
    pod_name: &str,
) -> Option<&'a WorkloadSpreadSubsetStatus> {
    statuses.iter().find(|status| {
        status.creating_pods.contains_key(pod_name) || status.deleting_pods.contains_key(pod_name)
    })
}

/// What [`update_subset_for_pod`] decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubsetUpdate {
    /// The status changed and must be written.
    pub changed: bool,
    /// The subset the pod goes to (create) or leaves (delete), if any.
    pub subset: Option<String>,
    /// The `creatingPods` key made up for a pod without a name yet.
    pub generated_uid: String,
}

/// Records a pod's creation or deletion in the status, in place (upstream
/// `updateSubsetForPod`): on create, the first subset with room gets the pod in `creatingPods`
/// and one less `missingReplicas`; on delete or eviction, the pod's subset gets it in
/// `deletingPods` and one more. Subsets without a cap (-1) are chosen but not written.
/// `replicas` is the workload's replica count (for percentage caps); `new_uid` names a pod
/// that has only a `generateName`.
pub fn update_subset_for_pod(
    spread: &mut WorkloadSpread,
    pod: &Pod,
    injected: Option<&InjectWorkloadSpread>,
    operation: Operation,
    replicas: i32,
    now: &Time,
    new_uid: &dyn Fn() -> String,
) -> SubsetUpdate {
    let version = pod_version(pod);
    let initial = initialized_subset_statuses(spread, replicas);
    let status = spread.status.get_or_insert_with(WorkloadSpreadStatus::default);
    let statuses = status.versioned_subset_statuses.entry(version).or_default();
    if statuses.is_empty() {
        *statuses = initial;
    }
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    match operation {
        Operation::Create => {
            if !pod_name.is_empty()
                && let Some(recorded) = recorded_subset(statuses, &pod_name)
            {
                return SubsetUpdate { subset: Some(recorded.name.clone()), ..Default::default() };
            }
            let Some(index) = suitable_subset(statuses) else { return SubsetUpdate::default() };
            let Some(subset) = statuses.get_mut(index) else { return SubsetUpdate::default() };
            if subset.missing_replicas == -1 {
                return SubsetUpdate { subset: Some(subset.name.clone()), ..Default::default() };
            }
            let (key, generated_uid) =
                if pod_name.is_empty() { (new_uid(), true) } else { (pod_name.clone(), false) };
            subset.creating_pods.insert(key.clone(), now.clone());
            if subset.missing_replicas > 0 {
                subset.missing_replicas -= 1;
            }
            SubsetUpdate {
                changed: true,
                subset: Some(subset.name.clone()),
                generated_uid: if generated_uid { key } else { String::new() },
            }
        }
        Operation::Delete | Operation::Eviction => {
            if recorded_subset(statuses, &pod_name).is_some() {
                return SubsetUpdate::default();
            }
            let wanted = injected.map(|injected| injected.subset.as_str()).unwrap_or_default();
            let Some(subset) = statuses.iter_mut().find(|status| status.name == wanted) else {
                return SubsetUpdate::default();
            };
            if subset.missing_replicas == -1 {
                return SubsetUpdate { subset: Some(subset.name.clone()), ..Default::default() };
            }
            subset.deleting_pods.insert(pod_name, now.clone());
            if subset.missing_replicas >= 0 {
                subset.missing_replicas += 1;
            }
            SubsetUpdate { changed: true, subset: Some(subset.name.clone()), generated_uid: String::new() }
        }
    }
}

/// The ordinal of a StatefulSet pod (`web-3` -> 3; -1 when the name has none).
pub fn pod_ordinal(name: &str) -> i64 {
    match name.rsplit_once('-') {
        Some((parent, ordinal))
            if !parent.is_empty() && !ordinal.is_empty() && ordinal.bytes().all(|b| b.is_ascii_digit()) =>
        {
            ordinal.parse::<i32>().map(i64::from).unwrap_or(-1)
        }
        _ => -1,
    }
}

/// The subset of a StatefulSet pod, chosen by its ordinal (upstream: no status write, the
/// ordinals fill the schedulable subsets' caps in order).
pub fn statefulset_subset_for_pod(spread: &WorkloadSpread, pod_name: &str) -> Option<String> {
    let ordinal = pod_ordinal(pod_name);
    let mut threshold: i64 = 0;
    let conditions =
        spread.status.as_ref().map(|status| status.subset_statuses.as_slice()).unwrap_or_default();
    for subset in &spread.spec.subsets {
        let unschedulable =
            conditions.iter().filter(|status| status.name == subset.name).any(|status| !schedulable(status));
        if unschedulable {
            continue;
        }
        let limit = match &subset.max_replicas {
            None => i64::from(i32::MAX),
            Some(IntOrString::Int(value)) => i64::from(*value),
            // Go's IntValue of a string parses it, 0 when it is not a number.
            Some(IntOrString::String(value)) => value.parse::<i64>().unwrap_or(0),
        };
        threshold += limit;
        if ordinal < threshold {
            return Some(subset.name.clone());
        }
    }
    None
}

/// The node selector term the pod must satisfy: the subset's requirements ANDed into each of
/// the pod's required terms (or the subset's own term when the pod has none).
fn combined_required_terms(
    pod_terms: &[NodeSelectorTerm],
    required: &NodeSelectorTerm,
) -> Vec<NodeSelectorTerm> {
    if pod_terms.is_empty() {
        return vec![required.clone()];
    }
    pod_terms
        .iter()
        .map(|term| {
            let mut term = term.clone();
            let extend = |into: &mut Option<Vec<NodeSelectorRequirement>>,
                          from: &Option<Vec<NodeSelectorRequirement>>| {
                if let Some(from) = from.as_ref().filter(|from| !from.is_empty()) {
                    into.get_or_insert_with(Vec::new).extend(from.iter().cloned());
                }
            };
            extend(&mut term.match_expressions, &required.match_expressions);
            extend(&mut term.match_fields, &required.match_fields);
            term
        })
        .collect()
}

/// Puts a pod (JSON) into a subset (upstream `injectWorkloadSpreadIntoPod`): its tolerations
/// are added, its preferred node terms appended, its required term ANDed into every required
/// term, its `patch` merged (a changed `priorityClassName` drops `priority`), and the pod is
/// annotated with [`MATCHED_WORKLOADSPREAD_ANNOTATION`]. Returns false when the subset does not
/// exist.
pub fn inject_into_pod(
    spread: &WorkloadSpread,
    pod: &mut Value,
    subset_name: &str,
    generated_uid: &str,
) -> Result<bool, String> {
    let Some(subset) = spread.spec.subsets.iter().find(|subset| subset.name == subset_name) else {
        return Ok(false);
    };
    let spec = object_at(pod, "spec")?;
    if !subset.tolerations.is_empty() {
        let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
        if !tolerations.is_array() {
            *tolerations = json!([]);
        }
        if let Some(list) = tolerations.as_array_mut() {
            for toleration in &subset.tolerations {
                list.push(serde_json::to_value(toleration).map_err(|error| error.to_string())?);
            }
        }
    }
    let affinity = entry_object(spec, "affinity");
    let node_affinity = entry_object(affinity, "nodeAffinity");
    if !subset.preferred_node_selector.is_empty() {
        let preferred = node_affinity
            .entry("preferredDuringSchedulingIgnoredDuringExecution")
            .or_insert_with(|| json!([]));
        if !preferred.is_array() {
            *preferred = json!([]);
        }
        if let Some(list) = preferred.as_array_mut() {
            for term in &subset.preferred_node_selector {
                list.push(serde_json::to_value(term).map_err(|error| error.to_string())?);
            }
        }
    }
    if let Some(required) = &subset.required_node_selector {
        let selector = entry_object(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
        let current: Vec<NodeSelectorTerm> = match selector.get("nodeSelectorTerms") {
            Some(terms) => serde_json::from_value(terms.clone()).map_err(|error| error.to_string())?,
            None => Vec::new(),
        };
        let terms = combined_required_terms(&current, required);
        selector.insert(
            "nodeSelectorTerms".into(),
            serde_json::to_value(terms).map_err(|error| error.to_string())?,
        );
    }
    if is_patch_set(&subset.patch) {
        let before = pod.pointer("/spec/priorityClassName").cloned();
        crate::workloadspread::patch::merge_pod(pod, &subset.patch);
        if pod.pointer("/spec/priorityClassName").cloned() != before
            && let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut)
        {
            spec.remove("priority");
        }
    }
    let metadata = object_at(pod, "metadata")?;
    let annotations = entry_object(metadata, "annotations");
    let value = InjectWorkloadSpread {
        name: spread.metadata.name.clone().unwrap_or_default(),
        subset: subset_name.to_string(),
        uid: generated_uid.to_string(),
    };
    annotations.insert(MATCHED_WORKLOADSPREAD_ANNOTATION.into(), json!(value.to_annotation()));
    Ok(true)
}

fn is_patch_set(patch: &Value) -> bool {
    !patch.is_null() && patch.as_object().is_none_or(|object| !object.is_empty())
}

fn object_at<'a>(
    document: &'a mut Value,
    key: &str,
) -> Result<&'a mut serde_json::Map<String, Value>, String> {
    let object = document.as_object_mut().ok_or("the pod is not an object")?;
    Ok(entry_object(object, key))
}

fn entry_object<'a>(
    object: &'a mut serde_json::Map<String, Value>,
    key: &str,
) -> &'a mut serde_json::Map<String, Value> {
    let entry = object.entry(key.to_string()).or_insert_with(|| json!({}));
    if !entry.is_object() {
        *entry = json!({});
    }
    match entry {
        Value::Object(map) => map,
        _ => unreachable!("just made an object"),
    }
}

// ---------------------------------------------------------------------------------------------
// Controller decisions
// ---------------------------------------------------------------------------------------------

fn requirement_matches(value: Option<&str>, requirement: &NodeSelectorRequirement) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    match requirement.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|w| w == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|w| w == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(value), Some(bound)) = (
                value.and_then(|v| v.parse::<i64>().ok()),
                values.first().and_then(|b| b.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if requirement.operator == "Gt" { value > bound } else { value < bound }
        }
        _ => false,
    }
}

/// Whether a node satisfies one node selector term (an empty term matches nothing, as in
/// Kubernetes).
pub fn term_matches(node: &Node, term: &NodeSelectorTerm) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return false;
    }
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let name = node.metadata.name.clone().unwrap_or_default();
    expressions
        .iter()
        .all(|requirement| requirement_matches(labels.get(&requirement.key).map(String::as_str), requirement))
        && fields.iter().all(|requirement| {
            requirement.key == "metadata.name" && requirement_matches(Some(name.as_str()), requirement)
        })
}

/// Whether a pod already on `node` fits a subset, and how well (upstream `matchesSubset`):
/// the node's NoSchedule/NoExecute taints must be tolerated by the pod and the subset, and the
/// node must satisfy the combined required terms; the score is 100 x the preferred terms'
/// weight the node meets, + 10 when the pod already looks patched, + 1 when the subset still
/// has room. `None` when it does not fit.
pub fn matches_subset(
    pod: &Pod,
    node: &Node,
    subset: &WorkloadSpreadSubset,
    missing_replicas: i32,
) -> Option<i64> {
    let mut tolerations = pod.spec.as_ref().and_then(|spec| spec.tolerations.clone()).unwrap_or_default();
    tolerations.extend(subset.tolerations.iter().cloned());
    let untolerated =
        node.spec.as_ref().and_then(|spec| spec.taints.as_ref()).into_iter().flatten().any(|taint| {
            (taint.effect == "NoSchedule" || taint.effect == "NoExecute")
                && !tolerations.iter().any(|toleration| tolerates(toleration, taint))
        });
    if untolerated {
        return None;
    }
    if let Some(required) = &subset.required_node_selector {
        let pod_terms = pod
            .spec
            .as_ref()
            .and_then(|spec| spec.affinity.as_ref())
            .and_then(|affinity| affinity.node_affinity.as_ref())
            .and_then(|node_affinity| {
                node_affinity.required_during_scheduling_ignored_during_execution.as_ref()
            })
            .map(|selector| selector.node_selector_terms.clone())
            .unwrap_or_default();
        if !combined_required_terms(&pod_terms, required).iter().any(|term| term_matches(node, term)) {
            return None;
        }
    }
    let preferred_node_score: i64 = subset
        .preferred_node_selector
        .iter()
        .filter(|term| term_matches(node, &term.preference))
        .map(|term| i64::from(term.weight))
        .sum();
    let preferred_pod_score =
        if is_patch_set(&subset.patch) { pod_looks_patched(pod, &subset.patch) } else { 0 };
    let quota_score = i64::from(missing_replicas > 0);
    Some(preferred_node_score * 100 + preferred_pod_score * 10 + quota_score)
}

/// 1 when merging the patch (annotations aside) leaves the pod as it is.
fn pod_looks_patched(pod: &Pod, patch: &Value) -> i64 {
    let Ok(mut original) = serde_json::to_value(pod) else { return 0 };
    let mut patched = original.clone();
    crate::workloadspread::patch::merge_pod(&mut patched, patch);
    for document in [&mut original, &mut patched] {
        if let Some(metadata) = document.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("annotations");
        }
    }
    i64::from(original == patched)
}

/// The strategic merge patch that adopts a pod created before the WorkloadSpread into a subset
/// (upstream `patchFavoriteSubsetMetadataToPod`): the subset patch's metadata (unless the
/// WorkloadSpread says [`IGNORE_PATCH_EXISTING_PODS_ANNOTATION`]) plus the matched annotation.
pub fn existing_pod_patch(spread: &WorkloadSpread, subset: &WorkloadSpreadSubset) -> Value {
    let ignore = spread
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(IGNORE_PATCH_EXISTING_PODS_ANNOTATION))
        .is_some_and(|value| value.eq_ignore_ascii_case("true"));
    let mut metadata = if ignore {
        serde_json::Map::new()
    } else {
        subset.patch.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default()
    };
    let value = InjectWorkloadSpread {
        name: spread.metadata.name.clone().unwrap_or_default(),
        subset: subset.name.clone(),
        uid: String::new(),
    };
    let annotations = entry_object(&mut metadata, "annotations");
    annotations.insert(MATCHED_WORKLOADSPREAD_ANNOTATION.into(), json!(value.to_annotation()));
    json!({ "metadata": metadata })
}

fn not_matched(injected: Option<&InjectWorkloadSpread>, spread_name: &str) -> bool {
    injected.is_none_or(|injected| injected.name != spread_name || injected.subset.is_empty())
}

/// Where each pod of one version belongs: subset name (or [`FAKE_SUBSET_NAME`]) -> pod
/// indexes, and the pods to adopt (index, subset index) because they carry no record yet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grouping {
    /// Subset name -> indexes into the pods given.
    pub by_subset: BTreeMap<String, Vec<usize>>,
    /// Pods without a record that fit a subset: (pod index, subset index).
    pub adopt: Vec<(usize, usize)>,
}

/// Groups pods by subset (upstream `groupPodBySubset`): pods recorded in a subset of this
/// WorkloadSpread go there; the others, when their node fits a subset (best score first, in
/// subset order on ties), are adopted into it; the rest go to [`FAKE_SUBSET_NAME`].
pub fn group_pods_by_subset(
    spread: &WorkloadSpread,
    pods: &[&Pod],
    replicas: i32,
    node: &dyn Fn(&str) -> Option<Node>,
) -> Grouping {
    let spread_name = spread.metadata.name.clone().unwrap_or_default();
    let mut grouping = Grouping::default();
    grouping.by_subset.insert(FAKE_SUBSET_NAME.to_string(), Vec::new());
    let mut missing: BTreeMap<String, i64> = BTreeMap::new();
    for subset in &spread.spec.subsets {
        grouping.by_subset.insert(subset.name.clone(), Vec::new());
        let cap = subset_max_replicas(subset, replicas).ok().flatten().unwrap_or(i32::MAX);
        missing.insert(subset.name.clone(), i64::from(cap));
    }
    for pod in pods {
        let injected = injected(pod);
        if not_matched(injected.as_ref(), &spread_name) {
            continue;
        }
        if let Some(count) = injected.and_then(|injected| missing.get_mut(&injected.subset)) {
            *count -= 1;
        }
    }
    for (index, pod) in pods.iter().enumerate() {
        let injected = injected(pod);
        let subset_name = if not_matched(injected.as_ref(), &spread_name) {
            let node_name = node_name(pod);
            let favourite = if node_name.is_empty() {
                None
            } else {
                node(node_name).and_then(|node| {
                    let mut best: Option<(usize, i64)> = None;
                    for (subset_index, subset) in spread.spec.subsets.iter().enumerate() {
                        let room = missing.get(&subset.name).copied().unwrap_or(0);
                        let room =
                            i32::try_from(room.clamp(i64::from(i32::MIN), i64::from(i32::MAX))).unwrap_or(0);
                        if let Some(score) = matches_subset(pod, &node, subset, room)
                            && best.is_none_or(|(_, best)| score > best)
                        {
                            best = Some((subset_index, score));
                        }
                    }
                    best
                })
            };
            match favourite.and_then(|(subset_index, _)| {
                spread.spec.subsets.get(subset_index).map(|s| (subset_index, s))
            }) {
                Some((subset_index, subset)) => {
                    grouping.adopt.push((index, subset_index));
                    if let Some(count) = missing.get_mut(&subset.name) {
                        *count -= 1;
                    }
                    subset.name.clone()
                }
                None => FAKE_SUBSET_NAME.to_string(),
            }
        } else {
            injected.map(|injected| injected.subset).unwrap_or_default()
        };
        let slot = if grouping.by_subset.contains_key(&subset_name) {
            subset_name
        } else {
            FAKE_SUBSET_NAME.to_string()
        };
        grouping.by_subset.entry(slot).or_default().push(index);
    }
    grouping
}

fn elapsed(since: &Time, now: Timestamp) -> SignedDuration {
    now.duration_since(since.0)
}

fn over(since: &Time, timeout: Duration, now: Timestamp) -> bool {
    elapsed(since, now) > SignedDuration::try_from(timeout).unwrap_or(SignedDuration::MAX)
}

fn remaining(since: &Time, timeout: Duration, now: Timestamp) -> Duration {
    let left = SignedDuration::try_from(timeout).unwrap_or(SignedDuration::MAX) - elapsed(since, now);
    Duration::try_from(left).unwrap_or(Duration::ZERO)
}

/// Something the status computation noticed that deserves an Event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatusEvent {
    /// A pod recorded as being created never showed up (`CreatePodFailed`).
    CreatePodFailed(String),
    /// A pod recorded as being deleted is still there (`DeletePodFailed`).
    DeletePodFailed(String),
    /// An Adaptive subset is schedulable again (`RecoverSchedulable`).
    RecoverSchedulable(String),
}

/// The status computation's by-products: when to look again, and Events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusNotes {
    /// The earliest time a record or condition expires.
    pub requeue: Option<Duration>,
    /// Events to publish.
    pub events: Vec<StatusEvent>,
}

impl StatusNotes {
    fn push(&mut self, after: Duration) {
        self.requeue = Some(self.requeue.map_or(after, |current| current.min(after)));
    }
}

fn new_condition(status: &str, reason: &str, now: Timestamp) -> Condition {
    Condition {
        type_: WORKLOADSPREAD_SUBSET_SCHEDULABLE.to_string(),
        status: status.to_string(),
        // Whole seconds, as a `metav1.Time` holds once written: the five-minute recovery counts
        // from what upstream's controller reads back, not from a sub-second instant.
        last_transition_time: Time(Timestamp::from_second(now.as_second()).unwrap_or(now)),
        reason: reason.to_string(),
        message: String::new(),
        observed_generation: None,
    }
}

fn condition<'a>(status: Option<&'a WorkloadSpreadSubsetStatus>, type_: &str) -> Option<&'a Condition> {
    status?.conditions.iter().find(|condition| condition.type_ == type_)
}

/// Sets a condition as upstream does: unchanged when status and reason are the same, the
/// transition time kept when only the reason changes.
fn set_condition(status: &mut WorkloadSpreadSubsetStatus, mut condition: Condition) {
    if let Some(current) = status.conditions.iter().find(|current| current.type_ == condition.type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    status.conditions.retain(|current| current.type_ != condition.type_);
    status.conditions.push(condition);
}

/// Whether a pod the scheduler found no node for was created longer than `critical` ago
/// (upstream `GetTimeBeforePendingTimeout`), and otherwise how long it has left.
pub fn pending_timeout(pod: &Pod, critical: Duration, now: Timestamp) -> (bool, Option<Duration>) {
    if pod.metadata.deletion_timestamp.is_some() {
        return (false, None);
    }
    let status = pod.status.as_ref();
    if status.and_then(|status| status.phase.as_deref()) != Some("Pending") {
        return (false, None);
    }
    if !node_name(pod).is_empty() {
        return (false, None);
    }
    let unschedulable =
        status.and_then(|status| status.conditions.as_ref()).into_iter().flatten().any(|condition| {
            condition.type_ == "PodScheduled"
                && condition.status == "False"
                && condition.reason.as_deref() == Some("Unschedulable")
        });
    // Upstream counts from the pod's creation, not from the scheduler's verdict.
    let Some(since) = pod.metadata.creation_timestamp.clone().filter(|_| unschedulable) else {
        return (false, None);
    };
    if over(&since, critical, now) { (true, None) } else { (false, Some(remaining(&since, critical, now))) }
}

/// One subset's status from its pods (upstream `calculateWorkloadSpreadSubsetStatus`):
/// replicas are the active pods; `missingReplicas` is the cap minus active pods, plus pods
/// still being deleted, minus pods still being created; records older than their timeout are
/// dropped with an Event. `None` when the cap cannot be computed.
pub fn subset_status(
    subset: &WorkloadSpreadSubset,
    pods: &[&Pod],
    old: Option<&WorkloadSpreadSubsetStatus>,
    replicas: i32,
    now: Timestamp,
    notes: &mut StatusNotes,
) -> Option<WorkloadSpreadSubsetStatus> {
    let cap = match subset_max_replicas(subset, replicas) {
        Ok(None) => -1,
        Ok(Some(cap)) if cap >= 0 => cap,
        _ => return None,
    };
    let mut status =
        WorkloadSpreadSubsetStatus { name: subset.name.clone(), missing_replicas: cap, ..Default::default() };
    let mut old_creating = old.map(|old| old.creating_pods.clone()).unwrap_or_default();
    let old_deleting = old.map(|old| old.deleting_pods.clone()).unwrap_or_default();
    let mut active = 0;
    for pod in pods {
        let name = pod.metadata.name.clone().unwrap_or_default();
        match injected(pod).filter(|injected| !injected.uid.is_empty()) {
            Some(injected) => old_creating.remove(&injected.uid),
            None => old_creating.remove(&name),
        };
        if !is_pod_active(pod) {
            continue;
        }
        active += 1;
        if status.missing_replicas > 0 {
            status.missing_replicas -= 1;
        }
        if let Some(deleted_at) = old_deleting.get(&name) {
            if over(deleted_at, DELETE_POD_TIMEOUT, now) {
                notes.events.push(StatusEvent::DeletePodFailed(name.clone()));
            } else {
                status.deleting_pods.insert(name.clone(), deleted_at.clone());
                if status.missing_replicas < cap {
                    status.missing_replicas += 1;
                }
                notes.push(remaining(deleted_at, DELETE_POD_TIMEOUT, now));
            }
        }
    }
    status.replicas = active;
    for (key, created_at) in old_creating {
        if over(&created_at, CREATE_POD_TIMEOUT, now) {
            notes.events.push(StatusEvent::CreatePodFailed(key));
        } else {
            notes.push(remaining(&created_at, CREATE_POD_TIMEOUT, now));
            status.creating_pods.insert(key, created_at);
            if status.missing_replicas > 0 {
                status.missing_replicas -= 1;
            }
        }
    }
    Some(status)
}

/// The Adaptive strategy's view of one subset (upstream `rescheduleSubset`): pods pending
/// unschedulable for longer than the critical seconds mark the subset `Schedulable=False`
/// (`PodUnschedulable`) and are returned to be deleted; a subset marked so becomes schedulable
/// again five minutes after the mark.
pub fn reschedule_subset<'a>(
    spread_critical: Duration,
    pods: &[&'a Pod],
    status: &mut WorkloadSpreadSubsetStatus,
    old: Option<&WorkloadSpreadSubsetStatus>,
    now: Timestamp,
    notes: &mut StatusNotes,
) -> Vec<&'a Pod> {
    let mut failed = Vec::new();
    for pod in pods {
        let (timed_out, next) = pending_timeout(pod, spread_critical, now);
        if let Some(next) = next {
            notes.push(next);
        }
        if timed_out {
            failed.push(*pod);
        }
    }
    let unschedulable = !failed.is_empty();
    let Some(old_condition) = condition(old, WORKLOADSPREAD_SUBSET_SCHEDULABLE) else {
        let fresh = if unschedulable {
            new_condition("False", "PodUnschedulable", now)
        } else {
            new_condition("True", "Sufficient", now)
        };
        set_condition(status, fresh);
        return failed;
    };
    set_condition(status, old_condition.clone());
    if unschedulable {
        set_condition(status, new_condition("False", "PodUnschedulable", now));
    } else if old_condition.status == "False" {
        if over(&old_condition.last_transition_time, MAX_SCHEDULED_FAILED_DURATION, now) {
            notes.events.push(StatusEvent::RecoverSchedulable(status.name.clone()));
            set_condition(status, new_condition("True", "Sufficient", now));
        } else {
            notes.push(remaining(&old_condition.last_transition_time, MAX_SCHEDULED_FAILED_DURATION, now));
        }
    }
    failed
}

/// The Adaptive strategy's critical time, when it applies.
pub fn reschedule_critical(spread: &WorkloadSpread) -> Option<Duration> {
    let strategy = &spread.spec.schedule_strategy;
    if strategy.type_ != WorkloadSpreadScheduleStrategyType::Adaptive {
        return None;
    }
    let seconds = strategy.adaptive.as_ref()?.reschedule_critical_seconds?;
    u64::try_from(seconds).ok().filter(|seconds| *seconds > 0).map(Duration::from_secs)
}

/// All subsets' statuses (upstream `calculateWorkloadSpreadSubsetStatuses`), and the pods the
/// Adaptive strategy gives up on by subset. `None` when a cap cannot be computed.
pub fn subset_statuses<'a>(
    spread: &WorkloadSpread,
    old: &[WorkloadSpreadSubsetStatus],
    pods_by_subset: &BTreeMap<String, Vec<&'a Pod>>,
    replicas: i32,
    now: Timestamp,
    notes: &mut StatusNotes,
) -> Option<(Vec<WorkloadSpreadSubsetStatus>, PodsBySubset<'a>)> {
    let critical = reschedule_critical(spread);
    let mut statuses = Vec::with_capacity(spread.spec.subsets.len());
    let mut failed = BTreeMap::new();
    let last = spread.spec.subsets.len().saturating_sub(1);
    for (index, subset) in spread.spec.subsets.iter().enumerate() {
        let pods = pods_by_subset.get(&subset.name).map(Vec::as_slice).unwrap_or_default();
        let old_status = old.iter().find(|status| status.name == subset.name);
        let mut status = subset_status(subset, pods, old_status, replicas, now, notes)?;
        match critical {
            Some(critical) if index != last => {
                failed.insert(
                    subset.name.clone(),
                    reschedule_subset(critical, pods, &mut status, old_status, now, notes),
                );
            }
            Some(_) => {
                if let Some(old_condition) = condition(old_status, WORKLOADSPREAD_SUBSET_SCHEDULABLE) {
                    set_condition(&mut status, old_condition.clone());
                }
                set_condition(&mut status, new_condition("True", "Sufficient", now));
            }
            None => {
                status.conditions.retain(|condition| condition.type_ != WORKLOADSPREAD_SUBSET_SCHEDULABLE)
            }
        }
        statuses.push(status);
    }
    Some((statuses, failed))
}

fn is_empty_statuses(statuses: &[WorkloadSpreadSubsetStatus]) -> bool {
    statuses.iter().all(|status| {
        status.replicas == 0 && status.creating_pods.is_empty() && status.deleting_pods.is_empty()
    })
}

/// Pods by subset name.
pub type PodsBySubset<'a> = BTreeMap<String, Vec<&'a Pod>>;

/// The pods of one WorkloadSpread grouped by version, then subset.
pub type VersionedPods<'a> = BTreeMap<String, BTreeMap<String, Vec<&'a Pod>>>;

/// The whole status (upstream `calculateWorkloadSpreadStatus`): `subsetStatuses` from all pods,
/// `versionedSubsetStatuses` per version (versions without pods kept while they still record
/// something), and the pods to delete for the Adaptive strategy.
pub fn calculate_status<'a>(
    spread: &WorkloadSpread,
    versioned: &VersionedPods<'a>,
    replicas: i32,
    now: Timestamp,
    notes: &mut StatusNotes,
) -> Option<(WorkloadSpreadStatus, BTreeMap<String, Vec<&'a Pod>>)> {
    let old = spread.status.clone().unwrap_or_default();
    let mut all: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
    for by_subset in versioned.values() {
        for (subset, pods) in by_subset {
            all.entry(subset.clone()).or_default().extend(pods.iter().copied());
        }
    }
    let (all_statuses, failed) = subset_statuses(spread, &old.subset_statuses, &all, replicas, now, notes)?;
    let mut status = WorkloadSpreadStatus {
        observed_generation: spread.metadata.generation.unwrap_or_default(),
        subset_statuses: all_statuses,
        versioned_subset_statuses: BTreeMap::new(),
    };
    let mut quiet = StatusNotes::default();
    for (version, by_subset) in versioned {
        let old_version = old.versioned_subset_statuses.get(version).map(Vec::as_slice).unwrap_or_default();
        if let Some((statuses, _)) =
            subset_statuses(spread, old_version, by_subset, replicas, now, &mut quiet)
        {
            status.versioned_subset_statuses.insert(version.clone(), statuses);
        }
    }
    for (version, old_version) in &old.versioned_subset_statuses {
        if versioned.contains_key(version) {
            continue;
        }
        if let Some((statuses, _)) =
            subset_statuses(spread, old_version, &BTreeMap::new(), replicas, now, &mut quiet)
            && !is_empty_statuses(&statuses)
        {
            status.versioned_subset_statuses.insert(version.clone(), statuses);
        }
    }
    if let Some(requeue) = quiet.requeue {
        notes.push(requeue);
    }
    Some((status, failed))
}

/// Whether deletion costs are kept for this target kind (upstream
/// `isEffectiveKindForDeletionCost`).
pub fn deletion_cost_applies(target: &TargetReference) -> bool {
    matches!(target.kind.as_str(), "ReplicaSet" | "Deployment" | "CloneSet")
}

/// The deletion cost each active pod of one version should carry (upstream
/// `updateDeletionCostBySubset`): within a subset's cap `100 x (subsets - index)`, beyond it
/// (the pods `ActivePods` would delete first) and outside every subset `-100 x (index + 1)`;
/// `reverse` (an old version) counts subsets from the end. Returns pod -> cost; a pod whose
/// cost is "0" and has none is left out.
pub fn deletion_costs<'a>(
    spread: &WorkloadSpread,
    by_subset: &BTreeMap<String, Vec<&'a Pod>>,
    replicas: i32,
    reverse: bool,
) -> Vec<(&'a Pod, String)> {
    let count = spread.spec.subsets.len();
    let position = |index: usize| if reverse { count - index - 1 } else { index };
    let mut costs = Vec::new();
    let mut assign = |pods: Vec<&'a Pod>, value: i64| {
        let value = value.to_string();
        for pod in pods {
            let current = pod
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(kruise_crds::common::well_known::POD_DELETION_COST));
            if current == Some(&value) || (current.is_none() && value == "0") {
                continue;
            }
            costs.push((pod, value.clone()));
        }
    };
    let cost_of = |index: usize| {
        let index = i64::try_from(index).unwrap_or(i64::MAX);
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        (
            i64::from(POD_DELETION_COST_POSITIVE) * (count - index),
            i64::from(POD_DELETION_COST_NEGATIVE) * (index + 1),
        )
    };
    for (index, subset) in spread.spec.subsets.iter().enumerate() {
        let (positive_cost, negative_cost) = cost_of(position(index));
        let active: Vec<&Pod> = by_subset
            .get(&subset.name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|pod| is_pod_active(pod))
            .collect();
        let cap = match subset_max_replicas(subset, replicas) {
            Ok(None) => None,
            Ok(Some(cap)) if cap >= 0 => Some(usize::try_from(cap).unwrap_or(0)),
            _ => continue,
        };
        match cap {
            Some(cap) if active.len() > cap => {
                let mut order: Vec<usize> = (0..active.len()).collect();
                order.sort_by(|a, b| compare_active(active[*a], active[*b]));
                let extra = active.len() - cap;
                let negative = order.iter().take(extra).map(|i| active[*i]).collect();
                let positive = order.iter().skip(extra).map(|i| active[*i]).collect();
                assign(positive, positive_cost);
                assign(negative, negative_cost);
            }
            _ => assign(active, positive_cost),
        }
    }
    let outside: Vec<&Pod> = by_subset
        .get(FAKE_SUBSET_NAME)
        .into_iter()
        .flatten()
        .copied()
        .filter(|pod| is_pod_active(pod))
        .collect();
    if !outside.is_empty() {
        let (_, negative_cost) = cost_of(count);
        assign(outside, negative_cost);
    }
    costs
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kube::ResourceExt;
    use pretty_assertions::assert_eq;

    use super::*;

    const UID: &str = "a03eb001-27eb-4713-b634-7c46f6861758";

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn time(text: &str) -> Time {
        Time(ts(text))
    }

    /// Upstream's `podDemo`: `test-pod-1` of CloneSet `cloneset-test`.
    fn pod_demo() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "test-pod-1", "namespace": "default", "annotations": {},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cloneset-test",
                    "controller": true, "uid": UID, "blockOwnerDeletion": true}]},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.15.1"}]}
        }))
        .unwrap()
    }

    /// Upstream's `workloadSpreadDemo`: one subset `subset-a` with maxReplicas 5.
    fn spread_demo() -> WorkloadSpread {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
            "metadata": {"name": "test-ws", "namespace": "default"},
            "spec": {
                "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cloneset-test"},
                "subsets": [{
                    "name": "subset-a",
                    "requiredNodeSelector": {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["ack"]},
                            {"key": "sigma.ali/resource-pool", "operator": "In", "values": ["lark"]}],
                        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["i-8vbhlh6rte2w5d1k2sgn", "i-8vbhlh6rte2vnxlq8ztc"]}]},
                    "preferredNodeSelector": [{"weight": 5, "preference": {"matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["cn-zhangjiakou-a"]}]}}],
                    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
                    "patch": {"metadata": {"labels": {"subset": "subset-a"}, "annotations": {"subset": "subset-a"}}},
                    "maxReplicas": 5
                }]
            },
            "status": {
                "observedGeneration": 10,
                "subsetStatuses": [{"name": "subset-a", "missingReplicas": 5}],
                "versionedSubsetStatuses": {"versionIgnored": [{"name": "subset-a", "missingReplicas": 5}]}
            }
        }))
        .unwrap()
    }

    fn versioned(spread: &WorkloadSpread) -> Vec<WorkloadSpreadSubsetStatus> {
        spread
            .status
            .as_ref()
            .unwrap()
            .versioned_subset_statuses
            .get(VERSION_IGNORED)
            .cloned()
            .unwrap_or_default()
    }

    fn set_versioned(spread: &mut WorkloadSpread, statuses: Vec<WorkloadSpreadSubsetStatus>) {
        spread.status.as_mut().unwrap().versioned_subset_statuses.insert(VERSION_IGNORED.into(), statuses);
    }

    #[test]
    fn workload_spread_mutating_pod_table() {
        // Upstream TestWorkloadSpreadMutatingPod, the bookkeeping half: (name, operation,
        // prepare, want subset, want missingReplicas, want creating, want deleting).
        let now = time("2026-01-01T00:00:00Z");
        let injected_a =
            InjectWorkloadSpread { name: "test-ws".into(), subset: "subset-a".into(), uid: String::new() };
        let with_subset_b = |spread: &mut WorkloadSpread| {
            spread.spec.subsets[0].max_replicas = Some(IntOrString::Int(0));
            spread.spec.subsets.push(WorkloadSpreadSubset { name: "subset-b".into(), ..Default::default() });
            set_versioned(
                spread,
                vec![
                    WorkloadSpreadSubsetStatus {
                        name: "subset-a".into(),
                        missing_replicas: 0,
                        ..Default::default()
                    },
                    WorkloadSpreadSubsetStatus {
                        name: "subset-b".into(),
                        missing_replicas: -1,
                        ..Default::default()
                    },
                ],
            );
        };
        type Prepare = Box<dyn Fn(&mut WorkloadSpread)>;
        let missing = |value: i32| -> Prepare {
            Box::new(move |spread: &mut WorkloadSpread| {
                let mut statuses = versioned(spread);
                statuses[0].missing_replicas = value;
                set_versioned(spread, statuses);
            })
        };
        type Case = (&'static str, Operation, Prepare, Option<&'static str>, bool, i32, usize, usize);
        let cases: Vec<Case> = vec![
            (
                "operation = create, matched workloadSpread, MissingReplicas = 5",
                Operation::Create,
                missing(5),
                Some("subset-a"),
                true,
                4,
                1,
                0,
            ),
            (
                "operation = create, matched workloadSpread, subset-a MissingReplicas = 0, subset-b MissingReplicas = -1",
                Operation::Create,
                Box::new(with_subset_b),
                Some("subset-b"),
                false,
                -1,
                0,
                0,
            ),
            (
                "operation = create, matched workloadSpread, MissingReplicas = 0",
                Operation::Create,
                missing(0),
                None,
                false,
                0,
                0,
                0,
            ),
            (
                "operation = create, matched workloadSpread, MissingReplicas = -1",
                Operation::Create,
                missing(-1),
                Some("subset-a"),
                false,
                -1,
                0,
                0,
            ),
            (
                "operation = create, matched workloadSpread, MissingReplicas = 4, creatingPods[test-pod-1]",
                Operation::Create,
                Box::new(|spread: &mut WorkloadSpread| {
                    let mut statuses = versioned(spread);
                    statuses[0].missing_replicas = 4;
                    statuses[0].creating_pods.insert("test-pod-1".into(), time("2025-12-31T23:59:00Z"));
                    set_versioned(spread, statuses);
                }),
                Some("subset-a"),
                false,
                4,
                1,
                0,
            ),
            (
                "operation = delete, matched workloadSpread, MissingReplicas = 0",
                Operation::Delete,
                missing(0),
                Some("subset-a"),
                true,
                1,
                0,
                1,
            ),
            (
                "operation = eviction, matched workloadSpread, MissingReplicas = 0",
                Operation::Eviction,
                missing(0),
                Some("subset-a"),
                true,
                1,
                0,
                1,
            ),
            (
                "operation = delete, matched workloadSpread, MissingReplicas = 0, DeletingPods[test-pod-1]",
                Operation::Delete,
                Box::new(|spread: &mut WorkloadSpread| {
                    let mut statuses = versioned(spread);
                    statuses[0].missing_replicas = 0;
                    statuses[0].deleting_pods.insert("test-pod-1".into(), time("2025-12-31T23:59:00Z"));
                    set_versioned(spread, statuses);
                }),
                None,
                false,
                0,
                0,
                1,
            ),
            (
                "operation = delete, matched workloadSpread, MissingReplicas = -1",
                Operation::Delete,
                missing(-1),
                Some("subset-a"),
                false,
                -1,
                0,
                0,
            ),
        ];
        for (
            name,
            operation,
            prepare,
            want_subset,
            want_changed,
            want_missing,
            want_creating,
            want_deleting,
        ) in cases
        {
            let mut spread = spread_demo();
            prepare(&mut spread);
            let injected = (operation != Operation::Create).then_some(&injected_a);
            let update =
                update_subset_for_pod(&mut spread, &pod_demo(), injected, operation, 0, &now, &|| {
                    "uid".into()
                });
            assert_eq!(update.subset.as_deref(), want_subset, "{name}");
            assert_eq!(update.changed, want_changed, "{name}");
            let statuses = versioned(&spread);
            let status =
                statuses.iter().find(|s| Some(s.name.as_str()) == want_subset.or(Some("subset-a"))).unwrap();
            assert_eq!(status.missing_replicas, want_missing, "{name}");
            assert_eq!(status.creating_pods.len(), want_creating, "{name}");
            assert_eq!(status.deleting_pods.len(), want_deleting, "{name}");
        }

        // "operation = delete, not matched workloadSpread subset, MissingReplicas = 0"
        let mut spread = spread_demo();
        let other =
            InjectWorkloadSpread { name: "test-ws".into(), subset: "subset-b".into(), uid: String::new() };
        let update = update_subset_for_pod(
            &mut spread,
            &pod_demo(),
            Some(&other),
            Operation::Delete,
            0,
            &now,
            &|| "uid".into(),
        );
        assert_eq!(update, SubsetUpdate::default());
    }

    #[test]
    fn workload_spread_create_pod_without_full_name() {
        // Upstream TestWorkloadSpreadCreatePodWithoutFullName: the record is keyed by a made-up
        // UID that the pod's annotation carries.
        let mut spread = spread_demo();
        let mut pod = pod_demo();
        pod.metadata.name = None;
        pod.metadata.generate_name = Some("test-pod-".into());
        let update = update_subset_for_pod(
            &mut spread,
            &pod,
            None,
            Operation::Create,
            0,
            &time("2026-01-01T00:00:00Z"),
            &|| "generated".into(),
        );
        assert_eq!(update.generated_uid, "generated");
        assert!(versioned(&spread)[0].creating_pods.contains_key("generated"));
        let mut value = serde_json::to_value(&pod).unwrap();
        assert!(inject_into_pod(&spread, &mut value, "subset-a", &update.generated_uid).unwrap());
        let annotation =
            value["metadata"]["annotations"][MATCHED_WORKLOADSPREAD_ANNOTATION].as_str().unwrap();
        assert_eq!(annotation, r#"{"name":"test-ws","subset":"subset-a","uid":"generated"}"#);
    }

    #[test]
    fn injecting_a_subset_into_a_pod() {
        // Upstream TestWorkloadSpreadMutatingPod "operation = create, matched workloadSpread,
        // MissingReplicas = 5" (what the pod gets).
        let spread = spread_demo();
        let mut value = serde_json::to_value(pod_demo()).unwrap();
        assert!(inject_into_pod(&spread, &mut value, "subset-a", "").unwrap());
        let pod: Pod = serde_json::from_value(value).unwrap();
        assert_eq!(pod.labels().get("subset").map(String::as_str), Some("subset-a"));
        assert_eq!(pod.annotations().get("subset").map(String::as_str), Some("subset-a"));
        assert_eq!(
            pod.annotations().get(MATCHED_WORKLOADSPREAD_ANNOTATION).map(String::as_str),
            Some(r#"{"name":"test-ws","subset":"subset-a"}"#)
        );
        let spec = pod.spec.unwrap();
        assert_eq!(spec.tolerations.unwrap().len(), 1);
        let node_affinity = spec.affinity.unwrap().node_affinity.unwrap();
        assert_eq!(node_affinity.preferred_during_scheduling_ignored_during_execution.unwrap().len(), 1);
        let terms =
            node_affinity.required_during_scheduling_ignored_during_execution.unwrap().node_selector_terms;
        assert_eq!(terms.len(), 1);
        assert_eq!(terms[0].match_expressions.as_ref().unwrap().len(), 2);
        assert_eq!(terms[0].match_fields.as_ref().unwrap().len(), 1);

        // The required term is ANDed into each of the pod's own terms.
        let mut value = serde_json::to_value(pod_demo()).unwrap();
        value["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"matchExpressions": [{"key": "b", "operator": "Exists"}]}]}}});
        inject_into_pod(&spread, &mut value, "subset-a", "").unwrap();
        let terms = value.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms").unwrap();
        assert_eq!(terms[0]["matchExpressions"].as_array().unwrap().len(), 3);
        assert_eq!(terms[1]["matchExpressions"].as_array().unwrap().len(), 3);
        assert!(!inject_into_pod(&spread, &mut value, "no-such-subset", "").unwrap());
    }

    #[test]
    fn pod_priority_class_name_is_patched() {
        // Upstream "operation = create, pod priority class name is patched".
        let mut spread = spread_demo();
        spread.spec.subsets[0].patch = json!({"spec": {"priorityClassName": "high"}});
        let mut value = serde_json::to_value(pod_demo()).unwrap();
        value["spec"]["priorityClassName"] = json!("low");
        value["spec"]["priority"] = json!(10);
        inject_into_pod(&spread, &mut value, "subset-a", "").unwrap();
        assert_eq!(value["spec"]["priorityClassName"], "high");
        assert!(value["spec"].get("priority").is_none(), "a changed class drops the resolved priority");
    }

    #[test]
    fn patch_metadata_and_container_resources() {
        // Upstream TestPatchMetadata and TestPatchContainerResource.
        let mut spread = spread_demo();
        spread.spec.subsets[0].patch = json!({
            "metadata": {"labels": {"subset": "a", "app": null}},
            "spec": {"containers": [{"name": "nginx", "resources": {"limits": {"cpu": "2"}}}]}
        });
        let mut value = serde_json::to_value(pod_demo()).unwrap();
        value["metadata"]["labels"] = json!({"app": "web", "keep": "yes"});
        inject_into_pod(&spread, &mut value, "subset-a", "").unwrap();
        assert_eq!(value["metadata"]["labels"], json!({"keep": "yes", "subset": "a"}));
        assert_eq!(value["spec"]["containers"][0]["image"], "nginx:1.15.1");
        assert_eq!(value["spec"]["containers"][0]["resources"]["limits"]["cpu"], "2");
    }

    #[test]
    fn get_parent_name_and_ordinal() {
        // Upstream TestGetParentNameAndOrdinal.
        for (name, want) in [("sts-0", 0), ("sts-12", 12), ("sts", -1), ("sts-", -1), ("sts-a1", -1)] {
            assert_eq!(pod_ordinal(name), want, "{name}");
        }
    }

    #[test]
    fn statefulset_pods_fill_subsets_by_ordinal() {
        let mut spread = spread_demo();
        spread.spec.target_reference.as_mut().unwrap().kind = "StatefulSet".into();
        spread.spec.subsets[0].max_replicas = Some(IntOrString::Int(2));
        spread.spec.subsets.push(WorkloadSpreadSubset { name: "subset-b".into(), ..Default::default() });
        assert_eq!(statefulset_subset_for_pod(&spread, "sts-0").as_deref(), Some("subset-a"));
        assert_eq!(statefulset_subset_for_pod(&spread, "sts-1").as_deref(), Some("subset-a"));
        assert_eq!(statefulset_subset_for_pod(&spread, "sts-2").as_deref(), Some("subset-b"));
        // An unschedulable subset is skipped.
        spread.status.as_mut().unwrap().subset_statuses[0].conditions =
            vec![new_condition("False", "PodUnschedulable", ts("2026-01-01T00:00:00Z"))];
        assert_eq!(statefulset_subset_for_pod(&spread, "sts-0").as_deref(), Some("subset-b"));
    }

    #[test]
    fn initialized_subset_statuses_table() {
        // Upstream TestInitializedSubsetStatuses.
        let two = |a: IntOrString, b: IntOrString| {
            let mut spread = spread_demo();
            spread.spec.subsets[0].max_replicas = Some(a);
            spread.spec.subsets.push(WorkloadSpreadSubset {
                name: "subset-b".into(),
                max_replicas: Some(b),
                ..Default::default()
            });
            spread
        };
        let cases = [
            (
                "workload not found",
                two(IntOrString::String("20%".into()), IntOrString::String("80%".into())),
                0,
                vec![0, 0],
            ),
            (
                "cloneSet with absolute number settings",
                two(IntOrString::Int(3), IntOrString::Int(2)),
                5,
                vec![3, 2],
            ),
            (
                "cloneSet with percentage settings",
                two(IntOrString::String("20%".into()), IntOrString::String("80%".into())),
                5,
                vec![1, 4],
            ),
        ];
        for (name, spread, replicas, want) in cases {
            let got: Vec<i32> =
                initialized_subset_statuses(&spread, replicas).iter().map(|s| s.missing_replicas).collect();
            assert_eq!(got, want, "{name}");
        }
        let mut unlimited = spread_demo();
        unlimited.spec.subsets[0].max_replicas = None;
        assert_eq!(initialized_subset_statuses(&unlimited, 5)[0].missing_replicas, -1);
        assert!(has_percent_subset(&two(IntOrString::Int(1), IntOrString::String("50%".into()))));
        assert!(!has_percent_subset(&two(IntOrString::Int(1), IntOrString::Int(2))));
    }

    #[test]
    fn get_pod_version_table() {
        // Upstream TestGetPodVersion.
        let pod = |kind: &str, labels: Value| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": "p", "labels": labels,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": "w", "uid": "u", "controller": true}]}}))
            .unwrap()
        };
        let cases = [
            ("short hash only", pod("ReplicaSet", json!({"controller-revision-hash": "6d8f9"})), "6d8f9"),
            ("long hash only", pod("ReplicaSet", json!({"controller-revision-hash": "web-6d8f9"})), "6d8f9"),
            ("template hash only", pod("ReplicaSet", json!({"pod-template-hash": "7b5c"})), "7b5c"),
            (
                "template hash and long hash",
                pod(
                    "ReplicaSet",
                    json!({"pod-template-hash": "7b5c", "controller-revision-hash": "web-6d8f9"}),
                ),
                "7b5c",
            ),
            ("ignored pod", pod("CloneSet", json!({"pod-template-hash": "7b5c"})), VERSION_IGNORED),
        ];
        for (name, pod, want) in cases {
            assert_eq!(pod_version(&pod), want, "{name}");
        }
    }

    #[test]
    fn is_reference_equal_table() {
        // Upstream TestIsReferenceEqual (the direct comparison).
        let target = |api_version: &str, name: &str| TargetReference {
            api_version: api_version.into(),
            kind: "CloneSet".into(),
            name: name.into(),
        };
        let owner = |api_version: &str, name: &str| OwnerReference {
            api_version: api_version.into(),
            kind: "CloneSet".into(),
            name: name.into(),
            uid: "u".into(),
            ..Default::default()
        };
        let cases = [
            (
                "ApiVersion, Kind, Name equals",
                target("apps.kruise.io/v1alpha1", "a"),
                owner("apps.kruise.io/v1alpha1", "a"),
                true,
            ),
            (
                "Group, Kind, Name equal, but Version not equal",
                target("apps.kruise.io/v1beta1", "a"),
                owner("apps.kruise.io/v1alpha1", "a"),
                true,
            ),
            (
                "Kind, Name equals, but ApiVersion not equal",
                target("apps/v1", "a"),
                owner("apps.kruise.io/v1alpha1", "a"),
                false,
            ),
            (
                "ApiVersion, Kind equals, but name not equal",
                target("apps.kruise.io/v1alpha1", "a"),
                owner("apps.kruise.io/v1alpha1", "b"),
                false,
            ),
        ];
        for (name, target, owner, want) in cases {
            assert_eq!(same_reference(&target, &owner), want, "{name}");
        }
    }

    #[test]
    fn filter_reference_table() {
        // Upstream TestFilterReference: which owners are workloads WorkloadSpread handles.
        let owner = |api_version: &str, kind: &str| OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            ..Default::default()
        };
        let none = CustomWorkloadWhiteList::default();
        assert!(matches_reference(&owner("apps/v1", "ReplicaSet"), &none));
        assert!(matches_reference(&owner("apps.kruise.io/v1beta1", "StatefulSet"), &none));
        assert!(matches_reference(&owner("batch/v1", "Job"), &none));
        assert!(!matches_reference(&owner("apps/v1", "DaemonSet"), &none));
        assert!(!matches_reference(&owner("apps/v1", "CloneSet"), &none));
        let custom: CustomWorkloadWhiteList = serde_json::from_value(json!({"workloads": [
            {"Group": "kubeflow.org", "Version": "v1", "Kind": "TFJob", "replicasPath": "spec.replicas",
             "subResources": [{"Group": "apps.kruise.io", "Version": "v1alpha1", "Kind": "DaemonSet"}]}]}))
        .unwrap();
        assert!(matches_reference(&owner("kubeflow.org/v1", "TFJob"), &custom));
        assert!(matches_reference(&owner("apps.kruise.io/v1alpha1", "DaemonSet"), &custom));
    }

    #[test]
    fn target_filter_selects_pods() {
        let labels: BTreeMap<String, String> = [("role".to_string(), "worker".to_string())].into();
        let filter = |selector: Option<Value>| TargetFilter {
            selector: selector.map(|s| serde_json::from_value(s).unwrap()),
            replicas_path_list: Vec::new(),
        };
        assert!(is_pod_selected(None, &labels));
        assert!(is_pod_selected(Some(&filter(Some(json!({"matchLabels": {"role": "worker"}})))), &labels));
        assert!(!is_pod_selected(Some(&filter(Some(json!({"matchLabels": {"role": "ps"}})))), &labels));
        assert!(
            !is_pod_selected(Some(&filter(None)), &labels),
            "a filter without a selector selects nothing"
        );
    }

    // -- controller -------------------------------------------------------------------------

    /// Upstream's `matchSubsetDemo`, `matchPodDemo`, `matchNodeDemo`.
    fn match_subset_demo() -> WorkloadSpreadSubset {
        serde_json::from_value(json!({
            "name": "subset-a", "maxReplicas": 5,
            "tolerations": [{"key": "apps.kruise.io/toleration", "operator": "Equal", "value": "true"}],
            "requiredNodeSelector": {"matchExpressions": [{"key": "apps.kruise.io/schedule-required", "operator": "In", "values": ["true"]}]},
            "preferredNodeSelector": [{"weight": 100, "preference": {"matchExpressions": [{"key": "apps.kruise.io/schedule-preferred", "operator": "In", "values": ["true"]}]}}],
            "patch": {"metadata": {"labels": {"apps.kruise.io/patch-label": "true"}, "annotations": {"apps.kruise.io/patch-annotation": "true"}}}
        }))
        .unwrap()
    }

    fn match_pod_demo() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"annotations": {"apps.kruise.io/patch-annotation": "true"}, "labels": {"apps.kruise.io/patch-label": "true"}},
            "spec": {"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [
                    {"key": "apps.kruise.io/is-test", "operator": "In", "values": ["true"]},
                    {"key": "apps.kruise.io/is-unit-test", "operator": "In", "values": ["true"]}]}]}}}}
        }))
        .unwrap()
    }

    fn match_node_demo() -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": "node", "labels": {"apps.kruise.io/is-test": "true", "apps.kruise.io/is-unit-test": "true",
                "apps.kruise.io/schedule-required": "true", "apps.kruise.io/schedule-preferred": "true"}},
            "spec": {"taints": [{"key": "apps.kruise.io/toleration", "value": "true", "effect": "NoSchedule"}]}
        }))
        .unwrap()
    }

    #[test]
    fn match_subset_table() {
        // Upstream TestMatchSubset.
        type Edit = fn(&mut WorkloadSpreadSubset, &mut Node, &mut Pod);
        let cases: [(&str, Option<i64>, Edit); 5] = [
            ("match=true, Score=10010", Some(10010), |_, _, _| {}),
            ("match=true, Score=10000", Some(10000), |_, _, pod| {
                pod.labels_mut().insert("apps.kruise.io/patch-label".into(), "false".into());
                pod.annotations_mut().insert("apps.kruise.io/patch-annotation".into(), "false".into());
            }),
            ("match=true, Score=10, preferred key not match", Some(10), |_, node, _| {
                node.labels_mut().insert("apps.kruise.io/schedule-preferred".into(), "false".into());
            }),
            ("match=false, Score=-1, required key not match", None, |_, node, _| {
                node.labels_mut().insert("apps.kruise.io/schedule-required".into(), "false".into());
            }),
            ("match=false, Score=-1, toleration key not match", None, |subset, _, _| {
                subset.tolerations[0].value = Some("false".into());
            }),
        ];
        for (name, want, edit) in cases {
            let (mut subset, mut node, mut pod) = (match_subset_demo(), match_node_demo(), match_pod_demo());
            edit(&mut subset, &mut node, &mut pod);
            assert_eq!(matches_subset(&pod, &node, &subset, 0), want, "{name}");
        }
    }

    fn pod_named(name: &str, subset: Option<&str>, phase: &str) -> Pod {
        let annotations = match subset {
            Some(subset) => {
                json!({MATCHED_WORKLOADSPREAD_ANNOTATION: format!(r#"{{"name":"test-ws","subset":"{subset}"}}"#)})
            }
            None => json!({}),
        };
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "annotations": annotations,
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cloneset-test", "controller": true, "uid": UID}]},
            "spec": {"containers": [{"name": "nginx"}], "nodeName": "node"},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": if phase == "Running" { "True" } else { "False" }}]}
        }))
        .unwrap()
    }

    fn reconcile_status(
        spread: &WorkloadSpread,
        pods: &[Pod],
        replicas: i32,
        now: Timestamp,
    ) -> (WorkloadSpreadStatus, StatusNotes) {
        let refs: Vec<&Pod> = pods.iter().collect();
        let grouping = group_pods_by_subset(spread, &refs, replicas, &|_| None);
        let mut by_subset: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
        for (subset, indexes) in grouping.by_subset {
            by_subset.insert(subset, indexes.iter().map(|i| refs[*i]).collect());
        }
        let versioned: VersionedPods<'_> = [(VERSION_IGNORED.to_string(), by_subset)].into();
        let mut notes = StatusNotes::default();
        let (status, _) = calculate_status(spread, &versioned, replicas, now, &mut notes).unwrap();
        (status, notes)
    }

    #[test]
    fn workload_spread_reconcile_table() {
        // Upstream TestWorkloadSpreadReconcile: (name, maxReplicas, replicas, pods, creating,
        // deleting, want (replicas, missing, creating, deleting)).
        let now = ts("2026-01-01T00:01:00Z");
        let recent = time("2026-01-01T00:00:50Z");
        let stale = time("2026-01-01T00:00:00Z");
        let running = |n: usize| {
            (0..n)
                .map(|i| pod_named(&format!("test-pod-{i}"), Some("subset-a"), "Running"))
                .collect::<Vec<_>>()
        };
        type Case = (
            &'static str,
            IntOrString,
            i32,
            Vec<Pod>,
            Vec<(&'static str, Time)>,
            Vec<(&'static str, Time)>,
            (i32, i32, usize, usize),
        );
        let cases: Vec<Case> = vec![
            (
                "one subset, create zero pod, maxReplicas = 5, missingReplicas = 5",
                IntOrString::Int(5),
                5,
                vec![],
                vec![],
                vec![],
                (0, 5, 0, 0),
            ),
            (
                "create one pod, maxReplicas = 5, missingReplicas = 4",
                IntOrString::Int(5),
                5,
                running(1),
                vec![],
                vec![],
                (1, 4, 0, 0),
            ),
            (
                "create one pod, maxReplicas = 100%, missingReplicas = 4",
                IntOrString::String("100%".into()),
                5,
                running(1),
                vec![],
                vec![],
                (1, 4, 0, 0),
            ),
            (
                "create one pod, maxReplicas = 80%, missingReplicas = 3",
                IntOrString::String("80%".into()),
                5,
                running(1),
                vec![],
                vec![],
                (1, 3, 0, 0),
            ),
            (
                "create two pods, one failed but no timeout, maxReplicas = 5, missingReplicas = 3",
                IntOrString::Int(5),
                5,
                running(1),
                vec![("test-pod-1", recent.clone())],
                vec![],
                (1, 3, 1, 0),
            ),
            (
                "create two pod, one failed and timeout, maxReplicas = 5, missingReplicas = 4",
                IntOrString::Int(5),
                5,
                running(1),
                vec![("test-pod-1", stale.clone())],
                vec![],
                (1, 4, 0, 0),
            ),
            (
                "create two pods, two succeed, maxReplicas = 5, missingReplicas = 3",
                IntOrString::Int(5),
                5,
                running(2),
                vec![("test-pod-0", recent.clone()), ("test-pod-1", recent.clone())],
                vec![],
                (2, 3, 0, 0),
            ),
            (
                "create five pods, all succeed, maxReplicas = 5, missingReplicas = 0",
                IntOrString::Int(5),
                5,
                running(5),
                vec![],
                vec![],
                (5, 0, 0, 0),
            ),
            (
                "create five pods, all succeed and remove one, maxReplicas = 5, missingReplicas = 1",
                IntOrString::Int(5),
                5,
                running(4),
                vec![],
                vec![("test-pod-4", recent.clone())],
                (4, 1, 0, 0),
            ),
            (
                "create five pods, all succeed and remove one failed but no timeout, maxReplicas = 5, missingReplicas = 1",
                IntOrString::Int(5),
                5,
                running(5),
                vec![],
                vec![("test-pod-4", recent.clone())],
                (5, 1, 0, 1),
            ),
            (
                "create five pods, all succeed, remove one failed and timeout, maxReplicas = 5, missingReplicas = 0",
                IntOrString::Int(5),
                5,
                running(5),
                vec![],
                vec![("test-pod-4", stale.clone())],
                (5, 0, 0, 0),
            ),
        ];
        for (name, cap, replicas, pods, creating, deleting, want) in cases {
            let mut spread = spread_demo();
            spread.spec.subsets[0].max_replicas = Some(cap);
            let status = &mut spread.status.as_mut().unwrap().subset_statuses[0];
            status.creating_pods = creating.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            status.deleting_pods = deleting.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            let (status, _) = reconcile_status(&spread, &pods, replicas, now);
            let got = &status.subset_statuses[0];
            assert_eq!(
                (got.replicas, got.missing_replicas, got.creating_pods.len(), got.deleting_pods.len()),
                want,
                "{name}"
            );
            assert_eq!(status.observed_generation, spread.metadata.generation.unwrap_or_default(), "{name}");
        }
    }

    #[test]
    fn delay_reconcile_table() {
        // Upstream TestDelayReconcile: records not yet timed out ask to be looked at again when
        // the first one expires.
        let now = ts("2026-01-01T00:00:10Z");
        let mut spread = spread_demo();
        let status = &mut spread.status.as_mut().unwrap().subset_statuses[0];
        status.creating_pods.insert("test-pod-1".into(), time("2026-01-01T00:00:00Z"));
        status.deleting_pods.insert("test-pod-0".into(), time("2026-01-01T00:00:05Z"));
        let pods = vec![pod_named("test-pod-0", Some("subset-a"), "Running")];
        let (_, notes) = reconcile_status(&spread, &pods, 5, now);
        assert_eq!(
            notes.requeue,
            Some(Duration::from_secs(10)),
            "the deletion record expires first (15 s after 00:05)"
        );
    }

    #[test]
    fn manage_the_pods_that_were_created_before_workloadspread() {
        // Upstream TestManagerExistingPods: a pod without a record is adopted into the subset
        // whose nodes it runs on, with the subset's patch metadata.
        let mut spread = spread_demo();
        spread.spec.subsets = vec![match_subset_demo()];
        spread.spec.subsets[0].preferred_node_selector.clear();
        let mut other = match_subset_demo();
        other.name = "subset-b".into();
        other.required_node_selector = Some(
            serde_json::from_value(
                json!({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}),
            )
            .unwrap(),
        );
        spread.spec.subsets.push(other);
        let pod = pod_named("old-pod", None, "Running");
        let refs = vec![&pod];
        let node = match_node_demo();
        let grouping =
            group_pods_by_subset(&spread, &refs, 5, &|name| (name == "node").then(|| node.clone()));
        assert_eq!(grouping.adopt, vec![(0, 0)]);
        assert_eq!(grouping.by_subset["subset-a"], vec![0]);
        let patch = existing_pod_patch(&spread, &spread.spec.subsets[0]);
        assert_eq!(patch["metadata"]["labels"]["apps.kruise.io/patch-label"], "true");
        assert_eq!(
            patch["metadata"]["annotations"][MATCHED_WORKLOADSPREAD_ANNOTATION],
            r#"{"name":"test-ws","subset":"subset-a"}"#
        );
        // A pod on a node no subset fits stays outside.
        let grouping = group_pods_by_subset(&spread, &refs, 5, &|_| None);
        assert!(grouping.adopt.is_empty());
        assert_eq!(grouping.by_subset[FAKE_SUBSET_NAME], vec![0]);
        // With the ignore annotation only the matched annotation is written.
        spread.metadata.annotations =
            Some([(IGNORE_PATCH_EXISTING_PODS_ANNOTATION.to_string(), "true".to_string())].into());
        let patch = existing_pod_patch(&spread, &spread.spec.subsets[0]);
        assert!(patch["metadata"].get("labels").is_none());
    }

    #[test]
    fn subset_pod_deletion_cost_table() {
        // Upstream TestSubsetPodDeletionCost: (name, subsets, subset index, maxReplicas, pods
        // (phase), want costs).
        type Case = (&'static str, usize, usize, Option<i32>, Vec<&'static str>, Vec<&'static str>);
        let cases: Vec<Case> = vec![
            (
                "pods number == maxReplicas, subsetsLen = 2, subsetIndex = 0, maxReplicas is 3, pods number is 3",
                2,
                0,
                Some(3),
                vec!["Running"; 3],
                vec!["200", "200", "200"],
            ),
            (
                "pods number == maxReplicas, subsetsLen = 2, subsetIndex = 1, maxReplicas is 3, pods number is 3",
                2,
                1,
                Some(3),
                vec!["Running"; 3],
                vec!["100", "100", "100"],
            ),
            (
                "pods number < maxReplicas, maxReplicas is 3, pods number is 2",
                1,
                0,
                Some(3),
                vec!["Running"; 2],
                vec!["100", "100"],
            ),
            (
                "active pods number > maxReplicas, maxReplicas is 1, pods number is 3",
                1,
                0,
                Some(1),
                vec!["Running"; 3],
                vec!["100", "-100", "-100"],
            ),
            (
                "maxReplicas is 2, active pods number is 4, (pod-2, pod-4) are unhealthy, pod-3 is failed",
                1,
                0,
                Some(2),
                vec!["Running", "Running", "Pending", "Failed", "Pending"],
                vec!["100", "100", "-100", "", "-100"],
            ),
        ];
        for (name, subsets, index, cap, phases, want) in cases {
            let mut spread = spread_demo();
            spread.spec.subsets = (0..subsets)
                .map(|i| WorkloadSpreadSubset {
                    name: format!("subset-{i}"),
                    max_replicas: if i == index { cap.map(IntOrString::Int) } else { None },
                    ..Default::default()
                })
                .collect();
            let mut pods: Vec<Pod> = phases
                .iter()
                .enumerate()
                .map(|(i, phase)| pod_named(&format!("pod-{i}"), None, phase))
                .collect();
            // Older pods first in name order: newer pods are deleted first among equals.
            for (i, pod) in pods.iter_mut().enumerate() {
                pod.metadata.creation_timestamp = Some(time(&format!("2026-01-01T00:00:0{i}Z")));
            }
            let refs: Vec<&Pod> = pods.iter().collect();
            let by_subset: BTreeMap<String, Vec<&Pod>> = [(format!("subset-{index}"), refs.clone())].into();
            let costs = deletion_costs(&spread, &by_subset, 5, false);
            let got: Vec<String> = pods
                .iter()
                .map(|pod| {
                    costs
                        .iter()
                        .find(|(p, _)| p.metadata.name == pod.metadata.name)
                        .map(|(_, c)| c.clone())
                        .unwrap_or_default()
                })
                .collect();
            assert_eq!(got, want, "{name}");
        }
        // Pods outside every subset are deleted first; an old version counts subsets backwards.
        let mut spread = spread_demo();
        spread.spec.subsets.push(WorkloadSpreadSubset { name: "subset-b".into(), ..Default::default() });
        let (a, b, c) = (
            pod_named("a", None, "Running"),
            pod_named("b", None, "Running"),
            pod_named("c", None, "Running"),
        );
        let by_subset: BTreeMap<String, Vec<&Pod>> = [
            ("subset-a".to_string(), vec![&a]),
            ("subset-b".to_string(), vec![&b]),
            (FAKE_SUBSET_NAME.to_string(), vec![&c]),
        ]
        .into();
        let costs: Vec<String> =
            deletion_costs(&spread, &by_subset, 5, true).into_iter().map(|(_, c)| c).collect();
        assert_eq!(costs, ["100", "200", "-300"]);
    }

    fn pending_pod(name: &str, created: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": created},
            "spec": {"containers": [{"name": "nginx"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "lastTransitionTime": created}]}
        }))
        .unwrap()
    }

    #[test]
    fn reschedule_subset_table() {
        // Upstream TestRescheduleSubset.
        let now = ts("2026-01-01T00:10:00Z");
        let critical = Duration::from_secs(60);
        let schedulable = |status: &WorkloadSpreadSubsetStatus| {
            condition(Some(status), WORKLOADSPREAD_SUBSET_SCHEDULABLE).map(|c| c.status.clone())
        };

        // "create no Pods, subset-a is schedulable"
        let mut status = WorkloadSpreadSubsetStatus { name: "subset-a".into(), ..Default::default() };
        let mut notes = StatusNotes::default();
        assert!(reschedule_subset(critical, &[], &mut status, None, now, &mut notes).is_empty());
        assert_eq!(schedulable(&status).as_deref(), Some("True"));

        // "create two Pods, two pending, subset-a is unschedulable"
        let (p1, p2) = (pending_pod("p1", "2026-01-01T00:05:00Z"), pending_pod("p2", "2026-01-01T00:05:00Z"));
        let mut status = WorkloadSpreadSubsetStatus { name: "subset-a".into(), ..Default::default() };
        let failed = reschedule_subset(critical, &[&p1, &p2], &mut status, None, now, &mut notes);
        assert_eq!(failed.len(), 2);
        assert_eq!(schedulable(&status).as_deref(), Some("False"));

        // A pod that has not waited long enough is kept, and looked at again when it would.
        let young = pending_pod("p3", "2026-01-01T00:09:30Z");
        let mut status = WorkloadSpreadSubsetStatus { name: "subset-a".into(), ..Default::default() };
        let mut notes = StatusNotes::default();
        assert!(reschedule_subset(critical, &[&young], &mut status, None, now, &mut notes).is_empty());
        assert_eq!(notes.requeue, Some(Duration::from_secs(30)));

        // "subset-a was unschedulable and not reach up 5 minutes"
        let old = WorkloadSpreadSubsetStatus {
            name: "subset-a".into(),
            conditions: vec![new_condition("False", "PodUnschedulable", ts("2026-01-01T00:07:00Z"))],
            ..Default::default()
        };
        let mut status = WorkloadSpreadSubsetStatus { name: "subset-a".into(), ..Default::default() };
        let mut notes = StatusNotes::default();
        reschedule_subset(critical, &[], &mut status, Some(&old), now, &mut notes);
        assert_eq!(schedulable(&status).as_deref(), Some("False"));
        assert_eq!(notes.requeue, Some(Duration::from_secs(120)));

        // "subset-a was recovered from unschedulable to schedulable"
        let old = WorkloadSpreadSubsetStatus {
            name: "subset-a".into(),
            conditions: vec![new_condition("False", "PodUnschedulable", ts("2026-01-01T00:04:00Z"))],
            ..Default::default()
        };
        let mut status = WorkloadSpreadSubsetStatus { name: "subset-a".into(), ..Default::default() };
        let mut notes = StatusNotes::default();
        reschedule_subset(critical, &[], &mut status, Some(&old), now, &mut notes);
        assert_eq!(schedulable(&status).as_deref(), Some("True"));
        assert_eq!(notes.events, vec![StatusEvent::RecoverSchedulable("subset-a".into())]);
    }

    #[test]
    fn close_reschedule_strategy_condition_is_null() {
        // Upstream TestRescheduleSubset "close reschedule strategy, condition is null": without
        // the Adaptive strategy the Schedulable condition is removed.
        let mut spread = spread_demo();
        spread.status.as_mut().unwrap().subset_statuses[0].conditions =
            vec![new_condition("False", "PodUnschedulable", ts("2026-01-01T00:00:00Z"))];
        let (status, _) = reconcile_status(&spread, &[], 5, ts("2026-01-01T00:01:00Z"));
        assert!(status.subset_statuses[0].conditions.is_empty());
        // With it, the last subset is always schedulable.
        spread.spec.schedule_strategy.type_ = WorkloadSpreadScheduleStrategyType::Adaptive;
        spread.spec.schedule_strategy.adaptive =
            Some(kruise_crds::apps::v1beta1::AdaptiveWorkloadSpreadStrategy {
                disable_simulation_schedule: false,
                reschedule_critical_seconds: Some(30),
            });
        let (status, _) = reconcile_status(&spread, &[], 5, ts("2026-01-01T00:01:00Z"));
        assert_eq!(status.subset_statuses[0].conditions[0].status, "True");
    }

    #[test]
    fn multi_version_pods_are_counted_per_version() {
        // Upstream TestWorkloadSpreadReconcile "multiVersion pods".
        let spread = spread_demo();
        let (a, b) =
            (pod_named("a", Some("subset-a"), "Running"), pod_named("b", Some("subset-a"), "Running"));
        fn by_subset(pod: &Pod) -> BTreeMap<String, Vec<&Pod>> {
            [("subset-a".to_string(), vec![pod])].into()
        }
        let versioned: VersionedPods<'_> =
            [("v1".to_string(), by_subset(&a)), ("v2".to_string(), by_subset(&b))].into();
        let mut notes = StatusNotes::default();
        let (status, _) =
            calculate_status(&spread, &versioned, 5, ts("2026-01-01T00:00:00Z"), &mut notes).unwrap();
        assert_eq!(status.subset_statuses[0].replicas, 2);
        assert_eq!(status.subset_statuses[0].missing_replicas, 3);
        assert_eq!(status.versioned_subset_statuses["v1"][0].replicas, 1);
        assert_eq!(status.versioned_subset_statuses["v2"][0].missing_replicas, 4);
        assert!(
            !status.versioned_subset_statuses.contains_key(VERSION_IGNORED),
            "an empty old version is dropped"
        );
    }
}
