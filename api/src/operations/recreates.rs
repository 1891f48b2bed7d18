//! Container recreates: restart some containers of one pod, or of every pod of a workload, each
//! pod through a ContainerRecreateRequest (CRR) that the node daemon carries out.
//!
//! For a workload the pods are taken when the request arrives (the active pods it owns, by
//! name) and recreated at most `maxUnavailable` at a time: a CRR is created for the next pod
//! whenever fewer than `maxUnavailable` are in flight. The plan (each pod, its CRR's name,
//! whether it was created, and its final result) lives in the store, and the watcher advances
//! it from the CRRs' status, so a recreate goes on across API restarts. CRR names are
//! deterministic, so a replica or a retry never creates one twice. With failure policy `Fail`
//! (the default) a failed pod stops the rest (they are reported `Skipped`); with `Ignore` the
//! recreate goes on.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::Pod,
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use kruise_crds::apps::v1beta1::{
    CONTAINER_RECREATE_REQUEST_ACTIVE_KEY, CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY,
    CONTAINER_RECREATE_REQUEST_POD_UID_KEY, ContainerRecreateRequest, ContainerRecreateRequestContainer,
    ContainerRecreateRequestFailurePolicyType, ContainerRecreateRequestPhase, ContainerRecreateRequestSpec,
    ContainerRecreateRequestStrategy,
};
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{
    Input, Operations, RequestContext, WATCHER_ACTOR, check_namespace,
    rollouts::canonical_json,
    sanitize,
    tasks::{Change, Recorded, check_idempotency_key, check_workload_ref, pod_is_active},
};
use crate::{
    auth::Action,
    error::{ApiError, FieldError},
    model::{ContainerResult, FailurePolicy, IntOrPercent, PodRecreate, Recreate, RecreateRequest},
    store::{NewTask, TaskKind, TaskRow, TaskState},
};

/// Label on every ContainerRecreateRequest of a recreate, with the recreate's id.
pub const RECREATE_LABEL: &str = "kruise.io/recreate-id";

/// How long a recreate may stay Pending before the watcher starts it itself (the request that
/// created it normally starts it at once).
const TAKE_OVER_AFTER: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// A created (or replayed) recreate.
#[derive(Clone, Debug)]
pub struct CreatedRecreate {
    /// The recreate.
    pub recreate: Recreate,
    /// True when an earlier request with the same idempotency key and body created it.
    pub replayed: bool,
}

/// What the store keeps to carry a recreate on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecreatePlan {
    /// CRRs in flight at most.
    max_unavailable: i32,
    /// Every pod, in order.
    pods: Vec<PlannedPod>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlannedPod {
    pod: String,
    uid: String,
    request: String,
    #[serde(default)]
    created: bool,
    /// The pod's final result, once its CRR finished (or it was skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<PodRecreate>,
}

impl PlannedPod {
    fn in_flight(&self) -> bool {
        self.created && self.result.is_none()
    }
}

/// The checks that need no cluster.
fn static_checks(request: &RecreateRequest, errors: &mut Vec<FieldError>) {
    if request.containers.is_empty() {
        errors.push(FieldError::new("containers", "at least one container is required"));
    }
    let mut seen = BTreeSet::new();
    for (index, name) in request.containers.iter().enumerate() {
        let field = format!("containers[{index}]");
        let problems = kruise_crds::validation::meta::dns1123_label_problems(name);
        if !problems.is_empty() {
            errors.push(FieldError::new(
                field,
                format!("{name:?} is not a container name: {}", problems.join("; ")),
            ));
        } else if !seen.insert(name) {
            errors.push(FieldError::new(field, format!("{name:?} is listed twice")));
        }
    }
    match (&request.pod, &request.workload) {
        (None, None) => errors.push(FieldError::new("pod", "one of pod or workload is required")),
        (Some(_), Some(_)) => {
            errors.push(FieldError::new("workload", "pod and workload may not both be set"))
        }
        (Some(pod), None) => {
            let problems = kruise_crds::validation::meta::dns1123_subdomain_problems(pod);
            if !problems.is_empty() {
                errors.push(FieldError::new("pod", problems.join("; ")));
            }
        }
        (None, Some(workload)) => check_workload_ref(workload, errors),
    }
    let strategy = &request.strategy;
    for (name, value) in [
        ("terminationGracePeriodSeconds", strategy.termination_grace_period_seconds),
        ("unreadyGracePeriodSeconds", strategy.unready_grace_period_seconds),
        ("minStartedSeconds", strategy.min_started_seconds.map(i64::from)),
    ] {
        if let Some(value) = value
            && value < 0
        {
            errors.push(FieldError::new(format!("strategy.{name}"), format!("{value} must not be negative")));
        }
    }
    match &request.max_unavailable {
        None => {}
        Some(IntOrPercent::Int(count)) if *count >= 1 => {}
        Some(IntOrPercent::Int(count)) => {
            errors.push(FieldError::new("maxUnavailable", format!("{count} must be at least 1")))
        }
        Some(IntOrPercent::Percent(text)) if percent(text).is_some_and(|p| (1..=100).contains(&p)) => {}
        Some(IntOrPercent::Percent(text)) => errors.push(FieldError::new(
            "maxUnavailable",
            format!("{text:?} must be a count or a percentage between 1% and 100%"),
        )),
    }
}

