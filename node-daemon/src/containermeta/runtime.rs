//! What the container meta reporter asks of the container runtime: a pod's container instances
//! (CRI `ListContainers` by the kubelet's pod UID label, then `ContainerStatus` of each), the
//! environment a running container actually has (`ExecSync env`, read inside the container, so
//! the values are the ones it started with), and what stopping a container as the kubelet would
//! needs from the kubelet's labels and annotations on it (pod, grace period, preStop hook).

use std::collections::BTreeMap;

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::ContainerPort;
use kruise_crds::apps::v1beta1::{CRRProbeHandler, ContainerRecreateRequestContainer};

use super::core::{ContainerInstance, ENV_COMMAND, ENV_READ_TIMEOUT, parse_env};
use crate::{
    cri::CriClient,
    crr::{
        core::{LABEL_CONTAINER_NAME, LABEL_POD_UID, MINIMUM_GRACE_SECONDS},
        runtime::PodTarget,
    },
    error::CriError,
};

/// The kubelet's label carrying the pod name on containers.
pub const LABEL_POD_NAME: &str = "io.kubernetes.pod.name";
/// The kubelet's label carrying the pod namespace on containers.
pub const LABEL_POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
/// The kubelet's container annotation with the pod's `terminationGracePeriodSeconds`.
pub const ANNOTATION_TERMINATION_GRACE: &str = "io.kubernetes.pod.terminationGracePeriod";
/// The kubelet's container annotation with the pod's `deletionGracePeriodSeconds`.
pub const ANNOTATION_DELETION_GRACE: &str = "io.kubernetes.pod.deletionGracePeriod";
/// The kubelet's container annotation with the container's preStop hook (JSON).
pub const ANNOTATION_PRE_STOP: &str = "io.kubernetes.container.preStopHandler";
/// The kubelet's container annotation with the container's ports (JSON).
pub const ANNOTATION_PORTS: &str = "io.kubernetes.container.ports";

/// Why a container's environment could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EnvReadError {
    /// The runtime call failed.
    #[error(transparent)]
    Cri(#[from] CriError),
    /// `env` ran but exited with an error (as the CRI client of the kubelet, a non-zero exit
    /// is a failure).
    #[error("command 'env' exited with {code}: {stderr}")]
    Exit {
        /// The exit code.
        code: i32,
        /// What it printed on stderr.
        stderr: String,
    },
}

