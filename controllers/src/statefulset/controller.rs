//! The Advanced StatefulSet controller loop: one watch each for StatefulSets, pods, PVCs and
//! ControllerRevisions (their caches are what [`super::sync`] reads), a kube-runtime
//! `Controller` that reconciles a set when it or anything of it changes, and the per-reconcile
//! metrics and events.
//!
//! A pod maps to the set that controls it (any `apps.kruise.io` version of the owner
//! reference), or, as an orphan, to the sets whose selector matches it and whose name it
//! carries (adoption). A PVC maps to the sets that own it and to those whose claim template
//! and name it carries, so the collection of a stale PVC wakes the set that waits for it.

use std::{
    sync::{Arc, atomic::AtomicBool},
    time::Instant,
};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{ObjectReference, PersistentVolumeClaim, Pod},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kruise_crds::apps::v1beta1::StatefulSet;
use kube::{
    Client, Resource, ResourceExt,
    runtime::{
        Controller,
        controller::Action,
        reflector::{ObjectRef, Store},
    },
};

use super::{core::CoreOptions, sync::sync};
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
pub const CONTROLLER_NAME: &str = "statefulset";
/// Field manager of the controller's writes.
pub const FIELD_MANAGER: &str = "kruise-manager";

/// What every reconcile shares.
pub struct Context {
    /// API client.
    pub client: Client,
    /// The pod cache by controlling owner: a reconcile reads its own pods and the orphans it
    /// may adopt, not every pod.
    pub pods: OwnerIndex<Pod>,
    /// Cache of every PVC.
    pub pvcs: Informer<PersistentVolumeClaim>,
    /// Cache of every ControllerRevision.
    pub revisions: Informer<ControllerRevision>,
    /// Pod and PVC creates and deletes not yet in the cache.
    pub scale_expectations: ScaleExpectations,
    /// Pod writes not yet in the cache.
    pub rv_expectations: ResourceVersionExpectations,
    /// The in-place update engine (revision label `controller-revision-hash`).
    pub engine: InPlaceEngine,
    /// Feature gates of the decision core.
    pub options: CoreOptions,
    /// Gate `PreDownloadImageForInPlaceUpdate`: pre-pull changed images through ImagePullJobs.
    pub pre_download: bool,
    /// Per set uid, the converged revision whose pre-download jobs were deleted (once each).
    pub pre_download_cleaned: parking_lot::Mutex<std::collections::HashMap<String, String>>,
    /// Metrics.
    pub metrics: Metrics,
    /// Set once every cache holds its initial list (reconciling earlier could create a pod the
    /// cache does not show yet).
    pub synced: AtomicBool,
    recorder: EventRecorder,
    queue: PendingQueue,
}

impl Context {
    /// Publishes an event about a set (in the background).
    pub fn event(&self, set: &StatefulSet, kind: EventKind, reason: &str, note: String) {
        let reference = ObjectReference {
            api_version: Some(StatefulSet::api_version(&()).to_string()),
            kind: Some("StatefulSet".into()),
            name: set.metadata.name.clone(),
            namespace: set.metadata.namespace.clone(),
            uid: set.metadata.uid.clone(),
            resource_version: set.metadata.resource_version.clone(),
            ..Default::default()
        };
        self.recorder.publish(reference, kind, reason, note);
    }
}

fn is_kruise_statefulset(api_version: &str, kind: &str) -> bool {
    kind == "StatefulSet" && api_version.starts_with("apps.kruise.io/")
}

/// The sets a pod belongs to: its controller when that is an Advanced StatefulSet, else (an
/// orphan) the sets of its namespace that would adopt it.
fn owners_of_pod(meta: &ObjectMeta, sets: &Store<StatefulSet>) -> Vec<ObjectRef<StatefulSet>> {
    let namespace = meta.namespace.clone().unwrap_or_default();
    match meta.owner_references.iter().flatten().find(|r| r.controller == Some(true)) {
        Some(owner) if is_kruise_statefulset(&owner.api_version, &owner.kind) => {
            vec![ObjectRef::new(&owner.name).within(&namespace)]
        }
        Some(_) => Vec::new(),
        None => {
            let labels = meta.labels.clone().unwrap_or_default();
            let name = meta.name.clone().unwrap_or_default();
            let parent = super::core::identity::parse_pod_name(&name).0.map(str::to_string);
            sets.state()
                .iter()
                .filter(|set| set.namespace().as_deref() == Some(namespace.as_str()))
                .filter(|set| parent.as_deref() == Some(set.name_any().as_str()))
                .filter(|set| {
                    set.spec.selector.as_ref().is_some_and(|s| {
                        !kruise_crds::selector::is_empty(s) && kruise_crds::selector::matches(s, &labels)
                    })
                })
                .map(|set| ObjectRef::from_obj(set.as_ref()))
                .collect()
        }
    }
}

