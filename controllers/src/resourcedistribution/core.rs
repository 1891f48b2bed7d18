//! ResourceDistribution decisions, free of I/O (upstream `utils.go`, the decisions inside
//! `resourcedistribution_controller.go` and the namespace event handler):
//!
//! - which namespaces a distribution targets ([`list_namespaces_for_distributor`]): the union
//!   of every namespace (`allNamespaces`), the listed ones and the selector's matches, minus
//!   `excludedNamespaces`, and never `kube-system` or `kube-public`;
//! - what one namespace needs ([`distribute_action`], [`clean_action`]): a copy created, brought
//!   back in line, left alone, deleted, or a failure (the namespace is missing or terminating, an
//!   object of that name belongs to someone else);
//! - the copy to write ([`make_resource_object`]) and its hash ([`hash_resource`]);
//! - the status ([`handle_errors`], [`calculate_new_status`]): six conditions in upstream's
//!   order, one per kind of failure, with the namespaces it hit;
//! - which distributions a namespace change concerns ([`distributions_for_namespace_change`]).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::Namespace,
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{
    ResourceDistribution, ResourceDistributionCondition, ResourceDistributionConditionType,
    ResourceDistributionStatus, ResourceDistributionTargets,
};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Annotation on every copy: the SHA-256 of the distributed resource as the API server serves
/// it (upstream `ResourceHashCodeAnnotation`).
pub const RESOURCE_HASH_CODE_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.hashcode";
/// Annotation on every copy: the name of the distribution it came from (upstream
/// `SourceResourceDistributionOfResource`).
pub const SOURCE_RESOURCE_DISTRIBUTION_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.from";
/// Namespaces never distributed to, whatever the targets say (upstream
/// `defaultSystemNamespaces`).
pub const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "kube-public"];
/// The reason of a condition with no failed namespace (upstream `OperationSucceeded`).
pub const OPERATION_SUCCEEDED: &str = "Succeeded";
/// The API version of the distributions' owner references (the storage version).
pub const RESOURCEDISTRIBUTION_API_VERSION: &str = "apps.kruise.io/v1beta1";
/// The kind of the distributions' owner references.
pub const RESOURCEDISTRIBUTION_KIND: &str = "ResourceDistribution";

/// The kinds a distribution can copy (upstream `supportedGKList`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceKind {
    /// core/v1 Secret.
    Secret,
    /// core/v1 ConfigMap.
    ConfigMap,
}

/// The resource of a distribution, decoded: its kind, name and whole object.
#[derive(Clone, Debug, PartialEq)]
pub struct DistributedResource {
    /// Secret or ConfigMap.
    pub kind: ResourceKind,
    /// `metadata.name`: every copy has it.
    pub name: String,
    /// The object as written in `spec.resource`.
    pub object: Map<String, Value>,
}

/// Why a distribution's resource cannot be distributed (the webhook refuses these; an object
/// stored before it ran is skipped without retry, as upstream).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// `spec.resource` is missing or empty.
    #[error("empty resource is not allowed")]
    Empty,
    /// `spec.resource` is not an object.
    #[error("failed to deserialize resource, please check your spec.resource")]
    NotAnObject,
    /// The kind is not Secret or ConfigMap in core/v1.
    #[error("unknown or unsupported resource {api_version}/{kind}, only core/v1 Secret and ConfigMap")]
    Unsupported {
        /// The apiVersion written.
        api_version: String,
        /// The kind written.
        kind: String,
    },
    /// `metadata.name` is missing.
    #[error("the resource has no metadata.name")]
    NoName,
}

/// Decodes `spec.resource` (upstream `DeserializeResource` plus the supported-kind check).
pub fn deserialize_resource(resource: &Value) -> Result<DistributedResource, ResourceError> {
    let object = match resource {
        Value::Null => return Err(ResourceError::Empty),
        Value::Object(object) if object.is_empty() => return Err(ResourceError::Empty),
        Value::Object(object) => object,
        _ => return Err(ResourceError::NotAnObject),
    };
    let text = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let kind = match (api_version.as_str(), kind.as_str()) {
        ("v1", "Secret") => ResourceKind::Secret,
        ("v1", "ConfigMap") => ResourceKind::ConfigMap,
        _ => return Err(ResourceError::Unsupported { api_version, kind }),
    };
    let name = object.get("metadata").and_then(|meta| meta.get("name")).and_then(Value::as_str);
    match name {
        Some(name) if !name.is_empty() => {
            Ok(DistributedResource { kind, name: name.to_string(), object: object.clone() })
        }
        _ => Err(ResourceError::NoName),
    }
}

