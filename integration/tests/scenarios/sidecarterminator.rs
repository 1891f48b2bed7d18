//! The sidecar terminator end to end, on both tiers: simulated nodes, the manager (gate
//! `SidecarTerminator`) and a node daemon per node. A Job pod whose main container finished
//! but whose sidecar would run forever completes: the terminator asks the node daemon, through
//! a ContainerRecreateRequest, to stop the sidecar; a sidecar whose exit code is ignored gets
//! the pod's phase set from the main container first.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
};
use serde_json::json;

use crate::daemon_kit::{DaemonKit, NAMESPACE, SETTLE};

fn job(name: &str, sidecar: serde_json::Value) -> Job {
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {
            "metadata": {"labels": {"job-name-for-test": name}},
            "spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "busybox", "command": ["/bin/sh", "-c", "sleep 2"]},
                sidecar,
            ]},
        }},
    }))
    .unwrap()
}

fn condition(job: &Job, type_: &str) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|all| all.iter().any(|c| c.type_ == type_ && c.status == "True"))
}

async fn wait_complete(jobs: &Api<Job>, pods: &Api<Pod>, name: &str) -> Pod {
    let deadline = Instant::now() + SETTLE;
    loop {
        let job = jobs.get(name).await.unwrap();
        let listed =
            pods.list(&ListParams::default().labels(&format!("job-name-for-test={name}"))).await.unwrap();
        if condition(&job, "Complete") {
            assert_eq!(listed.items.len(), 1, "one pod ran");
            return listed.items.into_iter().next().unwrap();
        }
        assert!(!condition(&job, "Failed"), "job {name} failed: {:?}", job.status);
        assert!(
            Instant::now() < deadline,
            "job {name} did not complete: {:?}; pods {:?}",
            job.status,
            listed.items.iter().map(|p| (p.name_any(), p.status.clone())).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

fn terminated_exit_code(pod: &Pod, container: &str) -> Option<i32> {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|all| all.iter().find(|s| s.name == container))
        .and_then(|s| s.state.as_ref())
        .and_then(|state| state.terminated.as_ref())
        .map(|t| t.exit_code)
}

pub async fn job_pods_complete_despite_sidecars(scene: Scene) -> Result<(), Skip> {
    let kit = DaemonKit::start(&scene).await;
    let client = scene.cluster().client();
    let jobs: Api<Job> = Api::namespaced(client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);

    // A server sidecar that runs until stopped.
    let proxy = json!({"name": "sidecar", "image": "nginx",
        "env": [{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT", "value": "true"}]});
    jobs.create(&PostParams::default(), &job("with-proxy", proxy)).await.unwrap();
    // A sidecar that never ends, whose exit code must not fail the job.
    let forever = json!({"name": "sidecar", "image": "busybox", "command": ["/bin/sh", "-c", "sleep 10000"],
    "env": [
        {"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT", "value": "true"},
        {"name": "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE", "value": "true"},
    ]});
    jobs.create(&PostParams::default(), &job("with-forever", forever)).await.unwrap();
    // Without the env the sidecar is left alone: the job does not complete.
    let untouched = json!({"name": "sidecar", "image": "nginx"});
    jobs.create(&PostParams::default(), &job("untouched", untouched)).await.unwrap();

    let pod = wait_complete(&jobs, &pods, "with-proxy").await;
    assert_eq!(terminated_exit_code(&pod, "main"), Some(0));
    assert!(terminated_exit_code(&pod, "sidecar").is_some(), "the sidecar was stopped: {:?}", pod.status);
    assert_eq!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded"));

    let pod = wait_complete(&jobs, &pods, "with-forever").await;
    assert_eq!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded"));
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
    assert!(
        conditions.iter().any(|c| c.type_ == "SidecarTerminated" && c.status == "True"),
        "marked by the terminator: {conditions:?}"
    );

    let untouched = jobs.get("untouched").await.unwrap();
    assert!(!condition(&untouched, "Complete"), "a sidecar without the env keeps the job running");
    let listed = pods.list(&ListParams::default().labels("job-name-for-test=untouched")).await.unwrap();
    let pod = &listed.items[0];
    assert_eq!(terminated_exit_code(pod, "main"), Some(0), "its main container finished too");
    assert_eq!(terminated_exit_code(pod, "sidecar"), None, "its sidecar still runs");
    kit.shutdown().await;
    Ok(())
}
