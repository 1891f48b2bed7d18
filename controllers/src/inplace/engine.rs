//! The I/O shell of the engine: reads pods and sends the writes that [`super::plan`] decides.
//! Every write is computed from a fresh read and carries its `resourceVersion`; a 409 means
//! someone else wrote in between, so the engine reads again and re-plans (a few times, with
//! back-off), as upstream's `RetryOnConflict`.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
use kube::{
    Api, Client,
    api::{Patch, PatchParams},
};
use serde_json::Value;
use tracing::{debug, info};

use super::{
    completion::{NotCompleted, update_state},
    conditions::start_update_conditions,
    error::InPlaceError,
    options::{InPlaceGates, Revision, RevisionAdapter, UpdateOptions},
    plan::{
        GraceDecision, PodPatchPlan, RefreshStep, conditions_patch, decide_refresh, needs_unready,
        plan_grace, plan_next_batch, plan_update, ready_condition_patch,
    },
    spec::{UpdateSpec, calculate_update_spec},
};

/// Field manager of the engine's writes.
pub const DEFAULT_FIELD_MANAGER: &str = "kruise-manager";

/// How long a refresh that waits for the kubelet or the node daemon asks to be called again,
/// in case the pod event that normally triggers it is missed.
pub const PENDING_RECHECK: Duration = Duration::from_secs(5);

/// How soon a refresh that found the pod changed under it asks to be called again.
pub const STALE_RETRY: Duration = Duration::from_secs(1);

/// Attempts of a read-plan-write cycle that keeps meeting 409 Conflict.
const CONFLICT_ATTEMPTS: u32 = 5;

/// What [`InPlaceEngine::update`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateResult {
    /// The pod is (being) updated in place. `false`: the revisions differ in a way that needs
    /// a recreate, and nothing was written.
    pub in_place: bool,
    /// Call again (refresh) after this long: the grace period before the spec changes.
    pub requeue_after: Option<Duration>,
    /// The pod's resourceVersion after the engine's last write (for expectations).
    pub resource_version: Option<String>,
    /// The containers changed by this call (empty during a grace period).
    pub batch: Vec<String>,
}

/// Where a pod's in-place update stands after [`InPlaceEngine::refresh`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefreshStatus {
    /// Nothing in flight and the `InPlaceUpdateReady` condition (if gated) already `True`.
    Idle,
    /// The grace period still runs.
    InGrace,
    /// The grace period ended and the spec's first batch was applied.
    GraceApplied(Vec<String>),
    /// The grace spec was dropped because the pod no longer targets its revision.
    GraceDropped,
    /// The kubelet or node daemon has not finished the applied batches.
    WaitingForContainers(NotCompleted),
    /// The previous batch is done but not all its containers are Ready yet.
    WaitingForBatchReady(String),
    /// The next launch-priority batch was applied.
    NextBatchStarted(Vec<String>),
    /// The update is complete and `InPlaceUpdateReady=True` was written.
    MarkedReady,
    /// Someone else changed the pod meanwhile; call again with the newer pod.
    Stale,
}

/// What [`InPlaceEngine::refresh`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefreshResult {
    /// Where the update stands.
    pub status: RefreshStatus,
    /// Call again after this long (`None`: nothing pending).
    pub requeue_after: Option<Duration>,
    /// The pod's resourceVersion after a write this refresh made, for the caller's
    /// expectations (so it does not act on an older cached copy).
    pub resource_version: Option<String>,
}

impl RefreshResult {
    fn new(status: RefreshStatus, requeue_after: Option<Duration>) -> Self {
        Self { status, requeue_after, resource_version: None }
    }
}

/// The in-place update engine of one workload controller: CloneSet, Advanced StatefulSet and
/// Advanced DaemonSet each own one, with their [`RevisionAdapter`].
#[derive(Clone)]
pub struct InPlaceEngine {
    client: Client,
    revisions: Arc<dyn RevisionAdapter>,
    gates: InPlaceGates,
    field_manager: String,
}

impl std::fmt::Debug for InPlaceEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InPlaceEngine")
            .field("gates", &self.gates)
            .field("field_manager", &self.field_manager)
            .finish()
    }
}

fn now() -> Time {
    Time(Timestamp::now())
}

