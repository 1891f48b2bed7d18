//! PodProbeMarker (v1alpha1 only): custom probes run by the node daemon against selected pods,
//! whose results become pod conditions and labels/annotations.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ContainerProbeSpec, ProbeState};
use crate::resource::{APPS_GROUP, kruise_resource};

/// Pod annotation with the probes that apply to the pod (JSON).
pub const POD_PROBE_MARKER_ANNOTATION_KEY: &str = "kruise.io/podprobe";
/// Pod annotation with the names of the PodProbeMarkers that apply to the pod.
pub const POD_PROBE_MARKER_LIST_ANNOTATION_KEY: &str = "kruise.io/podprobemarker-list";

kruise_resource! {
    /// Probes for the pods a selector matches, and what to mark the pods with on each result.
    PodProbeMarker {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "PodProbeMarker",
        plural: "podprobemarkers",
        scope: NamespaceResourceScope,
        spec: PodProbeMarkerSpec,
        status: PodProbeMarkerStatus,
    }
}

/// Desired state of a PodProbeMarker.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeMarkerSpec {
    /// Pods to probe, in the marker's namespace.
    #[serialize_always] // Go writes `selector: null`; the CRD requires the key
    pub selector: Option<LabelSelector>,
    /// The probes; names are unique within the marker.
    #[serde(default)]
    pub probes: Vec<PodContainerProbe>,
}

/// One probe, and what its results do to the pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodContainerProbe {
    /// Probe name.
    #[serde(default)]
    pub name: String,
    /// The container probed.
    #[serde(default)]
    pub container_name: String,
    /// What to run, and how often.
    #[serde(default)]
    pub probe: ContainerProbeSpec,
    /// Labels and annotations to put on the pod for each result.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub marker_policy: Vec<ProbeMarkerPolicy>,
    /// Pod condition type the result is written to.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pod_condition_type: String,
}

/// What to mark the pod with when a probe reaches a state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeMarkerPolicy {
    /// Succeeded or Failed.
    #[serde(default)]
    pub state: ProbeState,
    /// Labels to set on the pod.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub labels: BTreeMap<String, String>,
    /// Annotations to set on the pod.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub annotations: BTreeMap<String, String>,
}

/// Observed state of a PodProbeMarker.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeMarkerStatus {
    /// Generation of the spec this status reflects.
    #[serde(default)]
    pub observed_generation: i64,
    /// Pods the selector matches.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub matched_pods: i64,
}
