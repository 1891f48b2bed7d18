//! Messages in and out: gRPC requests become the same typed inputs REST bodies parse into, and
//! the operations' documents become gRPC messages. A request that cannot be converted (an
//! unknown enum value, a missing message) is an [`ApiError::Validation`] naming the field with
//! REST's field names, so both transports report a problem the same way.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use prost_types::{Struct, Timestamp, value::Kind};
use serde_json::Value;

use super::proto;
use crate::{
    error::ApiError,
    model::{
        AuditListParams, AuditRecord, BroadcastJobNodes, ContainerResources, CronJobRun, CronJobRunRequest,
        FailurePolicy, ImagePull, ImagePullRequest, IntOrPercent, JobContainerResult, JobKind, JobNodeResult,
        NodeSelector, PodUpdatePolicy, PromoteRequest, Recreate, RecreateRequest, RecreateStrategy, Rollout,
        RolloutListParams, RolloutRequest, RolloutStrategy, SidecarSetRolloutRequest,
        SidecarSetRolloutStrategy, TaskTransition, WorkloadCondition, WorkloadKind, WorkloadRef,
    },
    operations::RolloutScope,
    store::{RolloutState, TaskState},
};

/// A time as a protobuf Timestamp.
pub fn timestamp(time: DateTime<Utc>) -> Timestamp {
    Timestamp { seconds: time.timestamp(), nanos: i32::try_from(time.timestamp_subsec_nanos()).unwrap_or(0) }
}

fn from_timestamp(field: &str, time: &Timestamp) -> Result<String, ApiError> {
    let nanos =
        u32::try_from(time.nanos).map_err(|_| ApiError::field(field, "nanos must not be negative"))?;
    DateTime::<Utc>::from_timestamp(time.seconds, nanos)
        .map(|t| t.to_rfc3339())
        .ok_or_else(|| ApiError::field(field, "out of range"))
}

fn workload_kind(field: &str, value: i32) -> Result<WorkloadKind, ApiError> {
    match proto::WorkloadKind::try_from(value) {
        Ok(proto::WorkloadKind::CloneSet) => Ok(WorkloadKind::CloneSet),
        Ok(proto::WorkloadKind::StatefulSet) => Ok(WorkloadKind::StatefulSet),
        Ok(proto::WorkloadKind::DaemonSet) => Ok(WorkloadKind::DaemonSet),
        Ok(proto::WorkloadKind::SidecarSet) => Ok(WorkloadKind::SidecarSet),
        Ok(proto::WorkloadKind::Unspecified) => Err(ApiError::field(field, "the workload kind is required")),
        Err(_) => Err(ApiError::field(field, format!("{value} is not a workload kind"))),
    }
}

fn workload_ref(reference: &proto::WorkloadRef) -> Result<WorkloadRef, ApiError> {
    Ok(WorkloadRef { kind: workload_kind("workload.kind", reference.kind)?, name: reference.name.clone() })
}

fn int_or_percent(value: Option<&proto::IntOrPercent>) -> Option<IntOrPercent> {
    match value?.value.as_ref()? {
        proto::int_or_percent::Value::Count(count) => Some(IntOrPercent::Int(*count)),
        proto::int_or_percent::Value::Percent(text) => Some(IntOrPercent::Percent(text.clone())),
    }
}

fn to_int_or_percent(value: Option<&IntOrPercent>) -> Option<proto::IntOrPercent> {
    value.map(|value| proto::IntOrPercent {
        value: Some(match value {
            IntOrPercent::Int(count) => proto::int_or_percent::Value::Count(*count),
            IntOrPercent::Percent(text) => proto::int_or_percent::Value::Percent(text.clone()),
        }),
    })
}

