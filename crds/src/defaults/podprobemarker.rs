//! PodProbeMarker defaults. Upstream has no mutating webhook for PodProbeMarker; the only
//! defaults here are the Kubernetes HTTPGetAction ones (`path: /`, `scheme: HTTP`), which the
//! node daemon's prober assumes for an empty value anyway. Timing fields are left as written:
//! the prober treats zero values itself (a zero period probes every second), so filling in the
//! kubelet's defaults would change behaviour.

use crate::apps::v1alpha1::{self, ContainerProbeSpec};

/// Fills in PodProbeMarker defaults: each HTTP probe gets path `/` and scheme `HTTP` when unset.
pub fn default_podprobemarker(marker: &mut v1alpha1::PodProbeMarker) {
    for probe in &mut marker.spec.probes {
        default_container_probe_spec(&mut probe.probe);
    }
}

/// Fills in the HTTPGetAction defaults of one probe spec (path `/`, scheme `HTTP`).
pub fn default_container_probe_spec(probe: &mut ContainerProbeSpec) {
    if let Some(get) = probe.http_get.as_mut() {
        get.path.get_or_insert_with(|| "/".into());
        get.scheme.get_or_insert_with(|| "HTTP".into());
    }
}
