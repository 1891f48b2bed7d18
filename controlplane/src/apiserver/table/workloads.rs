//! Tables of the workload kinds: deployments, replica sets, stateful sets, daemon sets,
//! controller revisions, jobs and cron jobs.

use serde_json::{Value, json};

use super::{
    AGE, ColumnDef, NAME, Printer, col,
    format::{self, int, list, text},
    wide,
};
use crate::semantics::jsonpath::human_duration;

/// The printer of an `apps` or `batch` kind.
pub(super) fn printer(group: &str, kind: &str) -> Option<Printer> {
    Some(match (group, kind) {
        ("apps", "Deployment") => Printer::new(DEPLOYMENT, deployment_cells),
        ("apps", "ReplicaSet") => Printer::new(REPLICA_SET, replica_set_cells),
        ("apps", "StatefulSet") => Printer::new(STATEFUL_SET, stateful_set_cells),
        ("apps", "DaemonSet") => Printer::new(DAEMON_SET, daemon_set_cells),
        ("apps", "ControllerRevision") => Printer::new(CONTROLLER_REVISION, controller_revision_cells),
        ("batch", "Job") => Printer::new(JOB, job_cells),
        ("batch", "CronJob") => Printer::new(CRON_JOB, cron_job_cells),
        _ => return None,
    })
}

const CONTAINERS: ColumnDef = wide("Containers", "string", "Names of the pod template's containers.");
const IMAGES: ColumnDef = wide("Images", "string", "Images of the pod template's containers.");
const SELECTOR: ColumnDef = wide("Selector", "string", "The label selector of the pods.");

fn name(object: &Value) -> Value {
    json!(text(object, "/metadata/name"))
}

fn template_containers(object: &Value, template: &str) -> (Value, Value) {
    let (names, images) = format::containers(object.pointer(template));
    (json!(names), json!(images))
}

