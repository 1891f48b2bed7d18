//! The Advanced DaemonSet controller loop: one watch each for DaemonSets, pods, nodes and
//! ControllerRevisions (their caches are what [`super::sync`] reads), a kube-runtime
//! `Controller` that reconciles a DaemonSet when it or anything of it changes, and the
//! per-reconcile metrics and events.
//!
//! A pod maps to the DaemonSet that controls it (any `apps.kruise.io` version of the owner
//! reference), or, as an orphan, to the DaemonSets of its namespace whose selector matches it
//! (adoption). A node that is added, removed or changed in anything but its heartbeats (labels,
//! taints, the set of true conditions, ...) wakes every DaemonSet (upstream
//! `shouldIgnoreNodeUpdate`).

use std::{
    collections::HashMap,
    sync::{Arc, atomic::AtomicBool},
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Node, ObjectReference, Pod},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kruise_crds::apps::v1beta1::DaemonSet;
use kube::{
    Client, Resource, ResourceExt,
    runtime::{
        Controller,
        controller::Action,
        reflector::{ObjectRef, Store},
    },
};
use parking_lot::Mutex;

use super::{
    core::nodes::node_fingerprint,
    sync::{key_of, sync},
};
use crate::{
    ControllerError,
    inplace::{DefaultRevisionAdapter, InPlaceEngine},
    runtime::{
        Metrics,
        cache::{Caches, Informer},
        events::{EventKind, EventRecorder},
        expectations::{ResourceVersionExpectations, ScaleExpectations},
        owner_index::OwnerIndex,
        queue::PendingQueue,
        workload,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "daemonset";
/// Field manager of the controller's writes.
pub const FIELD_MANAGER: &str = "kruise-manager";
/// First delay before a failed daemon pod on a node is deleted again (upstream's back-off).
const FAILED_POD_BACKOFF_INITIAL: Duration = Duration::from_secs(1);
/// Longest such delay.
const FAILED_POD_BACKOFF_MAX: Duration = Duration::from_secs(15 * 60);

/// What every reconcile shares.
pub struct Context {
    /// API client.
    pub client: Client,
    /// The pod cache by controlling owner: a reconcile reads its own pods and the orphans it
    /// may adopt, not every pod.
    pub pods: OwnerIndex<Pod>,
    /// Cache of every node.
    pub nodes: Informer<Node>,
    /// Cache of every ControllerRevision.
    pub revisions: Informer<ControllerRevision>,
    /// Pod creates and deletes not yet in the cache.
    pub scale_expectations: ScaleExpectations,
    /// Pod writes not yet in the cache.
    pub rv_expectations: ResourceVersionExpectations,
    /// The in-place update engine (revision label `controller-revision-hash`).
    pub engine: InPlaceEngine,
    /// Gate `PreDownloadImageForDaemonSetUpdate`: pre-pull changed images through ImagePullJobs.
    pub pre_download: bool,
    /// Gate `DaemonSetPruneIneligibleNodes`: leave nodes that should not run the DaemonSet out
    /// of the rolling update's accounting.
    pub prune_ineligible: bool,
    /// Per DaemonSet uid, the converged revision hash whose pre-download jobs were deleted.
    pub pre_download_cleaned: Mutex<HashMap<String, String>>,
    /// Metrics.
    pub metrics: Metrics,
    /// Set once every cache holds its initial list.
    pub synced: AtomicBool,
    /// Per `<uid>/<observedGeneration>/<node>`: the back-off of deleting failed pods there
    /// (current delay, last attempt).
    failed_backoff: Mutex<HashMap<String, (Duration, Instant)>>,
    recorder: EventRecorder,
    queue: PendingQueue,
}

impl Context {
    /// Publishes an event about a DaemonSet (in the background).
    pub fn event(&self, ds: &DaemonSet, kind: EventKind, reason: &str, note: String) {
        let reference = ObjectReference {
            api_version: Some(DaemonSet::api_version(&()).to_string()),
            kind: Some("DaemonSet".into()),
            name: ds.metadata.name.clone(),
            namespace: ds.metadata.namespace.clone(),
            uid: ds.metadata.uid.clone(),
            resource_version: ds.metadata.resource_version.clone(),
            ..Default::default()
        };
        self.recorder.publish(reference, kind, reason, note);
    }

    /// Whether a failed pod under `key` may not be deleted yet: `Some(wait)` while in back-off,
    /// else `None` and the attempt is recorded (the delay doubles, up to 15 minutes).
    pub fn failed_pod_backoff(&self, key: &str, now: Instant) -> Option<Duration> {
        let mut all = self.failed_backoff.lock();
        all.retain(|_, (_, last)| now.saturating_duration_since(*last) < 2 * FAILED_POD_BACKOFF_MAX);
        next_backoff(&mut all, key, now)
    }
}

fn next_backoff(all: &mut HashMap<String, (Duration, Instant)>, key: &str, now: Instant) -> Option<Duration> {
    if let Some((delay, last)) = all.get(key) {
        let elapsed = now.saturating_duration_since(*last);
        if elapsed < *delay {
            return Some(*delay - elapsed);
        }
    }
    let delay = all
        .get(key)
        .map_or(FAILED_POD_BACKOFF_INITIAL, |(delay, _)| (*delay * 2).min(FAILED_POD_BACKOFF_MAX));
    all.insert(key.to_string(), (delay, now));
    None
}

fn is_kruise_daemonset(api_version: &str, kind: &str) -> bool {
    kind == "DaemonSet" && api_version.starts_with("apps.kruise.io/")
}

/// The DaemonSets a pod belongs to: its controller when that is an Advanced DaemonSet, else (an
/// orphan) the DaemonSets of its namespace that would adopt it.
fn owners_of_pod(meta: &ObjectMeta, sets: &Store<DaemonSet>) -> Vec<ObjectRef<DaemonSet>> {
    let namespace = meta.namespace.clone().unwrap_or_default();
    match meta.owner_references.iter().flatten().find(|r| r.controller == Some(true)) {
        Some(owner) if is_kruise_daemonset(&owner.api_version, &owner.kind) => {
            vec![ObjectRef::new(&owner.name).within(&namespace)]
        }
        Some(_) => Vec::new(),
        None => {
            let labels = meta.labels.clone().unwrap_or_default();
            sets.state()
                .iter()
                .filter(|ds| ds.namespace().as_deref() == Some(namespace.as_str()))
                .filter(|ds| {
                    ds.spec.selector.as_ref().is_some_and(|s| {
                        !kruise_crds::selector::is_empty(s) && kruise_crds::selector::matches(s, &labels)
                    })
                })
                .map(|ds| ObjectRef::from_obj(ds.as_ref()))
                .collect()
        }
    }
}

/// The DaemonSets owning a revision.
fn owners_of_revision(meta: &ObjectMeta) -> Vec<ObjectRef<DaemonSet>> {
    let namespace = meta.namespace.clone().unwrap_or_default();
    meta.owner_references
        .iter()
        .flatten()
        .filter(|r| is_kruise_daemonset(&r.api_version, &r.kind))
        .map(|r| ObjectRef::new(&r.name).within(&namespace))
        .collect()
}

/// Every DaemonSet when the node changed in a way that matters (or is new or gone).
fn daemonsets_for_node(
    node: &Node,
    fingerprints: &Mutex<HashMap<String, String>>,
    sets: &Store<DaemonSet>,
) -> Vec<ObjectRef<DaemonSet>> {
    let name = node.name_any();
    let fingerprint = if node.metadata.deletion_timestamp.is_some() {
        String::from("deleting")
    } else {
        node_fingerprint(node)
    };
    let changed = fingerprints.lock().insert(name, fingerprint.clone()).is_none_or(|old| old != fingerprint);
    if !changed {
        return Vec::new();
    }
    sets.state().iter().map(|ds| ObjectRef::from_obj(ds.as_ref())).collect()
}

async fn reconcile(ds: Arc<DaemonSet>, ctx: Arc<Context>) -> Result<Action, ControllerError> {
    ctx.queue.started(&key_of(&ds));
    if !ctx.synced.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(Action::requeue(workload::NOT_SYNCED_RETRY));
    }
    let started = Instant::now();
    let outcome = sync(ds.clone(), &ctx).await.map(|outcome| outcome.requeue_after);
    workload::reconciled(&ctx.metrics, CONTROLLER_NAME, started, outcome)
}

fn error_policy(ds: Arc<DaemonSet>, error: &ControllerError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(daemonset = %key_of(&ds), %error, "reconcile failed");
    Action::requeue(workload::ERROR_RETRY)
}

/// The feature gates the Advanced DaemonSet controller honours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Gate `PreDownloadImageForDaemonSetUpdate` (it also needs the daemon).
    pub pre_download: bool,
    /// Gate `DaemonSetPruneIneligibleNodes`.
    pub prune_ineligible: bool,
}

