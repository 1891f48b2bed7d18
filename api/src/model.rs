//! The documents the API reads and writes. They are transport-neutral: REST serializes them as
//! JSON and documents them through their `ToSchema` derives; the gRPC transport maps them to its
//! messages.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::store::{Outcome, RolloutState, TaskState};

/// The kinds a rollout can drive. All four share the partitioned rolling update: a partition
/// keeps some pods (for a DaemonSet, nodes) at the previous revision until promoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum WorkloadKind {
    /// `apps.kruise.io/v1beta1` CloneSet.
    CloneSet,
    /// `apps.kruise.io/v1beta1` (Advanced) StatefulSet.
    StatefulSet,
    /// `apps.kruise.io/v1beta1` (Advanced) DaemonSet.
    DaemonSet,
    /// `apps.kruise.io/v1beta1` SidecarSet. It is cluster-scoped, so a namespace's requests
    /// cannot name it: its rollouts are made at `/v1/sidecarsets/{name}/rollouts`, and it shows
    /// here in the rollouts read back.
    SidecarSet,
}

impl WorkloadKind {
    /// The Kubernetes kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CloneSet => "CloneSet",
            Self::StatefulSet => "StatefulSet",
            Self::DaemonSet => "DaemonSet",
            Self::SidecarSet => "SidecarSet",
        }
    }

    /// Parses a kind name.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::CloneSet, Self::StatefulSet, Self::DaemonSet, Self::SidecarSet]
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }

    /// Whether objects of this kind live outside namespaces (SidecarSet).
    pub fn is_cluster_scoped(self) -> bool {
        self == Self::SidecarSet
    }
}

/// The workload a rollout changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadRef {
    /// Its kind.
    pub kind: WorkloadKind,
    /// Its name, in the namespace of the request path.
    #[schema(example = "web")]
    pub name: String,
}

/// An integer or a percentage string (`3`, `"20%"`), as Kubernetes' IntOrString.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum IntOrPercent {
    /// A count.
    Int(i32),
    /// A percentage such as `"20%"`.
    Percent(String),
}

impl IntOrPercent {
    /// As Kubernetes' IntOrString.
    pub fn to_k8s(&self) -> k8s_openapi::apimachinery::pkg::util::intstr::IntOrString {
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        match self {
            Self::Int(count) => IntOrString::Int(*count),
            Self::Percent(text) => IntOrString::String(text.clone()),
        }
    }
}

/// How pods move to the new revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum PodUpdatePolicy {
    /// Delete each pod and create a new one.
    ReCreate,
    /// Update in place when only images (or resources) change, else recreate.
    InPlaceIfPossible,
    /// Only in-place updates.
    InPlaceOnly,
}

impl PodUpdatePolicy {
    /// The CloneSet value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReCreate => "ReCreate",
            Self::InPlaceIfPossible => "InPlaceIfPossible",
            Self::InPlaceOnly => "InPlaceOnly",
        }
    }
}

/// The update strategy of a rollout. Omitted `partition` and `paused` mean 0 and false (the
/// rollout goes to every pod); omitted `podUpdatePolicy`, `maxUnavailable` and `maxSurge` keep
/// the workload's current settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutStrategy {
    /// How each pod is updated (a DaemonSet takes ReCreate, its Standard update, or
    /// InPlaceIfPossible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<PodUpdatePolicy>,
    /// Pods (count, or percentage of replicas; for a DaemonSet, of the nodes that should run a
    /// pod) kept at the previous revision; promote lowers it. A StatefulSet's partition is an
    /// ordinal, so a percentage is written as the count it means now (rounded up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrPercent>,
    /// Most pods unavailable during the update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrPercent>,
    /// Most pods above the desired count during the update (not for a StatefulSet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrPercent>,
    /// Start paused (resume to go on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

/// Resource requests and limits of one container (Kubernetes quantities: `"250m"`, `"1Gi"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContainerResources {
    /// Requests by resource name (`cpu`, `memory`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, String>,
    /// Limits by resource name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, String>,
}

