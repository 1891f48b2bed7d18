//! What qualifies for an in-place update: the difference between two revisions' pod templates
//! reduced to an [`UpdateSpec`] (new images, cpu/memory resources, template metadata and the
//! env-from-metadata containers it touches), or `None` when the pod must be recreated.

use std::collections::BTreeMap;

use base64::Engine as _;
use k8s_openapi::{
    api::core::v1::{PodTemplateSpec, ResourceRequirements},
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::ObjectMeta},
};
use kruise_crds::{common::InPlaceUpdateSpec, quantity::Quantity as Parsed};
use serde_json::{Map, Value};

use super::{
    diff::{DiffOp, OpKind, diff, metadata_merge_patch},
    gohash::container_references_metadata,
    options::{InPlaceGates, Revision, UpdateOptions},
    resources::{can_resize_in_place, qos_class},
};

/// Labels and annotations an env-from-metadata container must see (only the changed keys).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefMetadata {
    /// Label keys and their new values.
    pub labels: BTreeMap<String, String>,
    /// Annotation keys and their new values.
    pub annotations: BTreeMap<String, String>,
}

impl RefMetadata {
    fn to_object_meta(&self) -> ObjectMeta {
        ObjectMeta {
            labels: (!self.labels.is_empty()).then(|| self.labels.clone()),
            annotations: (!self.annotations.is_empty()).then(|| self.annotations.clone()),
            ..Default::default()
        }
    }

    fn from_object_meta(meta: &ObjectMeta) -> Self {
        Self {
            labels: meta.labels.clone().unwrap_or_default(),
            annotations: meta.annotations.clone().unwrap_or_default(),
        }
    }
}

/// The change an in-place update applies to a pod (upstream `UpdateSpec`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpdateSpec {
    /// The target revision name.
    pub revision: String,
    /// New image per container name.
    pub container_images: BTreeMap<String, String>,
    /// Changed labels/annotations per container that reads them through env.
    pub container_ref_metadata: BTreeMap<String, RefMetadata>,
    /// New cpu/memory (only the changed quantities) per container name.
    pub container_resources: BTreeMap<String, ResourceRequirements>,
    /// Strategic-merge patch `{"metadata": {...}}` of the other template metadata changes.
    pub metadata_patch: Option<Value>,
    /// Some container reads a changed label/annotation through env.
    pub update_env_from_metadata: bool,
    /// Grace period to wait before applying the change.
    pub grace_seconds: i32,
}

impl UpdateSpec {
    /// Only resources change: the pod may keep serving (unless a resize restarts a container).
    pub fn vertical_update_only(&self) -> bool {
        !self.container_resources.is_empty()
            && self.container_images.is_empty()
            && !self.update_env_from_metadata
    }

    /// The grace-annotation form (upstream JSON: `metaDataPatch` is base64 of the patch bytes).
    pub fn to_wire(&self) -> Result<InPlaceUpdateSpec, serde_json::Error> {
        let meta_data_patch = match &self.metadata_patch {
            Some(patch) => Some(base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(patch)?)),
            None => None,
        };
        Ok(InPlaceUpdateSpec {
            revision: self.revision.clone(),
            container_images: (!self.container_images.is_empty()).then(|| self.container_images.clone()),
            container_ref_metadata: (!self.container_ref_metadata.is_empty()).then(|| {
                self.container_ref_metadata.iter().map(|(k, v)| (k.clone(), v.to_object_meta())).collect()
            }),
            container_resources: (!self.container_resources.is_empty())
                .then(|| self.container_resources.clone()),
            meta_data_patch,
            update_env_from_metadata: self.update_env_from_metadata.then_some(true),
            grace_seconds: (self.grace_seconds != 0).then_some(self.grace_seconds),
            old_template: None,
            new_template: None,
        })
    }

    /// Reads the grace-annotation form back.
    pub fn from_wire(wire: &InPlaceUpdateSpec) -> Result<Self, String> {
        let metadata_patch = match &wire.meta_data_patch {
            Some(encoded) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .map_err(|e| format!("metaDataPatch is not base64: {e}"))?;
                let patch: Value =
                    serde_json::from_slice(&bytes).map_err(|e| format!("metaDataPatch is not JSON: {e}"))?;
                (patch != Value::Object(Map::new())).then_some(patch)
            }
            None => None,
        };
        Ok(Self {
            revision: wire.revision.clone(),
            container_images: wire.container_images.clone().unwrap_or_default(),
            container_ref_metadata: wire
                .container_ref_metadata
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), RefMetadata::from_object_meta(v)))
                .collect(),
            container_resources: wire.container_resources.clone().unwrap_or_default(),
            metadata_patch,
            update_env_from_metadata: wire.update_env_from_metadata.unwrap_or(false),
            grace_seconds: wire.grace_seconds.unwrap_or(0),
        })
    }
}

/// Whether a pod can move from `old` to `new` in place.
pub fn can_update_in_place(
    old: &Revision,
    new: &Revision,
    options: &UpdateOptions,
    gates: &InPlaceGates,
) -> bool {
    calculate_update_spec(old, new, options, gates).is_some()
}

