//! Ephemeral containers on a simulated node: added to a running pod through
//! `pods/ephemeralcontainers`, they are pulled and started, run their command and stay
//! terminated (never restarted), reported in `status.ephemeralContainerStatuses` and left out of
//! the pod's readiness; the main container is not restarted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    nodes::{Simulation, SimulationConfig},
};
use kube::{
    Api, Client, Config,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

fn ephemeral_status(pod: &Pod, name: &str) -> Option<ContainerStatus> {
    pod.status.as_ref()?.ephemeral_container_statuses.as_ref()?.iter().find(|s| s.name == name).cloned()
}

fn ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

async fn wait_for(pods: &Api<Pod>, what: &str, check: impl Fn(&Pod) -> bool) -> Pod {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pod = pods.get("web").await.unwrap();
        if check(&pod) {
            return pod;
        }
        assert!(Instant::now() < deadline, "{what}: {:#?}", pod.status);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn add(name: &str, command: Value) -> Patch<Value> {
    Patch::Strategic(json!({"spec": {"ephemeralContainers": [
        {"name": name, "image": "busybox:1.36", "targetContainerName": "main", "command": command},
    ]}}))
}

#[tokio::test]
async fn ephemeral_containers_run_once_and_are_reported() {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let config = SimulationConfig { nodes: 1, ..Default::default() };
    let simulation = Simulation::start(client.clone(), &config).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let before = wait_for(&pods, "the pod never became ready", ready).await;
    let main_id = before.status.unwrap().container_statuses.unwrap()[0].container_id.clone();

    let params = PatchParams::default();
    pods.patch_subresource("ephemeralcontainers", "web", &params, &add("ok", json!(["sleep", "1"])))
        .await
        .unwrap();
    let running = wait_for(&pods, "ok never ran", |p| {
        ephemeral_status(p, "ok").is_some_and(|s| s.state.unwrap().running.is_some())
    })
    .await;
    let status = ephemeral_status(&running, "ok").unwrap();
    assert!(!status.ready && status.started.is_none(), "{status:?}");
    assert!(ready(&running), "an ephemeral container does not make the pod unready");
    let done = wait_for(&pods, "ok never finished", |p| {
        ephemeral_status(p, "ok").is_some_and(|s| s.state.unwrap().terminated.is_some())
    })
    .await;
    let terminated = ephemeral_status(&done, "ok").unwrap().state.unwrap().terminated.unwrap();
    assert_eq!((terminated.exit_code, terminated.reason.as_deref()), (0, Some("Completed")));

    // A failing command and a program busybox does not have: terminated with their codes.
    pods.patch_subresource("ephemeralcontainers", "web", &params, &add("missing", json!(["ls", "sdfewasf"])))
        .await
        .unwrap();
    pods.patch_subresource("ephemeralcontainers", "web", &params, &add("unknown", json!(["sdkfjk"])))
        .await
        .unwrap();
    let failed = wait_for(&pods, "the failing ones never finished", |p| {
        ["missing", "unknown"]
            .iter()
            .all(|n| ephemeral_status(p, n).is_some_and(|s| s.state.unwrap().terminated.is_some()))
    })
    .await;
    let exit = |name: &str| {
        let terminated = ephemeral_status(&failed, name).unwrap().state.unwrap().terminated.unwrap();
        (terminated.exit_code, terminated.reason.unwrap_or_default())
    };
    assert_eq!(exit("missing"), (1, "Error".to_string()));
    assert_eq!(exit("unknown"), (128, "StartError".to_string()));

    // Never restarted, the main container untouched, the pod still ready.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = pods.get("web").await.unwrap();
    for name in ["ok", "missing", "unknown"] {
        let status = ephemeral_status(&after, name).unwrap();
        assert_eq!(status.restart_count, 0, "{name}");
        assert!(status.state.unwrap().terminated.is_some(), "{name}");
    }
    assert!(ready(&after));
    let main = &after.status.clone().unwrap().container_statuses.unwrap()[0];
    assert_eq!((main.container_id.clone(), main.restart_count), (main_id, 0));
    simulation.stop().await;
    server.shutdown().await;
}