fn percent(text: &str) -> Option<i64> {
    text.strip_suffix('%')?.trim().parse().ok()
}

/// Pods at a time: a count, or a percentage of the pods rounded down; at least 1.
fn resolve_max_unavailable(value: Option<&IntOrPercent>, pods: usize) -> i32 {
    let pods = i64::try_from(pods).unwrap_or(i64::MAX);
    let resolved = match value {
        None => 1,
        Some(IntOrPercent::Int(count)) => i64::from(*count),
        Some(IntOrPercent::Percent(text)) => percent(text).map(|p| pods.saturating_mul(p) / 100).unwrap_or(1),
    };
    i32::try_from(resolved.clamp(1, pods.max(1))).unwrap_or(1)
}

/// The CRR for one pod of recreate `id`: what the webhook would add from the pod (its uid and
/// node in labels) is set here too, so the daemon finds it with or without the webhook; the
/// per-container fields the webhook fills in from the pod (`statusContext`, `preStop`,
/// `ports`) are left to it, as upstream requires.
fn crr_for(id: &str, name: &str, pod: &Pod, request: &RecreateRequest) -> ContainerRecreateRequest {
    let strategy = &request.strategy;
    let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
    let labels = BTreeMap::from([
        (RECREATE_LABEL.to_string(), id.to_string()),
        (CONTAINER_RECREATE_REQUEST_POD_UID_KEY.to_string(), pod.uid().unwrap_or_default()),
        (CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY.to_string(), node),
        (CONTAINER_RECREATE_REQUEST_ACTIVE_KEY.to_string(), "true".to_string()),
    ]);
    let mut crr = ContainerRecreateRequest::new(
        name,
        ContainerRecreateRequestSpec {
            pod_name: pod.name_any(),
            containers: request
                .containers
                .iter()
                .map(|container| ContainerRecreateRequestContainer {
                    name: container.clone(),
                    ..Default::default()
                })
                .collect(),
            strategy: Some(ContainerRecreateRequestStrategy {
                failure_policy: match strategy.failure_policy.unwrap_or(FailurePolicy::Fail) {
                    FailurePolicy::Fail => ContainerRecreateRequestFailurePolicyType::Fail,
                    FailurePolicy::Ignore => ContainerRecreateRequestFailurePolicyType::Ignore,
                },
                ordered_recreate: strategy.ordered_recreate.unwrap_or(false),
                force_recreate: strategy.force_recreate.unwrap_or(false),
                termination_grace_period_seconds: strategy.termination_grace_period_seconds,
                unready_grace_period_seconds: strategy.unready_grace_period_seconds,
                min_started_seconds: strategy.min_started_seconds.unwrap_or(0),
            }),
            active_deadline_seconds: None,
            ttl_seconds_after_finished: None,
        },
    );
    crr.metadata = ObjectMeta {
        name: Some(name.to_string()),
        namespace: pod.namespace(),
        labels: Some(labels),
        owner_references: Some(vec![OwnerReference {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: pod.name_any(),
            uid: pod.uid().unwrap_or_default(),
            controller: Some(false),
            block_owner_deletion: Some(false),
        }]),
        ..Default::default()
    };
    crr
}

/// The deterministic name of a recreate's CRR for its `index`-th pod.
fn crr_name(id: &str, index: usize) -> String {
    format!("recreate-{id}-{index}")
}

