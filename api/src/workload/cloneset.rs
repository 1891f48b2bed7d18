//! Rollouts on a CloneSet, as pure functions: a request applied to the current object (with
//! every problem named by its request field), the changes pause/resume/promote/abort make, and
//! the rollout state derived from the CloneSet's status. I/O is the caller's.
//!
//! A rollout is identified with the revision it moves pods to (`status.updateRevision` once the
//! controller observed the change): pause, resume and promote change the generation but not the
//! revision, while any other template change (a newer rollout, `kubectl patch`) supersedes it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use k8s_openapi::{
    api::core::v1::{Container, Pod, PodTemplateSpec, ResourceRequirements},
    apimachinery::pkg::{api::resource::Quantity, util::intstr::IntOrString},
};
use kruise_crds::{
    apps::v1beta1::{CloneSet, PodUpdatePolicy as KruisePodUpdatePolicy},
    common::{IN_PLACE_UPDATE_STATE_KEY, InPlaceUpdateState, well_known::CONTROLLER_REVISION_HASH},
    intstr::{IntOrPercent as ParsedIntOrPercent, parse_int_or_percent, partition_replicas},
    validation::{parse_image_reference, validate_cloneset_v1beta1},
};

use crate::{
    error::FieldError,
    model::{IntOrPercent, Progress, RolloutRequest, WorkloadCondition},
    store::RolloutState,
};

/// The CloneSet condition reason that means the rollout stalled.
const DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";

/// A Kubernetes timestamp as a chrono time (microsecond precision, as the store keeps).
fn to_chrono(time: &k8s_openapi::jiff::Timestamp) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(time.as_microsecond())
}

/// The desired replicas (CloneSet default 1).
pub fn replicas(set: &CloneSet) -> i32 {
    set.spec.replicas.unwrap_or(1)
}

/// The CloneSet a rollout request asks for, from the current one; every problem is named by
/// the request field it comes from. Nothing is written.
pub fn apply_request(current: &CloneSet, request: &RolloutRequest) -> Result<CloneSet, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut next = current.clone();
    let name = current.metadata.name.clone().unwrap_or_default();
    let replicas = replicas(current);
    if request.images.is_empty() && request.resources.is_empty() {
        errors.push(FieldError::new(
            "images",
            "a rollout changes at least one image or one container's resources",
        ));
    }
    match next.spec.template.spec.as_mut() {
        None => errors.push(FieldError::new("workload.name", format!("CloneSet {name} has no pod template"))),
        Some(pod) => {
            let names: Vec<String> = pod
                .containers
                .iter()
                .chain(pod.init_containers.iter().flatten())
                .map(|c| c.name.clone())
                .collect();
            for (container, image) in &request.images {
                let field = format!("images.{container}");
                if let Err(error) = parse_image_reference(image) {
                    errors
                        .push(FieldError::new(&field, format!("invalid image reference {image:?}: {error}")));
                    continue;
                }
                match find_container(pod, container) {
                    Some(target) => target.image = Some(image.clone()),
                    None => errors.push(unknown_container(&field, container, &name, &names)),
                }
            }
            for (container, resources) in &request.resources {
                let field = format!("resources.{container}");
                let mut parsed = |kind: &str, values: &BTreeMap<String, String>| {
                    let mut out = BTreeMap::new();
                    for (resource, value) in values {
                        match kruise_crds::quantity::Quantity::parse(value) {
                            Ok(quantity) if quantity.is_negative() => errors.push(FieldError::new(
                                format!("{field}.{kind}.{resource}"),
                                format!("{value:?} must not be negative"),
                            )),
                            Ok(_) => {
                                out.insert(resource.clone(), Quantity(value.clone()));
                            }
                            Err(error) => errors.push(FieldError::new(
                                format!("{field}.{kind}.{resource}"),
                                format!("{value:?} is not a quantity: {error}"),
                            )),
                        }
                    }
                    out
                };
                let requests = parsed("requests", &resources.requests);
                let limits = parsed("limits", &resources.limits);
                if resources.requests.is_empty() && resources.limits.is_empty() {
                    errors.push(FieldError::new(&field, "set requests or limits"));
                }
                match find_container(pod, container) {
                    Some(target) => {
                        let current = target.resources.get_or_insert_with(ResourceRequirements::default);
                        if !requests.is_empty() {
                            current.requests.get_or_insert_with(BTreeMap::new).extend(requests);
                        }
                        if !limits.is_empty() {
                            current.limits.get_or_insert_with(BTreeMap::new).extend(limits);
                        }
                    }
                    None => errors.push(unknown_container(&field, container, &name, &names)),
                }
            }
        }
    }

    let strategy = &request.strategy;
    let rolling = next.spec.update_strategy.rolling_update.get_or_insert_with(Default::default);
    if let Some(policy) = strategy.pod_update_policy {
        rolling.pod_update_policy = KruisePodUpdatePolicy::from(policy.as_str());
    }
    rolling.partition = match &strategy.partition {
        None => None,
        Some(partition) => match check_partition(partition, replicas) {
            Ok(value) => Some(value),
            Err(message) => {
                errors.push(FieldError::new("strategy.partition", message));
                None
            }
        },
    };
    for (field, value, slot) in [
        ("strategy.maxUnavailable", &strategy.max_unavailable, &mut rolling.max_unavailable),
        ("strategy.maxSurge", &strategy.max_surge, &mut rolling.max_surge),
    ] {
        if let Some(value) = value {
            match check_int_or_percent(value) {
                Ok(parsed) => *slot = Some(parsed),
                Err(message) => errors.push(FieldError::new(field, message)),
            }
        }
    }
    rolling.paused = strategy.paused.unwrap_or(false);
    if let Some(reason) = &request.reason
        && reason.chars().count() > 1024
    {
        errors.push(FieldError::new("reason", "must be at most 1024 characters"));
    }

    if errors.is_empty() {
        errors.extend(validate_change(current, &next));
    }
    if errors.is_empty() { Ok(next) } else { Err(errors) }
}

