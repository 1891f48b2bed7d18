//! Dynamic provisioning for simulated nodes, as a CSI provisioner plus kube-controller-manager's
//! persistent-volume binder would do it: a claim whose StorageClass names the simulated
//! provisioner gets a PersistentVolume of its size made for it (`pvc-<claim uid>`) and both are
//! marked `Bound`; a volume whose claim is gone is deleted (reclaim policy `Delete`) or left
//! `Released` (`Retain`). Claims of any other class stay `Pending`, as they would on a cluster
//! without that class's provisioner, unless a volume made beforehand fits them: as
//! kube-controller-manager's persistent-volume controller, an unbound claim is bound to the
//! smallest `Available` volume of its class with its access modes, volume mode and at least its
//! requested size (or to the volume it names, or that names it). `kruise up` makes a `standard` class of this provisioner,
//! as kind makes its own.

use kruise_machinery::quantity::Quantity;
use serde_json::{Value, json};

use super::CONTROLLER_TICK;
use crate::{
    apiserver::{api::Api, objects},
    storage::{CollectionKey, Mutation, ObjectKey},
};

/// The provisioner name of StorageClasses whose claims the simulated nodes serve.
pub const SIMULATED_PROVISIONER: &str = "kruise.io/simulated-disk";

/// The annotation the scheduler puts on a claim of a `WaitForFirstConsumer` class.
const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

/// Whether a claim should be provisioned now (pure), given its StorageClass (None when the
/// class does not exist): not bound or being deleted, of a class served by the simulated
/// provisioner, and either bound at once or already given a node.
pub fn should_provision(claim: &Value, class: Option<&Value>) -> bool {
    let Some(class) = class else { return false };
    if objects::is_deleting(claim)
        || claim.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
        || claim.pointer("/spec/volumeName").and_then(Value::as_str).is_some_and(|name| !name.is_empty())
        || class.get("provisioner").and_then(Value::as_str) != Some(SIMULATED_PROVISIONER)
    {
        return false;
    }
    let waits = class.get("volumeBindingMode").and_then(Value::as_str) == Some("WaitForFirstConsumer");
    !waits || claim.pointer(&format!("/metadata/annotations/{}", SELECTED_NODE.replace('/', "~1"))).is_some()
}

/// The size a bound claim of `class` should grow to (pure), as an external resizer plus the
/// kubelet's file system expansion would grow it: the claim requests more than its capacity, is
/// bound to a volume, and its class is served by the simulated provisioner and allows expansion.
/// (The API server already refused growing a claim whose class does not allow it; a class
/// changed since is honoured too, as the resizer reads it again.)
pub fn expansion_target(claim: &Value, class: Option<&Value>) -> Option<String> {
    let class = class?;
    let simulated = class.get("provisioner").and_then(Value::as_str) == Some(SIMULATED_PROVISIONER);
    let expandable = class.get("allowVolumeExpansion").and_then(Value::as_bool) == Some(true);
    let bound = claim.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
        && claim.pointer("/spec/volumeName").and_then(Value::as_str).is_some_and(|name| !name.is_empty());
    if !simulated || !expandable || !bound || objects::is_deleting(claim) {
        return None;
    }
    let requested = claim.pointer("/spec/resources/requests/storage").and_then(Value::as_str)?;
    let capacity = claim.pointer("/status/capacity/storage").and_then(Value::as_str).unwrap_or("0");
    (Quantity::compare(requested, capacity) == Some(std::cmp::Ordering::Greater))
        .then(|| requested.to_string())
}