/// The typed rollout request of a gRPC message.
pub fn rollout_request(spec: Option<proto::RolloutSpec>) -> Result<RolloutRequest, ApiError> {
    let spec = spec.ok_or_else(|| ApiError::field("rollout", "the rollout is required"))?;
    let workload =
        spec.workload.as_ref().ok_or_else(|| ApiError::field("workload", "missing field `workload`"))?;
    let strategy = spec.strategy.unwrap_or_default();
    let pod_update_policy = match proto::PodUpdatePolicy::try_from(strategy.pod_update_policy) {
        Ok(proto::PodUpdatePolicy::Unspecified) => None,
        Ok(proto::PodUpdatePolicy::ReCreate) => Some(PodUpdatePolicy::ReCreate),
        Ok(proto::PodUpdatePolicy::InPlaceIfPossible) => Some(PodUpdatePolicy::InPlaceIfPossible),
        Ok(proto::PodUpdatePolicy::InPlaceOnly) => Some(PodUpdatePolicy::InPlaceOnly),
        Err(_) => {
            return Err(ApiError::field(
                "strategy.podUpdatePolicy",
                format!("{} is not a pod update policy", strategy.pod_update_policy),
            ));
        }
    };
    Ok(RolloutRequest {
        workload: workload_ref(workload)?,
        images: spec.images,
        resources: spec
            .resources
            .into_iter()
            .map(|(name, r)| (name, ContainerResources { requests: r.requests, limits: r.limits }))
            .collect(),
        strategy: RolloutStrategy {
            pod_update_policy,
            partition: int_or_percent(strategy.partition.as_ref()),
            max_unavailable: int_or_percent(strategy.max_unavailable.as_ref()),
            max_surge: int_or_percent(strategy.max_surge.as_ref()),
            paused: strategy.paused,
        },
        pre_pull: spec.pre_pull,
        reason: spec.reason,
    })
}

/// The typed SidecarSet rollout request of a gRPC message (the name travels apart, as in the
/// REST path).
pub fn sidecarset_rollout_request(
    message: &proto::CreateSidecarSetRolloutRequest,
) -> SidecarSetRolloutRequest {
    let strategy = message.strategy.clone().unwrap_or_default();
    SidecarSetRolloutRequest {
        images: message.images.clone(),
        strategy: SidecarSetRolloutStrategy {
            partition: int_or_percent(strategy.partition.as_ref()),
            max_unavailable: int_or_percent(strategy.max_unavailable.as_ref()),
            paused: strategy.paused,
        },
        reason: message.reason.clone(),
    }
}

/// The rollouts a request addresses: a namespace's, or with `sidecar_set` a SidecarSet's
/// (cluster-scoped, so `namespace` must then be empty; an ambiguous address names no rollout).
pub fn rollout_scope<'a>(namespace: &'a str, sidecar_set: &'a str) -> Result<RolloutScope<'a>, ApiError> {
    match (namespace.is_empty(), sidecar_set.is_empty()) {
        (_, true) => Ok(RolloutScope::Namespace(namespace)),
        (true, false) => Ok(RolloutScope::SidecarSet(sidecar_set)),
        (false, false) => Err(ApiError::field(
            "namespace",
            "a SidecarSet is cluster-scoped: leave namespace empty when sidecar_set is set",
        )),
    }
}

/// The promote body of a gRPC message.
pub fn promote_request(partition: Option<&proto::IntOrPercent>) -> PromoteRequest {
    PromoteRequest { partition: int_or_percent(partition) }
}

fn rollout_state(state: RolloutState) -> proto::RolloutState {
    match state {
        RolloutState::Pending => proto::RolloutState::Pending,
        RolloutState::Progressing => proto::RolloutState::Progressing,
        RolloutState::Paused => proto::RolloutState::Paused,
        RolloutState::Succeeded => proto::RolloutState::Succeeded,
        RolloutState::Failed => proto::RolloutState::Failed,
        RolloutState::Aborted => proto::RolloutState::Aborted,
    }
}

fn to_workload_ref(reference: &WorkloadRef) -> proto::WorkloadRef {
    let kind = match reference.kind {
        WorkloadKind::CloneSet => proto::WorkloadKind::CloneSet,
        WorkloadKind::StatefulSet => proto::WorkloadKind::StatefulSet,
        WorkloadKind::DaemonSet => proto::WorkloadKind::DaemonSet,
        WorkloadKind::SidecarSet => proto::WorkloadKind::SidecarSet,
    };
    proto::WorkloadRef { kind: kind as i32, name: reference.name.clone() }
}

