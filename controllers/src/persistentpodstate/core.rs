//! The PersistentPodState controller's decisions, as pure functions: which workloads a
//! PersistentPodState may target (built-in StatefulSets plus the configured white list), what
//! `status.podStates` becomes from the workload's pods and their nodes (upstream `Reconcile`),
//! which PersistentPodState a workload's annotations ask for (upstream
//! `autoGeneratePersistentPodState`), and which changes wake which keys (upstream
//! `persistent_pod_state_event_handler.go`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kruise_crds::apps::v1beta1::{
    NodeTopologyTerm, PersistentPodAnnotation, PersistentPodState, PersistentPodStateRetentionPolicyType,
    PersistentPodStateSpec, PersistentPodStateStatus, PodState, PreferredTopologyTerm, TargetReference,
};
use serde::Deserialize;

use crate::statefulset::core::identity::{ReplicaRange, ReservedOrdinals};

/// Workload annotation: `"true"` asks for a PersistentPodState named after the workload.
pub const ANNOTATION_AUTO_GENERATE: &str = "kruise.io/auto-generate-persistent-pod-state";
/// Workload annotation: comma-separated node label keys a recreated pod must keep.
pub const ANNOTATION_REQUIRED_TOPOLOGY: &str = "kruise.io/required-persistent-topology";
/// Workload annotation: comma-separated node label keys a recreated pod should keep.
pub const ANNOTATION_PREFERRED_TOPOLOGY: &str = "kruise.io/preferred-persistent-topology";
/// Workload annotation: comma-separated pod annotation keys to remember.
pub const ANNOTATION_PERSISTENT_POD_ANNOTATIONS: &str = "kruise.io/persistent-pod-annotations";
/// Pod annotation the pod webhook writes: the PersistentPodState whose state it injected.
pub const ANNOTATION_INJECTED: &str = "kruise.io/injected-persistent-pod-state";
/// The `kruise-configuration` key listing custom workload kinds a PersistentPodState may target.
pub const WHITELIST_KEY: &str = "PPS_Watch_Custom_Workload_WhiteList";
/// Queue keys of auto-generation requests start with this (upstream
/// `AutoGeneratePersistentPodStatePrefix`); `#` never occurs in an object name.
pub const AUTO_GENERATE_PREFIX: &str = "generate#";
/// Weight of the preferred term of an auto-generated PersistentPodState.
const AUTO_GENERATED_WEIGHT: i32 = 100;

/// One workload kind of the white list (a `schema.GroupVersionKind` in upstream's JSON).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WorkloadKind {
    /// API group.
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
}

/// `PPS_Watch_Custom_Workload_WhiteList`: the kinds besides StatefulSets a PersistentPodState
/// may target (upstream `CustomWorkloadWhiteList`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct WhiteList {
    /// The kinds.
    #[serde(default)]
    pub workloads: Vec<WorkloadKind>,
}

impl WhiteList {
    /// Parses the ConfigMap value (absent: empty list).
    pub fn parse(text: Option<&str>) -> Result<Self, serde_json::Error> {
        match text {
            None => Ok(Self::default()),
            Some(text) => serde_json::from_str(text),
        }
    }

    /// Whether `apiVersion`/`kind` is a StatefulSet (apps or apps.kruise.io) or a listed kind
    /// (upstream `ValidateAPIVersionAndKind`: compared by group and kind).
    pub fn allows(&self, api_version: &str, kind: &str) -> bool {
        let Some(group) = api_group(api_version) else { return false };
        if is_default_support(group, kind) {
            return true;
        }
        self.workloads.iter().any(|workload| workload.group == group && workload.kind == kind)
    }

    /// The (group, kind) pairs, as the crds validation takes them.
    pub fn group_kinds(&self) -> Vec<(&str, &str)> {
        self.workloads.iter().map(|w| (w.group.as_str(), w.kind.as_str())).collect()
    }
}

fn is_default_support(group: &str, kind: &str) -> bool {
    (group == "apps" || group == "apps.kruise.io") && kind == "StatefulSet"
}