/// The volume made beforehand that an unbound claim is bound to (pure; kube-controller-manager's
/// `findBestMatchForClaim`): the volume the claim names, else one whose `claimRef` names the
/// claim, else the smallest unclaimed `Available` (or still `Pending`) volume of the claim's
/// class (`""` when it names none) whose access modes include the claim's, whose volume mode
/// is the claim's and whose capacity is at least the request. Claims with a selector are left
/// alone (no volume here is labelled for them). None also for a claim already bound or
/// being deleted.
pub fn static_match(claim: &Value, volumes: &[impl std::borrow::Borrow<Value>]) -> Option<Value> {
    if objects::is_deleting(claim)
        || claim.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
        || claim.pointer("/spec/selector").is_some_and(|s| !s.is_null())
    {
        return None;
    }
    let (namespace, name) =
        (objects::namespace(claim).unwrap_or_default(), objects::name(claim).unwrap_or_default());
    let uid = objects::uid(claim).unwrap_or_default();
    let text = |value: &Value, path: &str| {
        value.pointer(path).and_then(Value::as_str).unwrap_or_default().to_string()
    };
    let named = claim.pointer("/spec/volumeName").and_then(Value::as_str).filter(|n| !n.is_empty());
    let claimed_by_this = |volume: &Value| {
        text(volume, "/spec/claimRef/namespace") == namespace
            && text(volume, "/spec/claimRef/name") == name
            && volume.pointer("/spec/claimRef/uid").and_then(Value::as_str).is_none_or(|u| u == uid)
    };
    let volumes: Vec<&Value> = volumes.iter().map(std::borrow::Borrow::borrow).collect();
    if let Some(named) = named {
        return volumes.iter().find(|v| objects::name(v) == Some(named)).map(|v| (*v).clone());
    }
    if let Some(prebound) = volumes.iter().find(|v| claimed_by_this(v)) {
        return Some((*prebound).clone());
    }
    let class = text(claim, "/spec/storageClassName");
    let mode = |value: &Value| {
        value.pointer("/spec/volumeMode").and_then(Value::as_str).unwrap_or("Filesystem").to_string()
    };
    let modes = |value: &Value| -> Vec<String> {
        value
            .pointer("/spec/accessModes")
            .and_then(Value::as_array)
            .map(|m| m.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let requested = text(claim, "/spec/resources/requests/storage");
    let requested = if requested.is_empty() { "0".to_string() } else { requested };
    volumes
        .into_iter()
        .filter(|v| v.pointer("/spec/claimRef").is_none_or(Value::is_null))
        .filter(|v| {
            matches!(v.pointer("/status/phase").and_then(Value::as_str), None | Some("Pending" | "Available"))
        })
        .filter(|v| !objects::is_deleting(v))
        .filter(|v| text(v, "/spec/storageClassName") == class && mode(v) == mode(claim))
        .filter(|v| {
            let offered = modes(v);
            modes(claim).iter().all(|m| offered.contains(m))
        })
        .filter(|v| {
            Quantity::compare(&text(v, "/spec/capacity/storage"), &requested)
                .is_some_and(|o| o != std::cmp::Ordering::Less)
        })
        .min_by(|a, b| {
            Quantity::compare(&text(a, "/spec/capacity/storage"), &text(b, "/spec/capacity/storage"))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .cloned()
}

/// The volume made for `claim` of `class`.
pub fn volume_for(claim: &Value, class: &Value) -> Value {
    let uid = objects::uid(claim).unwrap_or_default();
    let name = format!("pvc-{uid}");
    let size = claim.pointer("/spec/resources/requests/storage").cloned().unwrap_or(json!("1Gi"));
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "annotations": {"pv.kubernetes.io/provisioned-by": SIMULATED_PROVISIONER},
        },
        "spec": {
            "capacity": {"storage": size},
            "accessModes": claim.pointer("/spec/accessModes").cloned().unwrap_or(json!(["ReadWriteOnce"])),
            "persistentVolumeReclaimPolicy": class.get("reclaimPolicy").cloned().unwrap_or(json!("Delete")),
            "storageClassName": objects::name(class).unwrap_or_default(),
            "volumeMode": claim.pointer("/spec/volumeMode").cloned().unwrap_or(json!("Filesystem")),
            "hostPath": {"path": format!("/var/lib/kruise-simulated/{name}"), "type": "DirectoryOrCreate"},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": objects::namespace(claim).unwrap_or_default(),
                "name": objects::name(claim).unwrap_or_default(),
                "uid": uid,
            },
        },
        "status": {"phase": "Bound"},
    })
}

