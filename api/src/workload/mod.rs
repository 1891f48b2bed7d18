//! Rollouts on each workload kind, as pure functions over the workload object: a request
//! applied to the current object (with every problem named by its request field), the changes
//! pause/resume/promote/abort make, and the rollout state derived from the workload's status.
//! I/O is the caller's.
//!
//! CloneSet, Advanced StatefulSet and Advanced DaemonSet share one model — a partitioned rolling
//! update that keeps some pods at the previous revision until promoted — so the logic lives here,
//! generic over [`RolloutTarget`], and each kind's module only says where its fields are.
//!
//! A rollout is identified with the revision it moves pods to (`status.updateRevision` once the
//! controller observed the change): pause, resume and promote change the generation but not the
//! revision, while any other template change (a newer rollout, `kubectl patch`) supersedes it.

/// The [`RolloutTarget`] methods every kind implements alike: the template and selector under
/// `spec`, and the webhook's problems after `$default` applied the defaults, as `$validate`
/// finds them.
macro_rules! spec_accessors {
    (default: $default:expr, validate: $validate:path) => {
        fn template(&self) -> &PodTemplateSpec {
            &self.spec.template
        }

        fn template_mut(&mut self) -> &mut PodTemplateSpec {
            &mut self.spec.template
        }

        fn selector(&self) -> Option<&LabelSelector> {
            self.spec.selector.as_ref()
        }

        fn validation_problems(&self, old: Option<&Self>) -> Vec<(String, String)> {
            let defaulted = |workload: &Self| {
                let mut workload = workload.clone();
                ($default)(&mut workload);
                workload
            };
            let old = old.map(defaulted);
            $validate(&defaulted(self), old.as_ref())
                .iter()
                .map(|error| (error.path.as_str().to_string(), error.message()))
                .collect()
        }
    };
}

/// The [`RolloutTarget`] methods of the kinds whose `rollingUpdate` has CloneSet's
/// `podUpdatePolicy`, `maxUnavailable` and `paused` (CloneSet, Advanced StatefulSet).
macro_rules! pod_update_policy_accessors {
    () => {
        fn set_pod_update_policy(&mut self, policy: PodUpdatePolicy) -> Result<(), String> {
            self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).pod_update_policy =
                KruisePodUpdatePolicy::from(policy.as_str());
            Ok(())
        }

        fn set_max_unavailable(&mut self, value: IntOrString) {
            self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).max_unavailable =
                Some(value);
        }

        fn paused(&self) -> bool {
            self.spec.update_strategy.rolling_update.as_ref().is_some_and(|r| r.paused)
        }

        fn set_paused(&mut self, paused: bool) {
            self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).paused = paused;
        }
    };
}

/// The [`StatusView`] of a replica-counting status (CloneSet's and Advanced StatefulSet's share
/// their field names), with its conditions already mapped.
macro_rules! replica_status_view {
    ($status:expr, $conditions:expr) => {{
        let status = $status;
        StatusView {
            observed_generation: status.observed_generation,
            existing: status.replicas,
            updated: status.updated_replicas,
            updated_ready: status.updated_ready_replicas,
            ready: status.ready_replicas,
            conditions: $conditions,
            label_selector: Some(status.label_selector),
            update_revision: status.update_revision,
            current_revision: status.current_revision,
        }
    }};
}

/// Conditions of the `apps/v1` shape (optional reason and message) as the API shows them.
macro_rules! apps_v1_conditions {
    ($conditions:expr) => {
        $conditions
            .iter()
            .map(|c| {
                $crate::workload::condition(
                    &c.type_,
                    &c.status,
                    c.reason.as_deref(),
                    c.message.as_deref(),
                    c.last_transition_time.as_ref(),
                )
            })
            .collect()
    };
}

pub mod cloneset;
pub mod daemonset;
pub mod statefulset;

use std::{
    collections::{BTreeMap, HashSet},
    fmt::Debug,
};