fn find_container<'a>(
    pod: &'a mut k8s_openapi::api::core::v1::PodSpec,
    name: &str,
) -> Option<&'a mut Container> {
    if let Some(index) = pod.containers.iter().position(|c| c.name == name) {
        return pod.containers.get_mut(index);
    }
    pod.init_containers.as_mut()?.iter_mut().find(|c| c.name == name)
}

fn unknown_container(field: &str, container: &str, workload: &str, names: &[String]) -> FieldError {
    FieldError::new(
        field,
        format!(
            "CloneSet {workload} has no container named {container:?} (containers: {})",
            names.join(", ")
        ),
    )
}

/// Checks a partition against the replica count: a count in `[0, replicas]` or a percentage
/// in `[0%, 100%]`.
pub fn check_partition(value: &IntOrPercent, replicas: i32) -> Result<IntOrString, String> {
    let parsed = value.to_k8s();
    match parse_int_or_percent(&parsed) {
        Ok(ParsedIntOrPercent::Int(count)) if count < 0 || count > replicas => Err(format!(
            "{count} is out of range: must be between 0 and the workload's replicas ({replicas})"
        )),
        Ok(ParsedIntOrPercent::Percent(percent)) if !(0.0..=100.0).contains(&percent) => {
            Err(format!("{percent}% is out of range: must be between 0% and 100%"))
        }
        Ok(_) => Ok(parsed),
        Err(error) => Err(format!("must be an integer or a percentage such as \"20%\": {error}")),
    }
}

fn check_int_or_percent(value: &IntOrPercent) -> Result<IntOrString, String> {
    let parsed = value.to_k8s();
    match parse_int_or_percent(&parsed) {
        Ok(ParsedIntOrPercent::Int(count)) if count < 0 => Err(format!("{count} must not be negative")),
        Ok(ParsedIntOrPercent::Percent(percent)) if !(0.0..=100.0).contains(&percent) => {
            Err(format!("{percent}% is out of range: must be between 0% and 100%"))
        }
        Ok(_) => Ok(parsed),
        Err(error) => Err(format!("must be an integer or a percentage such as \"20%\": {error}")),
    }
}

