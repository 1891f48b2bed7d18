//! What every CloneSet scenario needs: a cluster with the Kruise CRDs, three simulated nodes and
//! a manager; CloneSets created from JSON and read back typed; waits that print the state they
//! gave up on; and a pod watcher that checks rollout limits on every pod event.

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{Event, Pod},
};
use kruise_crds::apps::v1beta1::CloneSet;
use kruise_integration::{
    Scene,
    manager::{KruiseManager, ManagerSpec},
    nodes::{Hosting, SimNodes},
};
use kube::{
    Api, Client, ResourceExt,
    api::{DynamicObject, ListParams, Patch, PatchParams, PostParams},
    runtime::watcher,
};
use parking_lot::Mutex;
use serde_json::{Value, json};

/// How long a CloneSet may take to reach a state in a scenario.
pub const SETTLE: Duration = Duration::from_secs(90);

/// A cluster ready for CloneSets.
pub struct Kit {
    pub client: Client,
    pub sets: Api<CloneSet>,
    pub pods: Api<Pod>,
    pub nodes: Option<SimNodes>,
    pub manager: Option<KruiseManager>,
}

impl Kit {
    /// CRDs, three simulated nodes in process, and one manager in process.
    pub async fn start(scene: &Scene) -> Self {
        Self::start_with(scene, Some(ManagerSpec::in_process())).await
    }

    /// CRDs, three simulated nodes, and the given manager (none: the scenario starts its own).
    pub async fn start_with(scene: &Scene, manager: Option<ManagerSpec>) -> Self {
        let cluster = scene.cluster();
        cluster.install_crds().await.expect("installing the CRDs");
        // Established is not yet served everywhere on a real API server: wait until a list works,
        // so that the manager's watches do not start in backoff.
        let sets: Api<CloneSet> = Api::namespaced(cluster.client(), "default");
        let deadline = Instant::now() + Duration::from_secs(30);
        while sets.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(Instant::now() < deadline, "CloneSets are not served 30 s after the CRD was Established");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let nodes = SimNodes::start(cluster, Hosting::InProcess, 3).await.expect("starting simulated nodes");
        let manager = match manager {
            Some(spec) => Some(start_manager(scene, spec).await),
            None => None,
        };
        let client = cluster.client();
        Self {
            sets: Api::namespaced(client.clone(), "default"),
            pods: Api::namespaced(client.clone(), "default"),
            client,
            nodes: Some(nodes),
            manager,
        }
    }

    /// Stops the manager and the nodes.
    pub async fn shutdown(mut self) {
        if let Some(manager) = self.manager.take() {
            manager.stop().await;
        }
        if let Some(nodes) = self.nodes.take() {
            nodes.shutdown().await;
        }
    }

    /// Creates a CloneSet from its JSON (any served version).
    pub async fn create(&self, manifest: Value) -> Result<(), kube::Error> {
        let api_version = manifest["apiVersion"].as_str().unwrap_or("apps.kruise.io/v1beta1").to_string();
        let (_, version) = api_version.split_once('/').unwrap();
        let resource = kube::api::ApiResource {
            group: "apps.kruise.io".into(),
            version: version.into(),
            api_version: api_version.clone(),
            kind: "CloneSet".into(),
            plural: "clonesets".into(),
        };
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(self.client.clone(), "default", &resource);
        let object: kube::api::DynamicObject = serde_json::from_value(manifest).unwrap();
        api.create(&PostParams::default(), &object).await.map(|_| ())
    }

    /// A JSON merge patch on a CloneSet (what Kruise Rollout and most tools send).
    pub async fn patch(&self, name: &str, patch: Value) -> Result<CloneSet, kube::Error> {
        self.sets.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await
    }

    /// Sets the image of the first container.
    pub async fn set_image(&self, name: &str, image: &str) {
        let set = self.sets.get(name).await.unwrap();
        let container = set.spec.template.spec.as_ref().unwrap().containers[0].name.clone();
        self.patch(
            name,
            json!({"spec": {"template": {"spec": {"containers": [{"name": container, "image": image}]}}}}),
        )
        .await
        .unwrap();
    }