/// The group of an apiVersion (`apps/v1` → `apps`, `v1` → core), `None` when it does not parse.
pub fn api_group(api_version: &str) -> Option<&str> {
    match api_version.split_once('/') {
        None => Some(""),
        Some((group, version)) if !version.contains('/') => Some(group),
        Some(_) => None,
    }
}

/// Whether two references name the same workload: same group (any version), kind and name
/// (upstream `IsReferenceEqual`).
pub fn same_target(a: &TargetReference, b: &TargetReference) -> bool {
    match (api_group(&a.api_version), api_group(&b.api_version)) {
        (Some(ga), Some(gb)) => ga == gb && a.kind == b.kind && a.name == b.name,
        _ => false,
    }
}

/// The live PersistentPodState targeting `target` among `states` (upstream
/// `SelectorPersistentPodState`; one per workload, which validation guarantees).
pub fn select_for_target<'a>(
    states: impl IntoIterator<Item = &'a PersistentPodState>,
    target: &TargetReference,
) -> Option<&'a PersistentPodState> {
    states
        .into_iter()
        .filter(|state| state.metadata.deletion_timestamp.is_none())
        .find(|state| same_target(target, &state.spec.target_reference))
}

/// The node label keys a PersistentPodState records: its required and preferred keys.
pub fn topology_keys(spec: &PersistentPodStateSpec) -> BTreeSet<String> {
    let required = spec.required_persistent_topology.iter().flat_map(|term| term.keys.iter());
    let preferred = spec.preferred_persistent_topology.iter().flat_map(|term| term.preference.keys.iter());
    required.chain(preferred).cloned().collect()
}

/// The pod annotation keys a PersistentPodState records.
pub fn annotation_keys(spec: &PersistentPodStateSpec) -> BTreeSet<String> {
    spec.persistent_pod_annotations.iter().map(|annotation| annotation.key.clone()).collect()
}

/// What the controller needs of one pod of the workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodInfo {
    /// Pod name (`<workload>-<ordinal>`).
    pub name: String,
    /// `spec.nodeName`, empty before scheduling.
    pub node_name: String,
    /// Whether the Ready condition is True.
    pub ready: bool,
    /// The pod's annotations.
    pub annotations: BTreeMap<String, String>,
}

/// What the controller needs of the target workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkloadInfo {
    /// Desired replicas.
    pub replicas: i32,
    /// `spec.reserveOrdinals` (Advanced StatefulSet only).
    pub reserved: ReservedOrdinals,
    /// Whether the workload is being deleted.
    pub deleting: bool,
}

/// The ordinal at the end of a pod name (upstream `parseStsPodIndex`).
pub fn pod_ordinal(pod_name: &str) -> Option<i32> {
    pod_name.rsplit_once('-').and_then(|(_, ordinal)| ordinal.parse().ok())
}

/// Whether `ordinal` is one of the workload's desired ordinals (upstream
/// `isInStatefulSetReplicas`: the first `replicas` ordinals from 0 that are not reserved).
pub fn in_replicas(ordinal: i32, workload: &WorkloadInfo) -> bool {
    ReplicaRange::new(0, workload.replicas, workload.reserved.clone()).contains(ordinal)
}

/// The state of one pod on a node with `node_labels` (upstream `getPodState`).
pub fn pod_state(
    pod: &PodInfo,
    node_labels: &BTreeMap<String, String>,
    topology_keys: &BTreeSet<String>,
    annotation_keys: &BTreeSet<String>,
) -> PodState {
    PodState {
        node_name: pod.node_name.clone(),
        node_topology_labels: topology_keys
            .iter()
            .filter_map(|key| node_labels.get(key).map(|value| (key.clone(), value.clone())))
            .collect(),
        annotations: annotation_keys
            .iter()
            .filter_map(|key| pod.annotations.get(key).map(|value| (key.clone(), value.clone())))
            .collect(),
    }
}

