//! The subset workloads (upstream `adapter/*.go`), pure: which kind a UnitedDeployment runs
//! ([`SubsetKind`]), the workload of one subset built from the template ([`apply_subset_template`]:
//! labels, selector, replicas, partition, node affinity, tolerations, patch), and what the
//! controller reads back from a workload ([`view_of`]). Workloads are handled as JSON so the four
//! kinds share one path; each kind differs only in where its partition lives.

use std::collections::BTreeMap;

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kruise_crds::apps::v1beta1::{Subset, UnitedDeployment, UnitedDeploymentSpec};
use kube::ResourceExt;
use serde_json::{Map, Value, json};

use super::core::{
    REVISION_LABEL, SUBSET_NAME_LABEL, SUBSET_PATCH_ANNOTATION, SubsetState, SubsetView, current_partition,
    owner_reference, patch_text, subset_name_of, updated_replicas,
};

/// Why a subset workload cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The subset is not in the topology.
    #[error("fail to find subset config {0}")]
    NoSubset(String),
    /// The UnitedDeployment has no template of the kind.
    #[error("the UnitedDeployment has no {0} template")]
    NoTemplate(&'static str),
    /// The subset patch is not a strategic merge patch of a pod template.
    #[error("subset {subset}: the patch cannot be applied: {message}")]
    Patch {
        /// The subset.
        subset: String,
        /// What is wrong.
        message: String,
    },
    /// The template could not be written as JSON.
    #[error("the template cannot be serialized: {0}")]
    Serialize(String),
}

/// The workload kind of a UnitedDeployment's subsets (upstream `subSetType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SubsetKind {
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// Kruise's Advanced StatefulSet (`apps.kruise.io/v1beta1`).
    AdvancedStatefulSet,
    /// Kruise's CloneSet.
    CloneSet,
    /// `apps/v1` Deployment.
    Deployment,
}

impl SubsetKind {
    /// Every kind, in upstream's order of preference.
    pub const ALL: [Self; 4] =
        [Self::StatefulSet, Self::AdvancedStatefulSet, Self::CloneSet, Self::Deployment];

    /// The kind of the spec's template (upstream `getSubsetControls`: the first template set, in
    /// this order).
    pub fn of(spec: &UnitedDeploymentSpec) -> Option<Self> {
        let t = &spec.template;
        if t.stateful_set_template.is_some() {
            Some(Self::StatefulSet)
        } else if t.advanced_stateful_set_template.is_some() {
            Some(Self::AdvancedStatefulSet)
        } else if t.clone_set_template.is_some() {
            Some(Self::CloneSet)
        } else if t.deployment_template.is_some() {
            Some(Self::Deployment)
        } else {
            None
        }
    }