    /// The pods a CloneSet owns (terminating ones included), by name.
    pub async fn pods_of(&self, name: &str) -> Vec<Pod> {
        let uid = self.sets.get(name).await.unwrap().uid().unwrap();
        let mut pods: Vec<Pod> = self
            .pods
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|pod| pod.owner_references().iter().any(|owner| owner.uid == uid))
            .collect();
        pods.sort_by_key(|pod| pod.name_any());
        pods
    }

    /// Waits until `check` holds for the CloneSet and its pods; panics with both when it never does.
    pub async fn wait_for(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&CloneSet, &[Pod]) -> bool,
    ) -> (CloneSet, Vec<Pod>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let set = self.sets.get(name).await.unwrap();
            let pods = self.pods_of(name).await;
            if check(&set, &pods) {
                return (set, pods);
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for CloneSet {name}: {what}\nstatus: {}\npods: {:#?}",
                    serde_json::to_string_pretty(&set.status).unwrap(),
                    pods.iter().map(pod_summary).collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the CloneSet has reconciled its spec and all `replicas` pods are updated and
    /// Ready, with no extra pod left.
    pub async fn wait_settled(&self, name: &str, replicas: i32) -> (CloneSet, Vec<Pod>) {
        self.wait_for(name, &format!("{replicas} pods updated and ready"), |set, pods| {
            settled(set, pods, replicas)
        })
        .await
    }

    /// The revisions a CloneSet owns.
    pub async fn revisions_of(&self, name: &str) -> Vec<ControllerRevision> {
        let uid = self.sets.get(name).await.unwrap().uid().unwrap();
        let api: Api<ControllerRevision> = Api::namespaced(self.client.clone(), "default");
        api.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|revision| revision.owner_references().iter().any(|owner| owner.uid == uid))
            .collect()
    }

    /// The reasons of the Events about an object (core/v1 view), counted.
    pub async fn event_reasons(&self, kind: &str, name: &str) -> BTreeMap<String, usize> {
        let events: Api<Event> = Api::namespaced(self.client.clone(), "default");
        let mut reasons = BTreeMap::new();
        for event in events.list(&ListParams::default()).await.unwrap().items {
            if event.involved_object.kind.as_deref() == Some(kind)
                && event.involved_object.name.as_deref() == Some(name)
            {
                *reasons.entry(event.reason.unwrap_or_default()).or_default() +=
                    event.count.unwrap_or(1).max(1) as usize;
            }
        }
        reasons
    }

    /// Starts a [`PodLimits`] watcher over the pods labelled `app=<app>`.
    pub fn watch_limits(&self, app: &str) -> PodLimits {
        PodLimits::start(self.pods.clone(), app)
    }
}

/// True when the CloneSet reconciled its generation and has exactly `replicas` pods, all at the
/// update revision and Ready.
pub fn settled(set: &CloneSet, pods: &[Pod], replicas: i32) -> bool {
    let Some(status) = &set.status else { return false };
    status.observed_generation == set.metadata.generation.unwrap_or(0)
        && status.replicas == replicas
        && status.updated_replicas == replicas
        && status.updated_ready_replicas == replicas
        && status.ready_replicas == replicas
        && pods.len() == replicas as usize
        && pods.iter().all(|pod| is_ready(pod) && pod.metadata.deletion_timestamp.is_none())
        && pods.iter().all(|pod| revision_of(pod) == Some(status.update_revision.as_str()))
}

/// The pod's `Ready` condition.
pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The pod's `controller-revision-hash` label.
pub fn revision_of(pod: &Pod) -> Option<&str> {
    pod.labels().get("controller-revision-hash").map(String::as_str)
}

/// The first container's image in the pod spec.
pub fn image_of(pod: &Pod) -> String {
    pod.spec.as_ref().and_then(|spec| spec.containers[0].image.clone()).unwrap_or_default()
}

/// The first container's restart count.
pub fn restarts_of(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_ref())
        .and_then(|statuses| statuses.first())
        .map_or(0, |status| status.restart_count)
}

/// One line about a pod for failure messages.
pub fn pod_summary(pod: &Pod) -> String {
    format!(
        "{} uid={} rev={} image={} ready={} restarts={} deleting={}",
        pod.name_any(),
        pod.uid().unwrap_or_default(),
        revision_of(pod).unwrap_or("-"),
        image_of(pod),
        is_ready(pod),
        restarts_of(pod),
        pod.metadata.deletion_timestamp.is_some()
    )
}

/// A CloneSet manifest (v1beta1) with one `main` container; `extra` is merged into `spec`.
pub fn cloneset(name: &str, replicas: i32, image: &str, extra: Value) -> Value {
    let mut manifest = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]}
            }
        }
    });
    merge(&mut manifest["spec"], extra);
    manifest
}

/// JSON merge (RFC 7386) of `patch` into `target`.
pub fn merge(target: &mut Value, patch: Value) {
    match patch {
        Value::Object(fields) => {
            if !target.is_object() {
                *target = json!({});
            }
            for (key, value) in fields {
                if value.is_null() {
                    target.as_object_mut().unwrap().remove(&key);
                } else {
                    merge(target.as_object_mut().unwrap().entry(key).or_insert(Value::Null), value);
                }
            }
        }
        other => *target = other,
    }
}