/// The problems CloneSet validation finds in `next` that it does not find in `current` (so a
/// pre-existing problem is not blamed on the request), named by request field where one maps.
fn validate_change(current: &CloneSet, next: &CloneSet) -> Vec<FieldError> {
    let defaulted = |set: &CloneSet| {
        let mut set = set.clone();
        kruise_crds::defaults::default_cloneset_v1beta1(&mut set, true);
        set
    };
    let (current, next) = (defaulted(current), defaulted(next));
    let before: std::collections::HashSet<String> =
        validate_cloneset_v1beta1(&current, None).iter().map(ToString::to_string).collect();
    let containers = |set: &CloneSet, init: bool| -> Vec<String> {
        set.spec
            .template
            .spec
            .as_ref()
            .map(|pod| {
                let list = if init {
                    pod.init_containers.clone().unwrap_or_default()
                } else {
                    pod.containers.clone()
                };
                list.into_iter().map(|c| c.name).collect()
            })
            .unwrap_or_default()
    };
    let (names, init_names) = (containers(&next, false), containers(&next, true));
    validate_cloneset_v1beta1(&next, Some(&current))
        .into_iter()
        .filter(|error| !before.contains(&error.to_string()))
        .map(|error| {
            let path = error.path.as_str().to_string();
            FieldError::new(request_field(&path, &names, &init_names), format!("{path}: {}", error.message()))
        })
        .collect()
}

/// The request field a CloneSet field path comes from.
fn request_field(path: &str, names: &[String], init_names: &[String]) -> String {
    for (prefix, field) in [
        ("spec.updateStrategy.rollingUpdate.partition", "strategy.partition"),
        ("spec.updateStrategy.rollingUpdate.maxUnavailable", "strategy.maxUnavailable"),
        ("spec.updateStrategy.rollingUpdate.maxSurge", "strategy.maxSurge"),
        ("spec.updateStrategy.rollingUpdate.podUpdatePolicy", "strategy.podUpdatePolicy"),
        ("spec.updateStrategy.rollingUpdate.paused", "strategy.paused"),
    ] {
        if path.starts_with(prefix) {
            return field.into();
        }
    }
    for (list, names) in
        [("spec.template.spec.containers[", names), ("spec.template.spec.initContainers[", init_names)]
    {
        if let Some(rest) = path.strip_prefix(list)
            && let Some((index, rest)) = rest.split_once(']')
            && let Some(name) = index.parse::<usize>().ok().and_then(|i| names.get(i))
        {
            if rest.starts_with(".image") {
                return format!("images.{name}");
            }
            if rest.starts_with(".resources") {
                return format!("resources.{name}");
            }
        }
    }
    "workload".into()
}

/// The CloneSet with its update paused or resumed.
pub fn with_paused(current: &CloneSet, paused: bool) -> CloneSet {
    let mut next = current.clone();
    next.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).paused = paused;
    next
}

/// The CloneSet promoted to a partition (none: every pod), and resumed.
pub fn with_partition(current: &CloneSet, partition: Option<IntOrString>) -> CloneSet {
    let mut next = current.clone();
    let rolling = next.spec.update_strategy.rolling_update.get_or_insert_with(Default::default);
    rolling.partition = partition;
    rolling.paused = false;
    next
}

/// The CloneSet rolled back to an older template: every pod goes back (no partition, not paused).
pub fn rolled_back(current: &CloneSet, template: PodTemplateSpec) -> CloneSet {
    let mut next = with_partition(current, None);
    next.spec.template = template;
    next
}

/// The template a ControllerRevision of a CloneSet holds (`data.spec.template`, without the
/// strategic-merge `$patch` marker).
pub fn revision_template(
    revision: &k8s_openapi::api::apps::v1::ControllerRevision,
) -> Option<PodTemplateSpec> {
    let mut template = revision.data.as_ref()?.0.pointer("/spec/template")?.clone();
    if let Some(object) = template.as_object_mut() {
        object.remove("$patch");
    }
    serde_json::from_value(template).ok()
}

/// The pods the partition keeps at the old revision (clamped to `[0, replicas]`).
pub fn kept_by_partition(set: &CloneSet) -> i32 {
    let partition = set.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.partition.as_ref());
    partition_replicas(partition, Some(replicas(set))).unwrap_or(0)
}

/// Whether the CloneSet's update is paused.
pub fn paused(set: &CloneSet) -> bool {
    set.spec.update_strategy.rolling_update.as_ref().is_some_and(|r| r.paused)
}