pub(super) async fn run(api: Api) {
    let claims =
        CollectionKey { group: String::new(), resource: "persistentvolumeclaims".into(), namespace: None };
    let volumes =
        CollectionKey { group: String::new(), resource: "persistentvolumes".into(), namespace: None };
    loop {
        let (all, _) = api.store.list(&claims);
        for claim in &all {
            let class = claim.pointer("/spec/storageClassName").and_then(Value::as_str).and_then(|name| {
                api.store.get(&ObjectKey {
                    group: "storage.k8s.io".into(),
                    resource: "storageclasses".into(),
                    namespace: None,
                    name: name.into(),
                })
            });
            let (all_volumes, _) = api.store.list(&volumes);
            if let Some(volume) = static_match(claim, &all_volumes) {
                bind_existing(&api, claim, &volume);
            } else if let Some(class) = class.as_ref().filter(|class| should_provision(claim, Some(class))) {
                bind(&api, claim, class);
            } else if let Some(size) = expansion_target(claim, class.as_deref()) {
                expand(&api, claim, &size);
            }
        }
        let (all_volumes, _) = api.store.list(&volumes);
        for volume in &all_volumes {
            reclaim(&api, volume);
        }
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

fn claim_key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey {
        group: String::new(),
        resource: "persistentvolumeclaims".into(),
        namespace: Some(namespace.into()),
        name: name.into(),
    }
}

fn volume_key(name: &str) -> ObjectKey {
    ObjectKey {
        group: String::new(),
        resource: "persistentvolumes".into(),
        namespace: None,
        name: name.into(),
    }
}

/// Binds a volume made beforehand to the claim: the volume's `claimRef` and `Bound` phase, then
/// the claim's.
fn bind_existing(api: &Api, claim: &Value, volume: &Value) {
    let volume_name = objects::name(volume).unwrap_or_default().to_string();
    let reference = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": objects::namespace(claim).unwrap_or_default(),
        "name": objects::name(claim).unwrap_or_default(),
        "uid": objects::uid(claim).unwrap_or_default(),
        "resourceVersion": objects::meta_str(claim, "resourceVersion").unwrap_or_default(),
    });
    let bound = api.store.mutate(&volume_key(&volume_name), |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Err(()) };
        let mut next = current.clone();
        next["spec"]["claimRef"] = reference.clone();
        next["status"] = json!({"phase": "Bound"});
        Ok(Mutation::Put(next))
    });
    if bound.is_ok() {
        mark_claim_bound(api, claim, volume, None);
    }
}

/// Marks the claim bound to `volume` (its name, the bind annotations, phase, access modes and
/// capacity), as the persistent-volume controller does.
fn mark_claim_bound(api: &Api, claim: &Value, volume: &Value, provisioner: Option<&str>) {
    let volume_name = objects::name(volume).unwrap_or_default().to_string();
    let namespace = objects::namespace(claim).unwrap_or_default();
    let name = objects::name(claim).unwrap_or_default();
    let uid = objects::uid(claim).unwrap_or_default().to_string();
    let _ = api.store.mutate(&claim_key(namespace, name), |current| -> Result<Mutation, ()> {
        let Some(current) = current.filter(|c| objects::uid(c) == Some(uid.as_str())) else {
            return Ok(Mutation::Keep);
        };
        let mut next = current.clone();
        next["spec"]["volumeName"] = json!(volume_name);
        let annotations = objects::metadata_mut(&mut next).entry("annotations").or_insert_with(|| json!({}));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert("pv.kubernetes.io/bind-completed".into(), json!("yes"));
            annotations.insert("pv.kubernetes.io/bound-by-controller".into(), json!("yes"));
            if let Some(provisioner) = provisioner {
                annotations.insert("volume.kubernetes.io/storage-provisioner".into(), json!(provisioner));
            }
        }
        next["status"] = json!({
            "phase": "Bound",
            "accessModes": volume["spec"]["accessModes"].clone(),
            "capacity": volume["spec"]["capacity"].clone(),
        });
        Ok(Mutation::Put(next))
    });
}