fn to_rollout_spec(request: &RolloutRequest) -> proto::RolloutSpec {
    let policy = match request.strategy.pod_update_policy {
        None => proto::PodUpdatePolicy::Unspecified,
        Some(PodUpdatePolicy::ReCreate) => proto::PodUpdatePolicy::ReCreate,
        Some(PodUpdatePolicy::InPlaceIfPossible) => proto::PodUpdatePolicy::InPlaceIfPossible,
        Some(PodUpdatePolicy::InPlaceOnly) => proto::PodUpdatePolicy::InPlaceOnly,
    };
    proto::RolloutSpec {
        workload: Some(to_workload_ref(&request.workload)),
        images: request.images.clone(),
        resources: request
            .resources
            .iter()
            .map(|(name, r)| {
                (
                    name.clone(),
                    proto::ContainerResources { requests: r.requests.clone(), limits: r.limits.clone() },
                )
            })
            .collect(),
        strategy: Some(proto::RolloutStrategy {
            pod_update_policy: policy as i32,
            partition: to_int_or_percent(request.strategy.partition.as_ref()),
            max_unavailable: to_int_or_percent(request.strategy.max_unavailable.as_ref()),
            max_surge: to_int_or_percent(request.strategy.max_surge.as_ref()),
            paused: request.strategy.paused,
        }),
        pre_pull: request.pre_pull,
        reason: request.reason.clone(),
    }
}

/// A rollout as a gRPC message.
pub fn rollout(rollout: &Rollout) -> proto::Rollout {
    proto::Rollout {
        id: rollout.id.clone(),
        namespace: rollout.namespace.clone(),
        workload: Some(to_workload_ref(&rollout.workload)),
        state: rollout_state(rollout.state) as i32,
        message: rollout.message.clone(),
        revision: rollout.revision.clone(),
        previous_revision: rollout.previous_revision.clone(),
        created_by: rollout.created_by.clone(),
        created_at: Some(timestamp(rollout.created_at)),
        updated_at: Some(timestamp(rollout.updated_at)),
        finished_at: rollout.finished_at.map(timestamp),
        request: Some(to_rollout_spec(&rollout.request)),
        progress: rollout.progress.as_ref().map(|p| proto::Progress {
            replicas: p.replicas,
            updated: p.updated,
            updated_ready: p.updated_ready,
            ready: p.ready,
            expected_updated: p.expected_updated,
            partition: p.partition,
            in_place_updated: p.in_place_updated,
            recreated: p.recreated,
            paused: p.paused,
            current_revision: p.current_revision.clone(),
            update_revision: p.update_revision.clone(),
            generation: p.generation,
            observed_generation: p.observed_generation,
        }),
        conditions: rollout.conditions.iter().map(workload_condition).collect(),
        history: rollout
            .history
            .iter()
            .map(|t| proto::RolloutTransition {
                time: Some(timestamp(t.time)),
                from: t.from.map(|s| rollout_state(s) as i32).unwrap_or_default(),
                to: rollout_state(t.to) as i32,
                actor: t.actor.clone(),
                reason: t.reason.clone(),
                message: t.message.clone(),
            })
            .collect(),
    }
}

/// The listing parameters of a gRPC request.
pub fn rollout_list_params(request: &proto::ListRolloutsRequest) -> Result<RolloutListParams, ApiError> {
    let state = match proto::RolloutState::try_from(request.state) {
        Ok(proto::RolloutState::Unspecified) => None,
        Ok(state) => Some(
            match state {
                proto::RolloutState::Pending => RolloutState::Pending,
                proto::RolloutState::Progressing => RolloutState::Progressing,
                proto::RolloutState::Paused => RolloutState::Paused,
                proto::RolloutState::Succeeded => RolloutState::Succeeded,
                proto::RolloutState::Failed => RolloutState::Failed,
                proto::RolloutState::Aborted | proto::RolloutState::Unspecified => RolloutState::Aborted,
            }
            .as_str()
            .to_string(),
        ),
        Err(_) => return Err(ApiError::field("state", format!("{} is not a rollout state", request.state))),
    };
    Ok(RolloutListParams {
        workload: request.workload.clone(),
        state,
        limit: (request.limit != 0).then(|| request.limit.to_string()),
        cursor: request.cursor.clone(),
    })
}