/// The sets a PVC concerns: those owning it, and those whose claim template and name it
/// carries (`<claim>-<set>-<ordinal>`).
fn owners_of_claim(meta: &ObjectMeta, sets: &Store<StatefulSet>) -> Vec<ObjectRef<StatefulSet>> {
    let namespace = meta.namespace.clone().unwrap_or_default();
    let name = meta.name.clone().unwrap_or_default();
    let mut refs: Vec<ObjectRef<StatefulSet>> = meta
        .owner_references
        .iter()
        .flatten()
        .filter(|r| is_kruise_statefulset(&r.api_version, &r.kind))
        .map(|r| ObjectRef::new(&r.name).within(&namespace))
        .collect();
    let parent = super::core::identity::parse_pod_name(&name).0.unwrap_or_default().to_string();
    for set in sets.state().iter().filter(|set| set.namespace().as_deref() == Some(namespace.as_str())) {
        let set_name = set.name_any();
        let carries = set.spec.volume_claim_templates.iter().any(|claim| {
            parent == format!("{}-{set_name}", claim.metadata.name.as_deref().unwrap_or_default())
        });
        let reference = ObjectRef::from_obj(set.as_ref());
        if carries && !refs.contains(&reference) {
            refs.push(reference);
        }
    }
    refs
}

/// The sets owning a revision.
fn owners_of_revision(meta: &ObjectMeta) -> Vec<ObjectRef<StatefulSet>> {
    let namespace = meta.namespace.clone().unwrap_or_default();
    meta.owner_references
        .iter()
        .flatten()
        .filter(|r| is_kruise_statefulset(&r.api_version, &r.kind))
        .map(|r| ObjectRef::new(&r.name).within(&namespace))
        .collect()
}

fn key_of(set: &StatefulSet) -> String {
    format!("{}/{}", set.namespace().unwrap_or_default(), set.name_any())
}

async fn reconcile(set: Arc<StatefulSet>, ctx: Arc<Context>) -> Result<Action, ControllerError> {
    ctx.queue.started(&key_of(&set));
    if !ctx.synced.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(Action::requeue(workload::NOT_SYNCED_RETRY));
    }
    let started = Instant::now();
    let outcome = sync(set.clone(), &ctx).await.map(|outcome| outcome.requeue_after);
    workload::reconciled(&ctx.metrics, CONTROLLER_NAME, started, outcome)
}

fn error_policy(set: Arc<StatefulSet>, error: &ControllerError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(statefulset = %key_of(&set), %error, "reconcile failed");
    Action::requeue(workload::ERROR_RETRY)
}

/// The feature gates the Advanced StatefulSet controller honours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Gates of the decision core.
    pub core: CoreOptions,
    /// Gate `PreDownloadImageForInPlaceUpdate` (it also needs the daemon).
    pub pre_download: bool,
}

impl Settings {
    /// The settings the feature gates ask for.
    pub fn from_gates(gates: &kruise_crds::features::FeatureGates) -> Self {
        use kruise_crds::features::Gate;
        Self {
            core: CoreOptions::from_gates(gates),
            pre_download: gates.enabled(Gate::PreDownloadImageForInPlaceUpdate)
                && gates.enabled(Gate::KruiseDaemon),
        }
    }
}

