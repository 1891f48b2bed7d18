//! SidecarSet (`apps.kruise.io/v1beta1`, cluster-scoped) as a [`RolloutTarget`]. A SidecarSet
//! injects sidecar containers into the pods it matches, in any namespace, and its controller
//! upgrades them in place when their images change; `spec.updateStrategy` has the same
//! partition (count or percentage of the matched pods kept at the old sidecars, rounded up as a
//! CloneSet's), `maxUnavailable` and `paused` as a workload's rolling update. So a rollout is
//! the same partitioned model, counted in matched pods: `status.matchedPods` is what a finished
//! rollout has updated, `status.latestRevision` is the revision pods move to.
//!
//! What differs: a request names sidecar containers (`spec.containers`; init containers are
//! only injected into new pods, never upgraded in place) and changes only their images, as only
//! images are upgraded in place; `NotUpdate` leaves injected pods alone, so a rollout cannot
//! drive it; the revisions live in the Kruise manager's namespace, found by the owner label;
//! and abort puts back the images the previous revision recorded.

use k8s_openapi::{api::apps::v1::ControllerRevision, apimachinery::pkg::util::intstr::IntOrString};
use kruise_crds::{
    apps::v1beta1::{SidecarContainer, SidecarSet, SidecarSetUpdateStrategyType},
    defaults::default_sidecarset_v1beta1,
    intstr::partition_replicas,
    validation::{SIDECARSET_REVISION_OWNER_LABEL, parse_image_reference, validate_sidecarset_v1beta1},
};
use kube::ResourceExt;

use super::{
    PodScope, RevisionHome, RolloutTarget, StatusView, check_int_or_percent, check_partition, check_reason,
    defaulted_problems, new_problems, with_partition,
};
use crate::{
    error::FieldError,
    model::{RolloutRequest, WorkloadKind},
};

/// The request field that names the SidecarSet itself: the `name` of the request path.
pub const NAME_FIELD: &str = "name";

impl RolloutTarget for SidecarSet {
    const KIND: WorkloadKind = WorkloadKind::SidecarSet;

    fn api(client: kube::Client, _namespace: &str) -> kube::Api<Self> {
        kube::Api::all(client)
    }

    fn apply(&self, request: &RolloutRequest) -> Result<Self, Vec<FieldError>> {
        apply_request(self, request)
    }

    fn rolled_back(&self, revision: &ControllerRevision) -> Option<Self> {
        rolled_back(self, revision)
    }

    fn revision_home(&self, revision: &str) -> RevisionHome {
        RevisionHome::Labelled {
            selector: format!("{SIDECARSET_REVISION_OWNER_LABEL}={}", self.name_any()),
            name: revision.to_string(),
            owner_uid: self.uid().unwrap_or_default(),
        }
    }

    /// The pods are other workloads' pods, in any namespace: there is no owner to list them by
    /// and nothing of the SidecarSet's to pre-pull for.
    fn pod_scope(&self) -> Option<PodScope> {
        None
    }

    fn desired(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.matched_pods)
    }

    fn partition(&self) -> Option<IntOrString> {
        self.spec.update_strategy.partition.clone()
    }

    fn set_partition(&mut self, partition: Option<IntOrString>) {
        self.spec.update_strategy.partition = partition;
    }

    /// As the controller counts: the partition scaled against the matched pods (rounded up,
    /// below 100% never all of them), at most every matched pod.
    fn kept_for(&self, partition: Option<&IntOrString>) -> i32 {
        let matched = self.desired().max(0);
        partition_replicas(partition, Some(matched)).unwrap_or(0).clamp(0, matched)
    }

    fn paused(&self) -> bool {
        self.spec.update_strategy.paused
    }

    fn set_paused(&mut self, paused: bool) {
        self.spec.update_strategy.paused = paused;
    }

    /// The counts are matched pods; there is no current revision (pods may run several older
    /// ones) and no condition.
    fn status_view(&self) -> StatusView {
        let status = self.status.clone().unwrap_or_default();
        StatusView {
            observed_generation: status.observed_generation,
            update_revision: status.latest_revision,
            current_revision: String::new(),
            existing: status.matched_pods,
            updated: status.updated_pods,
            updated_ready: status.updated_ready_pods,
            ready: status.ready_pods,
            conditions: Vec::new(),
            label_selector: None,
        }
    }
}