fn task_state(state: TaskState) -> proto::TaskState {
    match state {
        TaskState::Pending => proto::TaskState::Pending,
        TaskState::Running => proto::TaskState::Running,
        TaskState::Succeeded => proto::TaskState::Succeeded,
        TaskState::Failed => proto::TaskState::Failed,
    }
}

fn task_history(history: &[TaskTransition]) -> Vec<proto::TaskTransition> {
    history
        .iter()
        .map(|t| proto::TaskTransition {
            time: Some(timestamp(t.time)),
            from: t.from.map(|s| task_state(s) as i32).unwrap_or_default(),
            to: task_state(t.to) as i32,
            actor: t.actor.clone(),
            reason: t.reason.clone(),
            message: t.message.clone().unwrap_or_default(),
        })
        .collect()
}

/// The typed image pull request of a gRPC message.
pub fn image_pull_request(spec: Option<proto::ImagePullSpec>) -> Result<ImagePullRequest, ApiError> {
    let spec = spec.ok_or_else(|| ApiError::field("imagePull", "the image pull is required"))?;
    Ok(ImagePullRequest {
        images: spec.images,
        node_selector: spec
            .node_selector
            .map(|selector| NodeSelector { names: selector.names, match_labels: selector.match_labels }),
        workload: spec.workload.as_ref().map(workload_ref).transpose()?,
        parallelism: spec.parallelism,
        timeout_seconds: spec.timeout_seconds,
        backoff_limit: spec.backoff_limit,
        pull_secrets: spec.pull_secrets,
        reason: spec.reason,
    })
}

fn to_image_pull_spec(request: &ImagePullRequest) -> proto::ImagePullSpec {
    proto::ImagePullSpec {
        images: request.images.clone(),
        node_selector: request.node_selector.as_ref().map(|selector| proto::NodeSelector {
            names: selector.names.clone(),
            match_labels: selector.match_labels.clone(),
        }),
        workload: request.workload.as_ref().map(to_workload_ref),
        parallelism: request.parallelism,
        timeout_seconds: request.timeout_seconds,
        backoff_limit: request.backoff_limit,
        pull_secrets: request.pull_secrets.clone(),
        reason: request.reason.clone(),
    }
}

/// An image pull as a gRPC message.
pub fn image_pull(pull: &ImagePull) -> proto::ImagePull {
    proto::ImagePull {
        id: pull.id.clone(),
        namespace: pull.namespace.clone(),
        state: task_state(pull.state) as i32,
        message: pull.message.clone(),
        created_by: pull.created_by.clone(),
        created_at: Some(timestamp(pull.created_at)),
        updated_at: Some(timestamp(pull.updated_at)),
        finished_at: pull.finished_at.map(timestamp),
        request: Some(to_image_pull_spec(&pull.request)),
        images: pull
            .images
            .iter()
            .map(|image| proto::ImagePullImage {
                image: image.image.clone(),
                job: image.job.clone(),
                desired: image.desired,
                active: image.active,
                succeeded: image.succeeded,
                failed: image.failed,
                failed_nodes: image.failed_nodes.clone(),
                completed: image.completed,
                message: image.message.clone(),
                nodes: image
                    .nodes
                    .iter()
                    .map(|node| proto::NodePullResult {
                        node: node.node.clone(),
                        phase: node.phase.clone(),
                        progress: node.progress,
                        message: node.message.clone(),
                    })
                    .collect(),
            })
            .collect(),
        history: task_history(&pull.history),
    }
}