/// The SHA-256, in hex, of the resource as the API server serialises it (upstream
/// `hashResource` over `spec.resource`'s raw bytes): compact JSON with sorted keys and Go's
/// escaping of `<`, `>`, `&`, U+2028 and U+2029, so that a client hashing the bytes it reads
/// gets the same value.
pub fn hash_resource(resource: &Value) -> String {
    let mut text = String::new();
    write_go_json(resource, &mut text);
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn write_go_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => out.push_str(&number.to_string()),
        Value::String(text) => write_go_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_go_json(item, out);
            }
            out.push(']');
        }
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_go_string(key, out);
                out.push(':');
                if let Some(item) = object.get(key) {
                    write_go_json(item, out);
                }
            }
            out.push('}');
        }
    }
}

fn write_go_string(text: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 || c == '<' || c == '>' || c == '&' => {
                let code = c as u32;
                out.push_str("\\u00");
                out.push(char::from(HEX[((code >> 4) & 0xf) as usize]));
                out.push(char::from(HEX[(code & 0xf) as usize]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn is_system_namespace(name: &str) -> bool {
    SYSTEM_NAMESPACES.contains(&name)
}

fn is_in_list(name: &str, list: &kruise_crds::apps::v1beta1::ResourceDistributionTargetNamespaces) -> bool {
    list.list.iter().any(|namespace| namespace.name == name)
}

fn labels_of(namespace: &Namespace) -> BTreeMap<String, String> {
    namespace.metadata.labels.clone().unwrap_or_default()
}

/// Whether the namespace is listed in `includedNamespaces` (upstream
/// `matchViaIncludedNamespaces`).
pub fn match_via_included_namespaces(namespace: &str, targets: &ResourceDistributionTargets) -> bool {
    is_in_list(namespace, &targets.included_namespaces)
}

/// Whether the namespace's labels match a non-empty `namespaceSelector` (upstream
/// `matchViaLabelSelector`).
pub fn match_via_label_selector(
    labels: &BTreeMap<String, String>,
    targets: &ResourceDistributionTargets,
) -> bool {
    let selector = &targets.namespace_selector;
    !kruise_crds::selector::is_empty(selector) && kruise_crds::selector::matches(selector, labels)
}

/// Whether the namespace is a target (upstream `matchViaTargets`): never a system or excluded
/// one; otherwise every namespace under `allNamespaces`, a listed one, or a selector match.
pub fn match_via_targets(
    namespace: &str,
    labels: &BTreeMap<String, String>,
    targets: &ResourceDistributionTargets,
) -> bool {
    if is_system_namespace(namespace) || is_in_list(namespace, &targets.excluded_namespaces) {
        return false;
    }
    targets.all_namespaces
        || is_in_list(namespace, &targets.included_namespaces)
        || match_via_label_selector(labels, targets)
}

/// The target namespaces and the other existing ones, each sorted (upstream
/// `listNamespacesForDistributor`). A listed namespace is a target even when it does not exist
/// (it is then reported as `NamespaceNotExists`).
pub fn list_namespaces_for_distributor(
    targets: &ResourceDistributionTargets,
    namespaces: &[&Namespace],
) -> (Vec<String>, Vec<String>) {
    let name = |namespace: &&Namespace| namespace.metadata.name.clone().unwrap_or_default();
    let mut matched = BTreeSet::new();
    if targets.all_namespaces {
        matched.extend(namespaces.iter().map(name).filter(|n| !is_system_namespace(n)));
    } else {
        matched.extend(
            targets
                .included_namespaces
                .list
                .iter()
                .map(|namespace| namespace.name.clone())
                .filter(|n| !is_system_namespace(n)),
        );
        if !kruise_crds::selector::is_empty(&targets.namespace_selector) {
            matched.extend(
                namespaces
                    .iter()
                    .filter(|namespace| {
                        kruise_crds::selector::matches(&targets.namespace_selector, &labels_of(namespace))
                    })
                    .map(name)
                    .filter(|n| !is_system_namespace(n)),
            );
        }
    }
    for excluded in &targets.excluded_namespaces.list {
        matched.remove(&excluded.name);
    }
    let unmatched: BTreeSet<String> =
        namespaces.iter().map(name).filter(|namespace| !matched.contains(namespace)).collect();
    (matched.into_iter().collect(), unmatched.into_iter().collect())
}

/// The controller reference every copy carries (upstream `metav1.NewControllerRef`).
pub fn controller_ref(distribution: &ResourceDistribution) -> OwnerReference {
    OwnerReference {
        api_version: RESOURCEDISTRIBUTION_API_VERSION.to_string(),
        kind: RESOURCEDISTRIBUTION_KIND.to_string(),
        name: distribution.metadata.name.clone().unwrap_or_default(),
        uid: distribution.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Whether the object's controller is this distribution (upstream
/// `isControlledByDistributor`): by UID when both are known, else by kind and name.
pub fn is_controlled_by_distributor(meta: &ObjectMeta, distribution: &ResourceDistribution) -> bool {
    let owners = meta.owner_references.as_deref().unwrap_or_default();
    let Some(controller) = owners.iter().find(|owner| owner.controller == Some(true)) else {
        return false;
    };
    let uid = distribution.metadata.uid.as_deref().unwrap_or_default();
    if !controller.uid.is_empty() && !uid.is_empty() {
        return controller.uid == uid;
    }
    controller.kind == RESOURCEDISTRIBUTION_KIND
        && Some(controller.name.as_str()) == distribution.metadata.name.as_deref()
}

/// The name of the distribution controlling an object, if one does (for the watches of copies).
pub fn controlling_distribution(meta: &ObjectMeta) -> Option<String> {
    meta.owner_references.as_deref().unwrap_or_default().iter().find_map(|owner| {
        let ours = owner.controller == Some(true)
            && owner.kind == RESOURCEDISTRIBUTION_KIND
            && owner.api_version.starts_with("apps.kruise.io/");
        ours.then(|| owner.name.clone())
    })
}

/// Whether a copy differs from the resource in anything but `metadata` and `status` (upstream
/// `needToUpdate`).
pub fn need_to_update(old: &Map<String, Value>, new: &Map<String, Value>) -> bool {
    let body = |object: &Map<String, Value>| {
        let mut object = object.clone();
        object.remove("metadata");
        object.remove("status");
        object
    };
    body(old) != body(new)
}

fn string_map(meta: &Map<String, Value>, field: &str) -> Map<String, Value> {
    meta.get(field).and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The copy to write into `namespace` (upstream `makeResourceObject`): the resource, with the
/// labels, annotations and finalizers of the existing copy it does not set itself kept, the
/// namespace, this distribution as controller owner, and the hash and source annotations. An
/// update also carries the existing copy's `resourceVersion`, so a concurrent change makes it
/// conflict instead of being overwritten unseen.
pub fn make_resource_object(
    distribution: &ResourceDistribution,
    namespace: &str,
    resource: &DistributedResource,
    hash: &str,
    old: Option<&Map<String, Value>>,
) -> Value {
    let mut object = resource.object.clone();
    let mut meta = object.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut labels = string_map(&meta, "labels");
    let mut annotations = string_map(&meta, "annotations");
    if let Some(old_meta) = old.and_then(|old| old.get("metadata")).and_then(Value::as_object) {
        for (key, value) in string_map(old_meta, "labels") {
            labels.entry(key).or_insert(value);
        }
        for (key, value) in string_map(old_meta, "annotations") {
            annotations.entry(key).or_insert(value);
        }
        let finalizers: BTreeSet<String> = [meta.get("finalizers"), old_meta.get("finalizers")]
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if finalizers.is_empty() {
            meta.remove("finalizers");
        } else {
            meta.insert("finalizers".into(), finalizers.into_iter().map(Value::String).collect());
        }
        if let Some(version) = old_meta.get("resourceVersion") {
            meta.insert("resourceVersion".into(), version.clone());
        }
    }
    meta.insert("namespace".into(), Value::String(namespace.to_string()));

    let reference = controller_ref(distribution);
    let mut owners: Vec<Value> =
        meta.get("ownerReferences").and_then(Value::as_array).cloned().unwrap_or_default();
    let reference_value = serde_json::to_value(&reference).unwrap_or(Value::Null);
    match owners
        .iter_mut()
        .find(|owner| owner.get("uid").and_then(Value::as_str) == Some(reference.uid.as_str()))
    {
        Some(owner) => *owner = reference_value,
        None => owners.push(reference_value),
    }
    meta.insert("ownerReferences".into(), Value::Array(owners));

    annotations.insert(RESOURCE_HASH_CODE_ANNOTATION.into(), Value::String(hash.to_string()));
    annotations.insert(
        SOURCE_RESOURCE_DISTRIBUTION_ANNOTATION.into(),
        Value::String(distribution.metadata.name.clone().unwrap_or_default()),
    );
    if labels.is_empty() {
        meta.remove("labels");
    } else {
        meta.insert("labels".into(), Value::Object(labels));
    }
    meta.insert("annotations".into(), Value::Object(annotations));
    object.insert("metadata".into(), Value::Object(meta));
    Value::Object(object)
}

/// The kinds of failure a namespace can meet, in the order of the status conditions (upstream
/// `GetConditionID` ... `NotExistConditionID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    /// Reading the existing copy failed.
    Get,
    /// Creating the copy failed.
    Create,
    /// Updating the copy failed.
    Update,
    /// Deleting a copy no longer wanted failed.
    Delete,
    /// An object of the same name not owned by the distribution is in the way.
    Conflict,
    /// The namespace does not exist or is terminating.
    NotExist,
}

impl Failure {
    /// Every kind, in condition order.
    pub const ALL: [Failure; 6] = [
        Failure::Get,
        Failure::Create,
        Failure::Update,
        Failure::Delete,
        Failure::Conflict,
        Failure::NotExist,
    ];

    /// The condition type reporting this kind of failure.
    pub fn condition_type(self) -> ResourceDistributionConditionType {
        match self {
            Failure::Get => ResourceDistributionConditionType::GetResourceFailed,
            Failure::Create => ResourceDistributionConditionType::CreateResourceFailed,
            Failure::Update => ResourceDistributionConditionType::UpdateResourceFailed,
            Failure::Delete => ResourceDistributionConditionType::DeleteResourceFailed,
            Failure::Conflict => ResourceDistributionConditionType::ConflictOccurred,
            Failure::NotExist => ResourceDistributionConditionType::NamespaceNotExists,
        }
    }

    /// Whether the reconcile is retried for it: a conflict or a missing namespace waits for an
    /// event instead (upstream `handleErrors`).
    pub fn retried(self) -> bool {
        !matches!(self, Failure::Conflict | Failure::NotExist)
    }
}

/// A failure met in one namespace (upstream `UnexpectedError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceFailure {
    /// What failed.
    pub failure: Failure,
    /// Where.
    pub namespace: String,
    /// The error's text (the condition's reason).
    pub message: String,
}

/// The message of a namespace that is missing or terminating.
pub const NOT_EXIST_MESSAGE: &str = "namespace not found or is terminating";
/// The message of a conflict with an object the distribution does not own.
pub const CONFLICT_MESSAGE: &str =
    "conflict with existing resources because of the same namespace, group, version, kind and name";

/// What a target namespace needs.
#[derive(Clone, Debug, PartialEq)]
pub enum DistributeAction {
    /// Create this copy.
    Create(Value),
    /// Replace the copy with this one.
    Update(Value),
    /// The copy is up to date.
    UpToDate,
    /// Nothing can be done (missing namespace, conflict).
    Fail(NamespaceFailure),
}

fn is_terminating(namespace: &Namespace) -> bool {
    namespace.metadata.deletion_timestamp.is_some()
}

/// What a target namespace needs (upstream `distributeResource`, for one namespace): nothing
/// but a failure when it is missing or terminating; a new copy when there is none; a conflict
/// when the existing object is not this distribution's; an update when its body differs.
pub fn distribute_action(
    distribution: &ResourceDistribution,
    resource: &DistributedResource,
    hash: &str,
    namespace: &str,
    namespace_object: Option<&Namespace>,
    existing: Option<&Map<String, Value>>,
) -> DistributeAction {
    if namespace_object.is_none_or(is_terminating) {
        return DistributeAction::Fail(NamespaceFailure {
            failure: Failure::NotExist,
            namespace: namespace.to_string(),
            message: NOT_EXIST_MESSAGE.to_string(),
        });
    }
    let Some(existing) = existing else {
        return DistributeAction::Create(make_resource_object(distribution, namespace, resource, hash, None));
    };
    let meta: ObjectMeta = existing
        .get("metadata")
        .and_then(|meta| serde_json::from_value(meta.clone()).ok())
        .unwrap_or_default();
    if !is_controlled_by_distributor(&meta, distribution) {
        return DistributeAction::Fail(NamespaceFailure {
            failure: Failure::Conflict,
            namespace: namespace.to_string(),
            message: CONFLICT_MESSAGE.to_string(),
        });
    }
    if need_to_update(existing, &resource.object) {
        return DistributeAction::Update(make_resource_object(
            distribution,
            namespace,
            resource,
            hash,
            Some(existing),
        ));
    }
    DistributeAction::UpToDate
}

/// Whether the copy in a namespace that is no longer a target is deleted (upstream
/// `cleanResource`, for one namespace): only an existing copy this distribution controls, in a
/// namespace that is not going away anyway.
pub fn clean_action(
    distribution: &ResourceDistribution,
    namespace_object: Option<&Namespace>,
    existing: Option<&ObjectMeta>,
) -> bool {
    if namespace_object.is_none_or(is_terminating) {
        return false;
    }
    existing.is_some_and(|meta| is_controlled_by_distributor(meta, distribution))
}

/// The six conditions of the failures met, and the messages of those that make the reconcile
/// fail and be retried (upstream `handleErrors`). A condition's reason is the last error of its
/// kind; its namespaces are all those that met it.
pub fn handle_errors(failures: &[NamespaceFailure]) -> (Vec<ResourceDistributionCondition>, Vec<String>) {
    let mut conditions: Vec<ResourceDistributionCondition> = Failure::ALL
        .iter()
        .map(|failure| ResourceDistributionCondition {
            type_: failure.condition_type(),
            ..Default::default()
        })
        .collect();
    for failure in failures {
        if let Some(index) = Failure::ALL.iter().position(|kind| *kind == failure.failure)
            && let Some(condition) = conditions.get_mut(index)
        {
            condition.reason = failure.message.clone();
            condition.failed_namespaces.push(failure.namespace.clone());
        }
    }
    let retry = Failure::ALL
        .iter()
        .zip(&conditions)
        .filter(|(failure, condition)| failure.retried() && !condition.failed_namespaces.is_empty())
        .map(|(_, condition)| format!("{}: {}", condition.type_, condition.reason))
        .collect();
    (conditions, retry)
}

/// The new status (upstream `calculateNewStatus`): the counts, the observed generation, and the
/// conditions, `True` with the failed namespaces or `False` with reason `Succeeded`, whose
/// transition time moves only when their status changes.
pub fn calculate_new_status(
    distribution: &ResourceDistribution,
    mut conditions: Vec<ResourceDistributionCondition>,
    desired: i32,
    succeeded: i32,
    now: Timestamp,
) -> ResourceDistributionStatus {
    let old = distribution.status.as_ref().map(|status| status.conditions.as_slice()).unwrap_or_default();
    for (index, condition) in conditions.iter_mut().enumerate() {
        if condition.failed_namespaces.is_empty() {
            condition.reason = OPERATION_SUCCEEDED.to_string();
            condition.status = "False".to_string();
        } else {
            condition.status = "True".to_string();
        }
        condition.last_transition_time = match old.get(index) {
            Some(previous) if previous.status == condition.status => previous.last_transition_time.clone(),
            _ => Some(Time(now)),
        };
    }
    ResourceDistributionStatus {
        desired,
        succeeded,
        failed: desired - succeeded,
        observed_generation: distribution.metadata.generation.unwrap_or_default(),
        conditions,
    }
}

/// A change of a namespace, as the namespace watch sees it.
#[derive(Clone, Copy, Debug)]
pub enum NamespaceChange<'a> {
    /// A new namespace.
    Created(&'a Namespace),
    /// A namespace changed.
    Updated {
        /// Before.
        old: &'a Namespace,
        /// After.
        new: &'a Namespace,
    },
    /// A namespace is gone.
    Deleted(&'a Namespace),
}

/// The distributions a namespace change concerns (upstream `enqueueRequestForNamespace`): a new
/// namespace those that target it; a deleted one those that list it; a relabelled one those
/// whose selector matches it before or after. A namespace that starts terminating also wakes
/// those that list it, so their status reports it missing without waiting for it to go.
pub fn distributions_for_namespace_change(
    change: NamespaceChange<'_>,
    distributions: &[&ResourceDistribution],
) -> Vec<String> {
    let name = |namespace: &Namespace| namespace.metadata.name.clone().unwrap_or_default();
    let mut names = BTreeSet::new();
    for distribution in distributions {
        let targets = &distribution.spec.targets;
        let wake = match change {
            NamespaceChange::Created(namespace) => {
                match_via_targets(&name(namespace), &labels_of(namespace), targets)
            }
            NamespaceChange::Deleted(namespace) => match_via_included_namespaces(&name(namespace), targets),
            NamespaceChange::Updated { old, new } => {
                let relabelled = old.metadata.labels != new.metadata.labels
                    && (match_via_label_selector(&labels_of(new), targets)
                        || match_via_label_selector(&labels_of(old), targets));
                let terminating = !is_terminating(old)
                    && is_terminating(new)
                    && match_via_included_namespaces(&name(new), targets);
                relabelled || terminating
            }
        };
        if wake && let Some(name) = &distribution.metadata.name {
            names.insert(name.clone());
        }
    }
    names.into_iter().collect()
}

/// Whether a distribution change needs a reconcile: a new one, or a changed spec (upstream's
/// update predicate ignores status and metadata changes).
pub fn distribution_changed(old: Option<&ResourceDistribution>, new: &ResourceDistribution) -> bool {
    old.is_none_or(|old| old.spec != new.spec)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    const SECRET: &str = r#"{"apiVersion":"v1","data":{"test":"dGVzdA=="},"kind":"Secret","metadata":{"name":"test-secret-1"},"type":"Opaque"}"#;

    /// Upstream's `buildResourceDistributionWithSecret` (controller tests).
    fn distributor() -> ResourceDistribution {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "ResourceDistribution",
            "metadata": {"name": "test-resource-distribution", "uid": "rd-uid", "generation": 3},
            "spec": {
                "resource": serde_json::from_str::<Value>(SECRET).unwrap(),
                "targets": {
                    "excludedNamespaces": {"list": [{"name": "ns-4"}]},
                    "includedNamespaces": {"list": [{"name": "ns-1"}, {"name": "ns-3"}, {"name": "ns-5"}]},
                    "namespaceSelector": {"matchLabels": {"group": "one"}}
                }
            }
        }))
        .unwrap()
    }

    fn namespace(name: &str, labels: &[(&str, &str)]) -> Namespace {
        let labels: BTreeMap<String, String> =
            labels.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        Namespace {
            metadata: ObjectMeta { name: Some(name.into()), labels: Some(labels), ..Default::default() },
            ..Default::default()
        }
    }

    /// Upstream's `makeEnvironment` namespaces.
    fn environment() -> Vec<Namespace> {
        vec![
            namespace("ns-1", &[("group", "one"), ("environment", "develop")]),
            namespace("ns-2", &[("group", "one"), ("environment", "develop")]),
            namespace("ns-3", &[("group", "two"), ("environment", "develop")]),
            namespace("ns-4", &[("group", "one"), ("environment", "test")]),
            namespace("ns-5", &[("group", "two"), ("environment", "test")]),
        ]
    }

    fn resource() -> DistributedResource {
        deserialize_resource(&distributor().spec.resource).unwrap()
    }

    fn copy_owned_by(distribution: &ResourceDistribution, namespace: &str) -> Map<String, Value> {
        let hash = hash_resource(&distribution.spec.resource);
        match make_resource_object(distribution, namespace, &resource(), &hash, None) {
            Value::Object(object) => object,
            _ => unreachable!(),
        }
    }

    #[test]
    fn test_match_functions() {
        let targets = distributor().spec.targets;
        let matched = namespace("ns-1", &[("group", "one")]);
        let unmatched = namespace("ns-4", &[("group", "two")]);
        let cases: [(&str, bool, bool); 6] = [
            ("case 1: included, matched", match_via_included_namespaces("ns-1", &targets), true),
            ("case 2: included, unmatched", match_via_included_namespaces("ns-4", &targets), false),
            (
                "case 3: label selector, matched",
                match_via_label_selector(&labels_of(&matched), &targets),
                true,
            ),
            (
                "case 4: label selector, unmatched",
                match_via_label_selector(&labels_of(&unmatched), &targets),
                false,
            ),
            ("case 5: targets, matched", match_via_targets("ns-1", &labels_of(&matched), &targets), true),
            (
                "case 6: targets, unmatched",
                match_via_targets("ns-4", &labels_of(&unmatched), &targets),
                false,
            ),
        ];
        for (name, got, want) in cases {
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn test_get_namespace_for_distributor() {
        let namespaces = environment();
        let refs: Vec<&Namespace> = namespaces.iter().collect();
        let (matched, unmatched) = list_namespaces_for_distributor(&distributor().spec.targets, &refs);
        assert_eq!(matched, ["ns-1", "ns-2", "ns-3", "ns-5"]);
        assert_eq!(unmatched, ["ns-4"]);
    }

    #[test]
    fn system_namespaces_are_never_targets() {
        let mut namespaces = environment();
        namespaces.push(namespace("kube-system", &[("group", "one")]));
        namespaces.push(namespace("kube-public", &[]));
        let refs: Vec<&Namespace> = namespaces.iter().collect();
        let cases = [
            (
                "allNamespaces",
                json!({"allNamespaces": true, "excludedNamespaces": {"list": [{"name": "ns-2"}]}}),
            ),
            ("listed", json!({"includedNamespaces": {"list": [{"name": "kube-system"}, {"name": "ns-1"}]}})),
            ("selected", json!({"namespaceSelector": {"matchLabels": {"group": "one"}}})),
        ];
        let expected: [&[&str]; 3] =
            [&["ns-1", "ns-3", "ns-4", "ns-5"], &["ns-1"], &["ns-1", "ns-2", "ns-4"]];
        for ((name, targets), want) in cases.into_iter().zip(expected) {
            let targets: ResourceDistributionTargets = serde_json::from_value(targets).unwrap();
            let (matched, unmatched) = list_namespaces_for_distributor(&targets, &refs);
            assert_eq!(matched, want, "{name}");
            assert!(unmatched.contains(&"kube-system".to_string()), "{name}: kube-system is unmatched");
            assert!(!match_via_targets("kube-system", &BTreeMap::new(), &targets), "{name}");
        }
    }

    #[test]
    fn a_listed_namespace_that_does_not_exist_is_a_target() {
        let namespaces = environment();
        let refs: Vec<&Namespace> = namespaces.iter().collect();
        let targets: ResourceDistributionTargets =
            serde_json::from_value(json!({"includedNamespaces": {"list": [{"name": "ns-9"}]}})).unwrap();
        let (matched, unmatched) = list_namespaces_for_distributor(&targets, &refs);
        assert_eq!(matched, ["ns-9"]);
        assert_eq!(unmatched.len(), 5);
        let rd = distributor();
        let action = distribute_action(&rd, &resource(), "h", "ns-9", None, None);
        assert_eq!(
            action,
            DistributeAction::Fail(NamespaceFailure {
                failure: Failure::NotExist,
                namespace: "ns-9".into(),
                message: NOT_EXIST_MESSAGE.into()
            })
        );
    }

    /// Upstream `TestDoReconcile`, decision by decision: ns-1 holds an up-to-date copy, ns-2,
    /// ns-3 and ns-5 get one, ns-4 (excluded) loses its copy.
    #[test]
    fn test_do_reconcile() {
        let rd = distributor();
        let hash = hash_resource(&rd.spec.resource);
        let namespaces = environment();
        let refs: Vec<&Namespace> = namespaces.iter().collect();
        let (matched, unmatched) = list_namespaces_for_distributor(&rd.spec.targets, &refs);
        let existing_ns1 = copy_owned_by(&rd, "ns-1");
        for name in &matched {
            let ns = namespaces.iter().find(|ns| ns.metadata.name.as_deref() == Some(name.as_str()));
            let existing = (name == "ns-1").then_some(&existing_ns1);
            match distribute_action(&rd, &resource(), &hash, name, ns, existing) {
                DistributeAction::Create(copy) => {
                    assert_ne!(name, "ns-1");
                    assert_eq!(copy["metadata"]["namespace"], json!(name));
                    assert_eq!(copy["metadata"]["annotations"][RESOURCE_HASH_CODE_ANNOTATION], json!(hash));
                    assert_eq!(
                        copy["metadata"]["annotations"][SOURCE_RESOURCE_DISTRIBUTION_ANNOTATION],
                        json!("test-resource-distribution")
                    );
                    let meta: ObjectMeta = serde_json::from_value(copy["metadata"].clone()).unwrap();
                    assert!(is_controlled_by_distributor(&meta, &rd));
                    assert_eq!(copy["data"], json!({"test": "dGVzdA=="}));
                }
                DistributeAction::UpToDate => assert_eq!(name, "ns-1"),
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
        let ns4 = namespaces.iter().find(|ns| ns.metadata.name.as_deref() == Some("ns-4"));
        let copy_meta: ObjectMeta =
            serde_json::from_value(copy_owned_by(&rd, "ns-4")["metadata"].clone()).unwrap();
        assert_eq!(unmatched, ["ns-4"]);
        assert!(clean_action(&rd, ns4, Some(&copy_meta)), "the excluded namespace's copy is deleted");
        let foreign = ObjectMeta { name: Some("test-secret-1".into()), ..Default::default() };
        assert!(!clean_action(&rd, ns4, Some(&foreign)), "an object the distribution does not own stays");
        assert!(!clean_action(&rd, ns4, None));

        let (conditions, retry) = handle_errors(&[]);
        let status = calculate_new_status(&rd, conditions, 4, 4, Timestamp::UNIX_EPOCH);
        assert_eq!(status.conditions.len(), Failure::ALL.len());
        assert!(retry.is_empty());
        assert_eq!(
            (status.desired, status.succeeded, status.failed, status.observed_generation),
            (4, 4, 0, 3)
        );
    }

    #[test]
    fn changed_or_foreign_copies() {
        let rd = distributor();
        let hash = hash_resource(&rd.spec.resource);
        let ns = namespace("ns-1", &[]);
        let mut edited = copy_owned_by(&rd, "ns-1");
        edited.insert("data".into(), json!({"test": "dGVzdA==", "updated": "eWVz"}));
        let meta = edited.get_mut("metadata").unwrap().as_object_mut().unwrap();
        meta.insert("resourceVersion".into(), json!("42"));
        meta.insert("labels".into(), json!({"team": "a"}));
        meta.insert("finalizers".into(), json!(["example.com/keep"]));
        let DistributeAction::Update(copy) =
            distribute_action(&rd, &resource(), &hash, "ns-1", Some(&ns), Some(&edited))
        else {
            panic!("an edited copy is put back");
        };
        assert_eq!(copy["data"], json!({"test": "dGVzdA=="}));
        assert_eq!(copy["metadata"]["resourceVersion"], "42");
        assert_eq!(copy["metadata"]["labels"], json!({"team": "a"}), "labels added to a copy are kept");
        assert_eq!(copy["metadata"]["finalizers"], json!(["example.com/keep"]));
        assert_eq!(copy["metadata"]["ownerReferences"].as_array().unwrap().len(), 1);

        let foreign: Map<String, Value> = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "test-secret-1", "namespace": "ns-1"},
        }))
        .unwrap();
        assert!(matches!(
            distribute_action(&rd, &resource(), &hash, "ns-1", Some(&ns), Some(&foreign)),
            DistributeAction::Fail(NamespaceFailure { failure: Failure::Conflict, .. })
        ));
        let mut terminating = ns.clone();
        terminating.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        assert!(matches!(
            distribute_action(&rd, &resource(), &hash, "ns-1", Some(&terminating), None),
            DistributeAction::Fail(NamespaceFailure { failure: Failure::NotExist, .. })
        ));
    }

    #[test]
    fn conditions_and_retries() {
        let failure = |failure, namespace: &str, message: &str| NamespaceFailure {
            failure,
            namespace: namespace.into(),
            message: message.into(),
        };
        let (conditions, retry) = handle_errors(&[
            failure(Failure::Conflict, "ns-2", CONFLICT_MESSAGE),
            failure(Failure::NotExist, "ns-9", NOT_EXIST_MESSAGE),
            failure(Failure::Create, "ns-3", "boom"),
        ]);
        let types: Vec<String> = conditions.iter().map(|c| c.type_.to_string()).collect();
        assert_eq!(
            types,
            [
                "GetResourceFailed",
                "CreateResourceFailed",
                "UpdateResourceFailed",
                "DeleteResourceFailed",
                "ConflictOccurred",
                "NamespaceNotExists"
            ]
        );
        assert_eq!(retry, ["CreateResourceFailed: boom"], "conflicts and missing namespaces are not retried");

        let mut rd = distributor();
        let earlier = Timestamp::from_second(1_000).unwrap();
        let later = Timestamp::from_second(2_000).unwrap();
        let first = calculate_new_status(&rd, conditions.clone(), 3, 1, earlier);
        assert_eq!(first.failed, 2);
        assert_eq!(first.conditions[4].status, "True");
        assert_eq!(first.conditions[4].failed_namespaces, ["ns-2"]);
        assert_eq!(first.conditions[4].reason, CONFLICT_MESSAGE);
        assert_eq!(first.conditions[0].status, "False");
        assert_eq!(first.conditions[0].reason, OPERATION_SUCCEEDED);
        rd.status = Some(first.clone());
        let (cleared, _) = handle_errors(&[failure(Failure::Conflict, "ns-2", CONFLICT_MESSAGE)]);
        let second = calculate_new_status(&rd, cleared, 3, 2, later);
        assert_eq!(
            second.conditions[4].last_transition_time,
            Some(Time(earlier)),
            "unchanged status keeps its time"
        );
        assert_eq!(second.conditions[1].last_transition_time, Some(Time(later)), "a cleared failure moves");
    }

    /// Upstream `TestNamespaceEventHandler`.
    #[test]
    fn test_namespace_event_handler() {
        let distributor1 = distributor();
        let ns6 = namespace("ns-6", &[("group", "one")]);
        // case 1: a new namespace matching the selector
        assert_eq!(
            distributions_for_namespace_change(NamespaceChange::Created(&ns6), &[&distributor1]),
            ["test-resource-distribution"]
        );
        // case 2: relabelled from group=one to group=seven wakes both distributions
        let mut distributor2 = distributor();
        distributor2.metadata.name = Some("test-resource-distribution-2".into());
        distributor2.spec.targets.namespace_selector.match_labels =
            Some([("group".to_string(), "seven".to_string())].into());
        let ns6_seven = namespace("ns-6", &[("group", "seven")]);
        let both = [&distributor1, &distributor2];
        assert_eq!(
            distributions_for_namespace_change(
                NamespaceChange::Updated { old: &ns6, new: &ns6_seven },
                &both
            )
            .len(),
            2
        );
        assert!(
            distributions_for_namespace_change(NamespaceChange::Updated { old: &ns6, new: &ns6 }, &both)
                .is_empty(),
            "an update without a label change wakes nobody"
        );
        // case 3: deleting a listed namespace wakes both; an unlisted one nobody
        let ns1 = namespace("ns-1", &[("group", "seven")]);
        assert_eq!(distributions_for_namespace_change(NamespaceChange::Deleted(&ns1), &both).len(), 2);
        let ns8 = namespace("ns-8", &[("group", "seven")]);
        assert!(distributions_for_namespace_change(NamespaceChange::Deleted(&ns8), &both).is_empty());
    }

    #[test]
    fn deserialize_and_hash() {
        assert_eq!(deserialize_resource(&Value::Null), Err(ResourceError::Empty));
        assert_eq!(deserialize_resource(&json!("x")), Err(ResourceError::NotAnObject));
        assert!(matches!(
            deserialize_resource(
                &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}})
            ),
            Err(ResourceError::Unsupported { .. })
        ));
        assert_eq!(
            deserialize_resource(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})),
            Err(ResourceError::NoName)
        );
        let config_map = deserialize_resource(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "game-demo"}}),
        )
        .unwrap();
        assert_eq!((config_map.kind, config_map.name.as_str()), (ResourceKind::ConfigMap, "game-demo"));

        // The hash is over Go's compact, key-sorted encoding, as a Go client hashes raw bytes.
        let value: Value = serde_json::from_str(SECRET).unwrap();
        assert_eq!(hash_resource(&value), hex::encode(Sha256::digest(SECRET.as_bytes())));
        let escaped = json!({"b": "<a&b>\u{2028}", "a": "\u{1}\n"});
        let mut text = String::new();
        write_go_json(&escaped, &mut text);
        assert_eq!(text, r#"{"a":"\u0001\n","b":"\u003ca\u0026b\u003e\u2028"}"#);
    }

    #[test]
    fn distribution_changes_that_matter() {
        let rd = distributor();
        assert!(distribution_changed(None, &rd));
        let mut status_only = rd.clone();
        status_only.status = Some(ResourceDistributionStatus { desired: 1, ..Default::default() });
        assert!(!distribution_changed(Some(&rd), &status_only));
        let mut retargeted = rd.clone();
        retargeted.spec.targets.all_namespaces = true;
        assert!(distribution_changed(Some(&rd), &retargeted));
        let copy = copy_owned_by(&rd, "ns-1");
        let meta: ObjectMeta = serde_json::from_value(copy["metadata"].clone()).unwrap();
        assert_eq!(controlling_distribution(&meta).as_deref(), Some("test-resource-distribution"));
    }
}