/// Why the SidecarSet's update strategy cannot be driven by a rollout (`NotUpdate`), if so.
pub fn strategy_problem(set: &SidecarSet) -> Option<String> {
    (set.spec.update_strategy.type_ == SidecarSetUpdateStrategyType::NotUpdate).then(|| {
        "its update strategy is NotUpdate: injected pods keep their sidecars and only new pods get new \
         images, so a rollout cannot drive them (set spec.updateStrategy.type to RollingUpdate)"
            .into()
    })
}

/// The SidecarSet a rollout request asks for, from the current one: the sidecar images, the
/// partition, `maxUnavailable` and `paused` written into it, then checked by the webhook's rules
/// (after its defaults). Every problem is named by its request field; nothing is written.
pub fn apply_request(current: &SidecarSet, request: &RolloutRequest) -> Result<SidecarSet, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut next = current.clone();
    let name = current.name_any();
    if let Some(problem) = strategy_problem(current) {
        errors.push(FieldError::new(NAME_FIELD, format!("SidecarSet {name}: {problem}")));
    }
    if request.images.is_empty() {
        errors.push(FieldError::new("images", "a SidecarSet rollout changes at least one sidecar image"));
    }
    errors.extend(unsupported(request));
    set_images(&mut next, request, &name, &mut errors);

    let strategy = &request.strategy;
    match &strategy.partition {
        None => next.set_partition(None),
        Some(partition) => match check_partition(partition, current.desired()) {
            Ok(value) => next.set_partition(Some(value)),
            Err(message) => errors.push(FieldError::new("strategy.partition", message)),
        },
    }
    if let Some(value) = &strategy.max_unavailable {
        match check_int_or_percent(value) {
            Ok(parsed) => next.spec.update_strategy.max_unavailable = Some(parsed),
            Err(message) => errors.push(FieldError::new("strategy.maxUnavailable", message)),
        }
    }
    next.set_paused(strategy.paused.unwrap_or(false));
    errors.extend(check_reason(request));

    if errors.is_empty() {
        errors.extend(validate_change(current, &next));
    }
    if errors.is_empty() { Ok(next) } else { Err(errors) }
}

/// The parts of a rollout request a SidecarSet has no use for (they cannot come through the
/// SidecarSet endpoints, whose body has no such fields; this keeps the model honest on its own).
fn unsupported(request: &RolloutRequest) -> Vec<FieldError> {
    let strategy = &request.strategy;
    [
        (
            !request.resources.is_empty(),
            "resources",
            "a SidecarSet rollout changes sidecar images only: no other change is upgraded in place",
        ),
        (
            strategy.pod_update_policy.is_some(),
            "strategy.podUpdatePolicy",
            "a SidecarSet always upgrades its sidecars in place: there is no pod update policy to choose",
        ),
        (
            strategy.max_surge.is_some(),
            "strategy.maxSurge",
            "a SidecarSet upgrades sidecars in place, without surging: use maxUnavailable",
        ),
        (
            request.pre_pull,
            "prePull",
            "not offered for SidecarSets (its pods are in any namespace): pre-pull on the nodes with an image pull",
        ),
    ]
    .into_iter()
    .filter(|(present, _, _)| *present)
    .map(|(_, field, message)| FieldError::new(field, message))
    .collect()
}