/// The typed recreate request of a gRPC message.
pub fn recreate_request(spec: Option<proto::RecreateSpec>) -> Result<RecreateRequest, ApiError> {
    let spec = spec.ok_or_else(|| ApiError::field("recreate", "the recreate is required"))?;
    let strategy = spec.strategy.unwrap_or_default();
    let failure_policy = match proto::FailurePolicy::try_from(strategy.failure_policy) {
        Ok(proto::FailurePolicy::Unspecified) => None,
        Ok(proto::FailurePolicy::Fail) => Some(FailurePolicy::Fail),
        Ok(proto::FailurePolicy::Ignore) => Some(FailurePolicy::Ignore),
        Err(_) => {
            return Err(ApiError::field(
                "strategy.failurePolicy",
                format!("{} is not a failure policy", strategy.failure_policy),
            ));
        }
    };
    Ok(RecreateRequest {
        pod: spec.pod,
        workload: spec.workload.as_ref().map(workload_ref).transpose()?,
        containers: spec.containers,
        strategy: RecreateStrategy {
            ordered_recreate: strategy.ordered_recreate,
            failure_policy,
            termination_grace_period_seconds: strategy.termination_grace_period_seconds,
            unready_grace_period_seconds: strategy.unready_grace_period_seconds,
            min_started_seconds: strategy.min_started_seconds,
            force_recreate: strategy.force_recreate,
        },
        max_unavailable: int_or_percent(spec.max_unavailable.as_ref()),
        reason: spec.reason,
    })
}

fn to_recreate_spec(request: &RecreateRequest) -> proto::RecreateSpec {
    let strategy = &request.strategy;
    let failure_policy = match strategy.failure_policy {
        None => proto::FailurePolicy::Unspecified,
        Some(FailurePolicy::Fail) => proto::FailurePolicy::Fail,
        Some(FailurePolicy::Ignore) => proto::FailurePolicy::Ignore,
    };
    proto::RecreateSpec {
        pod: request.pod.clone(),
        workload: request.workload.as_ref().map(to_workload_ref),
        containers: request.containers.clone(),
        strategy: Some(proto::RecreateStrategy {
            ordered_recreate: strategy.ordered_recreate,
            failure_policy: failure_policy as i32,
            termination_grace_period_seconds: strategy.termination_grace_period_seconds,
            unready_grace_period_seconds: strategy.unready_grace_period_seconds,
            min_started_seconds: strategy.min_started_seconds,
            force_recreate: strategy.force_recreate,
        }),
        max_unavailable: to_int_or_percent(request.max_unavailable.as_ref()),
        reason: request.reason.clone(),
    }
}

/// A recreate as a gRPC message.
pub fn recreate(recreate: &Recreate) -> proto::Recreate {
    proto::Recreate {
        id: recreate.id.clone(),
        namespace: recreate.namespace.clone(),
        state: task_state(recreate.state) as i32,
        message: recreate.message.clone(),
        created_by: recreate.created_by.clone(),
        created_at: Some(timestamp(recreate.created_at)),
        updated_at: Some(timestamp(recreate.updated_at)),
        finished_at: recreate.finished_at.map(timestamp),
        request: Some(to_recreate_spec(&recreate.request)),
        max_unavailable: recreate.max_unavailable,
        pods: recreate
            .pods
            .iter()
            .map(|pod| proto::PodRecreate {
                pod: pod.pod.clone(),
                request: pod.request.clone(),
                phase: pod.phase.clone(),
                message: pod.message.clone(),
                containers: pod
                    .containers
                    .iter()
                    .map(|c| proto::ContainerResult {
                        name: c.name.clone(),
                        phase: c.phase.clone(),
                        message: c.message.clone(),
                    })
                    .collect(),
            })
            .collect(),
        history: task_history(&recreate.history),
    }
}

/// The audit query parameters of a gRPC request.
pub fn audit_list_params(request: &proto::ListAuditRequest) -> Result<AuditListParams, ApiError> {
    Ok(AuditListParams {
        namespace: request.namespace.clone(),
        actor: request.actor.clone(),
        action: request.action.clone(),
        target: request.target.clone(),
        outcome: request.outcome.clone(),
        since: request.since.as_ref().map(|t| from_timestamp("since", t)).transpose()?,
        until: request.until.as_ref().map(|t| from_timestamp("until", t)).transpose()?,
        limit: (request.limit != 0).then(|| request.limit.to_string()),
        cursor: request.cursor.clone(),
    })
}