/// Whether a recorded state can stay as it is: same node, same topology keys and (as upstream
/// compares them) the set of recorded annotation values equal to the configured keys.
fn state_is_current(
    state: &PodState,
    pod: &PodInfo,
    topology_keys: &BTreeSet<String>,
    annotation_keys: &BTreeSet<String>,
) -> bool {
    let current_keys: BTreeSet<String> = state.node_topology_labels.keys().cloned().collect();
    let current_annotations: BTreeSet<String> = state.annotations.values().cloned().collect();
    state.node_name == pod.node_name
        && &current_keys == topology_keys
        && &current_annotations == annotation_keys
}

/// The new status of `state` (upstream `Reconcile`). `workload` is `None` when the target is
/// gone: the states are dropped. Otherwise each Ready, scheduled pod's state is recorded (kept
/// when still current; skipped when its node is unknown), and, unless the retention policy is
/// `WhenDeleted`, states of pods beyond the desired ordinals that no longer exist are dropped.
pub fn calculate_status(
    state: &PersistentPodState,
    workload: Option<&WorkloadInfo>,
    pods: &[PodInfo],
    node_labels: &dyn Fn(&str) -> Option<BTreeMap<String, String>>,
) -> PersistentPodStateStatus {
    let generation = state.metadata.generation.unwrap_or_default();
    let Some(workload) = workload.filter(|workload| !workload.deleting) else {
        return PersistentPodStateStatus { observed_generation: generation, pod_states: BTreeMap::new() };
    };
    let mut status = state.status.clone().unwrap_or_default();
    status.observed_generation = generation;
    let topology = topology_keys(&state.spec);
    let annotations = annotation_keys(&state.spec);
    for pod in pods {
        if !pod.ready || pod.node_name.is_empty() {
            continue;
        }
        if status.pod_states.get(&pod.name).is_some_and(|s| state_is_current(s, pod, &topology, &annotations))
        {
            continue;
        }
        let Some(labels) = node_labels(&pod.node_name) else { continue };
        status.pod_states.insert(pod.name.clone(), pod_state(pod, &labels, &topology, &annotations));
    }
    if state.spec.persistent_pod_state_retention_policy != PersistentPodStateRetentionPolicyType::WhenDeleted
    {
        status.pod_states.retain(|name, _| {
            let Some(ordinal) = pod_ordinal(name) else { return true };
            in_replicas(ordinal, workload) || pods.iter().any(|pod| &pod.name == name)
        });
    }
    status
}

/// The queue key of an auto-generation request for a workload (upstream
/// `enqueuePersistentPodStateRequest`): `generate#<apiVersion>#<kind>#<name>`, namespaced.
pub fn auto_generate_key(namespace: &str, api_version: &str, kind: &str, name: &str) -> String {
    format!("{namespace}/{AUTO_GENERATE_PREFIX}{api_version}#{kind}#{name}")
}

/// The workload an auto-generation key names: (apiVersion, kind, name), `None` for a
/// malformed key.
pub fn parse_auto_generate_name(name: &str) -> Option<(String, String, String)> {
    let parts: Vec<&str> = name.split('#').collect();
    match parts.as_slice() {
        [_, api_version, kind, name] => Some((api_version.to_string(), kind.to_string(), name.to_string())),
        _ => None,
    }
}

/// Identity of a workload an auto-generated PersistentPodState belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkloadRef {
    /// apiVersion.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID.
    pub uid: String,
}

fn split_keys(value: &str) -> Vec<String> {
    value.split(',').map(str::to_string).collect()
}

fn annotation<'a>(annotations: &'a BTreeMap<String, String>, key: &str) -> &'a str {
    annotations.get(key).map(String::as_str).unwrap_or_default()
}

/// Whether a workload's annotations ask for an auto-generated PersistentPodState (the flag and
/// at least one topology; upstream's create handler).
pub fn wants_auto_generation(annotations: &BTreeMap<String, String>) -> bool {
    annotation(annotations, ANNOTATION_AUTO_GENERATE) == "true"
        && (!annotation(annotations, ANNOTATION_REQUIRED_TOPOLOGY).is_empty()
            || !annotation(annotations, ANNOTATION_PREFERRED_TOPOLOGY).is_empty())
}

