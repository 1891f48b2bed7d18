//! NodePodProbe defaults. Upstream has no webhook for NodePodProbe (the PodProbeMarker
//! controller writes it from already defaulted markers); the probe specs get the same
//! HTTPGetAction defaults as PodProbeMarker's so both kinds read alike.

use super::podprobemarker::default_container_probe_spec;
use crate::apps::v1alpha1;

/// Fills in NodePodProbe defaults: each HTTP probe gets path `/` and scheme `HTTP` when unset.
pub fn default_nodepodprobe(node_probe: &mut v1alpha1::NodePodProbe) {
    for pod in &mut node_probe.spec.pod_probes {
        for probe in &mut pod.probes {
            default_container_probe_spec(&mut probe.probe);
        }
    }
}