impl Settings {
    /// The settings the feature gates ask for.
    pub fn from_gates(gates: &kruise_crds::features::FeatureGates) -> Self {
        use kruise_crds::features::Gate;
        Self {
            pre_download: gates.enabled(Gate::PreDownloadImageForDaemonSetUpdate)
                && gates.enabled(Gate::KruiseDaemon),
            prune_ineligible: gates.enabled(Gate::DaemonSetPruneIneligibleNodes),
        }
    }
}

/// Runs the Advanced DaemonSet controller until the future is dropped. `on_synced` is called
/// once every cache has its initial list.
pub async fn run(
    caches: Caches,
    metrics: Metrics,
    settings: Settings,
    on_synced: impl FnOnce() + Send + 'static,
) {
    let client = caches.client().clone();
    let pods = caches.informer::<Pod>();
    let revisions = caches.informer::<ControllerRevision>();
    let nodes = caches.informer::<Node>();
    // Deleted nodes must wake the DaemonSets too: they come with a deletion timestamp.
    let node_stream = workload::changed_or_deleted(&nodes);

    let engine = InPlaceEngine::new(client.clone(), Arc::new(DefaultRevisionAdapter))
        .with_field_manager(FIELD_MANAGER);
    let ctx = Arc::new(Context {
        client: client.clone(),
        pods: pods.owner_index().clone(),
        nodes: nodes.clone(),
        revisions: revisions.clone(),
        scale_expectations: ScaleExpectations::new(),
        rv_expectations: ResourceVersionExpectations::new(),
        engine,
        pre_download: settings.pre_download,
        prune_ineligible: settings.prune_ineligible,
        pre_download_cleaned: Mutex::new(HashMap::new()),
        metrics: metrics.clone(),
        synced: AtomicBool::new(false),
        failed_backoff: Mutex::new(HashMap::new()),
        recorder: EventRecorder::new(client.clone(), "daemonset-controller"),
        queue: PendingQueue::new(metrics.clone(), CONTROLLER_NAME),
    });
    metrics.init_controller(CONTROLLER_NAME);

    let (sets, set_stream, listed) =
        workload::workload_watch::<DaemonSet>(&client, ctx.queue.clone(), key_of);
    let triggered = |queue: PendingQueue, refs: Vec<ObjectRef<DaemonSet>>| workload::triggered(&queue, refs);
    let (pod_sets, pod_queue) = (sets.clone(), ctx.queue.clone());
    let (node_sets, node_queue) = (sets.clone(), ctx.queue.clone());
    let fingerprints = Arc::new(Mutex::new(HashMap::new()));
    let revision_queue = ctx.queue.clone();
    let controller = Controller::for_stream(set_stream, sets.clone())
        .watches_shared_stream(pods.subscribe().touched(), move |pod: Arc<Pod>| {
            triggered(pod_queue.clone(), owners_of_pod(&pod.metadata, &pod_sets))
        })
        .watches_shared_stream(node_stream, move |node: Arc<Node>| {
            triggered(node_queue.clone(), daemonsets_for_node(&node, &fingerprints, &node_sets))
        })
        .watches_shared_stream(revisions.subscribe().touched(), move |revision: Arc<ControllerRevision>| {
            triggered(revision_queue.clone(), owners_of_revision(&revision.metadata))
        });

    let stores = vec![
        workload::cache_synced(&pods),
        workload::cache_synced(&nodes),
        workload::cache_synced(&revisions),
    ];
    let stores_ready = {
        let ctx = ctx.clone();
        workload::when_synced(CONTROLLER_NAME, stores, listed, move || {
            ctx.synced.store(true, std::sync::atomic::Ordering::SeqCst);
            on_synced();
        })
    };
    workload::drain(CONTROLLER_NAME, controller.run(reconcile, error_policy, ctx)).await;
    stores_ready.abort();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    use super::*;
    use crate::daemonset::core::fixtures::{daemonset, node};

    fn store_with(sets: Vec<DaemonSet>) -> Store<DaemonSet> {
        crate::runtime::workload::testing::listed_store(sets)
    }

    fn owner(api_version: &str, kind: &str, name: &str) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: "u".into(),
            controller: Some(true),
            ..Default::default()
        }
    }

    /// Upstream `TestEnqueueRequestForPodCreate`.
    #[test]
    fn pods_map_to_their_controller_or_the_daemonsets_that_would_adopt_them() {
        let store = store_with(vec![daemonset("a"), daemonset("b")]);
        let mut meta = ObjectMeta {
            namespace: Some("default".into()),
            labels: Some([("app".to_string(), "a".to_string())].into()),
            ..Default::default()
        };
        assert_eq!(owners_of_pod(&meta, &store), vec![ObjectRef::new("a").within("default")], "orphan");
        meta.owner_references = Some(vec![owner("apps.kruise.io/v1beta1", "DaemonSet", "b")]);
        assert_eq!(owners_of_pod(&meta, &store), vec![ObjectRef::new("b").within("default")]);
        meta.owner_references = Some(vec![owner("apps/v1", "DaemonSet", "b")]);
        assert!(owners_of_pod(&meta, &store).is_empty(), "a built-in DaemonSet's pod");
        meta.owner_references = None;
        meta.labels = None;
        assert!(owners_of_pod(&meta, &store).is_empty(), "no labels, no DaemonSet");
        meta.owner_references = Some(vec![owner("apps.kruise.io/v1alpha1", "DaemonSet", "a")]);
        assert_eq!(owners_of_revision(&meta), vec![ObjectRef::new("a").within("default")]);
    }

    /// Upstream `TestEnqueueRequestForNodeCreate` / `...NodeUpdate`.
    #[test]
    fn node_changes_wake_every_daemonset_but_heartbeats_do_not() {
        let store = store_with(vec![daemonset("a"), daemonset("b")]);
        let fingerprints = Mutex::new(HashMap::new());
        let mut n = node("n1", &[("zone", "a")]);
        assert_eq!(daemonsets_for_node(&n, &fingerprints, &store).len(), 2, "new node");
        n.metadata.resource_version = Some("2".into());
        assert!(daemonsets_for_node(&n, &fingerprints, &store).is_empty(), "nothing that matters");
        n.metadata.labels = Some([("zone".to_string(), "b".to_string())].into());
        assert_eq!(daemonsets_for_node(&n, &fingerprints, &store).len(), 2, "label change");
        n.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now()));
        assert_eq!(daemonsets_for_node(&n, &fingerprints, &store).len(), 2, "node gone");
    }

    #[test]
    fn failed_pod_deletion_backs_off_doubling() {
        let mut all = HashMap::new();
        let t0 = Instant::now();
        assert_eq!(next_backoff(&mut all, "k", t0), None, "first failure: delete");
        assert_eq!(
            next_backoff(&mut all, "k", t0 + Duration::from_millis(400)),
            Some(Duration::from_millis(600))
        );
        assert_eq!(next_backoff(&mut all, "k", t0 + Duration::from_secs(1)), None);
        assert_eq!(
            next_backoff(&mut all, "k", t0 + Duration::from_secs(2)),
            Some(Duration::from_secs(1)),
            "2s now"
        );
        assert_eq!(next_backoff(&mut all, "other", t0), None);
    }
}
