//! What the three workloads (CloneSet, Advanced StatefulSet, Advanced DaemonSet) share beyond
//! the partitioned model: a pod template that a request writes images and resources into, a
//! strategy with a pod update policy, validation by the webhook's rules, and an abort that
//! restores the template a ControllerRevision recorded. Each kind's module says where its
//! fields are ([`PodTemplateWorkload`]); the functions here are written once.

use std::collections::BTreeMap;

use k8s_openapi::{
    NamespaceResourceScope,
    api::core::v1::{Container, PodSpec, PodTemplateSpec, ResourceRequirements},
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use kruise_crds::validation::parse_image_reference;
use kube::ResourceExt;

use super::{
    PodScope, RolloutTarget, check_int_or_percent, check_partition, check_reason, new_problems,
    with_partition,
};
use crate::{
    error::FieldError,
    model::{PodUpdatePolicy, RolloutRequest},
};

/// A namespaced workload with a pod template and a rolling-update strategy: where its
/// template, selector and strategy fields are, and what the webhook says about it.
pub trait PodTemplateWorkload: RolloutTarget + kube::Resource<Scope = NamespaceResourceScope> {
    /// The pod template.
    fn template(&self) -> &PodTemplateSpec;
    /// The pod template, to change it.
    fn template_mut(&mut self) -> &mut PodTemplateSpec;
    /// Why the workload's update strategy cannot be driven by a rollout (OnDelete), if so.
    fn strategy_problem(&self) -> Option<String>;
    /// Sets how pods are updated; `Err` when the kind has no such policy.
    fn set_pod_update_policy(&mut self, policy: PodUpdatePolicy) -> Result<(), String>;
    /// Sets `maxUnavailable` (already checked to be a count or percentage).
    fn set_max_unavailable(&mut self, value: IntOrString);
    /// Sets `maxSurge`; `Err` when the kind has none.
    fn set_max_surge(&mut self, value: IntOrString) -> Result<(), String>;
    /// The problems the admission webhook finds (after defaulting), as `(field path, message)`;
    /// with `old`, the rules of an update too.
    fn validation_problems(&self, old: Option<&Self>) -> Vec<(String, String)>;
    /// The label selector of the pods.
    fn selector(&self) -> Option<&LabelSelector>;
    /// The ControllerRevision names that may hold `revision` (the kinds name them differently).
    fn revision_object_names(&self, revision: &str) -> Vec<String> {
        vec![revision.to_string()]
    }
}

/// The workload a rollout request asks for, from the current one; every problem is named by
/// the request field it comes from. Nothing is written.
pub fn apply_request<W: PodTemplateWorkload>(
    current: &W,
    request: &RolloutRequest,
) -> Result<W, Vec<FieldError>> {
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
    errors.extend(check_reason(request));

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

/// The problems the webhook finds in `next` that it does not find in `current` (so a
/// pre-existing problem is not blamed on the request), named by request field where one maps.
fn validate_change<W: PodTemplateWorkload>(current: &W, next: &W) -> Vec<FieldError> {
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
    new_problems(current.validation_problems(None), next.validation_problems(Some(current)))
        .into_iter()
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

/// The workload rolled back to an older template: every pod goes back (no partition, not paused).
pub fn rolled_back<W: PodTemplateWorkload>(current: &W, template: PodTemplateSpec) -> W {
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

/// The label selector of the workload's pods, as a list selector.
pub fn pod_selector<W: PodTemplateWorkload>(workload: &W) -> String {
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

/// Where a workload's pods are: its namespace and selector, owned by it.
pub fn pod_scope<W: PodTemplateWorkload>(workload: &W) -> PodScope {
    PodScope {
        namespace: workload.namespace().unwrap_or_default(),
        list_selector: pod_selector(workload),
        selector: workload.selector().cloned().unwrap_or_default(),
        owner_uid: workload.uid().unwrap_or_default(),
    }
}