/// A request to roll a workload to new images and/or resources.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({
    "workload": {"kind": "CloneSet", "name": "web"},
    "images": {"nginx": "nginx:1.27"},
    "strategy": {"podUpdatePolicy": "InPlaceIfPossible", "partition": "80%", "maxUnavailable": 1},
    "reason": "release 2024.06.1"
}))]
pub struct RolloutRequest {
    /// The workload to change.
    pub workload: WorkloadRef,
    /// New image per container name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub images: BTreeMap<String, String>,
    /// New requests/limits per container name (merged into the current ones).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, ContainerResources>,
    /// How the rollout proceeds.
    #[serde(default)]
    pub strategy: RolloutStrategy,
    /// Pull the new images on the workload's nodes ahead of the update (an ImagePullJob per image).
    #[serde(default)]
    pub pre_pull: bool,
    /// Why (kept in the audit and the rollout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// How a SidecarSet rollout proceeds. Omitted `partition` and `paused` mean 0 and false (every
/// matched pod is upgraded); an omitted `maxUnavailable` keeps the SidecarSet's. Sidecars are
/// always upgraded in place, so there is no pod update policy and no surge.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SidecarSetRolloutStrategy {
    /// Matched pods (count, or percentage of the pods the SidecarSet matches) kept at the
    /// previous sidecars; promote lowers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrPercent>,
    /// Most matched pods whose sidecars are being upgraded (unavailable) at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrPercent>,
    /// Start paused (resume to go on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

/// A request to upgrade a SidecarSet's sidecar containers to new images, in place in the pods
/// it injected (`POST /v1/sidecarsets/{name}/rollouts`; the name is in the path).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({
    "images": {"log-agent": "log-agent:2.1"},
    "strategy": {"partition": "50%", "maxUnavailable": 1},
    "reason": "log agent 2.1"
}))]
pub struct SidecarSetRolloutRequest {
    /// New image per sidecar container name (`spec.containers`; init containers are not
    /// upgraded in place, so they cannot be named).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub images: BTreeMap<String, String>,
    /// How the rollout proceeds.
    #[serde(default)]
    pub strategy: SidecarSetRolloutStrategy,
    /// Why (kept in the audit and the rollout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SidecarSetRolloutRequest {
    /// The rollout request of SidecarSet `name` this asks for: what the rollout keeps, and what
    /// every rollout (of any kind) reads back as `request`.
    pub fn into_rollout_request(self, name: &str) -> RolloutRequest {
        RolloutRequest {
            workload: WorkloadRef { kind: WorkloadKind::SidecarSet, name: name.into() },
            images: self.images,
            resources: BTreeMap::new(),
            strategy: RolloutStrategy {
                pod_update_policy: None,
                partition: self.strategy.partition,
                max_unavailable: self.strategy.max_unavailable,
                max_surge: None,
                paused: self.strategy.paused,
            },
            pre_pull: false,
            reason: self.reason,
        }
    }
}

/// Body of `promote` (optional).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromoteRequest {
    /// The next partition (pods kept at the previous revision); omitted: 0, every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrPercent>,
}

/// How far a rollout got, from the workload's status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// Desired pods (for a DaemonSet, the nodes that should run one).
    pub replicas: i32,
    /// Pods at the new revision.
    pub updated: i32,
    /// Pods at the new revision that are ready.
    pub updated_ready: i32,
    /// Ready pods (any revision).
    pub ready: i32,
    /// Pods the partition allows at the new revision.
    pub expected_updated: i32,
    /// Pods the partition keeps at the previous revision.
    pub partition: i32,
    /// Pods at the new revision updated in place (same pod, containers restarted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_updated: Option<i32>,
    /// Pods at the new revision that were created (recreated, or added by scaling) since the
    /// rollout started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recreated: Option<i32>,
    /// Whether the workload's update is paused.
    pub paused: bool,
    /// The revision all pods were at before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    /// The revision pods are moving to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    /// The workload generation.
    pub generation: i64,
    /// The generation its controller has acted on.
    pub observed_generation: i64,
}

/// A condition the workload reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadCondition {
    /// `Progressing`, `FailedUpdate`, …
    #[serde(rename = "type")]
    pub type_: String,
    /// True, False or Unknown.
    pub status: String,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Detail.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<DateTime<Utc>>,
}

/// One state change of a rollout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Transition {
    /// When.
    pub time: DateTime<Utc>,
    /// From (absent for the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<RolloutState>,
    /// To.
    pub to: RolloutState,
    /// Who caused it (a token name, or `watcher` when observed on the workload).
    pub actor: String,
    /// Why (`Requested`, `Observed`, `Paused`, `Resumed`, `Promoted`, `Aborted`, `Superseded`, …).
    pub reason: String,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A rollout and how it is doing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rollout {
    /// Its id.
    pub id: String,
    /// The namespace (absent for a SidecarSet, which is cluster-scoped).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The workload (or SidecarSet).
    pub workload: WorkloadRef,
    /// The state.
    pub state: RolloutState,
    /// Detail of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The revision the rollout moves pods to (`<workload>-<hash>`), once the controller named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The revision it replaced (what abort goes back to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_revision: Option<String>,
    /// Who asked for it.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    /// What was asked for.
    pub request: RolloutRequest,
    /// Progress (live while it runs; as it was at the end once it ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// The workload's conditions (live while it runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<WorkloadCondition>,
    /// Every state change, oldest first (single-rollout responses only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Transition>,
}

