//! The CloneSet controller loop: a watch of CloneSets and the manager's shared caches of pods,
//! PVCs and ControllerRevisions (what [`super::sync`] reads), a kube-rs `Controller`
//! that reconciles a CloneSet when it or anything it owns changes (pods owned through any
//! `apps.kruise.io` version of the owner reference, and orphans its selector matches), and the
//! per-reconcile metrics and events.

use std::{sync::Arc, time::Instant};

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{ObjectReference, PersistentVolumeClaim, Pod},
};
use kruise_crds::apps::v1beta1::CloneSet;
use kube::{
    Client, Resource, ResourceExt,
    runtime::{
        Controller,
        controller::Action,
        events::EventType,
        reflector::{ObjectRef, Store},
    },
};

use super::sync::{key_of, sync};
use crate::{
    ControllerError,
    inplace::{CloneSetRevisionAdapter, InPlaceEngine, InPlaceGates},
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
pub const CONTROLLER_NAME: &str = "cloneset";

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
    /// Creates and deletes not yet in the cache.
    pub scale_expectations: ScaleExpectations,
    /// Pod writes not yet in the cache.
    pub rv_expectations: ResourceVersionExpectations,
    /// The in-place update engine.
    pub engine: InPlaceEngine,
    /// Feature gates and flags of the decision core.
    pub options: super::core::CoreOptions,
    /// Gate `PreDownloadImageForInPlaceUpdate`: pre-pull changed images through ImagePullJobs.
    pub pre_download: bool,
    /// Per CloneSet uid, the converged revision whose pre-download jobs were deleted.
    pub pre_download_cleaned: parking_lot::Mutex<std::collections::HashMap<String, String>>,
    /// Metrics.
    pub metrics: Metrics,
    /// Gate `PodUnavailableBudgetUpdateGate`: each pod's budget is asked before the pod is
    /// updated (upstream's check in `cloneset_update.go`).
    pub pub_guard: Option<crate::podunavailablebudget::admit::Guard>,
    /// Set once every cache holds its initial list (reconciling earlier could create pods the
    /// cache does not show yet).
    pub synced: std::sync::atomic::AtomicBool,
    recorder: EventRecorder,
    /// Objects waiting for a reconcile (the queue-depth gauge).
    queue: PendingQueue,
}

impl Context {
    /// Publishes an event about a CloneSet (in the background).
    pub fn event(&self, cs: &CloneSet, kind: EventType, reason: &str, note: String) {
        let reference = ObjectReference {
            api_version: Some(CloneSet::api_version(&()).to_string()),
            kind: Some("CloneSet".into()),
            name: cs.metadata.name.clone(),
            namespace: cs.metadata.namespace.clone(),
            uid: cs.metadata.uid.clone(),
            resource_version: cs.metadata.resource_version.clone(),
            ..Default::default()
        };
        let kind = match kind {
            EventType::Normal => EventKind::Normal,
            EventType::Warning => EventKind::Warning,
        };
        self.recorder.publish(reference, kind, reason, note);
    }
}

/// The CloneSets a pod (or PVC, revision) belongs to: its controller owner reference when that
/// is a CloneSet of any apps.kruise.io version, else every CloneSet in its namespace whose
/// selector matches it (adoption).
fn owners_of(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    clonesets: &Store<CloneSet>,
) -> Vec<ObjectRef<CloneSet>> {
    let namespace = meta.namespace.clone().unwrap_or_default();
    let controller = meta.owner_references.iter().flatten().find(|r| r.controller == Some(true));
    match controller {
        Some(owner) if owner.kind == "CloneSet" && owner.api_version.starts_with("apps.kruise.io/") => {
            vec![ObjectRef::new(&owner.name).within(&namespace)]
        }
        Some(_) => Vec::new(),
        None => {
            let labels = meta.labels.clone().unwrap_or_default();
            clonesets
                .state()
                .iter()
                .filter(|cs| cs.namespace().as_deref() == Some(namespace.as_str()))
                .filter(|cs| {
                    cs.spec.selector.as_ref().is_some_and(|s| {
                        !kruise_crds::selector::is_empty(s) && kruise_crds::selector::matches(s, &labels)
                    })
                })
                .map(|cs| ObjectRef::from_obj(cs.as_ref()))
                .collect()
        }
    }
}

