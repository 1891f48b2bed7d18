//! Stable identities of an Advanced StatefulSet's pods (upstream `stateful_set_utils.go`): the
//! ordinal in a pod's name, which ordinals the set keeps (`ordinals.start`, `replicas`,
//! `reserveOrdinals`), the pod and PVC names, whether a pod carries its identity and storage, and
//! the pods and PVCs the controller creates.
//!
//! Everything here is pure: names and objects in, names and objects out.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodTemplateSpec, Volume},
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, OwnerReference},
        util::intstr::IntOrString,
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::StatefulSet,
    common::{
        LIFECYCLE_STATE_KEY, LIFECYCLE_TIMESTAMP_KEY, LifecycleState, well_known::CONTROLLER_REVISION_HASH,
    },
};
use kube::{Resource, ResourceExt};

use super::options::CoreOptions;

/// Label with the pod's own name, so a Service can select exactly one pod
/// (`statefulset.kubernetes.io/pod-name`).
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// Label with the pod's ordinal (`apps.kubernetes.io/pod-index`, gate `PodIndexLabel`).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// The parent name and ordinal in a pod name `<parent>-<digits>` (upstream
/// `getParentNameAndOrdinal`, regular expression `(.*)-([0-9]+)$`). The ordinal is `None` when the
/// name has no such suffix or the number does not fit an `int32`; the parent is `None` only when
/// there is no suffix at all.
pub fn parse_pod_name(name: &str) -> (Option<&str>, Option<i32>) {
    let Some((parent, digits)) = name.rsplit_once('-') else { return (None, None) };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return (None, None);
    }
    (Some(parent), digits.parse::<i32>().ok())
}

/// The ordinal of a pod (upstream `getOrdinal`), `None` when its name has none.
pub fn ordinal_of(pod: &Pod) -> Option<i32> {
    parse_pod_name(pod.metadata.name.as_deref().unwrap_or_default()).1
}

/// Whether the pod's name makes it a member of the set `<set>-<n>` (upstream `isMemberOf`): only
/// such pods are adopted.
pub fn is_member_of(set_name: &str, pod: &Pod) -> bool {
    parse_pod_name(pod.metadata.name.as_deref().unwrap_or_default()).0 == Some(set_name)
}

/// The name of the pod with `ordinal`.
pub fn pod_name(set_name: &str, ordinal: i32) -> String {
    format!("{set_name}-{ordinal}")
}

/// The name of the PVC of `claim` for the pod with `ordinal` (`<claim>-<set>-<ordinal>`).
pub fn claim_name(claim: &str, set_name: &str, ordinal: i32) -> String {
    format!("{claim}-{set_name}-{ordinal}")
}

/// `spec.reserveOrdinals` as inclusive ranges. Kept as ranges rather than expanded, so that a
/// huge range costs nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReservedOrdinals(Vec<(i32, i32)>);

impl ReservedOrdinals {
    /// Parses the list as upstream's `GetReserveOrdinalIntSet`: integers and `start-end`
    /// ranges; one malformed range makes the whole list empty (upstream logs and ignores it).
    pub fn parse(values: &[IntOrString]) -> Self {
        let mut ranges = Vec::with_capacity(values.len());
        for value in values {
            match value {
                IntOrString::Int(n) => ranges.push((*n, *n)),
                IntOrString::String(text) => match parse_range(text) {
                    Some(range) => ranges.push(range),
                    None => {
                        tracing::warn!(reserve_ordinal = %text, "invalid reserveOrdinals range; ignoring reserveOrdinals");
                        return Self::default();
                    }
                },
            }
        }
        Self(ranges)
    }

    /// Whether `ordinal` is reserved.
    pub fn contains(&self, ordinal: i32) -> bool {
        self.0.iter().any(|(start, end)| (*start..=*end).contains(&ordinal))
    }

    /// The first ordinal at or after `ordinal` that is not reserved.
    fn next_free(&self, mut ordinal: i32) -> i32 {
        while let Some((_, end)) = self.0.iter().find(|(start, end)| (*start..=*end).contains(&ordinal)) {
            ordinal = end.saturating_add(1);
        }
        ordinal
    }
}

/// `a-b` with `a <= b`, both integers (Go's `strconv.Atoi`, so a sign is accepted).
fn parse_range(text: &str) -> Option<(i32, i32)> {
    let parts: Vec<&str> = text.split('-').collect();
    let [start, end] = parts.as_slice() else { return None };
    let (start, end) = (start.parse::<i32>().ok()?, end.parse::<i32>().ok()?);
    (start <= end).then_some((start, end))
}