fn pod_key(pod: &Pod) -> Result<(String, String), InPlaceError> {
    let name = pod.metadata.name.clone().ok_or(InPlaceError::InvalidPod("metadata.name"))?;
    let namespace = pod.metadata.namespace.clone().ok_or(InPlaceError::InvalidPod("metadata.namespace"))?;
    Ok((namespace, name))
}

/// Back-off before attempt `n` (from 1) of a conflicting write: 10 ms, 50 ms, 250 ms, ...
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(10 * 5u64.saturating_pow(attempt.saturating_sub(1)).min(125))
}

impl InPlaceEngine {
    /// An engine writing through `client`, marking revisions as `revisions` says, with the
    /// default gates.
    pub fn new(client: Client, revisions: Arc<dyn RevisionAdapter>) -> Self {
        Self {
            client,
            revisions,
            gates: InPlaceGates::default(),
            field_manager: DEFAULT_FIELD_MANAGER.into(),
        }
    }

    /// The same engine with other feature gates.
    pub fn with_gates(mut self, gates: InPlaceGates) -> Self {
        self.gates = gates;
        self
    }

    /// The same engine writing under another field manager.
    pub fn with_field_manager(mut self, field_manager: impl Into<String>) -> Self {
        self.field_manager = field_manager.into();
        self
    }

    /// The feature gates in force.
    pub fn gates(&self) -> &InPlaceGates {
        &self.gates
    }

    /// Whether a pod at `old` can move to `new` in place (pure; no API call).
    pub fn can_update_in_place(&self, old: &Revision, new: &Revision, options: &UpdateOptions) -> bool {
        calculate_update_spec(old, new, options, &self.gates).is_some()
    }

    fn pods(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }

    fn params(&self) -> PatchParams {
        PatchParams { field_manager: Some(self.field_manager.clone()), ..Default::default() }
    }

    /// Runs `attempt` on `known` (the caller's cached copy) and, after each conflict, on a
    /// fresh read of the pod, until it does not meet a conflict. Each write carries the copy's
    /// resourceVersion, so a stale copy costs one conflict and one read, while an up-to-date
    /// one (the common case) costs no read at all.
    async fn with_fresh_pod<T, F, Fut>(
        &self,
        namespace: &str,
        name: &str,
        known: Pod,
        mut attempt: F,
    ) -> Result<T, InPlaceError>
    where
        F: FnMut(Pod) -> Fut,
        Fut: Future<Output = Result<T, InPlaceError>>,
    {
        let pods = self.pods(namespace);
        let mut tries = 0;
        let mut known = Some(known);
        loop {
            tries += 1;
            let fresh = match known.take() {
                Some(pod) => pod,
                None => pods.get(name).await?,
            };
            match attempt(fresh).await {
                Err(error) if error.is_conflict() && tries < CONFLICT_ATTEMPTS => {
                    debug!(namespace, pod = name, tries, "conflict writing pod, reading it again");
                    tokio::time::sleep(backoff(tries)).await;
                }
                other => return other,
            }
        }
    }

    /// Sends a planned pod write: the resize first (so a crash in between never leaves a pod
    /// labelled with the new revision while its resources are old), then the pod patch, whose
    /// precondition moves to the resourceVersion the resize produced. Returns the new
    /// resourceVersion.
    async fn send(
        &self,
        pods: &Api<Pod>,
        name: &str,
        mut plan: PodPatchPlan,
    ) -> Result<Option<String>, InPlaceError> {
        if let Some(mut resize) = plan.resize.take() {
            if let (Some(rv), Value::Object(map)) =
                (plan.patch.pointer("/metadata/resourceVersion").cloned(), &mut resize)
            {
                map.insert("metadata".into(), serde_json::json!({"resourceVersion": rv}));
            }
            let resized = pods.patch_resize(name, &self.params(), &Patch::Strategic(&resize)).await?;
            if let (Some(rv), Some(Value::Object(meta))) =
                (resized.metadata.resource_version, plan.patch.get_mut("metadata"))
            {
                meta.insert("resourceVersion".into(), Value::String(rv));
            }
        }
        let patched = pods.patch(name, &self.params(), &Patch::Strategic(&plan.patch)).await?;
        Ok(patched.metadata.resource_version)
    }