async fn reconcile(cs: Arc<CloneSet>, ctx: Arc<Context>) -> Result<Action, ControllerError> {
    ctx.queue.started(&key_of(&cs));
    if !ctx.synced.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(Action::requeue(workload::NOT_SYNCED_RETRY));
    }
    let started = Instant::now();
    let outcome = sync(cs.clone(), &ctx).await.map(|outcome| outcome.requeue_after);
    workload::reconciled(&ctx.metrics, CONTROLLER_NAME, started, outcome)
}

fn error_policy(cs: Arc<CloneSet>, error: &ControllerError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(cloneset = %cs.name_any(), namespace = %cs.namespace().unwrap_or_default(), %error, "reconcile failed");
    Action::requeue(workload::ERROR_RETRY)
}

/// The feature gates and flags the CloneSet controller honours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Gates and flags of the decision core.
    pub core: super::core::CoreOptions,
    /// Gate `PreDownloadImageForInPlaceUpdate`.
    pub pre_download: bool,
    /// Gate `RecreatePodWhenChangeVCTInCloneSetGate`: a volumeClaimTemplates change makes the
    /// update a recreate (new instance ids, new PVCs) unless the policy is `InPlaceOnly`.
    pub recreate_when_vct_changes: bool,
    /// Gate `PodUnavailableBudgetUpdateGate`: updates respect the pods' PodUnavailableBudgets.
    pub pub_update_gate: bool,
    /// Gate `InPlacePodVerticalScaling` (what a budget guards when it guards UPDATE).
    pub in_place_pod_vertical_scaling: bool,
}

impl Settings {
    /// The settings the feature gates ask for.
    pub fn from_gates(gates: &kruise_crds::features::FeatureGates) -> Self {
        use kruise_crds::features::Gate;
        Self {
            core: super::core::CoreOptions {
                partition_rollback: gates.enabled(Gate::CloneSetPartitionRollback),
                preparing_update_as_update: gates.enabled(Gate::PreparingUpdateAsUpdate),
                exclude_preparing_delete: false,
            },
            pre_download: gates.enabled(Gate::PreDownloadImageForInPlaceUpdate),
            recreate_when_vct_changes: gates.enabled(Gate::RecreatePodWhenChangeVCTInCloneSetGate),
            pub_update_gate: gates.enabled(Gate::PodUnavailableBudgetUpdateGate),
            in_place_pod_vertical_scaling: gates.enabled(Gate::InPlacePodVerticalScaling),
        }
    }
}

/// Runs the CloneSet controller until the future is dropped. `on_synced` is called once every
/// cache has its initial list.
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

    let gates =
        InPlaceGates { recreate_when_vct_changes: settings.recreate_when_vct_changes, ..Default::default() };
    let engine = InPlaceEngine::new(client.clone(), Arc::new(CloneSetRevisionAdapter::default()))
        .with_gates(gates)
        .with_field_manager(crate::workload::pod_ops::FIELD_MANAGER);
    let recorder = EventRecorder::new(client.clone(), "cloneset-controller");
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
        pub_guard: settings.pub_update_gate.then(|| {
            crate::podunavailablebudget::admit::Guard::new(
                client.clone(),
                settings.in_place_pod_vertical_scaling,
            )
            .with_events("cloneset-controller")
        }),
        synced: std::sync::atomic::AtomicBool::new(false),
        recorder,
        queue: PendingQueue::new(metrics.clone(), CONTROLLER_NAME),
    });
    metrics.init_controller(CONTROLLER_NAME);

    let (clonesets, cloneset_stream, listed) =
        workload::workload_watch::<CloneSet>(&client, ctx.queue.clone(), key_of);
    let owners = |store: Store<CloneSet>, queue: PendingQueue| {
        move |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            workload::triggered(&queue, owners_of(meta, &store))
        }
    };
    let (for_pods, for_pvcs, for_revisions) = (
        owners(clonesets.clone(), ctx.queue.clone()),
        owners(clonesets.clone(), ctx.queue.clone()),
        owners(clonesets.clone(), ctx.queue.clone()),
    );
    let controller = Controller::for_stream(cloneset_stream, clonesets.clone())
        .watches_shared_stream(pods.subscribe().touched(), move |pod: Arc<Pod>| for_pods(&pod.metadata))
        .watches_shared_stream(pvcs.subscribe().touched(), move |pvc: Arc<PersistentVolumeClaim>| {
            for_pvcs(&pvc.metadata)
        })
        .watches_shared_stream(revisions.subscribe().touched(), move |revision: Arc<ControllerRevision>| {
            for_revisions(&revision.metadata)
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