/// An audit record as a gRPC message.
pub fn audit_record(record: &AuditRecord) -> proto::AuditRecord {
    proto::AuditRecord {
        id: record.id.clone(),
        time: Some(timestamp(record.time)),
        actor: record.actor.clone(),
        action: record.action.clone(),
        namespace: record.namespace.clone(),
        target: record.target.clone(),
        rollout_id: record.rollout_id.clone(),
        task_id: record.task_id.clone(),
        request: match to_value(&record.request).kind {
            Some(Kind::StructValue(fields)) => Some(fields),
            _ => Some(Struct::default()),
        },
        outcome: record.outcome.as_str().to_string(),
        http_status: u32::from(record.http_status),
        grpc_status: record.grpc_status,
        correlation_id: record.correlation_id.clone(),
        message: record.message.clone(),
        finished_at: record.finished_at.map(timestamp),
    }
}

/// A workload's (or a job's) condition as a gRPC message.
fn workload_condition(c: &WorkloadCondition) -> proto::WorkloadCondition {
    proto::WorkloadCondition {
        r#type: c.type_.clone(),
        status: c.status.clone(),
        reason: c.reason.clone(),
        message: c.message.clone(),
        last_transition_time: c.last_transition_time.map(timestamp),
    }
}

/// The body of a manual run from a gRPC request (the same as REST's).
pub fn cron_job_run_request(request: &proto::RunAdvancedCronJobRequest) -> CronJobRunRequest {
    CronJobRunRequest { reason: request.reason.clone() }
}

fn job_kind(kind: JobKind) -> proto::JobKind {
    match kind {
        JobKind::Job => proto::JobKind::Job,
        JobKind::BroadcastJob => proto::JobKind::BroadcastJob,
        JobKind::ImageListPullJob => proto::JobKind::ImageListPullJob,
    }
}

/// A manual run as a gRPC message.
pub fn cron_job_run(run: &CronJobRun) -> proto::CronJobRun {
    proto::CronJobRun {
        namespace: run.namespace.clone(),
        advanced_cron_job: run.advanced_cron_job.clone(),
        kind: job_kind(run.kind) as i32,
        api_version: run.api_version.clone(),
        name: run.name.clone(),
        uid: run.uid.clone(),
        created_at: run.created_at.map(timestamp),
        labels: run.labels.clone(),
        annotations: run.annotations.clone(),
    }
}

fn job_container_result(c: &JobContainerResult) -> proto::JobContainerResult {
    proto::JobContainerResult {
        name: c.name.clone(),
        state: c.state.clone(),
        restart_count: c.restart_count,
        exit_code: c.exit_code,
        reason: c.reason.clone(),
        message: c.message.clone(),
        started_at: c.started_at.map(timestamp),
        finished_at: c.finished_at.map(timestamp),
    }
}

fn job_node_result(n: &JobNodeResult) -> proto::JobNodeResult {
    proto::JobNodeResult {
        node: n.node.clone(),
        pod: n.pod.clone(),
        phase: n.phase.clone(),
        restart_count: n.restart_count,
        reason: n.reason.clone(),
        message: n.message.clone(),
        start_time: n.start_time.map(timestamp),
        finish_time: n.finish_time.map(timestamp),
        containers: n.containers.iter().map(job_container_result).collect(),
    }
}

/// A BroadcastJob's per-node results as a gRPC message.
pub fn broadcastjob_nodes(job: &BroadcastJobNodes) -> proto::BroadcastJobNodes {
    proto::BroadcastJobNodes {
        namespace: job.namespace.clone(),
        name: job.name.clone(),
        uid: job.uid.clone(),
        phase: job.phase.clone(),
        desired: job.desired,
        active: job.active,
        succeeded: job.succeeded,
        failed: job.failed,
        start_time: job.start_time.map(timestamp),
        completion_time: job.completion_time.map(timestamp),
        conditions: job.conditions.iter().map(workload_condition).collect(),
        nodes: job.nodes.iter().map(job_node_result).collect(),
    }
}