use chrono::{DateTime, Utc};
use k8s_openapi::{
    NamespaceResourceScope,
    api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec, ResourceRequirements},
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use kruise_crds::{
    common::{IN_PLACE_UPDATE_STATE_KEY, InPlaceUpdateState, well_known::CONTROLLER_REVISION_HASH},
    intstr::{IntOrPercent as ParsedIntOrPercent, parse_int_or_percent},
    validation::parse_image_reference,
};
use kube::ResourceExt;
use serde::{Serialize, de::DeserializeOwned};

use crate::{
    error::FieldError,
    model::{IntOrPercent, PodUpdatePolicy, Progress, RolloutRequest, WorkloadCondition, WorkloadKind},
    store::RolloutState,
};

/// The condition reason that means the rollout stalled.
pub const DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";

/// What a rollout reads from a workload's status, the same for every kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusView {
    /// The generation the controller has acted on.
    pub observed_generation: i64,
    /// The revision pods are moving to (empty until the controller named it).
    pub update_revision: String,
    /// The revision all pods were at before.
    pub current_revision: String,
    /// Pods (or, for a DaemonSet, nodes running a daemon pod) that exist.
    pub existing: i32,
    /// Of those, at the update revision.
    pub updated: i32,
    /// Of those, at the update revision and ready.
    pub updated_ready: i32,
    /// Ready pods, any revision.
    pub ready: i32,
    /// The workload's conditions.
    pub conditions: Vec<WorkloadCondition>,
    /// The label selector the controller reports (`status.labelSelector`), when it does.
    pub label_selector: Option<String>,
}

/// A workload kind a rollout can drive: where its template, strategy and status are. The
/// rollout logic itself is the generic functions of this module.
pub trait RolloutTarget:
    kube::Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// The kind, as requests name it.
    const KIND: WorkloadKind;

    /// The pod template.
    fn template(&self) -> &PodTemplateSpec;
    /// The pod template, to change it.
    fn template_mut(&mut self) -> &mut PodTemplateSpec;
    /// The pods a finished rollout has at the new revision: the replicas, or for a DaemonSet
    /// the nodes that should run a pod.
    fn desired(&self) -> i32;
    /// Why the workload's update strategy cannot be driven by a rollout (OnDelete), if so.
    fn strategy_problem(&self) -> Option<String>;
    /// Sets how pods are updated; `Err` when the kind has no such policy.
    fn set_pod_update_policy(&mut self, policy: PodUpdatePolicy) -> Result<(), String>;
    /// Sets `maxUnavailable` (already checked to be a count or percentage).
    fn set_max_unavailable(&mut self, value: IntOrString);
    /// Sets `maxSurge`; `Err` when the kind has none.
    fn set_max_surge(&mut self, value: IntOrString) -> Result<(), String>;
    /// The partition as written in the spec.
    fn partition(&self) -> Option<IntOrString>;
    /// Sets the partition (already checked to be in range; `None`: every pod).
    fn set_partition(&mut self, partition: Option<IntOrString>);
    /// The pods a partition keeps at the previous revision, as this kind's controller counts.
    fn kept_for(&self, partition: Option<&IntOrString>) -> i32;
    /// Whether the update is paused.
    fn paused(&self) -> bool;
    /// Pauses or resumes the update.
    fn set_paused(&mut self, paused: bool);
    /// The problems the admission webhook finds (after defaulting), as `(field path, message)`;
    /// with `old`, the rules of an update too.
    fn validation_problems(&self, old: Option<&Self>) -> Vec<(String, String)>;
    /// What the status says.
    fn status_view(&self) -> StatusView;
    /// The label selector of the pods.
    fn selector(&self) -> Option<&LabelSelector>;
    /// The ControllerRevision names that may hold `revision` (the kinds name them differently).
    fn revision_object_names(&self, revision: &str) -> Vec<String> {
        vec![revision.to_string()]
    }
}