/// A pod's progress from its CRR.
fn pod_result(planned: &PlannedPod, crr: &ContainerRecreateRequest, containers: &[String]) -> PodRecreate {
    let status = crr.status.clone().unwrap_or_default();
    let mut results: Vec<ContainerResult> = status
        .container_recreate_states
        .iter()
        .map(|state| ContainerResult {
            name: state.name.clone(),
            phase: if state.phase.is_unset() { "Pending".into() } else { state.phase.as_str().to_string() },
            message: Some(state.message.clone()).filter(|m| !m.is_empty()),
        })
        .collect();
    for name in containers {
        if !results.iter().any(|r| &r.name == name) {
            results.push(ContainerResult { name: name.clone(), phase: "Pending".into(), message: None });
        }
    }
    let any_failed = results.iter().any(|r| r.phase == "Failed");
    let phase = match &status.phase {
        ContainerRecreateRequestPhase::Completed | ContainerRecreateRequestPhase::Succeeded if any_failed => {
            "Failed"
        }
        ContainerRecreateRequestPhase::Completed | ContainerRecreateRequestPhase::Succeeded => "Succeeded",
        ContainerRecreateRequestPhase::Failed => "Failed",
        ContainerRecreateRequestPhase::Recreating => "Recreating",
        _ => "Pending",
    };
    PodRecreate {
        pod: planned.pod.clone(),
        request: Some(planned.request.clone()),
        phase: phase.into(),
        message: Some(status.message.clone()).filter(|m| !m.is_empty()),
        containers: results,
    }
}

fn is_final(result: &PodRecreate) -> bool {
    matches!(result.phase.as_str(), "Succeeded" | "Failed" | "Skipped")
}

fn skipped(planned: &PlannedPod, message: String) -> PodRecreate {
    PodRecreate {
        pod: planned.pod.clone(),
        request: None,
        phase: "Skipped".into(),
        message: Some(message),
        containers: Vec::new(),
    }
}

/// A pod's spec/status check for a request about it: `field` names what the request named
/// (`pod`, or `workload` for a workload's pod), container problems name `containers[i]`.
fn pod_problems(pod: &Pod, request: &RecreateRequest, field: &str, full: bool) -> Vec<FieldError> {
    let name = pod.name_any();
    let mut errors = Vec::new();
    if full {
        let mut probe = crr_for("probe", "probe", pod, request);
        if let Some(labels) = probe.metadata.labels.as_mut() {
            labels.clear();
        }
        for error in
            kruise_crds::defaults::inject_pod_into_containerrecreaterequest_v1beta1(&mut probe, pod, None)
        {
            let path = error.path.as_str();
            let mapped = if path == "spec.podName" {
                field.to_string()
            } else if let Some(rest) = path.strip_prefix("spec.containers[") {
                rest.split(']')
                    .next()
                    .map(|index| format!("containers[{index}]"))
                    .unwrap_or_else(|| "containers".into())
            } else {
                "body".into()
            };
            errors.push(FieldError::new(mapped, format!("pod {name:?}: {}", error.message())));
        }
        return errors;
    }
    let spec = pod.spec.clone().unwrap_or_default();
    for (index, container) in request.containers.iter().enumerate() {
        let known =
            spec.init_containers.iter().flatten().chain(spec.containers.iter()).any(|c| &c.name == container);
        if !known {
            errors.push(FieldError::new(
                format!("containers[{index}]"),
                format!("pod {name:?} has no container {container:?}"),
            ));
        }
    }
    errors
}

impl Operations {
    fn crrs(&self, namespace: &str) -> Api<ContainerRecreateRequest> {
        Api::namespaced(self.client().clone(), namespace)
    }