/// Makes the claim's volume and marks both bound, as the binder does (the claim gets the
/// volume's name and the bind annotations).
fn bind(api: &Api, claim: &Value, class: &Value) {
    let volume = volume_for(claim, class);
    let volume_name = objects::name(&volume).unwrap_or_default().to_string();
    let mut stamped = volume.clone();
    objects::set_meta(&mut stamped, "uid", Some(json!(objects::new_uid())));
    objects::set_meta(&mut stamped, "creationTimestamp", Some(json!(objects::now_rfc3339())));
    let created = api.store.mutate(&volume_key(&volume_name), |current| -> Result<Mutation, ()> {
        Ok(if current.is_some() { Mutation::Keep } else { Mutation::Put(stamped.clone()) })
    });
    if created.is_ok() {
        mark_claim_bound(api, claim, &volume, Some(SIMULATED_PROVISIONER));
    }
}

/// Grows the claim's volume to `size`, then records the claim's new capacity (the resizer's and
/// the kubelet's work in one step: the simulated disk has no file system to grow).
fn expand(api: &Api, claim: &Value, size: &str) {
    let volume_name = claim.pointer("/spec/volumeName").and_then(Value::as_str).unwrap_or_default();
    let grown = api.store.mutate(&volume_key(volume_name), |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Err(()) };
        if current.pointer("/spec/capacity/storage").and_then(Value::as_str) == Some(size) {
            return Ok(Mutation::Keep);
        }
        let mut next = current.clone();
        next["spec"]["capacity"]["storage"] = json!(size);
        Ok(Mutation::Put(next))
    });
    if grown.is_err() {
        return;
    }
    let namespace = objects::namespace(claim).unwrap_or_default();
    let name = objects::name(claim).unwrap_or_default();
    let uid = objects::uid(claim).unwrap_or_default().to_string();
    let _ = api.store.mutate(&claim_key(namespace, name), |current| -> Result<Mutation, ()> {
        let Some(current) = current.filter(|c| objects::uid(c) == Some(uid.as_str())) else {
            return Ok(Mutation::Keep);
        };
        let mut next = current.clone();
        next["status"]["capacity"]["storage"] = json!(size);
        next["status"]["allocatedResources"] = json!({"storage": size});
        if let Some(status) = next["status"].as_object_mut() {
            status.remove("allocatedResourceStatuses");
        }
        if let Some(conditions) = next.pointer_mut("/status/conditions").and_then(Value::as_array_mut) {
            conditions
                .retain(|c| !matches!(c["type"].as_str(), Some("Resizing" | "FileSystemResizePending")));
        }
        Ok(Mutation::Put(next))
    });
}

/// A volume made beforehand: `Available` once made (it starts `Pending`), `Released` under
/// `Retain` once its bound claim is gone (one under `Delete` is not ours to delete: it stays).
fn reclaim_static(api: &Api, volume: &Value) {
    let name = objects::name(volume).unwrap_or_default().to_string();
    let phase = volume.pointer("/status/phase").and_then(Value::as_str).unwrap_or_default();
    let claim_ref = volume.pointer("/spec/claimRef").filter(|r| !r.is_null());
    let next_phase = match claim_ref {
        None if matches!(phase, "" | "Pending") => "Available",
        Some(reference) if phase == "Bound" => {
            let field =
                |key: &str| reference.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
            let claim = api.store.get(&claim_key(&field("namespace"), &field("name")));
            let gone = claim.is_none_or(|claim| objects::uid(&claim) != Some(field("uid").as_str()));
            let retained = volume.pointer("/spec/persistentVolumeReclaimPolicy").and_then(Value::as_str)
                == Some("Retain");
            if !(gone && retained) {
                return;
            }
            "Released"
        }
        _ => return,
    };
    let _ = api.store.mutate(&volume_key(&name), |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let mut next = current.clone();
        next["status"] = json!({"phase": next_phase});
        Ok(Mutation::Put(next))
    });
}