/// What a [`PodLimits`] watcher saw.
#[derive(Clone, Debug, Default)]
pub struct LimitsSeen {
    /// Most active pods (not terminating) at once: what maxSurge bounds, as upstream counts.
    pub max_pods: usize,
    /// Most pod objects at once, terminating ones included.
    pub max_objects: usize,
    /// Fewest Ready, non-terminating pods at once, counted only after `min_ready_floor` was
    /// first reached.
    pub min_ready: Option<usize>,
    /// Pod events processed.
    pub events: usize,
    /// Distinct pod UIDs seen.
    pub uids: std::collections::BTreeSet<String>,
}

/// Watches a CloneSet's pods and, on every event, records how many exist and how many are Ready,
/// so that maxSurge and maxUnavailable can be checked at every step of a rollout.
pub struct PodLimits {
    seen: Arc<Mutex<LimitsSeen>>,
    armed: Arc<Mutex<Option<usize>>>,
    task: tokio::task::JoinHandle<()>,
}

impl PodLimits {
    fn start(pods: Api<Pod>, app: &str) -> Self {
        let seen = Arc::new(Mutex::new(LimitsSeen::default()));
        let armed: Arc<Mutex<Option<usize>>> = Arc::new(Mutex::new(None));
        let config = watcher::Config::default().labels(&format!("app={app}"));
        let task = {
            let seen = seen.clone();
            let armed = armed.clone();
            tokio::spawn(async move {
                let mut current: BTreeMap<String, Pod> = BTreeMap::new();
                let mut stream = watcher(pods, config).boxed();
                while let Some(event) = stream.next().await {
                    match event {
                        Ok(watcher::Event::Apply(pod)) | Ok(watcher::Event::InitApply(pod)) => {
                            current.insert(pod.name_any(), pod);
                        }
                        Ok(watcher::Event::Delete(pod)) => {
                            current.remove(&pod.name_any());
                        }
                        Ok(watcher::Event::Init) => current.clear(),
                        Ok(watcher::Event::InitDone) | Err(_) => continue,
                    }
                    let ready = current
                        .values()
                        .filter(|pod| is_ready(pod) && pod.metadata.deletion_timestamp.is_none())
                        .count();
                    let mut seen = seen.lock();
                    seen.events += 1;
                    let active =
                        current.values().filter(|pod| pod.metadata.deletion_timestamp.is_none()).count();
                    seen.max_pods = seen.max_pods.max(active);
                    seen.max_objects = seen.max_objects.max(current.len());
                    seen.uids.extend(current.values().filter_map(|pod| pod.uid()));
                    if armed.lock().is_some() {
                        seen.min_ready = Some(seen.min_ready.map_or(ready, |min| min.min(ready)));
                    }
                }
            })
        };
        Self { seen, armed, task }
    }

    /// Starts counting the Ready floor from now (call once the CloneSet is settled).
    pub fn arm(&self) {
        *self.armed.lock() = Some(0);
        let mut seen = self.seen.lock();
        seen.max_pods = 0;
        seen.max_objects = 0;
        seen.min_ready = None;
    }

    /// What was seen so far.
    pub fn seen(&self) -> LimitsSeen {
        self.seen.lock().clone()
    }
}

impl Drop for PodLimits {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a manager and waits until it is ready (or, with leader election, healthy).
pub async fn start_manager(scene: &Scene, spec: ManagerSpec) -> KruiseManager {
    match KruiseManager::start(scene.cluster(), spec).await {
        Ok(manager) => manager,
        Err(error) => panic!("starting the manager: {error}"),
    }
}

/// Creates `manifest`, which must be refused with a 422 naming every one of `fields`, and checks
/// that nothing was stored; returns the refusal's message.
pub async fn refused_naming(api: &Api<DynamicObject>, manifest: Value, fields: &[&str]) -> String {
    let object: DynamicObject = serde_json::from_value(manifest).unwrap();
    let name = object.name_any();
    let message = match api.create(&PostParams::default(), &object).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{name}: {status:?}");
            let named: Vec<String> =
                status.details.iter().flat_map(|d| d.causes.iter()).map(|c| c.field.clone()).collect();
            for field in fields {
                assert!(
                    named.iter().any(|f| f == field),
                    "{name}: {field} named in {named:?}: {}",
                    status.message
                );
            }
            status.message.clone()
        }
        other => panic!("{name} was not refused: {other:?}"),
    };
    assert!(api.get_opt(&name).await.unwrap().is_none(), "{name}: nothing stored");
    message
}