/// Runs the Advanced StatefulSet controller until the future is dropped. `on_synced` is called
/// once every cache has its initial list.
pub async fn run(
    caches: Caches,
    metrics: Metrics,
    settings: Settings,
    on_synced: impl FnOnce() + Send + 'static,
) {
    let client = caches.client().clone();
    let pods = caches.informer::<Pod>();
    let pvcs = caches.informer::<PersistentVolumeClaim>();
    let revisions = caches.informer::<ControllerRevision>();

    let engine = InPlaceEngine::new(client.clone(), Arc::new(DefaultRevisionAdapter))
        .with_field_manager(FIELD_MANAGER);
    let ctx = Arc::new(Context {
        client: client.clone(),
        pods: pods.owner_index().clone(),
        pvcs: pvcs.clone(),
        revisions: revisions.clone(),
        scale_expectations: ScaleExpectations::new(),
        rv_expectations: ResourceVersionExpectations::new(),
        engine,
        options: settings.core,
        pre_download: settings.pre_download,
        pre_download_cleaned: Default::default(),
        metrics: metrics.clone(),
        synced: AtomicBool::new(false),
        recorder: EventRecorder::new(client.clone(), "statefulset-controller"),
        queue: PendingQueue::new(metrics.clone(), CONTROLLER_NAME),
    });
    metrics.init_controller(CONTROLLER_NAME);

    let (sets, set_stream, listed) =
        workload::workload_watch::<StatefulSet>(&client, ctx.queue.clone(), key_of);
    let triggered =
        |queue: PendingQueue, refs: Vec<ObjectRef<StatefulSet>>| workload::triggered(&queue, refs);
    let (pod_sets, pod_queue) = (sets.clone(), ctx.queue.clone());
    let (claim_sets, claim_queue) = (sets.clone(), ctx.queue.clone());
    let revision_queue = ctx.queue.clone();
    let controller = Controller::for_stream(set_stream, sets.clone())
        .watches_shared_stream(pods.subscribe().touched(), move |pod: Arc<Pod>| {
            triggered(pod_queue.clone(), owners_of_pod(&pod.metadata, &pod_sets))
        })
        .watches_shared_stream(pvcs.subscribe().touched(), move |pvc: Arc<PersistentVolumeClaim>| {
            triggered(claim_queue.clone(), owners_of_claim(&pvc.metadata, &claim_sets))
        })
        .watches_shared_stream(revisions.subscribe().touched(), move |revision: Arc<ControllerRevision>| {
            triggered(revision_queue.clone(), owners_of_revision(&revision.metadata))
        });

    let stores = vec![
        workload::cache_synced(&pods),
        workload::cache_synced(&pvcs),
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
    use crate::statefulset::core::fixtures::set;

    fn store_with(sets: Vec<StatefulSet>) -> Store<StatefulSet> {
        crate::runtime::workload::testing::listed_store(sets)
    }

    fn meta(name: &str, labels: &[(&str, &str)], owner: Option<(&str, &str, bool)>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some("prod".into()),
            labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            owner_references: owner.map(|(api_version, kind, controller)| {
                vec![OwnerReference {
                    api_version: api_version.into(),
                    kind: kind.into(),
                    name: "web".into(),
                    controller: Some(controller),
                    ..Default::default()
                }]
            }),
            ..Default::default()
        }
    }

    #[test]
    fn events_map_to_their_sets() {
        let sets = store_with(vec![set(3)]);
        let web = vec![ObjectRef::<StatefulSet>::new("web").within("prod")];
        let cases = [
            (
                "owned pod",
                meta("web-0", &[], Some(("apps.kruise.io/v1beta1", "StatefulSet", true))),
                web.clone(),
            ),
            (
                "v1alpha1 owner",
                meta("web-0", &[], Some(("apps.kruise.io/v1alpha1", "StatefulSet", true))),
                web.clone(),
            ),
            (
                "apps/v1 owner",
                meta("web-0", &[("app", "web")], Some(("apps/v1", "StatefulSet", true))),
                vec![],
            ),
            ("orphan member", meta("web-4", &[("app", "web")], None), web.clone()),
            ("orphan of another name", meta("api-4", &[("app", "web")], None), vec![]),
            ("orphan not selected", meta("web-4", &[("app", "x")], None), vec![]),
        ];
        for (name, meta, expected) in cases {
            assert_eq!(owners_of_pod(&meta, &sets), expected, "{name}");
        }
        assert_eq!(owners_of_claim(&meta("data-web-3", &[], None), &sets), web);
        assert!(owners_of_claim(&meta("logs-web-3", &[], None), &sets).is_empty());
        assert_eq!(
            owners_of_claim(&meta("x", &[], Some(("apps.kruise.io/v1beta1", "StatefulSet", false))), &sets),
            web
        );
        assert_eq!(
            owners_of_revision(&meta("web-abc", &[], Some(("apps.kruise.io/v1beta1", "StatefulSet", true)))),
            web
        );
    }
}