    /// Updates `pod` from revision `old` to `new` in place (upstream `Update`):
    /// 1. computes the [`UpdateSpec`]; when there is none, returns `in_place: false` and writes
    ///    nothing (the workload recreates the pod);
    /// 2. marks the pod `InPlaceUpdateReady=False` (and `Ready=False`) when it must leave
    ///    endpoints first;
    /// 3. patches the pod: revision labels, the options' extra labels/annotations, the
    ///    in-place-update state, and the first launch-priority batch (images, template
    ///    metadata, resources through `pods/resize`), or with a grace period only the grace
    ///    annotation (applied later by [`Self::refresh`]; `requeue_after` says when).
    ///
    /// Idempotent: a pod that already carries the target revision and a state for it is left
    /// alone. An `Err` means the pod qualified for an in-place update but a write failed.
    pub async fn update(
        &self,
        pod: &Pod,
        old: &Revision,
        new: &Revision,
        options: &UpdateOptions,
    ) -> Result<UpdateResult, InPlaceError> {
        let Some(spec) = calculate_update_spec(old, new, options, &self.gates) else {
            return Ok(UpdateResult::default());
        };
        let (namespace, name) = pod_key(pod)?;
        let pods = self.pods(&namespace);
        let spec = &spec;

        // The pod as the next write should see it: the cached copy, or what the status write
        // below returned.
        let mut known = pod.clone();
        if needs_unready(pod, spec, &self.gates) {
            known = self
                .with_fresh_pod(&namespace, &name, known, |fresh| {
                    let pods = pods.clone();
                    let name = name.clone();
                    async move {
                        // A pod already moving to this revision keeps its condition (a stale
                        // cache must not turn a finished pod NotReady again).
                        if self.already_started(&fresh, spec) {
                            return Ok(fresh);
                        }
                        let conditions = start_update_conditions(&fresh, &now());
                        if conditions.is_empty() {
                            return Ok(fresh);
                        }
                        let patch = conditions_patch(&fresh, &conditions)?;
                        Ok(pods.patch_status(&name, &self.params(), &Patch::Strategic(&patch)).await?)
                    }
                })
                .await?;
        }

        let labels = self.revisions.revision_labels(&spec.revision);
        let result = self
            .with_fresh_pod(&namespace, &name, known, |fresh| {
                let pods = pods.clone();
                let name = name.clone();
                let labels = labels.clone();
                async move {
                    if self.already_started(&fresh, spec) {
                        debug!(namespace = %fresh.metadata.namespace.as_deref().unwrap_or_default(), pod = %name,
                            revision = %spec.revision, "in-place update already started");
                        return Ok(UpdateResult {
                            in_place: true,
                            requeue_after: None,
                            resource_version: fresh.metadata.resource_version.clone(),
                            batch: Vec::new(),
                        });
                    }
                    let plan = plan_update(&fresh, spec, &labels, options, &self.gates, &now())?;
                    let batch = plan.batch.clone();
                    let resource_version = self.send(&pods, &name, plan).await?;
                    Ok(UpdateResult { in_place: true, requeue_after: None, resource_version, batch })
                }
            })
            .await?;
        let requeue_after = (spec.grace_seconds > 0)
            .then(|| Duration::from_secs(u64::try_from(spec.grace_seconds).unwrap_or_default()));
        info!(%namespace, pod = %name, revision = %spec.revision, batch = ?result.batch,
            grace_seconds = spec.grace_seconds, "updating pod in place");
        Ok(UpdateResult { requeue_after, ..result })
    }

    /// Whether the pod already runs (or is moving to) the spec's revision in place.
    fn already_started(&self, pod: &Pod, spec: &UpdateSpec) -> bool {
        let empty = BTreeMap::new();
        self.revisions.is_at_revision(pod.metadata.labels.as_ref().unwrap_or(&empty), &spec.revision)
            && matches!(update_state(pod), Ok(Some(state)) if state.revision == spec.revision)
    }