/// The ordinals a set keeps pods at (upstream `getStatefulSetReplicasRange`): `[start, end)`
/// minus the reserved ones, where `end` is far enough that `replicas` ordinals are not reserved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaRange {
    /// First ordinal (inclusive): `ordinals.start` with gate `StatefulSetStartOrdinal`, else 0.
    pub start: i32,
    /// End (exclusive).
    pub end: i32,
    /// The reserved ordinals.
    pub reserved: ReservedOrdinals,
}

impl ReplicaRange {
    /// The range of `set` under `options`.
    pub fn of(set: &StatefulSet, options: &CoreOptions) -> Self {
        let start = if options.start_ordinal { set.spec.ordinals.as_ref().map_or(0, |o| o.start) } else { 0 };
        let reserved = ReservedOrdinals::parse(&set.spec.reserve_ordinals);
        Self::new(start, set.spec.replicas.unwrap_or(1), reserved)
    }

    /// The range starting at `start` that holds `replicas` unreserved ordinals.
    pub fn new(start: i32, replicas: i32, reserved: ReservedOrdinals) -> Self {
        let mut end = start;
        for _ in 0..replicas.max(0) {
            end = reserved.next_free(end).saturating_add(1);
        }
        Self { start, end, reserved }
    }

    /// Whether a pod with `ordinal` belongs to the set's desired pods (upstream
    /// `podInOrdinalRangeWithParams`).
    pub fn contains(&self, ordinal: i32) -> bool {
        ordinal >= self.start && ordinal < self.end && !self.reserved.contains(ordinal)
    }

    /// Number of slots `[start, end)`, reserved ones included.
    pub fn len(&self) -> usize {
        usize::try_from(i64::from(self.end) - i64::from(self.start)).unwrap_or(0)
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ordinal of slot `index`.
    pub fn ordinal_at(&self, index: usize) -> i32 {
        self.start.saturating_add(i32::try_from(index).unwrap_or(i32::MAX))
    }

    /// The slot of `ordinal`, if it is in `[start, end)`.
    pub fn index_of(&self, ordinal: i32) -> Option<usize> {
        (ordinal >= self.start && ordinal < self.end)
            .then(|| usize::try_from(ordinal - self.start).ok())
            .flatten()
    }
}

/// Whether the pod carries its identity (upstream `identityMatches`): `<set>-<ordinal>` in the
/// set's namespace with the pod-name label.
pub fn identity_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let set_name = set.metadata.name.as_deref().unwrap_or_default();
    let (parent, ordinal) = parse_pod_name(name);
    let Some(ordinal) = ordinal else { return false };
    parent == Some(set_name)
        && name == pod_name(set_name, ordinal)
        && pod.metadata.namespace == set.metadata.namespace
        && pod.labels().get(POD_NAME_LABEL).map(String::as_str) == Some(name)
}

/// Whether the pod mounts the PVC of every claim template under the template's name (upstream
/// `storageMatches`).
pub fn storage_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some(ordinal) = ordinal_of(pod) else { return false };
    let set_name = set.name_any();
    let volumes = pod.spec.as_ref().and_then(|s| s.volumes.as_ref());
    set.spec.volume_claim_templates.iter().all(|claim| {
        let template = claim.metadata.name.as_deref().unwrap_or_default();
        volumes.into_iter().flatten().any(|volume| {
            volume.name == template
                && volume
                    .persistent_volume_claim
                    .as_ref()
                    .is_some_and(|source| source.claim_name == claim_name(template, &set_name, ordinal))
        })
    })
}

/// Gives the pod its identity (upstream `updateIdentity`): name, namespace, pod-name label and,
/// with gate `PodIndexLabel`, the pod-index label.
pub fn update_identity(set: &StatefulSet, pod: &mut Pod, options: &CoreOptions) {
    let ordinal = ordinal_of(pod).unwrap_or(-1);
    let name = pod_name(&set.name_any(), ordinal);
    pod.metadata.name = Some(name.clone());
    pod.metadata.namespace = set.metadata.namespace.clone();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(POD_NAME_LABEL.into(), name);
    if options.pod_index_label {
        labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    }
}