const DEPLOYMENT: &[ColumnDef] = &[
    NAME,
    col("Ready", "string", "Ready pods out of the desired replicas."),
    col("Up-to-date", "string", "Pods running the latest template."),
    col("Available", "string", "Pods available to serve."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn deployment_cells(deployment: &Value, now: i64) -> Vec<Value> {
    let (containers, images) = template_containers(deployment, "/spec/template/spec");
    // An absent selector selects nothing, which prints as "".
    let selector =
        format::selector(deployment.pointer("/spec/selector")).unwrap_or_else(|| "<invalid>".into());
    vec![
        name(deployment),
        json!(format!("{}/{}", int(deployment, "/status/readyReplicas"), int(deployment, "/spec/replicas"))),
        json!(int(deployment, "/status/updatedReplicas")),
        json!(int(deployment, "/status/availableReplicas")),
        json!(format::age(deployment, now)),
        containers,
        images,
        json!(selector),
    ]
}

const REPLICA_SET: &[ColumnDef] = &[
    NAME,
    col("Desired", "integer", "Desired replicas."),
    col("Current", "integer", "Replicas created."),
    col("Ready", "integer", "Ready replicas."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn replica_set_cells(replica_set: &Value, now: i64) -> Vec<Value> {
    let (containers, images) = template_containers(replica_set, "/spec/template/spec");
    vec![
        name(replica_set),
        json!(int(replica_set, "/spec/replicas")),
        json!(int(replica_set, "/status/replicas")),
        json!(int(replica_set, "/status/readyReplicas")),
        json!(format::age(replica_set, now)),
        containers,
        images,
        json!(format::selector_column(replica_set.pointer("/spec/selector"))),
    ]
}

const STATEFUL_SET: &[ColumnDef] =
    &[NAME, col("Ready", "string", "Ready pods out of the desired replicas."), AGE, CONTAINERS, IMAGES];

fn stateful_set_cells(stateful_set: &Value, now: i64) -> Vec<Value> {
    let (containers, images) = template_containers(stateful_set, "/spec/template/spec");
    vec![
        name(stateful_set),
        json!(format!(
            "{}/{}",
            int(stateful_set, "/status/readyReplicas"),
            int(stateful_set, "/spec/replicas")
        )),
        json!(format::age(stateful_set, now)),
        containers,
        images,
    ]
}

const DAEMON_SET: &[ColumnDef] = &[
    NAME,
    col("Desired", "integer", "Nodes that should run the daemon pod."),
    col("Current", "integer", "Nodes running at least one daemon pod."),
    col("Ready", "integer", "Nodes whose daemon pod is ready."),
    col("Up-to-date", "integer", "Nodes running the latest template."),
    col("Available", "integer", "Nodes whose daemon pod is available."),
    col("Node Selector", "string", "The node selector of the pod template."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn daemon_set_cells(daemon_set: &Value, now: i64) -> Vec<Value> {
    let (containers, images) = template_containers(daemon_set, "/spec/template/spec");
    vec![
        name(daemon_set),
        json!(int(daemon_set, "/status/desiredNumberScheduled")),
        json!(int(daemon_set, "/status/currentNumberScheduled")),
        json!(int(daemon_set, "/status/numberReady")),
        json!(int(daemon_set, "/status/updatedNumberScheduled")),
        json!(int(daemon_set, "/status/numberAvailable")),
        json!(format::labels(daemon_set.pointer("/spec/template/spec/nodeSelector"))),
        json!(format::age(daemon_set, now)),
        containers,
        images,
        json!(format::selector_column(daemon_set.pointer("/spec/selector"))),
    ]
}

const CONTROLLER_REVISION: &[ColumnDef] = &[
    NAME,
    col("Controller", "string", "The controller owning the revision, as kind.group/name."),
    col("Revision", "string", "The revision number."),
    AGE,
];

/// The owner of a controller revision as `kind.group/name` (lower-case kind and group).
pub(super) fn controller_of(object: &Value) -> String {
    let Some(owner) = list(object, "/metadata/ownerReferences")
        .iter()
        .find(|reference| reference.get("controller").and_then(Value::as_bool) == Some(true))
    else {
        return "<none>".into();
    };
    let group = text(owner, "/apiVersion").rsplit_once('/').map_or("", |(group, _)| group);
    let kind = text(owner, "/kind");
    let qualified = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
    let name = text(owner, "/name");
    if qualified.is_empty() { name.to_string() } else { format!("{}/{name}", qualified.to_lowercase()) }
}

fn controller_revision_cells(revision: &Value, now: i64) -> Vec<Value> {
    vec![
        name(revision),
        json!(controller_of(revision)),
        json!(int(revision, "/revision")),
        json!(format::age(revision, now)),
    ]
}

const JOB: &[ColumnDef] = &[
    NAME,
    col("Status", "string", "The job's state, from its conditions."),
    col("Completions", "string", "Succeeded pods out of the completions wanted."),
    col("Duration", "string", "How long the job ran (or has been running)."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn job_condition(job: &Value, kind: &str) -> bool {
    list(job, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == kind)
        .is_some_and(|c| text(c, "/status") == "True")
}

/// A job's STATUS column, from its conditions (the first that holds, in kube's order).
pub(super) fn job_status(job: &Value) -> &'static str {
    if job_condition(job, "Complete") {
        "Complete"
    } else if job_condition(job, "Failed") {
        "Failed"
    } else if job.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) {
        "Terminating"
    } else if job_condition(job, "Suspended") {
        "Suspended"
    } else if job_condition(job, "FailureTarget") {
        "FailureTarget"
    } else if job_condition(job, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    }
}

/// A job's COMPLETIONS column: `succeeded/completions`, or `succeeded/1 of parallelism` for a
/// work queue.
pub(super) fn job_completions(job: &Value) -> String {
    let succeeded = int(job, "/status/succeeded");
    match job.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match int(job, "/spec/parallelism") {
            parallelism if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

fn job_cells(job: &Value, now: i64) -> Vec<Value> {
    let duration =
        match (format::timestamp(job, "/status/startTime"), format::timestamp(job, "/status/completionTime"))
        {
            (None, _) => String::new(),
            (Some(start), None) => human_duration(now - start),
            (Some(start), Some(end)) => human_duration(end - start),
        };
    let (containers, images) = template_containers(job, "/spec/template/spec");
    vec![
        name(job),
        json!(job_status(job)),
        json!(job_completions(job)),
        json!(duration),
        json!(format::age(job, now)),
        containers,
        images,
        json!(format::selector_column(job.pointer("/spec/selector"))),
    ]
}

const CRON_JOB: &[ColumnDef] = &[
    NAME,
    col("Schedule", "string", "The cron schedule."),
    col("Timezone", "string", "The time zone of the schedule."),
    col("Suspend", "boolean", "Whether new runs are suspended."),
    col("Active", "integer", "Jobs currently running."),
    col("Last Schedule", "string", "Time since a job was last scheduled."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn cron_job_cells(cron_job: &Value, now: i64) -> Vec<Value> {
    let last_schedule = if format::timestamp(cron_job, "/status/lastScheduleTime").is_some() {
        format::since(cron_job, "/status/lastScheduleTime", now)
    } else {
        "<none>".into()
    };
    let (containers, images) = template_containers(cron_job, "/spec/jobTemplate/spec/template/spec");
    vec![
        name(cron_job),
        json!(text(cron_job, "/spec/schedule")),
        json!(format::or(text(cron_job, "/spec/timeZone"), "<none>")),
        json!(format::bool_or_unset(cron_job.pointer("/spec/suspend"))),
        json!(format::count(cron_job, "/status/active")),
        json!(last_schedule),
        json!(format::age(cron_job, now)),
        containers,
        images,
        json!(format::selector_column(cron_job.pointer("/spec/jobTemplate/spec/selector"))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_704_067_200; // 2024-01-01T00:00:00Z

    fn template() -> Value {
        json!({"spec": {"containers": [{"name": "app", "image": "nginx:1"}, {"name": "log", "image": "busybox"}]}})
    }

    #[test]
    fn deployment_and_replica_set_rows() {
        let deployment = json!({
            "metadata": {"name": "web", "creationTimestamp": "2023-12-31T22:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template()},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        });
        assert_eq!(
            deployment_cells(&deployment, NOW),
            [
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("120m"),
                json!("app,log"),
                json!("nginx:1,busybox"),
                json!("app=web")
            ]
        );
        let replica_set = json!({"spec": {"replicas": 3, "template": template()}, "status": {"replicas": 3}});
        let cells = replica_set_cells(&replica_set, NOW);
        assert_eq!(cells[1..4], [json!(3), json!(3), json!(0)]);
        assert_eq!(cells[7], json!("<none>"));
    }

    #[test]
    fn daemon_and_stateful_sets() {
        let daemon_set = json!({
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}, "containers": []}}},
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                       "updatedNumberScheduled": 1, "numberAvailable": 2},
        });
        let cells = daemon_set_cells(&daemon_set, NOW);
        assert_eq!(
            cells[1..7],
            [json!(3), json!(3), json!(2), json!(1), json!(2), json!("kubernetes.io/os=linux")]
        );
        assert_eq!(cells[10], json!("app=agent"));
        let stateful_set =
            json!({"spec": {"replicas": 2, "template": template()}, "status": {"readyReplicas": 1}});
        assert_eq!(stateful_set_cells(&stateful_set, NOW)[1], json!("1/2"));
    }

    #[test]
    fn jobs_status_completions_and_duration() {
        let mut job = json!({
            "spec": {"completions": 3, "parallelism": 2, "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}}, "template": template()},
            "status": {"succeeded": 1, "startTime": "2023-12-31T23:55:00Z"},
        });
        assert_eq!(job_status(&job), "Running");
        assert_eq!(job_completions(&job), "1/3");
        assert_eq!(job_cells(&job, NOW)[3], json!("5m"));
        job["status"]["completionTime"] = json!("2023-12-31T23:57:30Z");
        job["status"]["conditions"] = json!([{"type": "Complete", "status": "True"}]);
        assert_eq!(job_status(&job), "Complete");
        assert_eq!(job_cells(&job, NOW)[3], json!("2m30s"));
        let queue = json!({"spec": {"parallelism": 4}, "status": {"succeeded": 2}});
        assert_eq!(job_completions(&queue), "2/1 of 4");
        assert_eq!(job_completions(&json!({"spec": {}})), "0/1");
        let suspended = json!({"status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
        assert_eq!(job_status(&suspended), "Suspended");
        let failing = json!({"status": {"conditions": [{"type": "FailureTarget", "status": "True"}]}});
        assert_eq!(job_status(&failing), "FailureTarget");
        let deleted = json!({"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}});
        assert_eq!(job_status(&deleted), "Terminating");
        assert_eq!(job_cells(&json!({}), NOW)[3], json!(""));
    }

    #[test]
    fn cron_jobs_and_revisions() {
        let cron_job = json!({
            "spec": {"schedule": "*/5 * * * *", "suspend": false,
                     "jobTemplate": {"spec": {"template": template()}}},
            "status": {"active": [{"name": "j1"}], "lastScheduleTime": "2023-12-31T23:55:00Z"},
        });
        let cells = cron_job_cells(&cron_job, NOW);
        assert_eq!(
            cells[1..6],
            [json!("*/5 * * * *"), json!("<none>"), json!("False"), json!(1), json!("5m")]
        );
        assert_eq!(cells[9], json!("<none>"));
        let revision = json!({
            "metadata": {"ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": true}]},
            "revision": 4,
        });
        assert_eq!(controller_revision_cells(&revision, NOW)[1..3], [json!("statefulset.apps/db"), json!(4)]);
        let core_owner = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "controller": true}]}});
        assert_eq!(controller_of(&core_owner), "pod/p");
        assert_eq!(controller_of(&json!({})), "<none>");
    }
}