impl Rollout {
    /// Where the rollout is read and steered: `/v1/namespaces/{ns}/rollouts/{id}`, or
    /// `/v1/sidecarsets/{name}/rollouts/{id}` for a SidecarSet's.
    pub fn location(&self) -> String {
        if self.workload.kind.is_cluster_scoped() {
            format!("/v1/sidecarsets/{}/rollouts/{}", self.workload.name, self.id)
        } else {
            format!("/v1/namespaces/{}/rollouts/{}", self.namespace, self.id)
        }
    }
}

/// A page of rollouts.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutList {
    /// Newest first.
    pub items: Vec<Rollout>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Query parameters of the rollout listing.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RolloutListParams {
    /// Only rollouts of this workload (name).
    pub workload: Option<String>,
    /// Only rollouts in this state (`Pending`, `Progressing`, `Paused`, `Succeeded`, `Failed`, `Aborted`).
    pub state: Option<String>,
    /// Page size (1-500, default 50).
    pub limit: Option<String>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Query parameters of a SidecarSet's rollout listing.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SidecarSetRolloutListParams {
    /// Only rollouts in this state (`Pending`, `Progressing`, `Paused`, `Succeeded`, `Failed`, `Aborted`).
    pub state: Option<String>,
    /// Page size (1-500, default 50).
    pub limit: Option<String>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

impl From<SidecarSetRolloutListParams> for RolloutListParams {
    fn from(params: SidecarSetRolloutListParams) -> Self {
        Self { workload: None, state: params.state, limit: params.limit, cursor: params.cursor }
    }
}

/// One audit record: a request to the API and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// Its id.
    pub id: String,
    /// When the request arrived.
    pub time: DateTime<Utc>,
    /// The token name, or `anonymous`.
    pub actor: String,
    /// `rollout.create`, `rollout.get`, `rollout.pause`, `audit.list`, …
    pub action: String,
    /// The namespace (absent for requests on cluster-scoped SidecarSets and on no namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// What was acted on (`CloneSet/web`, `SidecarSet/logs`, `rollouts/<id>`, or the request
    /// path).
    pub target: String,
    /// The rollout concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_id: Option<String>,
    /// The image pull or recreate concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The request, sanitized (method, path, query, body; never headers or secrets).
    #[schema(value_type = Object)]
    pub request: Value,
    /// How it ended.
    pub outcome: Outcome,
    /// The HTTP status answered (the equivalent for gRPC requests).
    pub http_status: u16,
    /// The gRPC status code, for gRPC requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc_status: Option<i32>,
    /// The request's correlation id.
    pub correlation_id: String,
    /// Why it was refused or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the outcome was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
}

/// A page of audit records.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditList {
    /// Newest first.
    pub items: Vec<AuditRecord>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Query parameters of the audit listing.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditListParams {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only this actor (token name, or `anonymous`).
    pub actor: Option<String>,
    /// Only this action (`rollout.create`), or every action on a resource (`rollout`).
    pub action: Option<String>,
    /// Only this target (`CloneSet/web`).
    pub target: Option<String>,
    /// Only this outcome (`pending`, `accepted`, `rejected`, `denied`, `unauthenticated`, `failed`).
    pub outcome: Option<String>,
    /// At or after this time (RFC 3339).
    pub since: Option<String>,
    /// Before this time (RFC 3339).
    pub until: Option<String>,
    /// Page size (1-500, default 50).
    pub limit: Option<String>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Body of `/readyz` (and of `/healthz`).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok` or `unavailable`.
    pub status: String,
    /// Each check and its result (`ok` or the error).
    pub checks: BTreeMap<String, String>,
}

/// Nodes by name or by labels (not both). Empty: every node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeSelector {
    /// Node names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Node labels that must all match.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
}

/// A request to pull images on a set of nodes ahead of time: on the nodes `nodeSelector` picks,
/// or on the nodes running the pods of `workload` (exactly one of the two). One ImagePullJob is
/// created per image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({
    "images": ["nginx:1.27", "busybox:1.36"],
    "workload": {"kind": "CloneSet", "name": "web"},
    "parallelism": 2,
    "timeoutSeconds": 300
}))]
pub struct ImagePullRequest {
    /// Image references to pull (`repo:tag` or `repo@digest`).
    pub images: Vec<String>,
    /// Pull on these nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<NodeSelector>,
    /// Pull on the nodes of this workload's pods (its pod selector, as ImagePullJob's
    /// `podSelector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadRef>,
    /// Nodes pulling at the same time (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i32>,
    /// Seconds one pull attempt may take (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// Retries of a failed pull on a node (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
    /// Names of Secrets in the namespace with registry credentials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pull_secrets: Vec<String>,
    /// Why (kept in the audit and the pull).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// How one node is doing with one image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePullResult {
    /// The node.
    pub node: String,
    /// `Waiting` (not given the image yet), `Pulling`, `Succeeded` or `Failed`.
    pub phase: String,
    /// Pull progress in percent, when the node reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<i32>,
    /// Detail (the error of a failed pull).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One image of a pull: its ImagePullJob's counts and the per-node results.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullImage {
    /// The image.
    pub image: String,
    /// The ImagePullJob pulling it.
    pub job: String,
    /// Nodes that should pull it.
    pub desired: i32,
    /// Nodes pulling now.
    pub active: i32,
    /// Nodes that pulled it.
    pub succeeded: i32,
    /// Nodes that failed to pull it.
    pub failed: i32,
    /// Names of the nodes that failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_nodes: Vec<String>,
    /// Whether the job has finished.
    pub completed: bool,
    /// The job's status message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Per-node results, by node name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodePullResult>,
}