/// Every container instance of the pod the runtime knows (an instance removed between the list
/// and its status is skipped).
pub async fn pod_containers(cri: &CriClient, pod_uid: &str) -> Result<Vec<ContainerInstance>, CriError> {
    let filter = cri::ContainerFilter {
        label_selector: [(LABEL_POD_UID.to_string(), pod_uid.to_string())].into(),
        ..Default::default()
    };
    let mut instances = Vec::new();
    for container in cri.list_containers(filter).await? {
        match cri.container_status(&container.id).await {
            Ok(Some(status)) => instances.push(ContainerInstance::from_status(&status)),
            Ok(None) => {}
            Err(CriError::Call { status, .. }) if status.code() == tonic::Code::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Ok(instances)
}

/// The environment of the running container `id`, as `env` prints it inside.
pub async fn read_env(cri: &CriClient, id: &str) -> Result<BTreeMap<String, String>, EnvReadError> {
    let response = cri.exec_sync(id, vec![ENV_COMMAND.to_string()], ENV_READ_TIMEOUT).await?;
    if response.exit_code != 0 {
        return Err(EnvReadError::Exit {
            code: response.exit_code,
            stderr: String::from_utf8_lossy(&response.stderr).trim().to_string(),
        });
    }
    Ok(parse_env(&String::from_utf8_lossy(&response.stdout)))
}

/// A running container to stop, restored from the kubelet's labels and annotations on it (as
/// the kubelet's `killContainer` does without the pod spec).
#[derive(Clone, Debug)]
pub struct StopTarget {
    /// Its pod, for Events and HTTP hooks.
    pub pod: PodTarget,
    /// Its name and preStop hook.
    pub container: ContainerRecreateRequestContainer,
    /// The grace period: the pod's deletion grace period, else its termination grace period,
    /// else the kubelet's minimum (2 s).
    pub grace_seconds: i64,
}

impl StopTarget {
    /// The target the CRI status of a container describes; `None` when it is not running (then
    /// there is nothing to restart: the kubelet starts a new instance anyway).
    pub fn from_status(status: &cri::ContainerStatus) -> Option<Self> {
        if status.state != cri::ContainerState::ContainerRunning as i32 {
            return None;
        }
        let label = |key: &str| status.labels.get(key).cloned().unwrap_or_default();
        let seconds = |key: &str| status.annotations.get(key).and_then(|v| v.parse::<i64>().ok());
        let pre_stop = status
            .annotations
            .get(ANNOTATION_PRE_STOP)
            .and_then(|text| serde_json::from_str::<CRRProbeHandler>(text).ok());
        let ports = status
            .annotations
            .get(ANNOTATION_PORTS)
            .and_then(|text| serde_json::from_str::<Vec<ContainerPort>>(text).ok())
            .unwrap_or_default();
        let name = status
            .labels
            .get(LABEL_CONTAINER_NAME)
            .cloned()
            .or_else(|| status.metadata.as_ref().map(|m| m.name.clone()))
            .unwrap_or_default();
        Some(Self {
            pod: PodTarget {
                namespace: label(LABEL_POD_NAMESPACE),
                name: label(LABEL_POD_NAME),
                uid: label(LABEL_POD_UID),
            },
            container: ContainerRecreateRequestContainer { name, pre_stop, ports, status_context: None },
            grace_seconds: seconds(ANNOTATION_DELETION_GRACE)
                .or_else(|| seconds(ANNOTATION_TERMINATION_GRACE))
                .unwrap_or(MINIMUM_GRACE_SECONDS),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn status(state: cri::ContainerState, annotations: &[(&str, &str)]) -> cri::ContainerStatus {
        cri::ContainerStatus {
            id: "abc".into(),
            state: state as i32,
            labels: [
                (LABEL_CONTAINER_NAME, "main"),
                (LABEL_POD_NAME, "web-0"),
                (LABEL_POD_NAMESPACE, "default"),
                (LABEL_POD_UID, "uid-1"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            annotations: annotations.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn stop_targets_from_kubelet_annotations() {
        let running = status(
            cri::ContainerState::ContainerRunning,
            &[
                (ANNOTATION_TERMINATION_GRACE, "30"),
                (ANNOTATION_PRE_STOP, r#"{"exec":{"command":["sh","-c","sleep 1"]}}"#),
                (ANNOTATION_PORTS, r#"[{"name":"http","containerPort":8080,"protocol":"TCP"}]"#),
            ],
        );
        let target = StopTarget::from_status(&running).unwrap();
        assert_eq!((target.pod.namespace.as_str(), target.pod.name.as_str()), ("default", "web-0"));
        assert_eq!(target.pod.uid, "uid-1");
        assert_eq!(target.container.name, "main");
        assert_eq!(target.grace_seconds, 30);
        let command = target.container.pre_stop.and_then(|h| h.exec).and_then(|e| e.command);
        assert_eq!(command, Some(vec!["sh".to_string(), "-c".into(), "sleep 1".into()]));
        assert_eq!(target.container.ports[0].container_port, 8080);

        let deleting = status(
            cri::ContainerState::ContainerRunning,
            &[(ANNOTATION_TERMINATION_GRACE, "30"), (ANNOTATION_DELETION_GRACE, "5")],
        );
        assert_eq!(StopTarget::from_status(&deleting).unwrap().grace_seconds, 5);
        let bare = StopTarget::from_status(&status(cri::ContainerState::ContainerRunning, &[])).unwrap();
        assert_eq!((bare.grace_seconds, bare.container.pre_stop.is_none()), (MINIMUM_GRACE_SECONDS, true));
        assert!(StopTarget::from_status(&status(cri::ContainerState::ContainerExited, &[])).is_none());
    }
}