/// Progress read from the status (and, when given, the pods: how many were updated in place and
/// how many were created since `since`).
pub fn progress(
    set: &CloneSet,
    revision: Option<&str>,
    pods: Option<&[Pod]>,
    since: DateTime<Utc>,
) -> Progress {
    let status = set.status.clone().unwrap_or_default();
    let replicas = replicas(set);
    let kept = kept_by_partition(set);
    let same_revision = revision.is_none_or(|r| r == status.update_revision);
    let (updated, updated_ready) =
        if same_revision { (status.updated_replicas, status.updated_ready_replicas) } else { (0, 0) };
    let (in_place, recreated) = match (pods, revision) {
        (Some(pods), Some(revision)) => {
            let mut in_place = 0;
            let mut recreated = 0;
            for pod in pods.iter().filter(|pod| pod.metadata.deletion_timestamp.is_none()) {
                let labels = pod.metadata.labels.as_ref();
                if labels.and_then(|l| l.get(CONTROLLER_REVISION_HASH)).map(String::as_str) != Some(revision)
                {
                    continue;
                }
                let state: Option<InPlaceUpdateState> = pod
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(IN_PLACE_UPDATE_STATE_KEY))
                    .and_then(|text| serde_json::from_str(text).ok());
                if state.is_some_and(|state| state.revision == revision) {
                    in_place += 1;
                } else if pod
                    .metadata
                    .creation_timestamp
                    .as_ref()
                    .and_then(|t| to_chrono(&t.0))
                    .is_some_and(|t| t >= since)
                {
                    recreated += 1;
                }
            }
            (Some(in_place), Some(recreated))
        }
        _ => (None, None),
    };
    Progress {
        replicas,
        updated,
        updated_ready,
        ready: status.ready_replicas,
        expected_updated: (replicas - kept).max(0),
        partition: kept,
        in_place_updated: in_place,
        recreated,
        paused: paused(set),
        current_revision: Some(status.current_revision.clone()).filter(|r| !r.is_empty()),
        update_revision: Some(status.update_revision.clone()).filter(|r| !r.is_empty()),
        generation: set.metadata.generation.unwrap_or(0),
        observed_generation: status.observed_generation,
    }
}