/// A Kubernetes timestamp as a chrono time (microsecond precision, as the store keeps).
pub(crate) fn to_chrono(time: &k8s_openapi::jiff::Timestamp) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(time.as_microsecond())
}

/// Conditions as the API shows them, from Kubernetes' `(type, status, reason, message, time)`.
pub(crate) fn condition(
    type_: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    time: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
) -> WorkloadCondition {
    WorkloadCondition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.unwrap_or_default().into(),
        message: message.unwrap_or_default().into(),
        last_transition_time: time.and_then(|t| to_chrono(&t.0)),
    }
}

/// The workload a rollout request asks for, from the current one; every problem is named by
/// the request field it comes from. Nothing is written.
pub fn apply_request<W: RolloutTarget>(current: &W, request: &RolloutRequest) -> Result<W, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut next = current.clone();
    let name = current.name_any();
    let kind = W::KIND.as_str();
    if let Some(problem) = current.strategy_problem() {
        errors.push(FieldError::new("workload.name", format!("{kind} {name}: {problem}")));
    }
    if request.images.is_empty() && request.resources.is_empty() {
        errors.push(FieldError::new(
            "images",
            "a rollout changes at least one image or one container's resources",
        ));
    }
    match next.template_mut().spec.as_mut() {
        None => errors.push(FieldError::new("workload.name", format!("{kind} {name} has no pod template"))),
        Some(pod) => apply_containers(pod, request, &format!("{kind} {name}"), &mut errors),
    }

    let strategy = &request.strategy;
    if let Some(policy) = strategy.pod_update_policy
        && let Err(message) = next.set_pod_update_policy(policy)
    {
        errors.push(FieldError::new("strategy.podUpdatePolicy", message));
    }
    match &strategy.partition {
        None => next.set_partition(None),
        Some(partition) => match check_partition(partition, current.desired()) {
            Ok(value) => next.set_partition(Some(value)),
            Err(message) => errors.push(FieldError::new("strategy.partition", message)),
        },
    }
    if let Some(value) = &strategy.max_unavailable {
        match check_int_or_percent(value) {
            Ok(parsed) => next.set_max_unavailable(parsed),
            Err(message) => errors.push(FieldError::new("strategy.maxUnavailable", message)),
        }
    }
    if let Some(value) = &strategy.max_surge {
        match check_int_or_percent(value).and_then(|parsed| next.set_max_surge(parsed)) {
            Ok(()) => {}
            Err(message) => errors.push(FieldError::new("strategy.maxSurge", message)),
        }
    }
    next.set_paused(strategy.paused.unwrap_or(false));
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

/// Writes the request's images and resources into the pod spec, naming each problem.
fn apply_containers(
    pod: &mut PodSpec,
    request: &RolloutRequest,
    workload: &str,
    errors: &mut Vec<FieldError>,
) {
    let names: Vec<String> =
        pod.containers.iter().chain(pod.init_containers.iter().flatten()).map(|c| c.name.clone()).collect();
    let unknown = |field: &str, container: &str| {
        FieldError::new(
            field,
            format!("{workload} has no container named {container:?} (containers: {})", names.join(", ")),
        )
    };
    for (container, image) in &request.images {
        let field = format!("images.{container}");
        if let Err(error) = parse_image_reference(image) {
            errors.push(FieldError::new(&field, format!("invalid image reference {image:?}: {error}")));
            continue;
        }
        match find_container(pod, container) {
            Some(target) => target.image = Some(image.clone()),
            None => errors.push(unknown(&field, container)),
        }
    }
    for (container, resources) in &request.resources {
        let field = format!("resources.{container}");
        let requests = parse_quantities(&field, "requests", &resources.requests, errors);
        let limits = parse_quantities(&field, "limits", &resources.limits, errors);
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
            None => errors.push(unknown(&field, container)),
        }
    }
}

