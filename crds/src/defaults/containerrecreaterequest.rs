//! ContainerRecreateRequest defaults (upstream `pkg/webhook/containerrecreaterequest/mutating`):
//! the strategy defaults, and [`inject_pod_into_containerrecreaterequest_v1beta1`], the pure part
//! of the create-time mutation that copies what the node daemon needs from the target pod.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;

use crate::{
    apps::{
        v1alpha1,
        v1beta1::{
            self, CONTAINER_RECREATE_REQUEST_ACTIVE_KEY, CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY,
            CONTAINER_RECREATE_REQUEST_POD_UID_KEY, CRRProbeHandler, ContainerRecreateRequestContainer,
            ContainerRecreateRequestContainerContext,
        },
    },
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// Node (and request) label marking a virtual-kubelet node: `type=virtual-kubelet`.
pub const CONTAINER_RECREATE_REQUEST_VIRTUAL_KUBELET_LABEL: (&str, &str) = ("type", "virtual-kubelet");
/// Pod condition the sidecar terminator sets; such a pod still accepts recreate requests.
pub const CONTAINER_RECREATE_REQUEST_SIDECAR_TERMINATED_CONDITION: &str = "SidecarTerminated";

/// Fills in v1beta1 ContainerRecreateRequest defaults: an empty strategy when there is none, and
/// failure policy Fail.
pub fn default_containerrecreaterequest_v1beta1(request: &mut v1beta1::ContainerRecreateRequest) {
    let strategy = request.spec.strategy.get_or_insert_with(Default::default);
    if strategy.failure_policy.is_unset() {
        strategy.failure_policy = v1beta1::ContainerRecreateRequestFailurePolicyType::Fail;
    }
}

/// Fills in v1alpha1 ContainerRecreateRequest defaults (the same as v1beta1).
pub fn default_containerrecreaterequest_v1alpha1(request: &mut v1alpha1::ContainerRecreateRequest) {
    let strategy = request.spec.strategy.get_or_insert_with(Default::default);
    if strategy.failure_policy.is_unset() {
        strategy.failure_policy = v1alpha1::ContainerRecreateRequestFailurePolicyType::Fail;
    }
}

/// The create-time mutation of a v1beta1 request once its pod (and the pod's node labels) have
/// been fetched: checks that the pod is running on a node, labels the request with the pod's
/// node, UID and `active=true` (and `type=virtual-kubelet` for such nodes), defaults the
/// termination grace period from the pod, and fills each container's `preStop`, `ports` and
/// `statusContext` from the pod. Users may not set those three fields themselves. Returns every
/// problem found; the request should be rejected when the list is not empty.
pub fn inject_pod_into_containerrecreaterequest_v1beta1(
    request: &mut v1beta1::ContainerRecreateRequest,
    pod: &Pod,
    node_labels: Option<&BTreeMap<String, String>>,
) -> ErrorList {
    let strategy = request.spec.strategy.get_or_insert_with(Default::default);
    inject(
        request.metadata.labels.get_or_insert_with(Default::default),
        &mut strategy.termination_grace_period_seconds,
        &mut request.spec.containers,
        pod,
        node_labels,
    )
}

/// The create-time mutation of a v1alpha1 request (see
/// [`inject_pod_into_containerrecreaterequest_v1beta1`]).
pub fn inject_pod_into_containerrecreaterequest_v1alpha1(
    request: &mut v1alpha1::ContainerRecreateRequest,
    pod: &Pod,
    node_labels: Option<&BTreeMap<String, String>>,
) -> ErrorList {
    let strategy = request.spec.strategy.get_or_insert_with(Default::default);
    inject(
        request.metadata.labels.get_or_insert_with(Default::default),
        &mut strategy.termination_grace_period_seconds,
        &mut request.spec.containers,
        pod,
        node_labels,
    )
}

fn inject(
    labels: &mut BTreeMap<String, String>,
    termination_grace_period_seconds: &mut Option<i64>,
    containers: &mut [ContainerRecreateRequestContainer],
    pod: &Pod,
    node_labels: Option<&BTreeMap<String, String>>,
) -> ErrorList {
    let spec_path = FieldPath::root("spec");
    let pod_path = spec_path.child("podName");
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let terminated_by_sidecar_terminator = status
        .conditions
        .iter()
        .flatten()
        .any(|condition| condition.type_ == CONTAINER_RECREATE_REQUEST_SIDECAR_TERMINATED_CONDITION);
    let phase = status.phase.as_deref().unwrap_or_default();
    let active = phase != "Succeeded" && phase != "Failed" && pod.metadata.deletion_timestamp.is_none();
    let node_name = pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).unwrap_or_default();
    if !active && !terminated_by_sidecar_terminator {
        return vec![FieldError::invalid(
            &pod_path,
            quoted(&pod_name),
            "not allowed to recreate containers in an inactive Pod",
        )];
    }
    if node_name.is_empty() {
        return vec![FieldError::invalid(
            &pod_path,
            quoted(&pod_name),
            "not allowed to recreate containers in a pending Pod",
        )];
    }

    labels.insert(CONTAINER_RECREATE_REQUEST_ACTIVE_KEY.into(), "true".into());
    labels.insert(CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY.into(), node_name);
    labels
        .insert(CONTAINER_RECREATE_REQUEST_POD_UID_KEY.into(), pod.metadata.uid.clone().unwrap_or_default());
    let (vk_key, vk_value) = CONTAINER_RECREATE_REQUEST_VIRTUAL_KUBELET_LABEL;
    if node_labels.and_then(|labels| labels.get(vk_key)).is_some_and(|value| value == vk_value) {
        labels.insert(vk_key.into(), vk_value.into());
    }
    if termination_grace_period_seconds.is_none() {
        *termination_grace_period_seconds =
            pod.spec.as_ref().and_then(|spec| spec.termination_grace_period_seconds);
    }

    let mut errors = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (index, container) in containers.iter_mut().enumerate() {
        let path = spec_path.child("containers").index(index);
        if !seen.insert(container.name.clone()) {
            errors.push(FieldError::duplicate(&path.child("name"), quoted(&container.name)));
            continue;
        }
        let mut read_only_set = false;
        for (field, set) in [
            ("preStop", container.pre_stop.is_some()),
            ("ports", !container.ports.is_empty()),
            ("statusContext", container.status_context.is_some()),
        ] {
            if set {
                read_only_set = true;
                errors.push(FieldError::forbidden(
                    &path.child(field),
                    "is filled in from the Pod and may not be set",
                ));
            }
        }
        if read_only_set {
            continue;
        }
        let pod_spec = pod.spec.as_ref();
        let pod_container = pod_spec.and_then(|spec| {
            spec.init_containers
                .iter()
                .flatten()
                .chain(spec.containers.iter())
                .find(|c| c.name == container.name)
        });
        let Some(pod_container) = pod_container else {
            let known: Vec<&str> = pod_spec
                .map(|spec| {
                    spec.init_containers
                        .iter()
                        .flatten()
                        .chain(spec.containers.iter())
                        .map(|c| c.name.as_str())
                        .collect()
                })
                .unwrap_or_default();
            errors.push(FieldError {
                detail: format!(
                    "no container of that name in Pod {pod_name} (containers: {})",
                    known.join(", ")
                ),
                ..FieldError::not_found(&path.child("name"), quoted(&container.name))
            });
            continue;
        };
        let container_status = status
            .container_statuses
            .iter()
            .flatten()
            .find(|container_status| container_status.name == container.name);
        let Some(container_status) = container_status else {
            errors.push(FieldError::invalid(
                &path.child("name"),
                quoted(&container.name),
                "the container has no status in the Pod",
            ));
            continue;
        };
        let Some(container_id) = container_status.container_id.clone().filter(|id| !id.is_empty()) else {
            errors.push(FieldError::invalid(
                &path.child("name"),
                quoted(&container.name),
                "the container has no containerID yet, it may not have been initialized",
            ));
            continue;
        };
        if let Some(pre_stop) =
            pod_container.lifecycle.as_ref().and_then(|lifecycle| lifecycle.pre_stop.as_ref())
        {
            container.pre_stop = Some(CRRProbeHandler {
                exec: pre_stop.exec.clone(),
                http_get: pre_stop.http_get.clone(),
                tcp_socket: pre_stop.tcp_socket.clone(),
            });
        }
        if container.pre_stop.as_ref().is_some_and(|hook| hook.http_get.is_some()) {
            container.ports = pod_container.ports.clone().unwrap_or_default();
        }
        container.status_context = Some(ContainerRecreateRequestContainerContext {
            container_id,
            restart_count: container_status.restart_count,
        });
    }
    errors
}
