//! The documents the API reads and writes. They are transport-neutral: REST serializes them as
//! JSON and documents them through their `ToSchema` derives; the gRPC transport maps them to its
//! messages.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::store::{Outcome, RolloutState};

/// The workload kinds a rollout can name. Only CloneSet is served today; the Advanced
/// StatefulSet and Advanced DaemonSet controllers come later and are refused with 422 until then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum WorkloadKind {
    /// `apps.kruise.io/v1beta1` CloneSet.
    CloneSet,
    /// `apps.kruise.io/v1beta1` (Advanced) StatefulSet.
    StatefulSet,
    /// `apps.kruise.io/v1alpha1` (Advanced) DaemonSet.
    DaemonSet,
}

impl WorkloadKind {
    /// The Kubernetes kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CloneSet => "CloneSet",
            Self::StatefulSet => "StatefulSet",
            Self::DaemonSet => "DaemonSet",
        }
    }

    /// Parses a kind name.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::CloneSet, Self::StatefulSet, Self::DaemonSet].into_iter().find(|kind| kind.as_str() == text)
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
    /// How each pod is updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<PodUpdatePolicy>,
    /// Pods (count, or percentage of replicas) kept at the previous revision; promote lowers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrPercent>,
    /// Most pods unavailable during the update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrPercent>,
    /// Most pods above the desired count during the update.
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
    /// Desired pods.
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
    /// The namespace.
    pub namespace: String,
    /// The workload.
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
    /// The namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// What was acted on (`CloneSet/web`, `rollouts/<id>`, or the request path).
    pub target: String,
    /// The rollout concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_id: Option<String>,
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
