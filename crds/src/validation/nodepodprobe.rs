//! NodePodProbe validation. Upstream has no webhook for NodePodProbe (only the PodProbeMarker
//! controller and the node daemon write it); these are the structural rules the daemon relies
//! on: each pod entry names its pod, each pod appears once, each probe has a unique name and a
//! valid probe spec (the PodProbeMarker rules).

use std::collections::BTreeSet;

use super::{meta::validate_object_meta, podprobemarker::validate_container_probe_spec};
use crate::{
    apps::v1alpha1,
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// Validates a NodePodProbe; every field may change on update, so `old` adds no rule.
pub fn validate_nodepodprobe(
    node_probe: &v1alpha1::NodePodProbe,
    _old: Option<&v1alpha1::NodePodProbe>,
) -> ErrorList {
    let mut errors = validate_object_meta(&node_probe.metadata, false);
    let pods_path = FieldPath::root("spec").child("podProbes");
    let mut uids = BTreeSet::new();
    for (index, pod) in node_probe.spec.pod_probes.iter().enumerate() {
        let item = pods_path.index(index);
        for (field, value) in [("name", &pod.name), ("namespace", &pod.namespace), ("uid", &pod.uid)] {
            if value.is_empty() {
                errors.push(FieldError::required(&item.child(field), ""));
            }
        }
        if !pod.uid.is_empty() && !uids.insert(pod.uid.as_str()) {
            errors.push(FieldError::duplicate(&item.child("uid"), quoted(&pod.uid)));
        }
        let mut names = BTreeSet::new();
        for (probe_index, probe) in pod.probes.iter().enumerate() {
            let probe_path = item.child("probes").index(probe_index);
            if probe.name.is_empty() {
                errors.push(FieldError::required(&probe_path.child("name"), ""));
            } else if !names.insert(probe.name.as_str()) {
                errors.push(FieldError::duplicate(&probe_path.child("name"), quoted(&probe.name)));
            }
            if probe.container_name.is_empty() {
                errors.push(FieldError::required(&probe_path.child("containerName"), ""));
            }
            errors.extend(validate_container_probe_spec(&probe.probe, &probe_path.child("probe")));
        }
    }
    errors
}