/// One state change of an image pull or a recreate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskTransition {
    /// When.
    pub time: DateTime<Utc>,
    /// From (absent for the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<TaskState>,
    /// To.
    pub to: TaskState,
    /// Who caused it (a token name, or `watcher` when observed in the cluster).
    pub actor: String,
    /// Why (`Requested`, `Started`, `Completed`, `CreateFailed`, …).
    pub reason: String,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An image pull and how it is doing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePull {
    /// Its id.
    pub id: String,
    /// The namespace.
    pub namespace: String,
    /// `Pending`, `Running`, `Succeeded` (every node pulled every image) or `Failed` (some node
    /// failed).
    pub state: TaskState,
    /// Detail of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Who asked for it.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    /// What was asked for.
    pub request: ImagePullRequest,
    /// Per image: counts and per-node results (live while it runs; as they were at the end
    /// once it ended).
    pub images: Vec<ImagePullImage>,
    /// Every state change, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<TaskTransition>,
}

/// Whether one failure stops the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum FailurePolicy {
    /// A failed container fails its pod's request, and (for a workload) no further pod is
    /// started.
    Fail,
    /// Go on with the other containers and pods.
    Ignore,
}

impl FailurePolicy {
    /// The ContainerRecreateRequest value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "Fail",
            Self::Ignore => "Ignore",
        }
    }
}

/// How containers are recreated (the ContainerRecreateRequest strategy).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecreateStrategy {
    /// Recreate one container at a time, in the pod's order, each started before the next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordered_recreate: Option<bool>,
    /// `Fail` (default) or `Ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
    /// Grace period of the stop (default: the pod's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    /// Seconds the pod is held not ready before its containers are stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unready_grace_period_seconds: Option<i64>,
    /// Seconds a recreated container must run to count as started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_started_seconds: Option<i32>,
    /// Stop a container even if its previous instance is already restarting or an earlier
    /// recreate of it is still in progress (the preStop hook still runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_recreate: Option<bool>,
}

/// A request to recreate (restart) containers: of one pod, or of every pod of a workload, at
/// most `maxUnavailable` pods at a time (exactly one of `pod` and `workload`). Each pod gets a
/// ContainerRecreateRequest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({
    "workload": {"kind": "CloneSet", "name": "web"},
    "containers": ["sidecar"],
    "strategy": {"orderedRecreate": false, "unreadyGracePeriodSeconds": 5},
    "maxUnavailable": "50%"
}))]
pub struct RecreateRequest {
    /// The pod (in the namespace of the path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// Every pod of this workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadRef>,
    /// Names of the containers to recreate.
    pub containers: Vec<String>,
    /// How.
    #[serde(default)]
    pub strategy: RecreateStrategy,
    /// Pods recreated at the same time, as a count or a percentage of the workload's pods
    /// (rounded down, at least 1; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrPercent>,
    /// Why (kept in the audit and the recreate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// How one container of one pod is doing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResult {
    /// The container.
    pub name: String,
    /// `Pending`, `Recreating`, `Succeeded` or `Failed`.
    pub phase: String,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// How one pod of a recreate is doing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodRecreate {
    /// The pod.
    pub pod: String,
    /// Its ContainerRecreateRequest, once created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// `Waiting` (its batch has not started), `Pending`, `Recreating`, `Succeeded`, `Failed`, or
    /// `Skipped` (the pod went away before its turn, or an earlier failure stopped the rest).
    pub phase: String,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Per container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<ContainerResult>,
}