    /// `POST /v1/namespaces/{ns}/recreates`.
    pub async fn create_recreate(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        idempotency_key: Option<&str>,
        body: Input<RecreateRequest>,
    ) -> Result<CreatedRecreate, ApiError> {
        let mut draft =
            self.draft(ctx, "recreate.create", Some(namespace), format!("namespaces/{namespace}/recreates"));
        let principal = self.authorize(ctx, &draft, Action::Recreate, Some(namespace)).await?;
        if let Err(error) = check_namespace(namespace) {
            return self.refuse(ctx, &draft, error).await;
        }
        let request = match body.parse() {
            Ok(request) => request,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        let body_value = serde_json::to_value(&request).unwrap_or(Value::Null);
        draft.with_body(&sanitize(&body_value));
        draft.target = match (&request.pod, &request.workload) {
            (Some(pod), _) => format!("Pod/{pod}"),
            (None, Some(workload)) => format!("{}/{}", workload.kind.as_str(), workload.name),
            (None, None) => format!("namespaces/{namespace}/recreates"),
        };
        let mut errors = Vec::new();
        check_idempotency_key(idempotency_key, &mut errors);
        static_checks(&request, &mut errors);
        if !errors.is_empty() {
            return self.refuse(ctx, &draft, ApiError::Validation(errors)).await;
        }
        let body_hash = hex::encode(Sha256::digest(canonical_json(&body_value).as_bytes()));
        if let Some(key) = idempotency_key {
            match self
                .store()
                .task_by_idempotency_key(TaskKind::Recreate, &principal.name, namespace, key)
                .await
            {
                Ok(Some(existing)) => {
                    self.replay_task(ctx, &mut draft, &existing, &body_hash).await?;
                    let recreate = self.recreate_view(&existing, true).await?;
                    return Ok(CreatedRecreate { recreate, replayed: true });
                }
                Ok(None) => {}
                Err(error) => return self.refuse(ctx, &draft, error.into()).await,
            }
        }

        let pods = match self.recreate_pods(namespace, &request).await {
            Ok(pods) => pods,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        let id = uuid::Uuid::new_v4().to_string();
        draft.task_id = Some(id.clone());
        // The webhook's own rules on the CRR, as a last check before anything is written.
        if let Some(pod) = pods.first() {
            let mut crr = crr_for(&id, &crr_name(&id, 0), pod, &request);
            kruise_crds::defaults::default_containerrecreaterequest_v1beta1(&mut crr);
            let problems: Vec<FieldError> =
                kruise_crds::validation::validate_containerrecreaterequest_v1beta1(&crr, None)
                    .into_iter()
                    .map(|error| {
                        let field = error
                            .path
                            .as_str()
                            .strip_prefix("spec.")
                            .filter(|rest| rest.starts_with("strategy."))
                            .unwrap_or("body")
                            .to_string();
                        FieldError::new(field, error.to_string())
                    })
                    .collect();
            if !problems.is_empty() {
                return self.refuse(ctx, &draft, ApiError::Validation(problems)).await;
            }
        }
        let plan = RecreatePlan {
            max_unavailable: resolve_max_unavailable(request.max_unavailable.as_ref(), pods.len()),
            pods: pods
                .iter()
                .enumerate()
                .map(|(index, pod)| PlannedPod {
                    pod: pod.name_any(),
                    uid: pod.uid().unwrap_or_default(),
                    request: crr_name(&id, index),
                    created: false,
                    result: None,
                })
                .collect(),
        };
        let task = NewTask {
            id: id.clone(),
            kind: TaskKind::Recreate,
            namespace: namespace.into(),
            target: draft.target.clone(),
            spec: body_value.clone(),
            plan: serde_json::to_value(&plan).unwrap_or(Value::Null),
            created_by: principal.name.clone(),
            created_at: ctx.received,
            idempotency_key: idempotency_key.map(str::to_string),
            body_hash: Some(body_hash.clone()),
            reason: request.reason.clone(),
        };
        match self.record_task(ctx, &draft, &task).await? {
            Recorded::Created => {}
            Recorded::Raced(existing) => {
                self.replay_task(ctx, &mut draft, &existing, &body_hash).await?;
                let recreate = self.recreate_view(&existing, true).await?;
                return Ok(CreatedRecreate { recreate, replayed: true });
            }
        }

        // Recorded: now the cluster is changed (the first batch; the watcher does the rest).
        let result = match self.store().task(&id).await {
            Ok(Some(row)) => match self.advance_recreate(&row, &principal.name).await {
                Ok(()) => match self.store().task(&id).await {
                    Ok(Some(row)) => self
                        .recreate_view(&row, true)
                        .await
                        .map(|recreate| CreatedRecreate { recreate, replayed: false }),
                    Ok(None) => Err(ApiError::Internal(format!("recreate {id} vanished from the store"))),
                    Err(error) => Err(error.into()),
                },
                Err(error) => Err(error),
            },
            Ok(None) => Err(ApiError::Internal(format!("recreate {id} vanished from the store"))),
            Err(error) => Err(error.into()),
        };
        self.record_outcome(ctx, &draft, result, 202).await
    }

    /// The pods a request names, checked: the pod (running on a node, with the containers
    /// started), or the workload's active pods (each with the containers).
    async fn recreate_pods(&self, namespace: &str, request: &RecreateRequest) -> Result<Vec<Pod>, ApiError> {
        let api: Api<Pod> = Api::namespaced(self.client().clone(), namespace);
        if let Some(name) = &request.pod {
            let pod = api.get_opt(name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))?.ok_or_else(
                || ApiError::field("pod", format!("pod {name:?} not found in namespace {namespace:?}")),
            )?;
            let problems = pod_problems(&pod, request, "pod", true);
            return if problems.is_empty() { Ok(vec![pod]) } else { Err(ApiError::Validation(problems)) };
        }
        let Some(reference) = &request.workload else {
            return Err(ApiError::field("pod", "one of pod or workload is required"));
        };
        let Some(workload) = self.workload(namespace, reference).await? else {
            return Err(ApiError::field(
                "workload.name",
                format!(
                    "{} {:?} not found in namespace {namespace:?}",
                    reference.kind.as_str(),
                    reference.name
                ),
            ));
        };
        let pods: Vec<Pod> =
            self.workload_pods(namespace, &workload).await?.into_iter().filter(pod_is_active).collect();
        if pods.is_empty() {
            return Err(ApiError::field(
                "workload",
                format!("{} has no running pods to recreate containers in", workload.target()),
            ));
        }
        let mut problems: Vec<FieldError> = Vec::new();
        for pod in &pods {
            for problem in pod_problems(pod, request, "workload", false) {
                if !problems.iter().any(|p| p.field == problem.field) {
                    problems.push(problem);
                }
            }
        }
        if problems.is_empty() { Ok(pods) } else { Err(ApiError::Validation(problems)) }
    }

    /// Carries a recreate on: records the results of finished CRRs, stops after a failure
    /// (failure policy Fail), creates CRRs for the next pods while fewer than `maxUnavailable`
    /// are in flight, and records the state. Idempotent.
    pub(super) async fn advance_recreate(&self, row: &TaskRow, actor: &str) -> Result<(), ApiError> {
        let request: RecreateRequest = serde_json::from_value(row.spec.0.clone())
            .map_err(|e| ApiError::Internal(format!("stored recreate {} does not read back: {e}", row.id)))?;
        let before: RecreatePlan = serde_json::from_value(row.plan.0.clone()).map_err(|e| {
            ApiError::Internal(format!("stored recreate plan {} does not read back: {e}", row.id))
        })?;
        let mut plan = before.clone();
        let crrs = self.crrs_of(&row.namespace, &row.id).await?;
        let fail_fast = request.strategy.failure_policy.unwrap_or(FailurePolicy::Fail) == FailurePolicy::Fail;

        // Finished CRRs.
        for planned in plan.pods.iter_mut().filter(|p| p.in_flight()) {
            match crrs.get(&planned.request) {
                Some(crr) => {
                    let result = pod_result(planned, crr, &request.containers);
                    if is_final(&result) {
                        planned.result = Some(result);
                    }
                }
                None => {
                    planned.result = Some(PodRecreate {
                        pod: planned.pod.clone(),
                        request: Some(planned.request.clone()),
                        phase: "Failed".into(),
                        message: Some("the ContainerRecreateRequest was deleted before it finished".into()),
                        containers: Vec::new(),
                    });
                }
            }
        }
        let failed = plan.pods.iter().any(|p| p.result.as_ref().is_some_and(|r| r.phase == "Failed"));

        // The next pods.
        let pods: Api<Pod> = Api::namespaced(self.client().clone(), &row.namespace);
        let crr_api = self.crrs(&row.namespace);
        let mut pending_error = None;
        let max = usize::try_from(plan.max_unavailable.max(1)).unwrap_or(1);
        for index in 0..plan.pods.len() {
            if plan.pods[index].created || plan.pods[index].result.is_some() {
                continue;
            }
            if failed && fail_fast {
                let message = "not started: an earlier pod failed (failure policy Fail)".to_string();
                plan.pods[index].result = Some(skipped(&plan.pods[index], message));
                continue;
            }
            if plan.pods.iter().filter(|p| p.in_flight()).count() >= max {
                break;
            }
            let planned = plan.pods[index].clone();
            if crrs.contains_key(&planned.request) {
                plan.pods[index].created = true;
                continue;
            }
            let pod = match pods.get_opt(&planned.pod).await {
                Ok(pod) => pod,
                Err(error) => {
                    pending_error = Some(ApiError::Kubernetes(error.to_string()));
                    break;
                }
            };
            let pod = match pod {
                Some(pod) if pod.uid().as_deref() == Some(planned.uid.as_str()) && pod_is_active(&pod) => pod,
                Some(pod) if pod.uid().as_deref() != Some(planned.uid.as_str()) => {
                    let message =
                        "not started: the pod was replaced by a new one of the same name".to_string();
                    plan.pods[index].result = Some(skipped(&planned, message));
                    continue;
                }
                Some(_) => {
                    plan.pods[index].result =
                        Some(skipped(&planned, "not started: the pod is no longer running".into()));
                    continue;
                }
                None => {
                    plan.pods[index].result =
                        Some(skipped(&planned, "not started: the pod no longer exists".into()));
                    continue;
                }
            };
            let crr = crr_for(&row.id, &planned.request, &pod, &request);
            match crr_api.create(&PostParams::default(), &crr).await {
                Ok(_) => {
                    plan.pods[index].created = true;
                    tracing::info!(recreate = %row.id, pod = %planned.pod, request = %planned.request, "ContainerRecreateRequest created");
                }
                Err(kube::Error::Api(status)) if status.code == 409 => plan.pods[index].created = true,
                Err(kube::Error::Api(status)) if (400..500).contains(&status.code) => {
                    // Refused (by the webhook, for this pod): the pod fails, the rest may go on.
                    plan.pods[index].result = Some(PodRecreate {
                        pod: planned.pod.clone(),
                        request: None,
                        phase: "Failed".into(),
                        message: Some(format!(
                            "the ContainerRecreateRequest was refused: {}",
                            status.message
                        )),
                        containers: Vec::new(),
                    });
                }
                Err(error) => {
                    pending_error = Some(ApiError::Kubernetes(error.to_string()));
                    break;
                }
            }
        }

        // Record.
        let (state, reason, message) = plan_state(&plan);
        let plan_value = serde_json::to_value(&plan).unwrap_or(Value::Null);
        if state != row.state() {
            self.move_task(row, Change::new(state, actor, reason, Some(message)), Some(&plan_value), None)
                .await;
        } else if plan != before {
            self.store().update_task(&row.id, Some(&plan_value), None).await?;
        }
        match pending_error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// This recreate's CRRs, by name.
    async fn crrs_of(
        &self,
        namespace: &str,
        id: &str,
    ) -> Result<BTreeMap<String, ContainerRecreateRequest>, ApiError> {
        Ok(self
            .crrs(namespace)
            .list(&ListParams::default().labels(&format!("{RECREATE_LABEL}={id}")))
            .await
            .map_err(|e| ApiError::Kubernetes(e.to_string()))?
            .items
            .into_iter()
            .map(|crr| (crr.name_any(), crr))
            .collect())
    }

    /// One watcher pass over a running recreate.
    pub(super) async fn reconcile_recreate(&self, row: &TaskRow) -> Result<(), ApiError> {
        if row.state() == TaskState::Pending && crate::store::now() - row.created_at < TAKE_OVER_AFTER {
            return Ok(()); // the request that created it is starting it
        }
        self.advance_recreate(row, WATCHER_ACTOR).await
    }

    /// `GET /v1/namespaces/{ns}/recreates/{id}`.
    pub async fn get_recreate(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        id: &str,
    ) -> Result<Recreate, ApiError> {
        let mut draft = self.draft(ctx, "recreate.get", Some(namespace), format!("recreates/{id}"));
        draft.task_id = Some(id.to_string());
        self.authorize(ctx, &draft, Action::Recreate, Some(namespace)).await?;
        let row = self.task_in(TaskKind::Recreate, namespace, id).await?;
        self.recreate_view(&row, true).await
    }

    /// The recreate as clients see it: each pod's final result, or its CRR's status now.
    async fn recreate_view(&self, row: &TaskRow, history: bool) -> Result<Recreate, ApiError> {
        let request: RecreateRequest = serde_json::from_value(row.spec.0.clone())
            .map_err(|e| ApiError::Internal(format!("stored recreate {} does not read back: {e}", row.id)))?;
        let plan: RecreatePlan = serde_json::from_value(row.plan.0.clone()).unwrap_or_default();
        let live = plan.pods.iter().any(PlannedPod::in_flight);
        let crrs = if live { self.crrs_of(&row.namespace, &row.id).await? } else { BTreeMap::new() };
        let pods = plan
            .pods
            .iter()
            .map(|planned| match (&planned.result, crrs.get(&planned.request)) {
                (Some(result), _) => result.clone(),
                (None, Some(crr)) => pod_result(planned, crr, &request.containers),
                (None, None) => PodRecreate {
                    pod: planned.pod.clone(),
                    request: planned.created.then(|| planned.request.clone()),
                    phase: if planned.created { "Pending".into() } else { "Waiting".into() },
                    message: None,
                    containers: Vec::new(),
                },
            })
            .collect();
        Ok(Recreate {
            id: row.id.clone(),
            namespace: row.namespace.clone(),
            state: row.state(),
            message: row.message.clone(),
            created_by: row.created_by.clone(),
            created_at: row.created_at,
            updated_at: row.updated_at,
            finished_at: row.finished_at,
            request,
            max_unavailable: plan.max_unavailable,
            pods,
            history: if history { self.task_history(&row.id).await? } else { Vec::new() },
        })
    }
}

/// A recreate's state from its plan: Running while a pod is in flight or waiting, then
/// Succeeded (no pod failed) or Failed.
fn plan_state(plan: &RecreatePlan) -> (TaskState, &'static str, String) {
    let total = plan.pods.len();
    let done = plan.pods.iter().filter(|p| p.result.is_some()).count();
    let count = |phase: &str| {
        plan.pods.iter().filter(|p| p.result.as_ref().is_some_and(|r| r.phase == phase)).count()
    };
    let (succeeded, failed, skipped) = (count("Succeeded"), count("Failed"), count("Skipped"));
    if done < total {
        let started = plan.pods.iter().filter(|p| p.created || p.result.is_some()).count();
        if started == 0 {
            return (TaskState::Pending, "Waiting", "no pod started yet".into());
        }
        return (
            TaskState::Running,
            "Started",
            format!(
                "{done} of {total} pod(s) done ({succeeded} succeeded, {failed} failed, {skipped} skipped)"
            ),
        );
    }
    let summary = format!("{succeeded} of {total} pod(s) recreated, {failed} failed, {skipped} skipped");
    if failed == 0 {
        (TaskState::Succeeded, "Completed", summary)
    } else {
        (TaskState::Failed, "Completed", summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_unavailable_resolves_to_at_least_one_pod() {
        assert_eq!(resolve_max_unavailable(None, 5), 1);
        assert_eq!(resolve_max_unavailable(Some(&IntOrPercent::Int(2)), 5), 2);
        assert_eq!(resolve_max_unavailable(Some(&IntOrPercent::Int(9)), 3), 3);
        assert_eq!(resolve_max_unavailable(Some(&IntOrPercent::Percent("50%".into())), 5), 2);
        assert_eq!(resolve_max_unavailable(Some(&IntOrPercent::Percent("10%".into())), 3), 1);
        assert_eq!(resolve_max_unavailable(Some(&IntOrPercent::Percent("100%".into())), 4), 4);
    }

    #[test]
    fn plan_state_follows_the_pods() {
        let pod = |created: bool, phase: Option<&str>| PlannedPod {
            pod: "p".into(),
            uid: "u".into(),
            request: "r".into(),
            created,
            result: phase.map(|phase| PodRecreate {
                pod: "p".into(),
                request: None,
                phase: phase.into(),
                message: None,
                containers: Vec::new(),
            }),
        };
        let plan = |pods| RecreatePlan { max_unavailable: 1, pods };
        assert_eq!(plan_state(&plan(vec![pod(false, None)])).0, TaskState::Pending);
        assert_eq!(plan_state(&plan(vec![pod(true, None), pod(false, None)])).0, TaskState::Running);
        assert_eq!(plan_state(&plan(vec![pod(true, Some("Succeeded"))])).0, TaskState::Succeeded);
        assert_eq!(
            plan_state(&plan(vec![pod(true, Some("Failed")), pod(false, Some("Skipped"))])).0,
            TaskState::Failed
        );
    }
}