/// A volume of ours whose claim is gone (or is another claim by now): deleted under `Delete`,
/// `Released` under `Retain`.
fn reclaim(api: &Api, volume: &Value) {
    let provisioned_by = volume.pointer("/metadata/annotations/pv.kubernetes.io~1provisioned-by");
    if provisioned_by.and_then(Value::as_str) != Some(SIMULATED_PROVISIONER) {
        reclaim_static(api, volume);
        return;
    }
    let claim_ref = volume.pointer("/spec/claimRef").cloned().unwrap_or(json!({}));
    let field = |name: &str| claim_ref.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
    let claim = api.store.get(&claim_key(&field("namespace"), &field("name")));
    if claim.is_some_and(|claim| objects::uid(&claim) == Some(field("uid").as_str())) {
        return;
    }
    let name = objects::name(volume).unwrap_or_default().to_string();
    let delete =
        volume.pointer("/spec/persistentVolumeReclaimPolicy").and_then(Value::as_str) != Some("Retain");
    let _ = api.store.mutate(&volume_key(&name), |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        if delete {
            return Ok(Mutation::Delete);
        }
        if current.pointer("/status/phase").and_then(Value::as_str) == Some("Released") {
            return Ok(Mutation::Keep);
        }
        let mut next = current.clone();
        next["status"] = json!({"phase": "Released"});
        Ok(Mutation::Put(next))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(provisioner: &str, mode: &str) -> Value {
        json!({"metadata": {"name": "standard"}, "provisioner": provisioner, "volumeBindingMode": mode,
               "reclaimPolicy": "Delete"})
    }

    fn claim(extra: Value) -> Value {
        let mut claim = json!({
            "metadata": {"name": "data", "namespace": "ns", "uid": "u1"},
            "spec": {"storageClassName": "standard", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "50Mi"}}},
            "status": {"phase": "Pending"},
        });
        json_patch::merge(&mut claim, &extra);
        claim
    }

    #[test]
    fn only_pending_claims_of_simulated_classes_are_provisioned() {
        let immediate = class(SIMULATED_PROVISIONER, "Immediate");
        let waiting = class(SIMULATED_PROVISIONER, "WaitForFirstConsumer");
        let foreign = class("ebs.csi.aws.com", "Immediate");
        let selected = json!({"metadata": {"annotations": {SELECTED_NODE: "sim-node-1"}}});
        let cases = [
            ("pending claim, immediate class", claim(json!({})), Some(&immediate), true),
            ("no such class", claim(json!({})), None, false),
            ("another provisioner's class", claim(json!({})), Some(&foreign), false),
            ("waits for a consumer, no node yet", claim(json!({})), Some(&waiting), false),
            ("waits for a consumer, node selected", claim(selected), Some(&waiting), true),
            ("already bound", claim(json!({"status": {"phase": "Bound"}})), Some(&immediate), false),
            ("volume named", claim(json!({"spec": {"volumeName": "pv-1"}})), Some(&immediate), false),
            (
                "being deleted",
                claim(json!({"metadata": {"deletionTimestamp": "2026-12-03T10:00:00Z"}})),
                Some(&immediate),
                false,
            ),
        ];
        for (name, claim, class, expected) in cases {
            assert_eq!(should_provision(&claim, class), expected, "{name}");
        }
    }

    #[test]
    fn bound_claims_grow_only_on_expandable_simulated_classes() {
        let mut expandable = class(SIMULATED_PROVISIONER, "Immediate");
        expandable["allowVolumeExpansion"] = json!(true);
        let fixed = class(SIMULATED_PROVISIONER, "Immediate");
        let mut foreign = class("hostpath.csi.k8s.io", "Immediate");
        foreign["allowVolumeExpansion"] = json!(true);
        let bound = |request: &str, capacity: &str| {
            claim(json!({"spec": {"volumeName": "pvc-u1", "resources": {"requests": {"storage": request}}},
                         "status": {"phase": "Bound", "capacity": {"storage": capacity}}}))
        };
        let cases = [
            ("grown request", bound("2Gi", "1Gi"), Some(&expandable), Some("2Gi")),
            ("grown in other units", bound("2048Mi", "1Gi"), Some(&expandable), Some("2048Mi")),
            ("already that size", bound("1024Mi", "1Gi"), Some(&expandable), None),
            ("class does not allow it", bound("2Gi", "1Gi"), Some(&fixed), None),
            ("another provisioner's class", bound("2Gi", "1Gi"), Some(&foreign), None),
            ("no class", bound("2Gi", "1Gi"), None, None),
            (
                "not bound yet",
                claim(json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}})),
                Some(&expandable),
                None,
            ),
        ];
        for (name, claim, class, expected) in cases {
            assert_eq!(expansion_target(&claim, class).as_deref(), expected, "{name}");
        }
    }

    #[test]
    fn unbound_claims_take_the_smallest_fitting_volume_made_beforehand() {
        let volume = |name: &str, size: &str, class: Option<&str>, extra: Value| {
            let mut volume = json!({"metadata": {"name": name},
                "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"]},
                "status": {"phase": "Available"}});
            if let Some(class) = class {
                volume["spec"]["storageClassName"] = json!(class);
            }
            json_patch::merge(&mut volume, &extra);
            volume
        };
        let matched = |claim: &Value, volumes: &[Value]| {
            static_match(claim, volumes)
                .map(|v| v["metadata"]["name"].as_str().unwrap_or_default().to_string())
        };
        let classless = claim(json!({"spec": {"storageClassName": null}}));
        let pool = [
            volume("big", "10Gi", None, json!({})),
            volume("small", "100Mi", None, json!({})),
            volume("too-small", "10Mi", None, json!({})),
            volume("classed", "60Mi", Some("standard"), json!({})),
            volume("taken", "50Mi", None, json!({"spec": {"claimRef": {"name": "x", "namespace": "ns"}}})),
            volume("block", "50Mi", None, json!({"spec": {"volumeMode": "Block"}})),
        ];
        assert_eq!(matched(&classless, &pool).as_deref(), Some("small"), "smallest that fits, no class");
        assert_eq!(matched(&claim(json!({})), &pool).as_deref(), Some("classed"), "same class only");
        let many = claim(json!({"spec": {"accessModes": ["ReadWriteMany"]}}));
        assert_eq!(matched(&many, &pool), None, "access modes must be offered");
        let prebound =
            volume("mine", "1Gi", None, json!({"spec": {"claimRef": {"name": "data", "namespace": "ns"}}}));
        assert_eq!(
            matched(&classless, &[pool[0].clone(), prebound]).as_deref(),
            Some("mine"),
            "a volume naming the claim"
        );
        let named = claim(json!({"spec": {"volumeName": "big"}}));
        assert_eq!(static_match(&named, &pool).map(|v| v["metadata"]["name"].clone()), Some(json!("big")));
        let bound = claim(json!({"status": {"phase": "Bound"}}));
        assert_eq!(matched(&bound, &pool), None);
    }

    #[test]
    fn the_volume_matches_its_claim() {
        let volume = volume_for(&claim(json!({})), &class(SIMULATED_PROVISIONER, "Immediate"));
        assert_eq!(volume["metadata"]["name"], "pvc-u1");
        assert_eq!(volume["spec"]["capacity"]["storage"], "50Mi");
        assert_eq!(volume["spec"]["storageClassName"], "standard");
        assert_eq!(volume["spec"]["claimRef"]["uid"], "u1");
        assert_eq!(volume["spec"]["persistentVolumeReclaimPolicy"], "Delete");
    }
}
