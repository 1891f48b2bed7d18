//! How long a deleted pod stays listed on a simulated node: `NodeTiming::removal`, which
//! `kruise up` sets so that pods linger in their terminal status as they do on a real node.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    nodes::{NodeTiming, Simulation, SimulationConfig},
};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, PostParams},
};
use serde_json::json;

fn containers_terminated(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.container_statuses.as_ref()).is_some_and(|c| {
        !c.is_empty() && c.iter().all(|c| c.state.as_ref().is_some_and(|s| s.terminated.is_some()))
    })
}

fn running(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .and_then(|c| c.state.as_ref())
        .is_some_and(|s| s.running.is_some())
}

#[tokio::test]
async fn a_deleted_pod_stays_listed_in_its_terminal_status_for_the_removal_time() {
    let removal = Duration::from_millis(1200);
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let timing = NodeTiming { removal, ..NodeTiming::default() };
    let config = SimulationConfig { nodes: 1, timing, ..Default::default() };
    let simulation = Simulation::start(client.clone(), &config).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pods.get("web").await.is_ok_and(|p| running(&p)) {
        assert!(Instant::now() < deadline, "the pod never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    pods.delete("web", &DeleteParams::default()).await.unwrap();
    let mut stopped_at = None;
    let gone_at = loop {
        match pods.get_opt("web").await.unwrap() {
            None => break Instant::now(),
            Some(pod) => {
                assert!(pod.metadata.deletion_timestamp.is_some());
                if stopped_at.is_none() && containers_terminated(&pod) {
                    stopped_at = Some(Instant::now());
                }
            }
        }
        assert!(Instant::now() < deadline + Duration::from_secs(20), "the pod was never removed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let stopped_at = stopped_at.expect("the terminal status is reported before the pod goes");
    let listed = gone_at - stopped_at;
    // The poll interval (20 ms) and the status write make the observed time a little shorter.
    assert!(
        listed >= removal - Duration::from_millis(150),
        "removed {listed:?} after its containers stopped"
    );
    simulation.stop().await;
}