/// The template as JSON with `metadata` and `spec` always present (so that a template without
/// metadata and one with labels differ under `/metadata/...`, as upstream revisions do, where
/// metadata always serializes).
fn template_json(template: &PodTemplateSpec) -> Option<Value> {
    let mut value = serde_json::to_value(template).ok()?;
    let map = value.as_object_mut()?;
    map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    map.entry("spec").or_insert_with(|| Value::Object(Map::new()));
    Some(value)
}

/// The [`UpdateSpec`] that moves a pod from revision `old` to `new` in place, or `None` when
/// anything but these changes (upstream `defaultCalculateInPlaceUpdateSpec`):
/// - `replace` of a container's image;
/// - with the vertical-scaling gate, `replace` of a container's cpu/memory limit or request
///   (adding or removing one, another resource, or a QoS class change: not in place);
/// - anything under the template metadata; with the env-from-metadata gate, a label or
///   annotation a container reads through `fieldRef` is recorded per container (it must be
///   restarted), the rest becomes a strategic-merge patch of the pod's metadata.
///
/// With the `recreate_when_vct_changes` gate, differing volumeClaimTemplates hashes (both
/// present) also mean not in place, unless the options ignore them (CloneSet `InPlaceOnly`).
pub fn calculate_update_spec(
    old: &Revision,
    new: &Revision,
    options: &UpdateOptions,
    gates: &InPlaceGates,
) -> Option<UpdateSpec> {
    if gates.recreate_when_vct_changes
        && !options.ignore_volume_claim_templates_hash_diff
        && let (Some(old_hash), Some(new_hash)) =
            (&old.volume_claim_templates_hash, &new.volume_claim_templates_hash)
        && old_hash != new_hash
    {
        return None;
    }
    let old_json = template_json(&old.template)?;
    let new_json = template_json(&new.template)?;
    let old_containers = old.template.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    let new_containers = new.template.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();

    let mut spec = UpdateSpec {
        revision: new.name.clone(),
        grace_seconds: options.grace_period_seconds,
        ..Default::default()
    };
    let mut metadata_ops: Vec<DiffOp> = Vec::new();
    for op in diff(&old_json, &new_json) {
        match op.path.first().map(String::as_str) {
            Some("metadata") if op.path.len() > 1 => {
                metadata_ops.push(op);
                continue;
            }
            Some("spec") if op.path.len() > 1 => {}
            _ => return None,
        }
        if op.kind != OpKind::Replace {
            return None;
        }
        let segments: Vec<&str> = op.path.iter().map(String::as_str).collect();
        match segments.as_slice() {
            ["spec", "containers", index, "image"] => {
                let name = &old_containers.get(index.parse::<usize>().ok()?)?.name;
                let image = op.value.as_ref()?.as_str()?;
                spec.container_images.insert(name.clone(), image.to_string());
            }
            ["spec", "containers", index, "resources", ..] if gates.vertical_scaling => {
                let [_, _, _, _, kind @ ("limits" | "requests"), resource] = segments.as_slice() else {
                    return None;
                };
                if !can_resize_in_place(resource) {
                    return None;
                }
                let name = &old_containers.get(index.parse::<usize>().ok()?)?.name;
                let quantity = op.value.as_ref()?.as_str()?;
                Parsed::parse(quantity).ok()?;
                let change = spec.container_resources.entry(name.clone()).or_default();
                let list = if *kind == "limits" { &mut change.limits } else { &mut change.requests };
                list.get_or_insert_with(BTreeMap::new)
                    .insert(resource.to_string(), Quantity(quantity.to_string()));
            }
            _ => return None,
        }
    }
    if gates.vertical_scaling && !spec.container_resources.is_empty() {
        let old_spec = old.template.spec.clone().unwrap_or_default();
        let new_spec = new.template.spec.clone().unwrap_or_default();
        if qos_class(&old_spec) != qos_class(&new_spec) {
            return None;
        }
    }

    if !metadata_ops.is_empty() {
        let mut old_meta = old_json.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut new_meta = new_json.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
        if gates.env_from_metadata {
            for op in &metadata_ops {
                if !matches!(op.kind, OpKind::Replace | OpKind::Add) {
                    continue;
                }
                let [_, field, key] = op.path.as_slice() else { continue };
                if field != "labels" && field != "annotations" {
                    continue;
                }
                let Some(value) = op.value.as_ref().and_then(Value::as_str) else { continue };
                let path = format!("metadata.{field}");
                for container in new_containers {
                    if !container_references_metadata(container, &path, key) {
                        continue;
                    }
                    let entry = spec.container_ref_metadata.entry(container.name.clone()).or_default();
                    let target = if field == "labels" { &mut entry.labels } else { &mut entry.annotations };
                    target.insert(key.clone(), value.to_string());
                    for meta in [&mut old_meta, &mut new_meta] {
                        if let Some(Value::Object(map)) = meta.get_mut(field.as_str()) {
                            map.remove(key.as_str());
                        }
                    }
                    spec.update_env_from_metadata = true;
                }
            }
        }
        spec.metadata_patch = metadata_merge_patch(&old_meta, &new_meta);
    }
    Some(spec)
}
