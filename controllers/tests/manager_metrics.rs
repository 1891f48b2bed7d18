//! Every controller of the manager publishes the same metric series from the start: a fresh
//! manager with every controller's gates on (against the embedded API server, as `kruise up`
//! runs it) serves `/metrics` with each controller's reconcile counters (per result), error
//! counter, duration histogram, queue depth and expectation-timeout counter, before any object
//! exists. Dashboards and alerts see zeros instead of no data, the same for every controller.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kruise_controllers::app::{ControllerOptions, ManagerOptions, run_manager};
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kruise_crds::features::FeatureGates;
use kube::{
    Api, Client, ResourceExt,
    api::{Patch, PatchParams},
};
use serde_json::json;

/// The controllers a manager with every gate on runs, by their metrics label.
const CONTROLLERS: [&str; 11] = [
    "cloneset",
    "statefulset",
    "daemonset",
    "containerlaunchpriority",
    "podreadiness",
    "nodeimage",
    "containerrecreaterequest",
    "podprobemarker",
    "nodepodprobe",
    "imagepulljob",
    "imagelistpulljob",
];

/// The series each controller has, as `name{labels}` prefixes.
fn series(controller: &str) -> Vec<String> {
    let label = format!("controller=\"{controller}\"");
    let mut series: Vec<String> = ["success", "requeue", "error"]
        .iter()
        .map(|result| format!("kruise_controller_reconcile_total{{{label},result=\"{result}\"}}"))
        .collect();
    series.extend(
        [
            "kruise_controller_reconcile_errors_total",
            "kruise_controller_queue_depth",
            "kruise_controller_expectation_timeouts_total",
            "kruise_controller_reconcile_duration_seconds_count",
        ]
        .iter()
        .map(|name| format!("{name}{{{label}}}")),
    );
    series
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_controller_publishes_every_series() {
    let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    let client = Client::try_from(kube::Config::new(server.url.parse().unwrap())).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in kruise_crds::crd::all_crds().unwrap() {
        let mut body = serde_json::to_value(&crd).unwrap();
        body["apiVersion"] = json!("apiextensions.k8s.io/v1");
        body["kind"] = json!("CustomResourceDefinition");
        crds.patch(&crd.name_any(), &PatchParams::apply("test").force(), &Patch::Apply(&body)).await.unwrap();
    }
    let options = ManagerOptions {
        health_addr: "127.0.0.1:0".parse().unwrap(),
        webhook: None,
        leader_election: None,
        controllers: ControllerOptions {
            feature_gates: FeatureGates::parse("AllAlpha=true,AllBeta=true").unwrap(),
            ..Default::default()
        },
    };
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let manager = tokio::spawn(run_manager(client, options, std::future::pending(), move |started| {
        let _ = started_tx.send(started);
    }));
    let started = tokio::time::timeout(Duration::from_secs(20), started_rx).await.unwrap().unwrap();
    let url = format!("http://{}/metrics", started.health_addr);
    let deadline = Instant::now() + Duration::from_secs(30);
    let missing = loop {
        let text = reqwest::get(&url).await.unwrap().text().await.unwrap();
        let missing: Vec<String> = CONTROLLERS
            .iter()
            .flat_map(|controller| series(controller))
            .filter(|series| !text.lines().any(|line| line.starts_with(series.as_str())))
            .collect();
        if missing.is_empty() || Instant::now() > deadline {
            break missing;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(missing.is_empty(), "series missing from /metrics: {missing:#?}");
    manager.abort();
}
