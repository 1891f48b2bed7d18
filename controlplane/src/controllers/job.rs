//! A minimal batch/v1 Job controller: keeps up to `parallelism` pods running until
//! `completions` succeeded, counts succeeded and failed pods, fails the job past `backoffLimit`
//! (with `restartPolicy: OnFailure`, container restarts of its running pods count, as
//! kube-controller-manager counts them) or `activeDeadlineSeconds`, and reports the
//! `Complete`/`Failed` conditions.

use serde_json::{Value, json};

use super::{CONTROLLER_TICK, workload};
use crate::{
    apiserver::{api::Api, objects, options::DeleteOptions},
    storage::{CollectionKey, ObjectKey},
};

/// The field manager of the Job controller's writes, as kube-controller-manager's.
const FIELD_MANAGER: &str = "job-controller";

/// What a job should do next, from its spec, its pods and the time.
#[derive(Debug, PartialEq, Eq)]
pub struct JobPlan {
    /// Pods to create now.
    pub create: i64,
    /// The job finished with this condition (`Complete` or `Failed`) and reason.
    pub finished: Option<(&'static str, &'static str)>,
}

/// Decides the next step of a job (pure): `active`, `succeeded` and `failed` pod counts,
/// `restarts` (container restarts of its pending and running pods) and `elapsed` seconds since
/// the job started.
pub fn plan(spec: &Value, active: i64, succeeded: i64, failed: i64, restarts: i64, elapsed: i64) -> JobPlan {
    let parallelism = spec.get("parallelism").and_then(Value::as_i64).unwrap_or(1).max(0);
    let completions = spec.get("completions").and_then(Value::as_i64);
    let backoff_limit = spec.get("backoffLimit").and_then(Value::as_i64).unwrap_or(6);
    let deadline = spec.get("activeDeadlineSeconds").and_then(Value::as_i64);
    let on_failure =
        spec.pointer("/template/spec/restartPolicy").and_then(Value::as_str) == Some("OnFailure");
    let restarts_past_limit =
        on_failure && if backoff_limit == 0 { restarts > 0 } else { restarts >= backoff_limit };
    if failed > backoff_limit || restarts_past_limit {
        return JobPlan { create: 0, finished: Some(("Failed", "BackoffLimitExceeded")) };
    }
    if deadline.is_some_and(|d| elapsed >= d) {
        return JobPlan { create: 0, finished: Some(("Failed", "DeadlineExceeded")) };
    }
    match completions {
        Some(completions) if succeeded >= completions => {
            JobPlan { create: 0, finished: Some(("Complete", "Completed")) }
        }
        Some(completions) => {
            let wanted = parallelism.min(completions - succeeded);
            JobPlan { create: (wanted - active).max(0), finished: None }
        }
        // Without completions, the job is done once any pod succeeded and none is running.
        None if succeeded > 0 && active == 0 => {
            JobPlan { create: 0, finished: Some(("Complete", "Completed")) }
        }
        None if succeeded > 0 => JobPlan { create: 0, finished: None },
        None => JobPlan { create: (parallelism - active).max(0), finished: None },
    }
}