    /// The apiVersion the workloads are written at.
    pub fn api_version(self) -> &'static str {
        match self {
            Self::StatefulSet | Self::Deployment => "apps/v1",
            Self::AdvancedStatefulSet | Self::CloneSet => "apps.kruise.io/v1beta1",
        }
    }

    /// The kind.
    pub fn kind(self) -> &'static str {
        match self {
            Self::StatefulSet | Self::AdvancedStatefulSet => "StatefulSet",
            Self::CloneSet => "CloneSet",
            Self::Deployment => "Deployment",
        }
    }

    /// The resource (plural).
    pub fn plural(self) -> &'static str {
        match self {
            Self::StatefulSet | Self::AdvancedStatefulSet => "statefulsets",
            Self::CloneSet => "clonesets",
            Self::Deployment => "deployments",
        }
    }

    /// The name upstream uses in events and logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::StatefulSet => "StatefulSet",
            Self::AdvancedStatefulSet => "AdvancedStatefulSet",
            Self::CloneSet => "CloneSet",
            Self::Deployment => "Deployment",
        }
    }

    /// The template's metadata and spec (as JSON).
    fn template(self, spec: &UnitedDeploymentSpec) -> Result<(ObjectMeta, Value), TemplateError> {
        let t = &spec.template;
        let serialized = |value: Result<Value, serde_json::Error>| {
            value.map_err(|e| TemplateError::Serialize(e.to_string()))
        };
        match self {
            Self::StatefulSet => t
                .stateful_set_template
                .as_ref()
                .map(|t| Ok((t.metadata.clone(), serialized(serde_json::to_value(&t.spec))?)))
                .unwrap_or(Err(TemplateError::NoTemplate("StatefulSet"))),
            Self::AdvancedStatefulSet => t
                .advanced_stateful_set_template
                .as_ref()
                .map(|t| Ok((t.metadata.clone(), serialized(serde_json::to_value(&t.spec))?)))
                .unwrap_or(Err(TemplateError::NoTemplate("AdvancedStatefulSet"))),
            Self::CloneSet => t
                .clone_set_template
                .as_ref()
                .map(|t| Ok((t.metadata.clone(), serialized(serde_json::to_value(&t.spec))?)))
                .unwrap_or(Err(TemplateError::NoTemplate("CloneSet"))),
            Self::Deployment => t
                .deployment_template
                .as_ref()
                .map(|t| Ok((t.metadata.clone(), serialized(serde_json::to_value(&t.spec))?)))
                .unwrap_or(Err(TemplateError::NoTemplate("Deployment"))),
        }
    }
}

/// `<ud>-<subset>-`, or `<ud>-` when that would not be a valid name prefix (upstream
/// `getSubsetPrefix`).
pub fn subset_prefix(ud: &str, subset: &str) -> String {
    let prefix = format!("{ud}-{subset}-");
    let valid_chars =
        prefix.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    let starts = prefix.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if prefix.len() <= 253 && valid_chars && starts { prefix } else { format!("{ud}-") }
}

fn object(value: &mut Value) -> &mut Map<String, Value> {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    match value {
        Value::Object(map) => map,
        _ => unreachable!("made an object above"),
    }
}

/// The object at `key` of `map`, created when missing or not an object.
fn child<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    object(map.entry(key.to_string()).or_insert_with(|| Value::Object(Map::new())))
}

/// Appends the subset's node selector requirements to every required node selector term of the
/// pod (adding one term when there is none; upstream `attachNodeAffinity`).
fn attach_node_affinity(pod_spec: &mut Map<String, Value>, subset: &Subset) {
    let expressions = subset.node_selector_term.match_expressions.clone().unwrap_or_default();
    if expressions.is_empty() {
        return;
    }
    let required = child(
        child(child(pod_spec, "affinity"), "nodeAffinity"),
        "requiredDuringSchedulingIgnoredDuringExecution",
    );
    let terms = required.entry("nodeSelectorTerms").or_insert_with(|| json!([]));
    if !terms.is_array() {
        *terms = json!([]);
    }
    if let Value::Array(terms) = terms {
        if terms.is_empty() {
            terms.push(json!({}));
        }
        for term in terms.iter_mut() {
            let list = object(term).entry("matchExpressions").or_insert_with(|| json!([]));
            if !list.is_array() {
                *list = json!([]);
            }
            if let Value::Array(list) = list {
                list.extend(expressions.iter().filter_map(|e| serde_json::to_value(e).ok()));
            }
        }
    }
}

/// Appends the subset's tolerations (upstream `attachTolerations`).
fn attach_tolerations(pod_spec: &mut Map<String, Value>, subset: &Subset) {
    if subset.tolerations.is_empty() {
        return;
    }
    let list = pod_spec.entry("tolerations").or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    if let Value::Array(list) = list {
        list.extend(subset.tolerations.iter().filter_map(|t| serde_json::to_value(t).ok()));
    }
}