/// Points the pod's claim-template volumes at its PVCs (upstream `updateStorage`): one volume
/// per template first, then the pod's other volumes.
pub fn update_storage(set: &StatefulSet, pod: &mut Pod) {
    let ordinal = ordinal_of(pod).unwrap_or(-1);
    let set_name = set.name_any();
    let spec = pod.spec.get_or_insert_with(Default::default);
    let templates: Vec<String> =
        set.spec.volume_claim_templates.iter().map(|c| c.metadata.name.clone().unwrap_or_default()).collect();
    let mut volumes: Vec<Volume> = templates
        .iter()
        .map(|template| Volume {
            name: template.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim_name(template, &set_name, ordinal),
                read_only: None,
            }),
            ..Default::default()
        })
        .collect();
    volumes
        .extend(spec.volumes.take().unwrap_or_default().into_iter().filter(|v| !templates.contains(&v.name)));
    spec.volumes = (!volumes.is_empty()).then_some(volumes);
}

/// The controller reference of the set's pods.
pub fn controller_reference(set: &StatefulSet) -> Option<OwnerReference> {
    let mut reference = set.controller_owner_ref(&())?;
    reference.block_owner_deletion = Some(true);
    Some(reference)
}

/// The lifecycle state a new pod starts in (upstream `processReplica`): `PreparingNormal` while a
/// `preNormal` hook is set and not every handler is on the pod, else `Normal`.
pub fn initial_lifecycle_state(set: &StatefulSet, pod: &Pod) -> LifecycleState {
    let hook = set.spec.lifecycle.as_ref().and_then(|l| l.pre_normal.as_ref());
    match hook {
        Some(hook) if !crate::workload::pods::is_pod_all_hooked(Some(hook), pod) => {
            LifecycleState::PreparingNormal
        }
        _ => LifecycleState::Normal,
    }
}

/// A new pod of `template` (the set at `revision`) for `ordinal` (upstream
/// `newVersionedStatefulSetPod`): the template's metadata and spec, the controller reference,
/// hostname and subdomain, identity labels, the revision label, the claim volumes and the
/// initial lifecycle state.
pub fn new_pod(
    set: &StatefulSet,
    template: &PodTemplateSpec,
    revision: &str,
    ordinal: i32,
    options: &CoreOptions,
    now: Timestamp,
) -> Pod {
    let template_meta = template.metadata.clone().unwrap_or_default();
    let name = pod_name(&set.name_any(), ordinal);
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: set.metadata.namespace.clone(),
            labels: Some(template_meta.labels.unwrap_or_default()),
            annotations: template_meta.annotations,
            finalizers: template_meta.finalizers,
            owner_references: controller_reference(set).map(|r| vec![r]),
            ..Default::default()
        },
        spec: Some(template.spec.clone().unwrap_or_default()),
        status: None,
    };
    update_identity(set, &mut pod, options);
    if let Some(spec) = pod.spec.as_mut() {
        spec.hostname = Some(name);
        spec.subdomain = (!set.spec.service_name.is_empty()).then(|| set.spec.service_name.clone());
    }
    update_storage(set, &mut pod);
    let state = initial_lifecycle_state(set, &pod);
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(CONTROLLER_REVISION_HASH.into(), revision.to_string());
    labels.insert(LIFECYCLE_STATE_KEY.into(), state.as_str().to_string());
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(LIFECYCLE_TIMESTAMP_KEY.into(), now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    pod
}