/// Whether an update of a workload's annotations concerns auto-generation (upstream's update
/// handler compares the flag and the two topology annotations).
pub fn auto_generation_changed(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> bool {
    [ANNOTATION_AUTO_GENERATE, ANNOTATION_REQUIRED_TOPOLOGY, ANNOTATION_PREFERRED_TOPOLOGY]
        .iter()
        .any(|key| annotation(old, key) != annotation(new, key))
}

/// The PersistentPodState a workload's annotations describe (upstream
/// `newStatefulSetPersistentPodState`): named after the workload, owned by it, required
/// topology from its keys, one preferred term of weight 100, the annotation keys.
pub fn generated_state(workload: &WorkloadRef, annotations: &BTreeMap<String, String>) -> PersistentPodState {
    let required = annotation(annotations, ANNOTATION_REQUIRED_TOPOLOGY);
    let preferred = annotation(annotations, ANNOTATION_PREFERRED_TOPOLOGY);
    let pod_annotations = annotation(annotations, ANNOTATION_PERSISTENT_POD_ANNOTATIONS);
    let spec = PersistentPodStateSpec {
        target_reference: TargetReference {
            api_version: workload.api_version.clone(),
            kind: workload.kind.clone(),
            name: workload.name.clone(),
        },
        required_persistent_topology: (!required.is_empty())
            .then(|| NodeTopologyTerm { keys: split_keys(required) }),
        preferred_persistent_topology: if preferred.is_empty() {
            Vec::new()
        } else {
            vec![PreferredTopologyTerm {
                weight: AUTO_GENERATED_WEIGHT,
                preference: NodeTopologyTerm { keys: split_keys(preferred) },
            }]
        },
        persistent_pod_annotations: if pod_annotations.is_empty() {
            Vec::new()
        } else {
            split_keys(pod_annotations).into_iter().map(|key| PersistentPodAnnotation { key }).collect()
        },
        ..Default::default()
    };
    PersistentPodState {
        metadata: ObjectMeta {
            name: Some(workload.name.clone()),
            namespace: Some(workload.namespace.clone()),
            owner_references: Some(vec![OwnerReference {
                api_version: workload.api_version.clone(),
                kind: workload.kind.clone(),
                name: workload.name.clone(),
                uid: workload.uid.clone(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            ..Default::default()
        },
        spec,
        status: None,
    }
}

/// What auto-generation does for one workload.
#[derive(Clone, Debug, PartialEq)]
pub enum AutoGenerateAction {
    /// Nothing to do.
    None,
    /// Create this PersistentPodState.
    Create(Box<PersistentPodState>),
    /// Replace the existing one's spec with this one.
    UpdateSpec(Box<PersistentPodStateSpec>),
    /// Delete the existing one (the flag is gone).
    Delete,
}

/// The auto-generation decision (upstream `autoGeneratePersistentPodState`): with the flag
/// `true` and a topology, create or bring the spec in line; with the flag and no topology,
/// leave things alone; without the flag, delete an existing PersistentPodState of that name.
pub fn auto_generate_action(
    workload: &WorkloadRef,
    annotations: &BTreeMap<String, String>,
    existing: Option<&PersistentPodState>,
) -> AutoGenerateAction {
    if annotation(annotations, ANNOTATION_AUTO_GENERATE) == "true" {
        if !wants_auto_generation(annotations) {
            return AutoGenerateAction::None;
        }
        let desired = generated_state(workload, annotations);
        return match existing {
            None => AutoGenerateAction::Create(Box::new(desired)),
            Some(existing) if existing.spec == desired.spec => AutoGenerateAction::None,
            Some(_) => AutoGenerateAction::UpdateSpec(Box::new(desired.spec)),
        };
    }
    match existing {
        Some(_) => AutoGenerateAction::Delete,
        None => AutoGenerateAction::None,
    }
}

/// Whether a pod change concerns its PersistentPodState (upstream `isPodValidChanged`): it
/// started terminating or became Ready.
pub fn pod_change_matters(old_deleting: bool, new_deleting: bool, old_ready: bool, new_ready: bool) -> bool {
    (!old_deleting && new_deleting) || (!old_ready && new_ready)
}

#[cfg(test)]
mod tests {
    use kruise_crds::apps::v1beta1::PersistentPodStateRetentionPolicyType as Policy;

    use super::*;

    const ZONE: &str = "topology.kubernetes.io/zone";
    const HOST: &str = "kubernetes.io/hostname";
    const STS: &str = "test-sts";

    fn demo_state() -> PersistentPodState {
        PersistentPodState {
            metadata: ObjectMeta {
                name: Some(STS.into()),
                namespace: Some("ns-test".into()),
                generation: Some(1),
                ..Default::default()
            },
            spec: PersistentPodStateSpec {
                target_reference: TargetReference {
                    api_version: "apps.kruise.io/v1beta1".into(),
                    kind: "StatefulSet".into(),
                    name: STS.into(),
                },
                required_persistent_topology: Some(NodeTopologyTerm { keys: vec![ZONE.into()] }),
                preferred_persistent_topology: vec![PreferredTopologyTerm {
                    weight: 100,
                    preference: NodeTopologyTerm { keys: vec![HOST.into()] },
                }],
                ..Default::default()
            },
            status: Some(PersistentPodStateStatus::default()),
        }
    }

    fn recorded(i: i32, node: &str) -> PodState {
        PodState {
            node_name: node.into(),
            node_topology_labels: BTreeMap::from([
                (ZONE.to_string(), format!("cn-beijing-{i}")),
                (HOST.to_string(), format!("kube-resource011162007216-{i}")),
            ]),
            annotations: BTreeMap::new(),
        }
    }

    fn node_labels(name: &str) -> Option<BTreeMap<String, String>> {
        let i = name.strip_prefix("node-")?;
        Some(BTreeMap::from([
            (ZONE.to_string(), format!("cn-beijing-{i}")),
            (HOST.to_string(), format!("kube-resource011162007216-{i}")),
        ]))
    }

    fn pod(i: i32, ready: bool) -> PodInfo {
        PodInfo {
            name: format!("{STS}-{i}"),
            node_name: format!("node-{i}"),
            ready,
            annotations: BTreeMap::new(),
        }
    }

    /// Upstream `TestReconcilePersistentPodState` (the deleting pod of its cases is left out
    /// of `pods`, as upstream lists only active pods).
    #[test]
    fn reconcile_persistent_pod_state() {
        struct Case {
            name: &'static str,
            workload: WorkloadInfo,
            pods: Vec<PodInfo>,
            before: BTreeMap<String, PodState>,
            expected: BTreeMap<String, PodState>,
        }
        let all = |range: &[i32]| -> BTreeMap<String, PodState> {
            range.iter().map(|i| (format!("{STS}-{i}"), recorded(*i, &format!("node-{i}")))).collect()
        };
        let ten: Vec<i32> = (0..10).collect();
        let reserved: Vec<i32> = (0..13).filter(|i| ![0, 3, 7].contains(i)).collect();
        let cases = [
            Case {
                name: "kruise statefulset, 10 ready pod, and create staticIP",
                workload: WorkloadInfo { replicas: 10, ..Default::default() },
                pods: ten.iter().map(|i| pod(*i, true)).collect(),
                before: BTreeMap::new(),
                expected: all(&ten),
            },
            Case {
                name: "kruise statefulset, scale down replicas 10->8, 1 pod deleted, 1 pod running",
                workload: WorkloadInfo { replicas: 8, ..Default::default() },
                pods: (0..9).map(|i| pod(i, i != 0 && i != 3)).collect(),
                before: all(&ten),
                expected: all(&(0..9).collect::<Vec<_>>()),
            },
            Case {
                name: "kruise reserveOrigin statefulset, scale down replicas 10->8, 1 pod deleted, 1 pod running",
                workload: WorkloadInfo {
                    replicas: 8,
                    reserved: ReservedOrdinals::parse(&[
                        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(0),
                        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(3),
                        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(7),
                    ]),
                    deleting: false,
                },
                pods: reserved.iter().filter(|i| **i != 12).map(|i| pod(*i, true)).collect(),
                before: all(&reserved),
                expected: all(&reserved.iter().copied().filter(|i| *i != 12).collect::<Vec<_>>()),
            },
            Case {
                name: "kruise statefulset, 8 running pod, 2 from not ready to ready, and add staticIP in staticIP",
                workload: WorkloadInfo { replicas: 10, ..Default::default() },
                pods: ten.iter().map(|i| pod(*i, true)).collect(),
                before: ten
                    .iter()
                    .filter(|i| **i != 5 && **i != 6)
                    .map(|i| (format!("{STS}-{i}"), recorded(*i, &format!("cn-beijing-{i}"))))
                    .collect(),
                expected: all(&ten),
            },
        ];
        for case in cases {
            let mut state = demo_state();
            state.status = Some(PersistentPodStateStatus { observed_generation: 1, pod_states: case.before });
            let status = calculate_status(&state, Some(&case.workload), &case.pods, &node_labels);
            assert_eq!(status.pod_states, case.expected, "{}", case.name);
            assert_eq!(status.observed_generation, 1, "{}", case.name);
        }
    }

    #[test]
    fn retention_and_missing_workload() {
        let mut state = demo_state();
        let before: BTreeMap<String, PodState> =
            (0..3).map(|i| (format!("{STS}-{i}"), recorded(i, &format!("node-{i}")))).collect();
        state.status = Some(PersistentPodStateStatus { observed_generation: 1, pod_states: before.clone() });
        let one = WorkloadInfo { replicas: 1, ..Default::default() };
        let pods = [pod(0, true)];
        // WhenScaled (the default): states beyond the replicas go with their pods.
        let status = calculate_status(&state, Some(&one), &pods, &node_labels);
        assert_eq!(status.pod_states.keys().collect::<Vec<_>>(), [&format!("{STS}-0")]);
        // WhenDeleted: they stay.
        state.spec.persistent_pod_state_retention_policy = Policy::WhenDeleted;
        let status = calculate_status(&state, Some(&one), &pods, &node_labels);
        assert_eq!(status.pod_states, before);
        // The workload gone or going: no states at all.
        assert!(calculate_status(&state, None, &pods, &node_labels).pod_states.is_empty());
        let deleting = WorkloadInfo { deleting: true, ..one };
        assert!(calculate_status(&state, Some(&deleting), &pods, &node_labels).pod_states.is_empty());
        // An unknown node: the pod is skipped.
        let mut fresh = demo_state();
        fresh.status = None;
        let status = calculate_status(
            &fresh,
            Some(&WorkloadInfo { replicas: 1, ..Default::default() }),
            &[PodInfo { node_name: "elsewhere".into(), ..pod(0, true) }],
            &node_labels,
        );
        assert!(status.pod_states.is_empty());
    }

    #[test]
    fn annotations_are_recorded() {
        let mut state = demo_state();
        state.spec.persistent_pod_annotations = vec![PersistentPodAnnotation { key: "name".into() }];
        let mut with = pod(0, true);
        with.annotations.insert("name".into(), "value".into());
        with.annotations.insert("other".into(), "x".into());
        let status = calculate_status(
            &state,
            Some(&WorkloadInfo { replicas: 1, ..Default::default() }),
            &[with],
            &node_labels,
        );
        assert_eq!(
            status.pod_states[&format!("{STS}-0")].annotations,
            BTreeMap::from([("name".to_string(), "value".to_string())])
        );
    }

    #[test]
    fn white_list_and_references() {
        let list = WhiteList::parse(Some(
            r#"{"workloads":[{"Group":"apps.kruise.io","Version":"v1beta1","Kind":"StatefulSetLikeTest"}]}"#,
        ))
        .unwrap();
        let cases = [
            ("apps/v1", "StatefulSet", true),
            ("apps.kruise.io/v1alpha1", "StatefulSet", true),
            ("apps.kruise.io/v1beta1", "StatefulSet", true),
            ("apps.kruise.io/v1beta1", "StatefulSetLikeTest", true),
            ("apps.kruise.io/v1alpha1", "StatefulSetLikeTest", true),
            ("apps/v1", "Deployment", false),
            ("a/b/c", "StatefulSet", false),
        ];
        for (api_version, kind, allowed) in cases {
            assert_eq!(list.allows(api_version, kind), allowed, "{api_version} {kind}");
            assert!(!WhiteList::default().allows(api_version, "StatefulSetLikeTest"));
        }
        let reference =
            |v: &str| TargetReference { api_version: v.into(), kind: "StatefulSet".into(), name: "a".into() };
        assert!(same_target(&reference("apps.kruise.io/v1alpha1"), &reference("apps.kruise.io/v1beta1")));
        assert!(!same_target(&reference("apps/v1"), &reference("apps.kruise.io/v1beta1")));
        assert_eq!(pod_ordinal("web-12"), Some(12));
        assert_eq!(pod_ordinal("web"), None);
    }

    #[test]
    fn auto_generation() {
        let workload = WorkloadRef {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            namespace: "ns".into(),
            name: "web".into(),
            uid: "u1".into(),
        };
        let annotations = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let full = annotations(&[
            (ANNOTATION_AUTO_GENERATE, "true"),
            (ANNOTATION_REQUIRED_TOPOLOGY, "kubernetes.io/os"),
            (ANNOTATION_PREFERRED_TOPOLOGY, "kubernetes.io/hostname,zone"),
            (ANNOTATION_PERSISTENT_POD_ANNOTATIONS, "name"),
        ]);
        let generated = generated_state(&workload, &full);
        assert_eq!(generated.metadata.name.as_deref(), Some("web"));
        assert_eq!(generated.spec.required_persistent_topology.as_ref().unwrap().keys, ["kubernetes.io/os"]);
        assert_eq!(generated.spec.preferred_persistent_topology[0].weight, 100);
        assert_eq!(
            generated.spec.preferred_persistent_topology[0].preference.keys,
            ["kubernetes.io/hostname", "zone"]
        );
        assert_eq!(
            generated.spec.persistent_pod_annotations,
            [PersistentPodAnnotation { key: "name".into() }]
        );
        let owner = &generated.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.uid.as_str(), owner.controller), ("u1", Some(true)));

        assert!(matches!(auto_generate_action(&workload, &full, None), AutoGenerateAction::Create(_)));
        assert_eq!(auto_generate_action(&workload, &full, Some(&generated)), AutoGenerateAction::None);
        let mut required_only = full.clone();
        required_only.remove(ANNOTATION_PREFERRED_TOPOLOGY);
        assert!(matches!(
            auto_generate_action(&workload, &required_only, Some(&generated)),
            AutoGenerateAction::UpdateSpec(_)
        ));
        let flag_only = annotations(&[(ANNOTATION_AUTO_GENERATE, "true")]);
        assert_eq!(auto_generate_action(&workload, &flag_only, Some(&generated)), AutoGenerateAction::None);
        assert_eq!(
            auto_generate_action(&workload, &BTreeMap::new(), Some(&generated)),
            AutoGenerateAction::Delete
        );
        assert_eq!(auto_generate_action(&workload, &BTreeMap::new(), None), AutoGenerateAction::None);

        assert!(wants_auto_generation(&full));
        assert!(!wants_auto_generation(&flag_only));
        assert!(auto_generation_changed(&full, &required_only));
        assert!(!auto_generation_changed(&full, &full));
        let key = auto_generate_key("ns", "apps/v1", "StatefulSet", "web");
        assert_eq!(key, "ns/generate#apps/v1#StatefulSet#web");
        let name = key.split_once('/').unwrap().1;
        assert_eq!(
            parse_auto_generate_name(name),
            Some(("apps/v1".into(), "StatefulSet".into(), "web".into()))
        );
        assert_eq!(parse_auto_generate_name("generate#x"), None);
    }

    #[test]
    fn pod_changes_that_matter() {
        assert!(pod_change_matters(false, true, true, true));
        assert!(pod_change_matters(false, false, false, true));
        assert!(!pod_change_matters(false, false, true, false));
        assert!(!pod_change_matters(true, true, true, true));
    }
}