/// The merge key of a pod template list field (the `patchMergeKey`s of core/v1 that a subset
/// patch is likely to touch); other lists are replaced.
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims"
        | "schedulingGates" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "volumeDevices" => Some("devicePath"),
        "ports" => Some("containerPort"),
        "hostAliases" => Some("ip"),
        "topologySpreadConstraints" => Some("topologyKey"),
        _ => None,
    }
}

/// Strategic merge of `patch` into a pod template `target`: maps merged, `null` deletes,
/// `$patch: replace|delete` honoured, lists with a merge key merged element by element, other
/// lists replaced (what upstream's `StrategicMergePatch(..., &corev1.PodTemplateSpec{})` does for
/// the fields a subset patch sets).
pub fn strategic_merge(target: &mut Value, patch: &Value) -> Result<(), String> {
    let Value::Object(patch) = patch else {
        return Err("the patch must be a JSON object".into());
    };
    match patch.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut replaced = patch.clone();
            replaced.remove("$patch");
            *target = Value::Object(replaced);
            return Ok(());
        }
        Some("delete") => {
            *target = Value::Null;
            return Ok(());
        }
        Some("merge") | None => {}
        Some(other) => return Err(format!("unknown patch directive {other}")),
    }
    let target = object(target);
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Object(_) => {
                let slot = target.entry(key.clone()).or_insert_with(|| Value::Object(Map::new()));
                strategic_merge(slot, value)?;
                if slot.is_null() {
                    target.remove(key);
                }
            }
            Value::Array(items) => match (merge_key(key), target.get_mut(key)) {
                (Some(merge), Some(Value::Array(existing))) => {
                    for item in items {
                        let id = item.get(merge);
                        let position =
                            id.and_then(|id| existing.iter().position(|e| e.get(merge) == Some(id)));
                        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
                        match (position, delete) {
                            (Some(index), true) => {
                                existing.remove(index);
                            }
                            (None, true) => {}
                            (Some(index), false) => strategic_merge(&mut existing[index], item)?,
                            (None, false) => {
                                let mut fresh = Value::Object(Map::new());
                                strategic_merge(&mut fresh, item)?;
                                existing.push(fresh);
                            }
                        }
                    }
                }
                _ => {
                    target.insert(key.clone(), Value::Array(items.clone()));
                }
            },
            other => {
                target.insert(key.clone(), other.clone());
            }
        }
    }
    Ok(())
}