/// Parses `requests` or `limits` of one container; problems are named `<field>.<kind>.<resource>`.
fn parse_quantities(
    field: &str,
    kind: &str,
    values: &BTreeMap<String, String>,
    errors: &mut Vec<FieldError>,
) -> BTreeMap<String, Quantity> {
    let mut out = BTreeMap::new();
    for (resource, value) in values {
        let path = format!("{field}.{kind}.{resource}");
        match kruise_crds::quantity::Quantity::parse(value) {
            Ok(quantity) if quantity.is_negative() => {
                errors.push(FieldError::new(path, format!("{value:?} must not be negative")))
            }
            Ok(_) => {
                out.insert(resource.clone(), Quantity(value.clone()));
            }
            Err(error) => errors.push(FieldError::new(path, format!("{value:?} is not a quantity: {error}"))),
        }
    }
    out
}

fn find_container<'a>(pod: &'a mut PodSpec, name: &str) -> Option<&'a mut Container> {
    if let Some(index) = pod.containers.iter().position(|c| c.name == name) {
        return pod.containers.get_mut(index);
    }
    pod.init_containers.as_mut()?.iter_mut().find(|c| c.name == name)
}

/// Checks a partition against the pod count: a count in `[0, desired]` or a percentage in
/// `[0%, 100%]`.
pub fn check_partition(value: &IntOrPercent, desired: i32) -> Result<IntOrString, String> {
    let parsed = value.to_k8s();
    match parse_int_or_percent(&parsed) {
        Ok(ParsedIntOrPercent::Int(count)) if count < 0 || count > desired => {
            Err(format!("{count} is out of range: must be between 0 and the workload's replicas ({desired})"))
        }
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

/// The problems the webhook finds in `next` that it does not find in `current` (so a
/// pre-existing problem is not blamed on the request), named by request field where one maps.
fn validate_change<W: RolloutTarget>(current: &W, next: &W) -> Vec<FieldError> {
    let before: HashSet<(String, String)> = current.validation_problems(None).into_iter().collect();
    let names = |init: bool| -> Vec<String> {
        next.template()
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
    let (names, init_names) = (names(false), names(true));
    next.validation_problems(Some(current))
        .into_iter()
        .filter(|problem| !before.contains(problem))
        .map(|(path, message)| {
            FieldError::new(request_field(&path, &names, &init_names), format!("{path}: {message}"))
        })
        .collect()
}

/// The request field a workload field path comes from.
fn request_field(path: &str, names: &[String], init_names: &[String]) -> String {
    for (prefix, field) in [
        ("spec.updateStrategy.rollingUpdate.partition", "strategy.partition"),
        ("spec.updateStrategy.rollingUpdate.maxUnavailable", "strategy.maxUnavailable"),
        ("spec.updateStrategy.rollingUpdate.maxSurge", "strategy.maxSurge"),
        ("spec.updateStrategy.rollingUpdate.podUpdatePolicy", "strategy.podUpdatePolicy"),
        ("spec.updateStrategy.rollingUpdate.rollingUpdateType", "strategy.podUpdatePolicy"),
        ("spec.updateStrategy.rollingUpdate.paused", "strategy.paused"),
        // In-place updates need the InPlaceUpdateReady gate; a request asking for them is
        // what makes its absence a problem.
        ("spec.template.spec.readinessGates", "strategy.podUpdatePolicy"),
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

/// The workload with its update paused or resumed.
pub fn with_paused<W: RolloutTarget>(current: &W, paused: bool) -> W {
    let mut next = current.clone();
    next.set_paused(paused);
    next
}

/// The workload promoted to a partition (none: every pod), and resumed.
pub fn with_partition<W: RolloutTarget>(current: &W, partition: Option<IntOrString>) -> W {
    let mut next = current.clone();
    next.set_partition(partition);
    next.set_paused(false);
    next
}

/// The workload rolled back to an older template: every pod goes back (no partition, not paused).
pub fn rolled_back<W: RolloutTarget>(current: &W, template: PodTemplateSpec) -> W {
    let mut next = with_partition(current, None);
    *next.template_mut() = template;
    next
}

/// The template a ControllerRevision holds (`data.spec.template`, without the strategic-merge
/// `$patch` marker); CloneSet, StatefulSet and DaemonSet revisions all keep it there.
pub fn revision_template(
    revision: &k8s_openapi::api::apps::v1::ControllerRevision,
) -> Option<PodTemplateSpec> {
    let mut template = revision.data.as_ref()?.0.pointer("/spec/template")?.clone();
    if let Some(object) = template.as_object_mut() {
        object.remove("$patch");
    }
    serde_json::from_value(template).ok()
}

/// The pods the current partition keeps at the old revision.
pub fn kept_by_partition<W: RolloutTarget>(workload: &W) -> i32 {
    workload.kept_for(workload.partition().as_ref())
}

/// Checks a promotion's partition: in range, and not above the current one (`Err`: the message
/// for the `partition` field).
pub fn check_promotion<W: RolloutTarget>(
    workload: &W,
    partition: &IntOrPercent,
) -> Result<IntOrString, String> {
    let value = check_partition(partition, workload.desired())?;
    let next = workload.kept_for(Some(&value));
    let current = kept_by_partition(workload);
    if next > current {
        return Err(format!(
            "keeps {next} pod(s) back, more than the current partition ({current}): promote only moves forward"
        ));
    }
    Ok(value)
}

/// The label selector of the workload's pods, as a list selector.
pub fn pod_selector<W: RolloutTarget>(workload: &W) -> String {
    workload
        .status_view()
        .label_selector
        .filter(|s| !s.is_empty())
        .or_else(|| {
            let labels = workload.selector()?.match_labels.as_ref()?;
            Some(labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","))
        })
        .unwrap_or_default()
}

/// The revision the workload was at before a change: its update revision once the controller
/// caught up with the spec, else the current one.
pub fn previous_revision<W: RolloutTarget>(workload: &W) -> Option<String> {
    let status = workload.status_view();
    Some(if status.observed_generation >= workload.meta().generation.unwrap_or(0) {
        status.update_revision
    } else {
        status.current_revision
    })
    .filter(|r| !r.is_empty())
}

/// Progress read from the status (and, when given, the pods: how many were updated in place and
/// how many were created since `since`).
pub fn progress<W: RolloutTarget>(
    workload: &W,
    revision: Option<&str>,
    pods: Option<&[Pod]>,
    since: DateTime<Utc>,
) -> Progress {
    let status = workload.status_view();
    let desired = workload.desired();
    let kept = kept_by_partition(workload);
    let same_revision = revision.is_none_or(|r| r == status.update_revision);
    let (updated, updated_ready) =
        if same_revision { (status.updated, status.updated_ready) } else { (0, 0) };
    let (in_place, recreated) = match (pods, revision) {
        (Some(pods), Some(revision)) => {
            let (in_place, recreated) = count_updates(pods, revision, since);
            (Some(in_place), Some(recreated))
        }
        _ => (None, None),
    };
    Progress {
        replicas: desired,
        updated,
        updated_ready,
        ready: status.ready,
        expected_updated: (desired - kept).max(0),
        partition: kept,
        in_place_updated: in_place,
        recreated,
        paused: workload.paused(),
        current_revision: Some(status.current_revision).filter(|r| !r.is_empty()),
        update_revision: Some(status.update_revision).filter(|r| !r.is_empty()),
        generation: workload.meta().generation.unwrap_or(0),
        observed_generation: status.observed_generation,
    }
}

/// Of the live pods at `revision`: how many were updated in place, and how many were created
/// since `since`.
fn count_updates(pods: &[Pod], revision: &str, since: DateTime<Utc>) -> (i32, i32) {
    let mut in_place = 0;
    let mut recreated = 0;
    for pod in pods.iter().filter(|pod| pod.metadata.deletion_timestamp.is_none()) {
        let labels = pod.metadata.labels.as_ref();
        if labels.and_then(|l| l.get(CONTROLLER_REVISION_HASH)).map(String::as_str) != Some(revision) {
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
    (in_place, recreated)
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

/// What a rollout's state is, given what is stored and the workload (`None`: it is gone).
/// Terminal states are kept; before the controller observed the rollout's generation the
/// stored state is kept.
pub fn derive<W: RolloutTarget>(
    stored: RolloutState,
    generation: Option<i64>,
    revision: Option<&str>,
    workload: Option<&W>,
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
    let Some(workload) = workload else {
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
    let status = workload.status_view();
    let current_generation = workload.meta().generation.unwrap_or(0);
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
    let desired = workload.desired();
    if caught_up && status.existing == desired && status.updated >= desired && status.updated_ready >= desired
    {
        return derived(
            RolloutState::Succeeded,
            "Observed",
            Some(format!("all {desired} pod(s) run revision {revision} and are ready")),
        );
    }
    if workload.paused() {
        return derived(RolloutState::Paused, "Paused", Some("the workload's update is paused".into()));
    }
    let kept = kept_by_partition(workload);
    let expected = (desired - kept).max(0);
    if caught_up && kept > 0 && status.updated >= expected && status.updated_ready >= expected {
        return derived(
            RolloutState::Paused,
            "PartitionReached",
            Some(format!(
                "{expected} of {desired} pod(s) updated and ready; the partition keeps {kept} at the previous revision: promote to continue"
            )),
        );
    }
    derived(
        RolloutState::Progressing,
        "Observed",
        Some(format!("{} of {expected} pod(s) updated, {} ready", status.updated, status.updated_ready)),
    )
}

/// Helpers the kinds' table tests share.
#[cfg(test)]
pub(crate) mod testing {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use std::collections::BTreeMap;

    use super::*;
    use crate::model::{ContainerResources, RolloutStrategy, WorkloadRef};

    /// A rollout request of `kind` setting `images`.
    pub fn request(kind: WorkloadKind, images: &[(&str, &str)]) -> RolloutRequest {
        RolloutRequest {
            workload: WorkloadRef { kind, name: "web".into() },
            images: images.iter().map(|(c, i)| (c.to_string(), i.to_string())).collect(),
            resources: BTreeMap::new(),
            strategy: RolloutStrategy::default(),
            pre_pull: false,
            reason: None,
        }
    }

    /// `requests` for a container.
    pub fn resources(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> ContainerResources {
        let map =
            |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        ContainerResources { requests: map(requests), limits: map(limits) }
    }

    /// Edits a request for one table case.
    pub type Edit = fn(&mut RolloutRequest);

    /// One row of a validation table: case name, workload, images, edit, the request fields of
    /// the problems, and a fragment of the first problem's message.
    pub type ProblemCase<'a, W> = (&'a str, W, &'a [(&'a str, &'a str)], Edit, &'a [&'a str], &'a str);

    /// Applies each case's request to its workload and checks the problems it names.
    pub fn assert_problems<W: RolloutTarget>(cases: Vec<ProblemCase<'_, W>>) {
        for (case, workload, images, edit, expected, fragment) in cases {
            let mut req = request(W::KIND, images);
            edit(&mut req);
            let errors = apply_request(&workload, &req).expect_err(case);
            assert_eq!(fields(&errors), expected, "{case}: {errors:?}");
            assert!(errors[0].message.contains(fragment), "{case}: {errors:?}");
        }
    }

    /// The request fields of the problems.
    pub fn fields(errors: &[FieldError]) -> Vec<&str> {
        errors.iter().map(|e| e.field.as_str()).collect()
    }

    /// The state derived for a rollout of `revision` observed at `generation`.
    pub fn state_of<W: RolloutTarget>(
        workload: &W,
        generation: i64,
        revision: &str,
    ) -> (RolloutState, &'static str) {
        let derived = derive(RolloutState::Progressing, Some(generation), Some(revision), Some(workload));
        (derived.state, derived.reason)
    }
}