/// A recreate and how it is doing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recreate {
    /// Its id.
    pub id: String,
    /// The namespace.
    pub namespace: String,
    /// `Pending`, `Running`, `Succeeded` (every pod's containers were recreated) or `Failed`.
    pub state: TaskState,
    /// Detail of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Who asked for it.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    /// What was asked for.
    pub request: RecreateRequest,
    /// Pods recreated at the same time (resolved from the request).
    pub max_unavailable: i32,
    /// Per pod, in the order they are recreated.
    pub pods: Vec<PodRecreate>,
    /// Every state change, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<TaskTransition>,
}

/// The kind of object a run of an AdvancedCronJob is (the template it has).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum JobKind {
    /// `batch/v1` Job (`jobTemplate`).
    Job,
    /// `apps.kruise.io/v1beta1` BroadcastJob (`broadcastJobTemplate`).
    BroadcastJob,
    /// `apps.kruise.io/v1beta1` ImageListPullJob (`imageListPullJobTemplate`).
    ImageListPullJob,
}

impl JobKind {
    /// The Kubernetes kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Job => "Job",
            Self::BroadcastJob => "BroadcastJob",
            Self::ImageListPullJob => "ImageListPullJob",
        }
    }

    /// The Kubernetes `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            Self::Job => "batch/v1",
            Self::BroadcastJob | Self::ImageListPullJob => "apps.kruise.io/v1beta1",
        }
    }
}

/// A request to run an AdvancedCronJob now, outside its schedule (as `kubectl create job
/// --from=cronjob/NAME` does for a CronJob). The body is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"reason": "re-run after the 02:00 run failed"}))]
pub struct CronJobRunRequest {
    /// Why (kept in the audit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A run of an AdvancedCronJob started by hand: the object created from its template.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobRun {
    /// The namespace.
    pub namespace: String,
    /// The AdvancedCronJob that owns the run.
    #[schema(example = "nightly")]
    pub advanced_cron_job: String,
    /// What the run is.
    pub kind: JobKind,
    /// Its `apiVersion`.
    #[schema(example = "apps.kruise.io/v1beta1")]
    pub api_version: String,
    /// Its name: `<advancedcronjob>-manual-<5 characters>`.
    #[schema(example = "nightly-manual-x7k2p")]
    pub name: String,
    /// Its uid.
    pub uid: String,
    /// When it was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    /// Its labels (the template's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Its annotations (the template's, and `cronjob.kubernetes.io/instantiate: manual`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// One container of a BroadcastJob's pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobContainerResult {
    /// The container.
    pub name: String,
    /// `waiting`, `running` or `terminated` (its current state; `unknown` before the kubelet
    /// reported it).
    pub state: String,
    /// Restarts of this container.
    pub restart_count: i32,
    /// Exit code, when terminated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why it waits or ended (`Completed`, `Error`, `OOMKilled`, `ImagePullBackOff`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the current (or last) run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    /// When it ended, when terminated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
}

/// The result of a BroadcastJob on one node: its pod there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobNodeResult {
    /// The node (absent while the pod is not bound to one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The pod.
    pub pod: String,
    /// The pod's phase: `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    pub phase: String,
    /// Restarts of its containers, summed.
    pub restart_count: i32,
    /// Why the pod is in its phase, when the kubelet said (`Evicted`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the kubelet started the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<DateTime<Utc>>,
    /// When the pod finished (its last container's end), once `Succeeded` or `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_time: Option<DateTime<Utc>>,
    /// Its containers (init containers first).
    pub containers: Vec<JobContainerResult>,
}

/// A BroadcastJob's status and its result on each node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobNodes {
    /// The namespace.
    pub namespace: String,
    /// The BroadcastJob.
    pub name: String,
    /// Its uid (its pods carry it in their owner reference).
    pub uid: String,
    /// The job's phase as its status says: `running`, `paused`, `completed` or `failed` (absent
    /// before the controller first reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Pods the job should run (one per eligible node).
    pub desired: i32,
    /// Pods running.
    pub active: i32,
    /// Pods that succeeded.
    pub succeeded: i32,
    /// Pods that failed.
    pub failed: i32,
    /// When the controller started the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<DateTime<Utc>>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<DateTime<Utc>>,
    /// The job's conditions (`Complete`, `Failed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<WorkloadCondition>,
    /// Per pod of the job, by node then pod name.
    pub nodes: Vec<JobNodeResult>,
}