/// The workload of one subset (upstream `ApplySubsetTemplate` of each adapter): `existing` (the
/// workload read back, on update) or a new object, with the template's labels and annotations,
/// the UnitedDeployment's selector labels, the revision and subset labels, the controller
/// reference, `generateName`, and a spec that is the template's with the subset's selector,
/// replicas and partition, and a pod template carrying the subset label, revision label, node
/// affinity, tolerations and patch.
#[allow(clippy::too_many_arguments)] // upstream's signature; each is one of the subset's inputs
pub fn apply_subset_template(
    ud: &UnitedDeployment,
    kind: SubsetKind,
    subset_name: &str,
    revision: &str,
    replicas: i32,
    partition: i32,
    existing: Option<&Value>,
) -> Result<Value, TemplateError> {
    let subset = ud
        .spec
        .topology
        .subsets
        .iter()
        .find(|s| s.name == subset_name)
        .ok_or_else(|| TemplateError::NoSubset(subset_name.to_string()))?;
    let (template_meta, template_spec) = kind.template(&ud.spec)?;
    let mut workload = existing.cloned().unwrap_or_else(|| json!({}));
    let root = object(&mut workload);
    root.insert("apiVersion".into(), json!(kind.api_version()));
    root.insert("kind".into(), json!(kind.kind()));

    let selector_labels: BTreeMap<String, String> =
        ud.spec.selector.as_ref().and_then(|s| s.match_labels.clone()).unwrap_or_default();
    {
        let meta = child(root, "metadata");
        meta.insert("namespace".into(), json!(ud.namespace().unwrap_or_default()));
        let labels = child(meta, "labels");
        for (k, v) in template_meta.labels.iter().flatten().chain(selector_labels.iter()) {
            labels.insert(k.clone(), json!(v));
        }
        labels.insert(REVISION_LABEL.into(), json!(revision));
        labels.insert(SUBSET_NAME_LABEL.into(), json!(subset_name));
        let annotations = child(meta, "annotations");
        for (k, v) in template_meta.annotations.iter().flatten() {
            annotations.insert(k.clone(), json!(v));
        }
        annotations.insert(SUBSET_PATCH_ANNOTATION.into(), json!(patch_text(subset.patch.as_ref())));
        meta.insert("generateName".into(), json!(subset_prefix(&ud.name_any(), subset_name)));
        let owner =
            serde_json::to_value(owner_reference(ud)).map_err(|e| TemplateError::Serialize(e.to_string()))?;
        let owners = meta.entry("ownerReferences").or_insert_with(|| json!([]));
        if let Value::Array(list) = owners {
            list.retain(|o| o.get("uid") != owner.get("uid"));
            list.push(owner);
        } else {
            *owners = json!([owner]);
        }
    }

    let mut spec = template_spec;
    let spec_map = object(&mut spec);
    let mut selector = serde_json::to_value(ud.spec.selector.clone().unwrap_or_default())
        .map_err(|e| TemplateError::Serialize(e.to_string()))?;
    child(object(&mut selector), "matchLabels").insert(SUBSET_NAME_LABEL.into(), json!(subset_name));
    spec_map.insert("selector".into(), selector);
    spec_map.insert("replicas".into(), json!(replicas));
    set_partition(kind, &ud.spec, spec_map, partition);

    let template = spec_map.entry("template").or_insert_with(|| json!({}));
    {
        let template_map = object(template);
        let labels = child(child(template_map, "metadata"), "labels");
        labels.insert(SUBSET_NAME_LABEL.into(), json!(subset_name));
        labels.insert(REVISION_LABEL.into(), json!(revision));
        let pod_spec = child(template_map, "spec");
        attach_node_affinity(pod_spec, subset);
        attach_tolerations(pod_spec, subset);
    }
    if let Some(patch) = subset.patch.as_ref().filter(|p| !p.is_null()) {
        strategic_merge(template, patch)
            .map_err(|message| TemplateError::Patch { subset: subset_name.to_string(), message })?;
    }
    root.insert("spec".into(), spec);
    Ok(workload)
}

/// Writes the partition where the kind keeps it: CloneSet `updateStrategy.rollingUpdate.partition`
/// always; StatefulSet (which then also gets `type: RollingUpdate`) and Advanced StatefulSet only
/// with a RollingUpdate (or unset) strategy; Deployment has none.
fn set_partition(
    kind: SubsetKind,
    spec: &UnitedDeploymentSpec,
    workload_spec: &mut Map<String, Value>,
    partition: i32,
) {
    let rolling = |type_: Option<&str>| matches!(type_, None | Some("") | Some("RollingUpdate"));
    match kind {
        SubsetKind::CloneSet => {
            child(child(workload_spec, "updateStrategy"), "rollingUpdate")
                .insert("partition".into(), json!(partition));
        }
        SubsetKind::StatefulSet => {
            let type_ = spec
                .template
                .stateful_set_template
                .as_ref()
                .and_then(|t| t.spec.update_strategy.as_ref())
                .and_then(|s| s.type_.as_deref());
            if rolling(type_) {
                let strategy = child(workload_spec, "updateStrategy");
                strategy.insert("type".into(), json!("RollingUpdate"));
                child(strategy, "rollingUpdate").insert("partition".into(), json!(partition));
            }
        }
        SubsetKind::AdvancedStatefulSet => {
            let type_ = spec
                .template
                .advanced_stateful_set_template
                .as_ref()
                .map(|t| t.spec.update_strategy.type_.as_str());
            if rolling(type_) {
                child(child(workload_spec, "updateStrategy"), "rollingUpdate")
                    .insert("partition".into(), json!(partition));
            }
        }
        SubsetKind::Deployment => {}
    }
}