pub(super) async fn run(api: Api) {
    let jobs = CollectionKey { group: "batch".into(), resource: "jobs".into(), namespace: None };
    loop {
        let (all, _) = api.store.list(&jobs);
        for job in all.iter().filter(|job| !objects::is_deleting(job) && !is_finished(job)) {
            if let Err(error) = sync(&api, job).await {
                tracing::debug!(job = objects::name(job).unwrap_or_default(), %error, "job sync failed");
            }
        }
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

fn is_finished(job: &Value) -> bool {
    job.pointer("/status/conditions").and_then(Value::as_array).is_some_and(|c| {
        c.iter().any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
    })
}

async fn sync(api: &Api, job: &Value) -> Result<(), String> {
    let namespace = objects::namespace(job).unwrap_or_default().to_string();
    let name = objects::name(job).unwrap_or_default().to_string();
    let uid = objects::uid(job).unwrap_or_default().to_string();
    let owned = workload::owned_by(api, "", "pods", &namespace, &uid);
    let succeeded = owned.iter().filter(|p| workload::pod_phase(p) == "Succeeded").count() as i64;
    let failed = owned.iter().filter(|p| workload::pod_phase(p) == "Failed").count() as i64;
    let active = owned.iter().filter(|p| workload::is_pod_active(p)).count() as i64;
    let restarts: i64 = owned
        .iter()
        .filter(|p| matches!(workload::pod_phase(p), "Running" | "Pending"))
        .flat_map(|p| {
            let statuses =
                |field: &str| p.pointer(&format!("/status/{field}")).and_then(Value::as_array).cloned();
            statuses("initContainerStatuses")
                .into_iter()
                .flatten()
                .chain(statuses("containerStatuses").into_iter().flatten())
        })
        .filter_map(|status| status.get("restartCount").and_then(Value::as_i64))
        .sum();
    let start = job
        .pointer("/status/startTime")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(objects::now_rfc3339);
    let elapsed = start
        .parse::<k8s_openapi::jiff::Timestamp>()
        .map(|t| k8s_openapi::jiff::Timestamp::now().duration_since(t).as_secs())
        .unwrap_or(0);
    let spec = job.get("spec").cloned().unwrap_or(json!({}));
    let plan = plan(&spec, active, succeeded, failed, restarts, elapsed);

    let template = spec.get("template").cloned().unwrap_or(json!({}));
    for _ in 0..plan.create {
        let owner = workload::controller_reference("batch/v1", "Job", job);
        workload::create_pod(api, &namespace, &template, &format!("{name}-"), owner, FIELD_MANAGER).await?;
    }
    if plan.finished.is_some_and(|(condition, _)| condition == "Failed") {
        let pod_def = api.registry.find("", "v1", "pods").ok_or("pods not served")?;
        for pod in owned.iter().filter(|p| workload::is_pod_active(p)) {
            let pod_name = objects::name(pod).unwrap_or_default().to_string();
            let _ = api.delete(&pod_def, "v1", Some(&namespace), &pod_name, &DeleteOptions::default()).await;
        }
    }

    let now = objects::now_rfc3339();
    let key = ObjectKey { group: "batch".into(), resource: "jobs".into(), namespace: Some(namespace), name };
    let mut status = json!({
        "active": active + plan.create,
        "succeeded": succeeded,
        "failed": failed,
        "startTime": start,
    });
    if let Some((condition, reason)) = plan.finished {
        status["active"] = json!(0);
        let mut conditions = vec![];
        if condition == "Failed" {
            conditions.push(json!({"type": "FailureTarget", "status": "True", "reason": reason, "lastProbeTime": now, "lastTransitionTime": now}));
        } else {
            conditions.push(json!({"type": "SuccessCriteriaMet", "status": "True", "reason": reason, "lastProbeTime": now, "lastTransitionTime": now}));
            status["completionTime"] = json!(now);
        }
        conditions.push(json!({"type": condition, "status": "True", "reason": reason, "lastProbeTime": now, "lastTransitionTime": now}));
        status["conditions"] = json!(conditions);
    }
    workload::merge_status(api, &key, &status);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_follow_parallelism_completions_and_limits() {
        let spec =
            json!({"parallelism": 2, "completions": 3, "backoffLimit": 1, "activeDeadlineSeconds": 60});
        assert_eq!(plan(&spec, 0, 0, 0, 0, 0), JobPlan { create: 2, finished: None });
        assert_eq!(plan(&spec, 1, 2, 0, 0, 0), JobPlan { create: 0, finished: None });
        assert_eq!(plan(&spec, 0, 2, 0, 0, 0), JobPlan { create: 1, finished: None });
        assert_eq!(plan(&spec, 0, 3, 0, 0, 0).finished, Some(("Complete", "Completed")));
        assert_eq!(plan(&spec, 1, 0, 2, 0, 0).finished, Some(("Failed", "BackoffLimitExceeded")));
        assert_eq!(plan(&spec, 1, 0, 0, 0, 61).finished, Some(("Failed", "DeadlineExceeded")));
        let open = json!({"parallelism": 2});
        assert_eq!(plan(&open, 0, 0, 0, 0, 0).create, 2);
        assert_eq!(plan(&open, 0, 1, 0, 0, 0).finished, Some(("Complete", "Completed")));
        // restartPolicy OnFailure: restarts of running pods count against the limit.
        let restarting = json!({"backoffLimit": 3, "template": {"spec": {"restartPolicy": "OnFailure"}}});
        assert_eq!(plan(&restarting, 1, 0, 0, 2, 0).finished, None);
        assert_eq!(plan(&restarting, 1, 0, 0, 3, 0).finished, Some(("Failed", "BackoffLimitExceeded")));
        let no_retry = json!({"backoffLimit": 0, "template": {"spec": {"restartPolicy": "OnFailure"}}});
        assert_eq!(plan(&no_retry, 1, 0, 0, 1, 0).finished, Some(("Failed", "BackoffLimitExceeded")));
        let never = json!({"backoffLimit": 3, "template": {"spec": {"restartPolicy": "Never"}}});
        assert_eq!(plan(&never, 1, 0, 0, 5, 0).finished, None, "Never: only failed pods count");
    }
}