/// Writes the request's images into the named sidecar containers, naming each problem
/// `images.<container>`.
fn set_images(next: &mut SidecarSet, request: &RolloutRequest, name: &str, errors: &mut Vec<FieldError>) {
    let names: Vec<String> = next.spec.containers.iter().map(|c| c.container.name.clone()).collect();
    for (container, image) in &request.images {
        let field = format!("images.{container}");
        if let Err(error) = parse_image_reference(image) {
            errors.push(FieldError::new(&field, format!("invalid image reference {image:?}: {error}")));
            continue;
        }
        if let Some(sidecar) = next.spec.containers.iter_mut().find(|c| c.container.name == *container) {
            sidecar.container.image = Some(image.clone());
        } else if next.spec.init_containers.iter().any(|c| c.container.name == *container) {
            errors.push(FieldError::new(
                field,
                format!(
                    "{container:?} is an init container of SidecarSet {name}: init containers are only \
                     injected into new pods, never upgraded in place (name one of: {})",
                    names.join(", ")
                ),
            ));
        } else {
            errors.push(FieldError::new(
                field,
                format!(
                    "SidecarSet {name} has no sidecar container named {container:?} (containers: {})",
                    names.join(", ")
                ),
            ));
        }
    }
}

/// The problems the webhook finds in `next` (defaulted, as an update of `current`) that it does
/// not find in `current`, named by request field where one maps.
fn validate_change(current: &SidecarSet, next: &SidecarSet) -> Vec<FieldError> {
    let problems = |set: &SidecarSet, old: Option<&SidecarSet>| {
        defaulted_problems(set, old, default_sidecarset_v1beta1, validate_sidecarset_v1beta1)
    };
    let names: Vec<String> = next.spec.containers.iter().map(|c| c.container.name.clone()).collect();
    new_problems(problems(current, None), problems(next, Some(current)))
        .into_iter()
        .map(|(path, message)| FieldError::new(request_field(&path, &names), format!("{path}: {message}")))
        .collect()
}

/// The request field a SidecarSet field path comes from.
fn request_field(path: &str, names: &[String]) -> String {
    for (prefix, field) in [
        ("spec.updateStrategy.partition", "strategy.partition"),
        ("spec.updateStrategy.maxUnavailable", "strategy.maxUnavailable"),
        ("spec.updateStrategy.paused", "strategy.paused"),
        // "partition and selector can not be used together": the partition is what the
        // request added.
        ("spec.updateStrategy.selector", "strategy.partition"),
    ] {
        if path.starts_with(prefix) {
            return field.into();
        }
    }
    if let Some(rest) = path.strip_prefix("spec.containers[")
        && let Some((index, _)) = rest.split_once(']')
        && let Some(name) = index.parse::<usize>().ok().and_then(|i| names.get(i))
    {
        return format!("images.{name}");
    }
    NAME_FIELD.into()
}