/// Sets the workload's `maxUnavailable` (upstream `SetMaxUnavailable`, used for unschedulable
/// subsets with reserved pods so their stuck pods do not block the update).
pub fn set_max_unavailable(kind: SubsetKind, workload: &mut Value, value: i32) {
    let spec = child(object(workload), "spec");
    let strategy = match kind {
        SubsetKind::Deployment => child(spec, "strategy"),
        _ => child(spec, "updateStrategy"),
    };
    child(strategy, "rollingUpdate").insert("maxUnavailable".into(), json!(value));
}

fn int_at(value: &Value, pointer: &str) -> Option<i32> {
    value.pointer(pointer).and_then(Value::as_i64).and_then(|v| i32::try_from(v).ok())
}

/// An int-or-percent scaled against `total`, rounding up (`GetScaledValueFromIntOrPercent(.., true)`).
fn scaled(value: &Value, total: i32) -> Option<i32> {
    match value {
        Value::Number(n) => n.as_i64().and_then(|v| i32::try_from(v).ok()),
        Value::String(text) => {
            let percent: i64 = text.strip_suffix('%')?.parse().ok()?;
            let scaled = (i64::from(total) * percent + 99) / 100;
            i32::try_from(scaled).ok()
        }
        _ => None,
    }
}

/// What the controller reads off a subset workload and its pods (upstream `convertToSubset`);
/// `None` for a workload without a subset label.
pub fn view_of(
    kind: SubsetKind,
    workload: &Value,
    pods: Vec<Pod>,
    updated_revision: &str,
) -> Option<SubsetView> {
    let meta: ObjectMeta = serde_json::from_value(workload.get("metadata")?.clone()).ok()?;
    let subset_name = subset_name_of(&meta)?.to_string();
    let spec_replicas = int_at(workload, "/spec/replicas").unwrap_or(0);
    let own_revision = meta.labels.as_ref().and_then(|l| l.get(REVISION_LABEL)).cloned().unwrap_or_default();
    let spec_partition = match kind {
        SubsetKind::CloneSet => workload
            .pointer("/spec/updateStrategy/rollingUpdate/partition")
            .and_then(|p| scaled(p, spec_replicas))
            .unwrap_or(0),
        SubsetKind::StatefulSet | SubsetKind::AdvancedStatefulSet => {
            if workload.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("OnDelete") {
                current_partition(&pods, &own_revision)
            } else {
                int_at(workload, "/spec/updateStrategy/rollingUpdate/partition").unwrap_or(0)
            }
        }
        SubsetKind::Deployment => 0,
    };
    let (updated, updated_ready) = updated_replicas(&pods, updated_revision);
    Some(SubsetView {
        meta,
        subset_name,
        spec_replicas,
        spec_partition,
        status: SubsetState {
            replicas: int_at(workload, "/status/replicas").unwrap_or(0),
            ready_replicas: int_at(workload, "/status/readyReplicas").unwrap_or(0),
            updated_replicas: updated,
            updated_ready_replicas: updated_ready,
            updated_revision: updated_revision.to_string(),
            unschedulable: Default::default(),
        },
        pods,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{
        api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, Toleration},
        apimachinery::pkg::apis::meta::v1::LabelSelector,
    };
    use kruise_crds::apps::v1beta1::{CloneSetTemplateSpec, StatefulSetTemplateSpec};

    use super::*;

    fn ud_with(kind: SubsetKind) -> UnitedDeployment {
        let mut ud = UnitedDeployment::new("foo", UnitedDeploymentSpec::default());
        ud.metadata.namespace = Some("default".into());
        ud.metadata.uid = Some("uid-1".into());
        ud.spec.selector = Some(LabelSelector {
            match_labels: Some([("name".to_string(), "foo".to_string())].into()),
            ..Default::default()
        });
        let pod_template: k8s_openapi::api::core::v1::PodTemplateSpec = serde_json::from_value(json!({
            "metadata": {"labels": {"name": "foo"}},
            "spec": {"containers": [{"name": "container-a", "image": "nginx:1.0"}]}
        }))
        .unwrap();
        let meta = ObjectMeta {
            labels: Some([("name".to_string(), "foo".to_string())].into()),
            annotations: Some([("annotation".to_string(), "foo".to_string())].into()),
            ..Default::default()
        };
        match kind {
            SubsetKind::CloneSet => {
                let mut t = CloneSetTemplateSpec { metadata: meta, ..Default::default() };
                t.spec.template = pod_template;
                ud.spec.template.clone_set_template = Some(t);
            }
            SubsetKind::StatefulSet => {
                let mut t = StatefulSetTemplateSpec { metadata: meta, ..Default::default() };
                t.spec.template = pod_template;
                ud.spec.template.stateful_set_template = Some(t);
            }
            SubsetKind::AdvancedStatefulSet => {
                let mut t = kruise_crds::apps::v1beta1::AdvancedStatefulSetTemplateSpec {
                    metadata: meta,
                    ..Default::default()
                };
                t.spec.template = pod_template;
                ud.spec.template.advanced_stateful_set_template = Some(t);
            }
            SubsetKind::Deployment => {
                let mut t = kruise_crds::apps::v1beta1::DeploymentTemplateSpec {
                    metadata: meta,
                    ..Default::default()
                };
                t.spec.template = pod_template;
                ud.spec.template.deployment_template = Some(t);
            }
        }
        ud.spec.topology.subsets = vec![Subset {
            name: "subset-a".into(),
            node_selector_term: NodeSelectorTerm {
                match_expressions: Some(vec![NodeSelectorRequirement {
                    key: "node-name".into(),
                    operator: "In".into(),
                    values: Some(vec!["nodeA".into()]),
                }]),
                ..Default::default()
            },
            tolerations: vec![Toleration {
                key: Some("taint".into()),
                operator: Some("Exists".into()),
                ..Default::default()
            }],
            ..Default::default()
        }];
        ud
    }

    /// Upstream `TestCloneSetAdapter`/`TestStatefulSetAdapter` style checks of
    /// `ApplySubsetTemplate` (adapter_test.go), for every kind.
    #[test]
    fn apply_subset_template_for_every_kind() {
        for kind in SubsetKind::ALL {
            let ud = ud_with(kind);
            let w = apply_subset_template(&ud, kind, "subset-a", "rev-1", 3, 1, None).unwrap();
            assert_eq!(w["kind"], kind.kind(), "{kind:?}");
            assert_eq!(w["metadata"]["generateName"], "foo-subset-a-");
            assert_eq!(w["metadata"]["labels"][SUBSET_NAME_LABEL], "subset-a");
            assert_eq!(w["metadata"]["labels"][REVISION_LABEL], "rev-1");
            assert_eq!(w["metadata"]["labels"]["name"], "foo");
            assert_eq!(w["metadata"]["annotations"]["annotation"], "foo");
            assert_eq!(w["metadata"]["annotations"][SUBSET_PATCH_ANNOTATION], "");
            assert_eq!(w["metadata"]["ownerReferences"][0]["uid"], "uid-1");
            assert_eq!(w["metadata"]["ownerReferences"][0]["controller"], true);
            assert_eq!(w["spec"]["replicas"], 3);
            assert_eq!(
                w["spec"]["selector"]["matchLabels"],
                json!({"name": "foo", SUBSET_NAME_LABEL: "subset-a"})
            );
            let template = &w["spec"]["template"];
            assert_eq!(template["metadata"]["labels"][SUBSET_NAME_LABEL], "subset-a");
            assert_eq!(template["metadata"]["labels"][REVISION_LABEL], "rev-1");
            assert_eq!(
                template["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                    ["nodeSelectorTerms"],
                json!([{"matchExpressions": [{"key": "node-name", "operator": "In", "values": ["nodeA"]}]}])
            );
            assert_eq!(template["spec"]["tolerations"], json!([{"key": "taint", "operator": "Exists"}]));
            let partition = w.pointer("/spec/updateStrategy/rollingUpdate/partition");
            match kind {
                SubsetKind::Deployment => assert_eq!(partition, None),
                _ => assert_eq!(partition, Some(&json!(1)), "{kind:?}"),
            }
            let view = view_of(kind, &w, vec![], "rev-1").unwrap();
            assert_eq!((view.subset_name.as_str(), view.spec_replicas), ("subset-a", 3));
            assert_eq!(view.spec_partition, if kind == SubsetKind::Deployment { 0 } else { 1 });
        }
    }

    /// Upstream `TestApplySubsetTemplate` (adapter_test.go): for each kind, template labels and
    /// annotations, selector labels, subset and revision labels, the patch annotation written as
    /// given, and the patch applied to the pod template.
    #[test]
    fn apply_subset_template_sets_labels_annotations_and_patch() {
        for kind in SubsetKind::ALL {
            let mut ud = UnitedDeployment::new("test", UnitedDeploymentSpec::default());
            ud.spec.selector = Some(LabelSelector {
                match_labels: Some([("selector-key".to_string(), "selector-value".to_string())].into()),
                ..Default::default()
            });
            ud.spec.topology.subsets = vec![Subset {
                name: "subset-a".into(),
                patch: Some(json!({"metadata": {"annotations": {"patched-key": "patched-value"}}})),
                ..Default::default()
            }];
            let meta = ObjectMeta {
                labels: Some([("custom-label-1".to_string(), "custom-value-1".to_string())].into()),
                annotations: Some([("annotation-key".to_string(), "annotation-value".to_string())].into()),
                ..Default::default()
            };
            let t = &mut ud.spec.template;
            match kind {
                SubsetKind::AdvancedStatefulSet => {
                    t.advanced_stateful_set_template =
                        Some(kruise_crds::apps::v1beta1::AdvancedStatefulSetTemplateSpec {
                            metadata: meta,
                            ..Default::default()
                        })
                }
                SubsetKind::CloneSet => {
                    t.clone_set_template = Some(CloneSetTemplateSpec { metadata: meta, ..Default::default() })
                }
                SubsetKind::Deployment => {
                    t.deployment_template = Some(kruise_crds::apps::v1beta1::DeploymentTemplateSpec {
                        metadata: meta,
                        ..Default::default()
                    })
                }
                SubsetKind::StatefulSet => {
                    t.stateful_set_template =
                        Some(StatefulSetTemplateSpec { metadata: meta, ..Default::default() })
                }
            }
            let w = apply_subset_template(&ud, kind, "subset-a", "abcd", 2, 4, None).unwrap();
            let labels = &w["metadata"]["labels"];
            assert_eq!(labels["custom-label-1"], "custom-value-1", "{kind:?}");
            assert_eq!(labels["selector-key"], "selector-value");
            assert_eq!(labels[SUBSET_NAME_LABEL], "subset-a");
            assert_eq!(labels[REVISION_LABEL], "abcd");
            assert_eq!(w["metadata"]["annotations"]["annotation-key"], "annotation-value");
            assert_eq!(
                w["metadata"]["annotations"][SUBSET_PATCH_ANNOTATION],
                r#"{"metadata":{"annotations":{"patched-key":"patched-value"}}}"#
            );
            assert_eq!(
                w["spec"]["template"]["metadata"]["annotations"],
                json!({"patched-key": "patched-value"})
            );
        }
    }

    /// Upstream `TestStrategicMergePatch` style: the subset patch merges containers by name and
    /// is recorded in the annotation.
    #[test]
    fn subset_patch_is_merged_into_the_pod_template() {
        let mut ud = ud_with(SubsetKind::CloneSet);
        ud.spec.topology.subsets[0].patch = Some(json!({
            "metadata": {"labels": {"zone": "a"}},
            "spec": {"containers": [{"name": "container-a", "image": "nginx:2.0",
                                     "resources": {"limits": {"cpu": "2"}}}]}
        }));
        let w = apply_subset_template(&ud, SubsetKind::CloneSet, "subset-a", "r", 1, 0, None).unwrap();
        let template = &w["spec"]["template"];
        assert_eq!(template["metadata"]["labels"]["zone"], "a");
        assert_eq!(template["metadata"]["labels"][SUBSET_NAME_LABEL], "subset-a");
        assert_eq!(template["spec"]["containers"].as_array().unwrap().len(), 1);
        assert_eq!(template["spec"]["containers"][0]["image"], "nginx:2.0");
        assert_eq!(template["spec"]["containers"][0]["resources"]["limits"]["cpu"], "2");
        let annotation = w["metadata"]["annotations"][SUBSET_PATCH_ANNOTATION].as_str().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(annotation).unwrap(),
            ud.spec.topology.subsets[0].patch.clone().unwrap()
        );
    }

    #[test]
    fn strategic_merge_directives() {
        let mut target =
            json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}], "hostname": "h"}});
        strategic_merge(
            &mut target,
            &json!({"spec": {"containers": [{"name": "b", "$patch": "delete"}, {"name": "c", "image": "z"}], "hostname": null}}),
        )
        .unwrap();
        assert_eq!(
            target,
            json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "c", "image": "z"}]}})
        );
        strategic_merge(&mut target, &json!({"spec": {"$patch": "replace", "nodeName": "n"}})).unwrap();
        assert_eq!(target, json!({"spec": {"nodeName": "n"}}));
    }

    /// Upstream `TestGetSubsetPrefix` (adapter_util_test.go).
    #[test]
    fn get_subset_prefix() {
        assert_eq!(subset_prefix("ud", "subset-a"), "ud-subset-a-");
        assert_eq!(subset_prefix("ud", "Subset_A"), "ud-");
        assert_eq!(subset_prefix("ud", &"a".repeat(260)), "ud-");
    }

    #[test]
    fn update_keeps_other_labels_and_owner_once() {
        let ud = ud_with(SubsetKind::CloneSet);
        let first = apply_subset_template(&ud, SubsetKind::CloneSet, "subset-a", "r1", 1, 0, None).unwrap();
        let mut existing = first.clone();
        existing["metadata"]["name"] = json!("foo-subset-a-abcde");
        existing["metadata"]["labels"]["extra"] = json!("kept");
        let again = apply_subset_template(&ud, SubsetKind::CloneSet, "subset-a", "r2", 2, 0, Some(&existing))
            .unwrap();
        assert_eq!(again["metadata"]["name"], "foo-subset-a-abcde");
        assert_eq!(again["metadata"]["labels"]["extra"], "kept");
        assert_eq!(again["metadata"]["labels"][REVISION_LABEL], "r2");
        assert_eq!(again["metadata"]["ownerReferences"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn max_unavailable_goes_where_the_kind_keeps_it() {
        let mut d = json!({"spec": {}});
        set_max_unavailable(SubsetKind::Deployment, &mut d, 2);
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 2);
        let mut c = json!({"spec": {}});
        set_max_unavailable(SubsetKind::CloneSet, &mut c, 1);
        assert_eq!(c["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"], 1);
    }

    #[test]
    fn cloneset_percent_partition_is_scaled_up() {
        let w = json!({"metadata": {"labels": {SUBSET_NAME_LABEL: "a"}},
                       "spec": {"replicas": 5, "updateStrategy": {"rollingUpdate": {"partition": "50%"}}}});
        assert_eq!(view_of(SubsetKind::CloneSet, &w, vec![], "r").unwrap().spec_partition, 3);
    }
}