/// The PVCs of the pod with `ordinal`, one per claim template (upstream
/// `getPersistentVolumeClaims`): the template with the pod's claim name, the set's namespace and
/// the selector's match labels added to the template's labels. Owner references are set
/// afterwards, by the retention policy.
pub fn claims_for(set: &StatefulSet, ordinal: i32) -> Vec<PersistentVolumeClaim> {
    let set_name = set.name_any();
    let selector_labels = set.spec.selector.as_ref().and_then(|s| s.match_labels.clone()).unwrap_or_default();
    set.spec
        .volume_claim_templates
        .iter()
        .map(|template| {
            let mut claim = template.clone();
            let template_name = template.metadata.name.clone().unwrap_or_default();
            claim.metadata.name = Some(claim_name(&template_name, &set_name, ordinal));
            claim.metadata.namespace = set.metadata.namespace.clone();
            let mut labels = claim.metadata.labels.take().unwrap_or_default();
            labels.extend(selector_labels.clone());
            claim.metadata.labels = (!labels.is_empty()).then_some(labels);
            claim.status = None;
            claim
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kruise_crds::{
        apps::v1beta1::StatefulSetOrdinals,
        common::{Lifecycle, LifecycleHook},
    };

    use super::*;
    use crate::statefulset::core::fixtures::set;

    #[test]
    fn parent_and_ordinal_from_names() {
        let cases = [
            ("web-0", (Some("web"), Some(0))),
            ("web-12", (Some("web"), Some(12))),
            ("my-web-3", (Some("my-web"), Some(3))),
            ("web-007", (Some("web"), Some(7))),
            ("web", (None, None)),
            ("web-", (None, None)),
            ("web-1a", (None, None)),
            ("web-99999999999", (Some("web"), None)),
            ("-4", (Some(""), Some(4))),
        ];
        for (name, expected) in cases {
            assert_eq!(parse_pod_name(name), expected, "{name}");
        }
        assert_eq!(pod_name("web", 2), "web-2");
        assert_eq!(claim_name("data", "web", 2), "data-web-2");
    }

    #[test]
    fn reserved_ordinals_accept_ints_and_ranges() {
        let reserved = ReservedOrdinals::parse(&[IntOrString::Int(1), IntOrString::String("3-5".into())]);
        let got: Vec<i32> = (0..8).filter(|o| reserved.contains(*o)).collect();
        assert_eq!(got, [1, 3, 4, 5]);
        for bad in ["5-3", "3", "a-b", "1-2-3"] {
            let reserved = ReservedOrdinals::parse(&[IntOrString::Int(1), IntOrString::String(bad.into())]);
            assert!(!reserved.contains(1), "{bad} empties the whole list, as upstream");
        }
        let huge = ReservedOrdinals::parse(&[IntOrString::String("0-2000000000".into())]);
        assert_eq!(ReplicaRange::new(0, 2, huge).end, 2_000_000_003, "ranges are skipped, not walked");
    }

    /// Upstream `TestGetStatefulSetReplicasRange`.
    #[test]
    fn replica_ranges() {
        let reserved = || ReservedOrdinals::parse(&[IntOrString::Int(1), IntOrString::Int(3)]);
        let cases = [
            (0, 4, ReservedOrdinals::default(), 0, 4),
            (2, 4, reserved(), 2, 7),
            (3, 4, reserved(), 3, 8),
            (4, 4, reserved(), 4, 8),
            (0, 4, reserved(), 0, 6),
            (0, 0, reserved(), 0, 0),
        ];
        for (start, replicas, reserved, want_start, want_end) in cases {
            let range = ReplicaRange::new(start, replicas, reserved);
            assert_eq!((range.start, range.end), (want_start, want_end), "start {start} replicas {replicas}");
        }
        let range = ReplicaRange::new(0, 4, reserved());
        let kept: Vec<i32> = (-1..8).filter(|o| range.contains(*o)).collect();
        assert_eq!(kept, [0, 2, 4, 5]);
        assert_eq!(
            (range.len(), range.ordinal_at(2), range.index_of(5), range.index_of(6)),
            (6, 2, Some(5), None)
        );
    }

    #[test]
    fn range_follows_start_ordinal_gate() {
        let mut sts = set(2);
        sts.spec.ordinals = Some(StatefulSetOrdinals { start: 3 });
        let off = ReplicaRange::of(&sts, &CoreOptions { start_ordinal: false, ..Default::default() });
        assert_eq!((off.start, off.end), (0, 2));
        let on = ReplicaRange::of(&sts, &CoreOptions { start_ordinal: true, ..Default::default() });
        assert_eq!((on.start, on.end), (3, 5));
    }

    /// Upstream `TestIdentityMatches`, `TestStorageMatches`, `TestUpdateIdentity`,
    /// `TestUpdateIdentityWithPodIndexLabel`, `TestUpdateStorage`, `TestIsMemberOf`.
    #[test]
    fn identity_and_storage() {
        let sts = set(3);
        let options = CoreOptions::default();
        let pod = new_pod(&sts, &sts.spec.template, "web-abc", 1, &options, Timestamp::UNIX_EPOCH);
        assert!(identity_matches(&sts, &pod));
        assert!(storage_matches(&sts, &pod));
        assert!(is_member_of("web", &pod));
        assert!(!is_member_of("web2", &pod));

        let mut renamed = pod.clone();
        renamed.metadata.name = Some("web-01".into());
        assert!(!identity_matches(&sts, &renamed), "web-01 is not the canonical name of ordinal 1");
        update_identity(&sts, &mut renamed, &options);
        assert_eq!(renamed.metadata.name.as_deref(), Some("web-1"));

        let mut wrong_ns = pod.clone();
        wrong_ns.metadata.namespace = Some("other".into());
        assert!(!identity_matches(&sts, &wrong_ns));
        let mut no_label = pod.clone();
        no_label.metadata.labels.as_mut().unwrap().remove(POD_NAME_LABEL);
        assert!(!identity_matches(&sts, &no_label));
        update_identity(&sts, &mut no_label, &options);
        assert!(identity_matches(&sts, &no_label));
        let without_index = CoreOptions { pod_index_label: false, ..Default::default() };
        let mut bare = Pod {
            metadata: ObjectMeta { name: Some("web-4".into()), ..Default::default() },
            ..Default::default()
        };
        update_identity(&sts, &mut bare, &without_index);
        assert!(!bare.labels().contains_key(POD_INDEX_LABEL));
        update_identity(&sts, &mut bare, &options);
        assert_eq!(bare.labels()[POD_INDEX_LABEL], "4");

        let mut no_volumes = pod.clone();
        no_volumes.spec.as_mut().unwrap().volumes =
            Some(vec![Volume { name: "scratch".into(), ..Default::default() }]);
        assert!(!storage_matches(&sts, &no_volumes));
        update_storage(&sts, &mut no_volumes);
        assert!(storage_matches(&sts, &no_volumes));
        let names: Vec<String> =
            no_volumes.spec.unwrap().volumes.unwrap().into_iter().map(|v| v.name).collect();
        assert_eq!(names, ["data", "scratch"], "other volumes are kept");
    }

    #[test]
    fn new_pods_carry_identity_revision_and_state() {
        let mut sts = set(3);
        let pod =
            new_pod(&sts, &sts.spec.template, "web-abc", 2, &CoreOptions::default(), Timestamp::UNIX_EPOCH);
        let labels = pod.labels();
        assert_eq!(labels["app"], "web");
        assert_eq!(labels[POD_NAME_LABEL], "web-2");
        assert_eq!(labels[POD_INDEX_LABEL], "2");
        assert_eq!(labels[CONTROLLER_REVISION_HASH], "web-abc");
        assert_eq!(labels[LIFECYCLE_STATE_KEY], "Normal");
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!((spec.hostname.as_deref(), spec.subdomain.as_deref()), (Some("web-2"), Some("web-svc")));
        let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.controller, owner.block_owner_deletion),
            ("StatefulSet", Some(true), Some(true))
        );
        assert_eq!(owner.api_version, "apps.kruise.io/v1beta1");

        sts.spec.lifecycle = Some(Lifecycle {
            pre_normal: Some(LifecycleHook {
                labels_handler: [("ready-gate".to_string(), "true".to_string())].into(),
                ..Default::default()
            }),
            ..Default::default()
        });
        let pod = new_pod(&sts, &sts.spec.template, "r", 0, &CoreOptions::default(), Timestamp::UNIX_EPOCH);
        assert_eq!(pod.labels()[LIFECYCLE_STATE_KEY], "PreparingNormal");
        let mut hooked = sts.spec.template.clone();
        hooked.metadata.as_mut().unwrap().labels.as_mut().unwrap().insert("ready-gate".into(), "true".into());
        let pod = new_pod(&sts, &hooked, "r", 0, &CoreOptions::default(), Timestamp::UNIX_EPOCH);
        assert_eq!(pod.labels()[LIFECYCLE_STATE_KEY], "Normal", "the template already carries the handler");
    }

    /// Upstream `TestGetPersistentVolumeClaimsMergesLabels` / `...WithNilLabels`.
    #[test]
    fn claims_merge_selector_labels() {
        let mut sts = set(1);
        let claims = claims_for(&sts, 4);
        assert_eq!(claims[0].metadata.name.as_deref(), Some("data-web-4"));
        assert_eq!(claims[0].metadata.namespace.as_deref(), Some("prod"));
        let labels = claims[0].metadata.labels.clone().unwrap();
        assert_eq!(
            labels,
            [("app".to_string(), "web".to_string()), ("tier".to_string(), "db".to_string())].into()
        );
        sts.spec.volume_claim_templates[0].metadata.labels = None;
        let labels = claims_for(&sts, 0)[0].metadata.labels.clone().unwrap();
        assert_eq!(labels, [("app".to_string(), "web".to_string())].into());
        assert!(claims_for(&sts, 0)[0].metadata.owner_references.is_none());
    }
}