/// JSON as a protobuf Value (numbers become doubles, as protobuf's JSON mapping does).
pub fn to_value(value: &Value) -> prost_types::Value {
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(items) => {
            Kind::ListValue(prost_types::ListValue { values: items.iter().map(to_value).collect() })
        }
        Value::Object(map) => Kind::StructValue(Struct {
            fields: map.iter().map(|(k, v)| (k.clone(), to_value(v))).collect::<BTreeMap<_, _>>(),
        }),
    };
    prost_types::Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    #[test]
    fn requests_convert_and_name_bad_fields() {
        let spec = proto::RolloutSpec {
            workload: Some(proto::WorkloadRef {
                kind: proto::WorkloadKind::CloneSet as i32,
                name: "web".into(),
            }),
            images: BTreeMap::from([("nginx".into(), "nginx:1.27".into())]),
            strategy: Some(proto::RolloutStrategy {
                partition: Some(proto::IntOrPercent {
                    value: Some(proto::int_or_percent::Value::Percent("20%".into())),
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let request = rollout_request(Some(spec.clone())).unwrap();
        assert_eq!(request.workload.name, "web");
        assert_eq!(request.strategy.partition, Some(IntOrPercent::Percent("20%".into())));
        assert_eq!(to_rollout_spec(&request).images, spec.images);

        let unspecified = proto::RolloutSpec {
            workload: Some(proto::WorkloadRef { kind: 0, name: "web".into() }),
            ..Default::default()
        };
        let Err(ApiError::Validation(errors)) = rollout_request(Some(unspecified)) else { panic!() };
        assert_eq!(errors[0].field, "workload.kind");
        let Err(ApiError::Validation(errors)) = rollout_request(Some(proto::RolloutSpec::default())) else {
            panic!()
        };
        assert_eq!(errors[0].field, "workload");
        let Err(ApiError::Validation(errors)) = recreate_request(Some(proto::RecreateSpec {
            strategy: Some(proto::RecreateStrategy { failure_policy: 7, ..Default::default() }),
            ..Default::default()
        })) else {
            panic!()
        };
        assert_eq!(errors[0].field, "strategy.failurePolicy");
    }

    #[test]
    fn sidecarset_requests_and_scopes_convert() {
        let message = proto::CreateSidecarSetRolloutRequest {
            name: "logs".into(),
            images: BTreeMap::from([("agent".into(), "log-agent:2".into())]),
            strategy: Some(proto::SidecarSetRolloutStrategy {
                partition: Some(proto::IntOrPercent { value: Some(proto::int_or_percent::Value::Count(1)) }),
                paused: Some(true),
                ..Default::default()
            }),
            reason: Some("agent 2".into()),
            idempotency_key: None,
        };
        let request = sidecarset_rollout_request(&message).into_rollout_request(&message.name);
        assert_eq!(request.workload, WorkloadRef { kind: WorkloadKind::SidecarSet, name: "logs".into() });
        assert_eq!(request.strategy.partition, Some(IntOrPercent::Int(1)));
        assert_eq!(request.strategy.paused, Some(true));
        let spec = to_rollout_spec(&request);
        assert_eq!(spec.workload.unwrap().kind, proto::WorkloadKind::SidecarSet as i32);

        assert_eq!(rollout_scope("default", "").unwrap(), RolloutScope::Namespace("default"));
        assert_eq!(rollout_scope("", "logs").unwrap(), RolloutScope::SidecarSet("logs"));
        let Err(ApiError::Validation(errors)) = rollout_scope("default", "logs") else { panic!() };
        assert_eq!(errors[0].field, "namespace");
    }

    #[test]
    fn json_becomes_a_struct() {
        let value = to_value(&json!({"a": [1, "x", null, true], "b": {"c": 2.5}}));
        let Some(Kind::StructValue(fields)) = value.kind else { panic!() };
        let Some(Kind::ListValue(list)) = &fields.fields["a"].kind else { panic!() };
        assert_eq!(list.values.len(), 4);
        assert_eq!(
            fields.fields["b"].kind,
            Some(Kind::StructValue(Struct {
                fields: BTreeMap::from([(
                    "c".into(),
                    prost_types::Value { kind: Some(Kind::NumberValue(2.5)) }
                )])
            }))
        );
    }
}