/// The CloneSet's conditions.
pub fn conditions(set: &CloneSet) -> Vec<WorkloadCondition> {
    set.status
        .as_ref()
        .map(|status| {
            status
                .conditions
                .iter()
                .map(|c| WorkloadCondition {
                    type_: c.type_.clone(),
                    status: c.status.clone(),
                    reason: c.reason.clone(),
                    message: c.message.clone(),
                    last_transition_time: c.last_transition_time.as_ref().and_then(|t| to_chrono(&t.0)),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A state derived from the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derived {
    /// The state.
    pub state: RolloutState,
    /// Why (`Observed`, `PartitionReached`, `Superseded`, `ProgressDeadlineExceeded`, `WorkloadDeleted`).
    pub reason: &'static str,
    /// Detail.
    pub message: Option<String>,
    /// The revision the rollout targets, when now known.
    pub revision: Option<String>,
}

/// What a rollout's state is, given what is stored and the CloneSet (`None`: it is gone).
/// Terminal states are kept; before the controller observed the rollout's generation the
/// stored state is kept.
pub fn derive(
    stored: RolloutState,
    generation: Option<i64>,
    revision: Option<&str>,
    set: Option<&CloneSet>,
) -> Derived {
    let keep = |message: Option<String>| Derived {
        state: stored,
        reason: "Observed",
        message,
        revision: revision.map(str::to_string),
    };
    if stored.is_terminal() {
        return keep(None);
    }
    let Some(set) = set else {
        return Derived {
            state: RolloutState::Failed,
            reason: "WorkloadDeleted",
            message: Some("the workload was deleted".into()),
            revision: revision.map(str::to_string),
        };
    };
    let Some(generation) = generation else {
        return keep(Some("the change is being applied".into()));
    };
    let status = set.status.clone().unwrap_or_default();
    let current_generation = set.metadata.generation.unwrap_or(0);
    if status.observed_generation < generation || status.update_revision.is_empty() {
        return keep(Some(format!("waiting for the controller to observe generation {generation}")));
    }
    let revision = revision.map(str::to_string).unwrap_or_else(|| status.update_revision.clone());
    let caught_up = status.observed_generation >= current_generation;
    let derived = |state, reason, message: Option<String>| Derived {
        state,
        reason,
        message,
        revision: Some(revision.clone()),
    };
    if caught_up && status.update_revision != revision {
        return derived(
            RolloutState::Aborted,
            "Superseded",
            Some(format!("superseded: the workload moved on to revision {}", status.update_revision)),
        );
    }
    if let Some(condition) = status.conditions.iter().find(|c| c.type_ == "Progressing")
        && condition.status == "False"
        && condition.reason == DEADLINE_EXCEEDED
    {
        return derived(RolloutState::Failed, DEADLINE_EXCEEDED, Some(condition.message.clone()));
    }
    let replicas = replicas(set);
    if caught_up
        && status.replicas == replicas
        && status.updated_replicas >= replicas
        && status.updated_ready_replicas >= replicas
    {
        return derived(
            RolloutState::Succeeded,
            "Observed",
            Some(format!("all {replicas} pod(s) run revision {revision} and are ready")),
        );
    }
    if paused(set) {
        return derived(RolloutState::Paused, "Paused", Some("the workload's update is paused".into()));
    }
    let kept = kept_by_partition(set);
    let expected = (replicas - kept).max(0);
    if caught_up
        && kept > 0
        && status.updated_replicas >= expected
        && status.updated_ready_replicas >= expected
    {
        return derived(
            RolloutState::Paused,
            "PartitionReached",
            Some(format!(
                "{expected} of {replicas} pod(s) updated and ready; the partition keeps {kept} at the previous revision: promote to continue"
            )),
        );
    }
    derived(
        RolloutState::Progressing,
        "Observed",
        Some(format!(
            "{} of {expected} pod(s) updated, {} ready",
            status.updated_replicas, status.updated_ready_replicas
        )),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;
    use crate::model::{ContainerResources, RolloutStrategy, WorkloadKind, WorkloadRef};

    fn cloneset(replicas: i32) -> CloneSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default", "generation": 1},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}
            },
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                       "updatedReadyReplicas": replicas, "readyReplicas": replicas,
                       "updateRevision": "web-aaa", "currentRevision": "web-aaa"}
        }))
        .unwrap()
    }

    fn request(images: &[(&str, &str)]) -> RolloutRequest {
        RolloutRequest {
            workload: WorkloadRef { kind: WorkloadKind::CloneSet, name: "web".into() },
            images: images.iter().map(|(c, i)| (c.to_string(), i.to_string())).collect(),
            resources: BTreeMap::new(),
            strategy: RolloutStrategy::default(),
            pre_pull: false,
            reason: None,
        }
    }

    fn fields(errors: &[FieldError]) -> Vec<&str> {
        errors.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn applies_images_resources_and_strategy() {
        let mut req = request(&[("nginx", "nginx:1.26")]);
        req.resources.insert(
            "nginx".into(),
            ContainerResources {
                requests: [("cpu".to_string(), "100m".to_string())].into(),
                limits: BTreeMap::new(),
            },
        );
        req.strategy.partition = Some(IntOrPercent::Percent("40%".into()));
        req.strategy.max_unavailable = Some(IntOrPercent::Int(2));
        let next = apply_request(&cloneset(5), &req).unwrap();
        let container = &next.spec.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(container.image.as_deref(), Some("nginx:1.26"));
        assert_eq!(container.resources.as_ref().unwrap().requests.as_ref().unwrap()["cpu"].0, "100m");
        let rolling = next.spec.update_strategy.rolling_update.unwrap();
        assert_eq!(rolling.partition, Some(IntOrString::String("40%".into())));
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(2)));
        assert!(!rolling.paused);
    }

    #[test]
    fn names_the_request_field_of_each_problem() {
        let mut req = request(&[("nginx", "Nginx:UPPER"), ("sidecar", "busybox")]);
        req.strategy.partition = Some(IntOrPercent::Int(9));
        req.strategy.max_surge = Some(IntOrPercent::Percent("lots".into()));
        req.resources.insert(
            "nginx".into(),
            ContainerResources {
                requests: [("cpu".to_string(), "a lot".to_string())].into(),
                limits: BTreeMap::new(),
            },
        );
        let errors = apply_request(&cloneset(5), &req).unwrap_err();
        assert_eq!(
            fields(&errors),
            [
                "images.nginx",
                "images.sidecar",
                "resources.nginx.requests.cpu",
                "strategy.partition",
                "strategy.maxSurge"
            ],
            "{errors:?}"
        );
        assert!(errors[1].message.contains("no container named \"sidecar\""), "{errors:?}");
        assert!(errors[3].message.contains("between 0 and the workload's replicas (5)"), "{errors:?}");
        let mut percent = request(&[("nginx", "nginx:2")]);
        percent.strategy.partition = Some(IntOrPercent::Percent("150%".into()));
        assert_eq!(fields(&apply_request(&cloneset(5), &percent).unwrap_err()), ["strategy.partition"]);
        assert_eq!(fields(&apply_request(&cloneset(5), &request(&[])).unwrap_err()), ["images"]);
    }

    #[test]
    fn cloneset_validation_is_mapped_to_request_fields() {
        let mut req = request(&[("nginx", "nginx:1.26")]);
        req.resources.insert(
            "nginx".into(),
            ContainerResources {
                requests: [("cpu".to_string(), "2".to_string())].into(),
                limits: [("cpu".to_string(), "1".to_string())].into(),
            },
        );
        let errors = apply_request(&cloneset(2), &req).unwrap_err();
        assert_eq!(fields(&errors), ["resources.nginx"], "{errors:?}");
    }

    fn with_status(
        mut set: CloneSet,
        f: impl FnOnce(&mut kruise_crds::apps::v1beta1::CloneSetStatus),
    ) -> CloneSet {
        f(set.status.as_mut().unwrap());
        set
    }

    #[test]
    fn derives_states_from_the_status() {
        let base = cloneset(4);
        let mut rolling = base.clone();
        rolling.metadata.generation = Some(2);
        let rolling = with_status(rolling, |s| {
            s.observed_generation = 2;
            s.update_revision = "web-bbb".into();
            s.updated_replicas = 1;
            s.updated_ready_replicas = 0;
        });
        let pending = derive(RolloutState::Pending, Some(3), None, Some(&rolling));
        assert_eq!(pending.state, RolloutState::Pending, "generation 3 not observed yet");
        let progressing = derive(RolloutState::Pending, Some(2), None, Some(&rolling));
        assert_eq!(
            (progressing.state, progressing.revision.as_deref()),
            (RolloutState::Progressing, Some("web-bbb"))
        );

        let done = with_status(rolling.clone(), |s| {
            s.updated_replicas = 4;
            s.updated_ready_replicas = 4;
        });
        assert_eq!(
            derive(RolloutState::Progressing, Some(2), Some("web-bbb"), Some(&done)).state,
            RolloutState::Succeeded
        );
        assert_eq!(
            derive(RolloutState::Progressing, Some(2), Some("web-ccc"), Some(&done)).state,
            RolloutState::Aborted,
            "another revision supersedes"
        );
        assert_eq!(
            derive(RolloutState::Succeeded, Some(2), Some("web-ccc"), Some(&done)).state,
            RolloutState::Succeeded
        );
        assert_eq!(
            derive(RolloutState::Progressing, Some(2), Some("web-bbb"), None).state,
            RolloutState::Failed
        );

        let mut partitioned = with_partition(&rolling, Some(IntOrString::Int(2)));
        partitioned = with_status(partitioned, |s| {
            s.updated_replicas = 2;
            s.updated_ready_replicas = 2;
        });
        let derived = derive(RolloutState::Progressing, Some(2), Some("web-bbb"), Some(&partitioned));
        assert_eq!((derived.state, derived.reason), (RolloutState::Paused, "PartitionReached"));
        let paused = with_paused(&rolling, true);
        assert_eq!(
            derive(RolloutState::Progressing, Some(2), Some("web-bbb"), Some(&paused)).state,
            RolloutState::Paused
        );

        let stalled = with_status(rolling, |s| {
            s.conditions.push(kruise_crds::apps::v1beta1::CloneSetCondition {
                type_: "Progressing".into(),
                status: "False".into(),
                reason: DEADLINE_EXCEEDED.into(),
                message: "stuck".into(),
                ..Default::default()
            })
        });
        assert_eq!(
            derive(RolloutState::Progressing, Some(2), Some("web-bbb"), Some(&stalled)).state,
            RolloutState::Failed
        );
    }
}