    /// Moves a pod's in-place update forward (upstream `Refresh`); safe to call on every
    /// reconcile of every pod:
    /// - a due grace spec is applied (or dropped when the pod's revision changed meanwhile);
    /// - when the applied batches are done and their containers Ready, the next batch starts;
    /// - when everything is done, `InPlaceUpdateReady=True` is written (also for a new pod
    ///   that carries the gate without the condition).
    ///
    /// `requeue_after` is set while something is pending.
    pub async fn refresh(&self, pod: &Pod) -> Result<RefreshResult, InPlaceError> {
        let (namespace, name) = pod_key(pod)?;
        let pods = self.pods(&namespace);
        match decide_refresh(pod, &self.gates, &now())? {
            RefreshStep::Idle => Ok(RefreshResult::new(RefreshStatus::Idle, None)),
            RefreshStep::AwaitContainers(reason) => {
                debug!(%namespace, pod = %name, %reason, "in-place update not completed yet");
                Ok(RefreshResult::new(RefreshStatus::WaitingForContainers(reason), Some(PENDING_RECHECK)))
            }
            RefreshStep::AwaitBatchReady(reason) => {
                debug!(%namespace, pod = %name, %reason, "next in-place update batch waits");
                Ok(RefreshResult::new(RefreshStatus::WaitingForBatchReady(reason), Some(PENDING_RECHECK)))
            }
            RefreshStep::MarkReady(condition) => {
                let patch = ready_condition_patch(pod, &condition)?;
                match pods.patch_status(&name, &self.params(), &Patch::Strategic(&patch)).await {
                    Ok(written) => {
                        info!(%namespace, pod = %name, "in-place update completed, pod marked InPlaceUpdateReady");
                        Ok(RefreshResult {
                            resource_version: written.metadata.resource_version,
                            ..RefreshResult::new(RefreshStatus::MarkedReady, None)
                        })
                    }
                    Err(error) => {
                        let error = InPlaceError::from(error);
                        // A conflict here means the UID changed: another pod of that name.
                        if error.is_conflict() || error.is_not_found() {
                            Ok(RefreshResult::new(RefreshStatus::Stale, Some(STALE_RETRY)))
                        } else {
                            Err(error)
                        }
                    }
                }
            }
            RefreshStep::FinishGrace => {
                self.with_fresh_pod(&namespace, &name, pod.clone(), |fresh| {
                    let pods = pods.clone();
                    let name = name.clone();
                    async move {
                        match plan_grace(&fresh, self.revisions.as_ref(), &self.gates, &now())? {
                            GraceDecision::NotInGrace => Ok(RefreshResult::new(RefreshStatus::Stale, Some(STALE_RETRY))),
                            GraceDecision::Wait(left) => Ok(RefreshResult::new(RefreshStatus::InGrace, Some(left))),
                            GraceDecision::Drop(patch) => {
                                pods.patch(&name, &self.params(), &Patch::Strategic(&patch)).await?;
                                info!(pod = %name, "dropped in-place update grace spec of a revision the pod left");
                                Ok(RefreshResult::new(RefreshStatus::GraceDropped, None))
                            }
                            GraceDecision::Apply(plan) => {
                                let batch = plan.batch.clone();
                                self.send(&pods, &name, *plan).await?;
                                info!(pod = %name, ?batch, "grace period over, updating pod in place");
                                Ok(RefreshResult::new(RefreshStatus::GraceApplied(batch), Some(PENDING_RECHECK)))
                            }
                        }
                    }
                })
                .await
            }
            RefreshStep::StartNextBatch => {
                self.with_fresh_pod(&namespace, &name, pod.clone(), |fresh| {
                    let pods = pods.clone();
                    let name = name.clone();
                    async move {
                        // Decide again on the fresh pod: the batch may have started already.
                        if decide_refresh(&fresh, &self.gates, &now())? != RefreshStep::StartNextBatch {
                            return Ok(RefreshResult::new(RefreshStatus::Stale, Some(STALE_RETRY)));
                        }
                        let Some(plan) = plan_next_batch(&fresh, &self.gates, &now())? else {
                            return Ok(RefreshResult::new(RefreshStatus::Stale, Some(STALE_RETRY)));
                        };
                        let batch = plan.batch.clone();
                        self.send(&pods, &name, plan).await?;
                        info!(pod = %name, ?batch, "starting next in-place update batch");
                        Ok(RefreshResult::new(RefreshStatus::NextBatchStarted(batch), Some(PENDING_RECHECK)))
                    }
                })
                .await
            }
        }
    }
}