/// The SidecarSet with the sidecar images `revision` recorded put back (only images: that is
/// all a rollout changes, and all that is upgraded in place), for every matched pod, unpaused.
/// `None` when the revision records no containers.
pub fn rolled_back(current: &SidecarSet, revision: &ControllerRevision) -> Option<SidecarSet> {
    let recorded = revision.data.as_ref()?.0.pointer("/spec/containers")?.clone();
    let recorded: Vec<SidecarContainer> = serde_json::from_value(recorded).ok()?;
    let mut next = with_partition(current, None);
    for sidecar in &mut next.spec.containers {
        if let Some(old) = recorded.iter().find(|old| old.container.name == sidecar.container.name) {
            sidecar.container.image = old.container.image.clone();
        }
    }
    Some(next)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
    use serde_json::{Value, json};

    use super::*;
    use crate::{
        model::{IntOrPercent, PodUpdatePolicy},
        store::RolloutState,
        workload::{
            check_promotion, derive, kept_by_partition, previous_revision, progress,
            testing::{ProblemCase, assert_problems, request, resources, state_of},
            with_paused,
        },
    };

    /// A SidecarSet with sidecar `agent` (and init container `init`) matching `matched` pods,
    /// all at revision `logs-aaa`, with `strategy` as its update strategy.
    fn sidecarset(matched: i32, strategy: Value) -> SidecarSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": "logs", "uid": "uid-logs", "generation": 1},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "initContainers": [{"name": "init", "image": "busybox:1.36"}],
                "containers": [{"name": "agent", "image": "log-agent:1"},
                               {"name": "proxy", "image": "mesh-proxy:1"}],
                "updateStrategy": strategy
            },
            "status": {"observedGeneration": 1, "matchedPods": matched, "updatedPods": matched,
                       "readyPods": matched, "updatedReadyPods": matched, "latestRevision": "logs-aaa"}
        }))
        .unwrap()
    }

    fn set() -> SidecarSet {
        sidecarset(4, json!({"maxUnavailable": 1}))
    }

    fn image(set: &SidecarSet, container: &str) -> String {
        let sidecar = set.spec.containers.iter().find(|c| c.container.name == container).unwrap();
        sidecar.container.image.clone().unwrap_or_default()
    }

    fn with_status(
        mut set: SidecarSet,
        f: impl FnOnce(&mut kruise_crds::apps::v1beta1::SidecarSetStatus),
    ) -> SidecarSet {
        f(set.status.as_mut().unwrap());
        set
    }

    #[test]
    fn applies_images_partition_max_unavailable_and_paused() {
        type Case<'a> = (
            &'a str,
            SidecarSet,
            fn(&mut RolloutRequest),
            Option<IntOrString>,
            Option<IntOrString>,
            bool,
            i32,
        );
        let cases: Vec<Case<'_>> = vec![
            (
                "images only: every pod, the set's maxUnavailable kept",
                set(),
                |_| {},
                None,
                Some(IntOrString::Int(1)),
                false,
                0,
            ),
            (
                "a count partition",
                set(),
                |r| r.strategy.partition = Some(IntOrPercent::Int(3)),
                Some(IntOrString::Int(3)),
                Some(IntOrString::Int(1)),
                false,
                3,
            ),
            (
                "a percentage partition rounds up",
                set(),
                |r| r.strategy.partition = Some(IntOrPercent::Percent("30%".into())),
                Some(IntOrString::String("30%".into())),
                Some(IntOrString::Int(1)),
                false,
                2,
            ),
            (
                "99% keeps all but one",
                set(),
                |r| r.strategy.partition = Some(IntOrPercent::Percent("99%".into())),
                Some(IntOrString::String("99%".into())),
                Some(IntOrString::Int(1)),
                false,
                3,
            ),
            (
                "maxUnavailable as a percentage",
                set(),
                |r| r.strategy.max_unavailable = Some(IntOrPercent::Percent("50%".into())),
                None,
                Some(IntOrString::String("50%".into())),
                false,
                0,
            ),
            (
                "start paused",
                set(),
                |r| r.strategy.paused = Some(true),
                None,
                Some(IntOrString::Int(1)),
                true,
                0,
            ),
            (
                "an omitted partition clears the set's",
                sidecarset(4, json!({"partition": 2})),
                |_| {},
                None,
                None,
                false,
                0,
            ),
            (
                "an omitted paused resumes the set",
                sidecarset(4, json!({"paused": true})),
                |_| {},
                None,
                None,
                false,
                0,
            ),
        ];
        for (case, current, edit, partition, max_unavailable, paused, kept) in cases {
            let mut req = request(WorkloadKind::SidecarSet, &[("agent", "log-agent:2")]);
            edit(&mut req);
            let next = current.apply(&req).unwrap_or_else(|e| panic!("{case}: {e:?}"));
            assert_eq!(image(&next, "agent"), "log-agent:2", "{case}");
            assert_eq!(image(&next, "proxy"), "mesh-proxy:1", "{case}: other sidecars are kept");
            let strategy = &next.spec.update_strategy;
            assert_eq!(strategy.partition, partition, "{case}");
            assert_eq!(strategy.max_unavailable, max_unavailable, "{case}");
            assert_eq!(strategy.paused, paused, "{case}");
            assert_eq!(kept_by_partition(&next), kept, "{case}");
        }
    }

    #[test]
    fn names_the_request_field_of_each_problem() {
        let cases: Vec<ProblemCase<'_, SidecarSet>> = vec![
            (
                "NotUpdate cannot be driven",
                sidecarset(4, json!({"type": "NotUpdate"})),
                &[("agent", "log-agent:2")],
                |_| {},
                &["name"],
                "NotUpdate",
            ),
            ("no image", set(), &[], |_| {}, &["images"], "at least one sidecar image"),
            (
                "unknown container",
                set(),
                &[("web", "nginx:1.27")],
                |_| {},
                &["images.web"],
                "no sidecar container named \"web\" (containers: agent, proxy)",
            ),
            (
                "init containers are not upgraded in place",
                set(),
                &[("init", "busybox:1.37")],
                |_| {},
                &["images.init"],
                "init container",
            ),
            (
                "bad image reference",
                set(),
                &[("agent", "Log-Agent:UPPER")],
                |_| {},
                &["images.agent"],
                "invalid image reference",
            ),
            (
                "partition above the matched pods",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Int(5)),
                &["strategy.partition"],
                "between 0 and",
            ),
            (
                "negative partition",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Int(-1)),
                &["strategy.partition"],
                "out of range",
            ),
            (
                "partition over 100%",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Percent("150%".into())),
                &["strategy.partition"],
                "0% and 100%",
            ),
            (
                "partition not a number",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Percent("half".into())),
                &["strategy.partition"],
                "integer or a percentage",
            ),
            (
                "bad maxUnavailable",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.strategy.max_unavailable = Some(IntOrPercent::Int(-2)),
                &["strategy.maxUnavailable"],
                "negative",
            ),
            (
                "a fractional percentage is refused by the webhook's rules",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.strategy.max_unavailable = Some(IntOrPercent::Percent("12.5%".into())),
                &["strategy.maxUnavailable"],
                "spec.updateStrategy.maxUnavailable",
            ),
            (
                "a partition with an update selector",
                sidecarset(4, json!({"selector": {"matchLabels": {"canary": "true"}}})),
                &[("agent", "log-agent:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Int(1)),
                &["strategy.partition"],
                "partition and selector",
            ),
            (
                "resources are not upgraded in place",
                set(),
                &[("agent", "log-agent:2")],
                |r| {
                    r.resources.insert("agent".into(), resources(&[("cpu", "1")], &[]));
                },
                &["resources"],
                "images only",
            ),
            (
                "no pod update policy",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.strategy.pod_update_policy = Some(PodUpdatePolicy::ReCreate),
                &["strategy.podUpdatePolicy"],
                "in place",
            ),
            (
                "no surge",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.strategy.max_surge = Some(IntOrPercent::Int(1)),
                &["strategy.maxSurge"],
                "without surging",
            ),
            (
                "no pre-pull",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.pre_pull = true,
                &["prePull"],
                "image pull",
            ),
            (
                "reason too long",
                set(),
                &[("agent", "log-agent:2")],
                |r| r.reason = Some("x".repeat(1025)),
                &["reason"],
                "1024",
            ),
        ];
        assert_problems(cases);
    }

    #[test]
    fn a_problem_the_set_already_had_is_not_blamed_on_the_request() {
        // A fractional percentage is invalid, but it is the set's, not the request's.
        let current = sidecarset(4, json!({"maxUnavailable": "12.5%"}));
        let req = request(WorkloadKind::SidecarSet, &[("agent", "log-agent:2")]);
        assert!(current.apply(&req).is_ok());
    }

    #[test]
    fn derives_states_from_the_status() {
        let mut rolling = set();
        rolling.metadata.generation = Some(2);
        let rolling = with_status(rolling, |s| {
            s.observed_generation = 2;
            s.latest_revision = "logs-bbb".into();
            s.updated_pods = 1;
            s.updated_ready_pods = 0;
        });
        type StateCase<'a> = (&'a str, SidecarSet, i64, &'a str, (RolloutState, &'a str));
        let cases: Vec<StateCase<'_>> = vec![
            (
                "the controller has not observed the change",
                rolling.clone(),
                3,
                "logs-bbb",
                (RolloutState::Progressing, "Observed"),
            ),
            (
                "pods are being upgraded",
                rolling.clone(),
                2,
                "logs-bbb",
                (RolloutState::Progressing, "Observed"),
            ),
            (
                "every matched pod updated and ready",
                with_status(rolling.clone(), |s| {
                    s.updated_pods = 4;
                    s.updated_ready_pods = 4;
                }),
                2,
                "logs-bbb",
                (RolloutState::Succeeded, "Observed"),
            ),
            (
                "updated but not all ready",
                with_status(rolling.clone(), |s| {
                    s.updated_pods = 4;
                    s.updated_ready_pods = 3;
                }),
                2,
                "logs-bbb",
                (RolloutState::Progressing, "Observed"),
            ),
            (
                "another revision took over",
                with_status(rolling.clone(), |s| {
                    s.updated_pods = 4;
                    s.updated_ready_pods = 4;
                }),
                2,
                "logs-ccc",
                (RolloutState::Aborted, "Superseded"),
            ),
            (
                "the partition is reached",
                with_status(with_partition(&rolling, Some(IntOrString::Int(1))), |s| {
                    s.updated_pods = 3;
                    s.updated_ready_pods = 3;
                }),
                2,
                "logs-bbb",
                (RolloutState::Paused, "PartitionReached"),
            ),
            (
                "a percentage partition is reached",
                with_status(with_partition(&rolling, Some(IntOrString::String("50%".into()))), |s| {
                    s.updated_pods = 2;
                    s.updated_ready_pods = 2;
                }),
                2,
                "logs-bbb",
                (RolloutState::Paused, "PartitionReached"),
            ),
            ("paused", with_paused(&rolling, true), 2, "logs-bbb", (RolloutState::Paused, "Paused")),
            (
                "no matched pods: nothing to upgrade",
                with_status(rolling.clone(), |s| {
                    s.matched_pods = 0;
                    s.updated_pods = 0;
                    s.updated_ready_pods = 0;
                    s.ready_pods = 0;
                }),
                2,
                "logs-bbb",
                (RolloutState::Succeeded, "Observed"),
            ),
        ];
        for (case, current, generation, revision, expected) in cases {
            let derived = derive(RolloutState::Progressing, Some(generation), Some(revision), Some(&current));
            assert_eq!((derived.state, derived.reason), expected, "{case}: {derived:?}");
        }
        assert_eq!(
            derive::<SidecarSet>(RolloutState::Paused, Some(2), Some("logs-bbb"), None).state,
            RolloutState::Failed,
            "a deleted SidecarSet fails its rollout"
        );
        let pending = derive(RolloutState::Pending, Some(3), None, Some(&rolling));
        assert_eq!(pending.state, RolloutState::Pending);
        assert_eq!(state_of(&rolling, 2, "logs-bbb").0, RolloutState::Progressing);
    }

    #[test]
    fn progress_counts_matched_pods() {
        let current = with_status(with_partition(&set(), Some(IntOrString::Int(1))), |s| {
            s.latest_revision = "logs-bbb".into();
            s.updated_pods = 2;
            s.updated_ready_pods = 1;
            s.ready_pods = 3;
        });
        let p = progress(&current, Some("logs-bbb"), None, chrono::Utc::now());
        assert_eq!(
            (p.replicas, p.updated, p.updated_ready, p.ready, p.expected_updated, p.partition),
            (4, 2, 1, 3, 3, 1)
        );
        assert_eq!((p.in_place_updated, p.recreated), (None, None), "the pods are not the SidecarSet's own");
        assert_eq!(p.update_revision.as_deref(), Some("logs-bbb"));
        assert_eq!(p.current_revision, None);
        let other = progress(&current, Some("logs-ccc"), None, chrono::Utc::now());
        assert_eq!(
            (other.updated, other.updated_ready),
            (0, 0),
            "counts of another revision are not this rollout's"
        );
    }

    #[test]
    fn promotion_only_moves_forward() {
        let current = with_partition(&set(), Some(IntOrString::Int(2)));
        let cases: Vec<(&str, IntOrPercent, Result<IntOrString, &str>)> = vec![
            ("lower", IntOrPercent::Int(1), Ok(IntOrString::Int(1))),
            ("the same", IntOrPercent::Int(2), Ok(IntOrString::Int(2))),
            ("every pod", IntOrPercent::Percent("0%".into()), Ok(IntOrString::String("0%".into()))),
            ("higher", IntOrPercent::Int(3), Err("promote only moves forward")),
            ("a higher percentage", IntOrPercent::Percent("75%".into()), Err("promote only moves forward")),
            ("out of range", IntOrPercent::Int(9), Err("out of range")),
        ];
        for (case, partition, expected) in cases {
            match (check_promotion(&current, &partition), expected) {
                (Ok(value), Ok(want)) => assert_eq!(value, want, "{case}"),
                (Err(message), Err(fragment)) => assert!(message.contains(fragment), "{case}: {message}"),
                (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn previous_revision_is_the_latest_one() {
        assert_eq!(previous_revision(&set()).as_deref(), Some("logs-aaa"));
        let mut changed = set();
        changed.metadata.generation = Some(2);
        assert_eq!(
            previous_revision(&changed).as_deref(),
            Some("logs-aaa"),
            "not yet observed: still the revision the controller named last"
        );
        let fresh = with_status(set(), |s| s.latest_revision.clear());
        assert_eq!(previous_revision(&fresh), None);
    }

    #[test]
    fn abort_puts_back_the_recorded_images_for_every_pod() {
        let revision = |containers: Value| ControllerRevision {
            data: Some(RawExtension(json!({"spec": {"$patch": "replace", "containers": containers}}))),
            ..Default::default()
        };
        let mut current = with_partition(&set(), Some(IntOrString::Int(2)));
        current.set_paused(true);
        current.spec.containers[0].container.image = Some("log-agent:2".into());
        current.spec.containers[1].container.image = Some("mesh-proxy:2".into());
        let recorded =
            revision(json!([{"name": "agent", "image": "log-agent:1"}, {"name": "gone", "image": "x:1"}]));
        let back = current.rolled_back(&recorded).unwrap();
        assert_eq!(image(&back, "agent"), "log-agent:1");
        assert_eq!(image(&back, "proxy"), "mesh-proxy:2", "a sidecar the revision does not record is kept");
        assert_eq!(back.spec.containers.len(), 2, "containers are neither added nor removed");
        assert_eq!((back.spec.update_strategy.partition.clone(), back.paused()), (None, false));
        assert!(current.rolled_back(&revision(Value::Null)).is_none());
        assert!(current.rolled_back(&ControllerRevision::default()).is_none());
    }

    #[test]
    fn revisions_are_found_by_owner_label_and_pods_are_not_its_own() {
        assert_eq!(
            set().revision_home("logs-aaa"),
            RevisionHome::Labelled {
                selector: "kruise.io/sidecarset-name=logs".into(),
                name: "logs-aaa".into(),
                owner_uid: "uid-logs".into()
            }
        );
        assert_eq!(set().pod_scope(), None);
    }
}
