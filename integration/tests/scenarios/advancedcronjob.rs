//! AdvancedCronJobs end to end, on both tiers: simulated nodes and the manager. Five cron jobs
//! on the every-minute schedule share two minute boundaries (about two minutes in all):
//!
//! - a Job cron job (Allow, one successful run kept) creates `<name>-<unix time>` with the
//!   scheduled-at annotation, its template's labels and the cron job as controller; the Job
//!   completes, the status follows (active, lastScheduleTime, type); at the second run the first
//!   one is pruned;
//! - a BroadcastJob cron job creates BroadcastJobs the same way (their pods are the BroadcastJob
//!   controller's business);
//! - Forbid skips the second run while the first still runs; Replace deletes the first and
//!   starts the second;
//! - a paused cron job starts nothing, and once resumed starts the run it missed at once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::batch::v1::Job;
use kruise_crds::apps::v1beta1::{AdvancedCronJob, BroadcastJob};
use kruise_integration::{Scene, Skip};
use kube::{
    Api, Resource, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::Kit;

const NAMESPACE: &str = "default";
const SCHEDULED_AT: &str = "apps.kruise.io/scheduled-at";
/// Longest wait for a minute boundary and the reconcile after it.
const NEXT_MINUTE: Duration = Duration::from_secs(75);

fn cron_job(name: &str, policy: &str, template: Value, extra: Value) -> AdvancedCronJob {
    let mut manifest = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "schedule": "*/1 * * * *", "concurrencyPolicy": policy,
            "successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 1,
            "template": template,
        },
    });
    crate::cloneset_kit::merge(&mut manifest, extra);
    serde_json::from_value(manifest).unwrap()
}

fn job_template(name: &str, command: &str) -> Value {
    json!({"jobTemplate": {
        "metadata": {"labels": {"cronjob": name}},
        "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "main", "image": "busybox", "command": ["/bin/sh", "-c", command]},
        ]}}},
    }})
}

fn broadcast_template(name: &str) -> Value {
    json!({"broadcastJobTemplate": {
        "metadata": {"labels": {"cronjob": name}},
        "spec": {
            "parallelism": "100%", "completionPolicy": {"type": "Always"},
            "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "busybox", "command": ["/bin/sh", "-c", "sleep 1"]},
            ]}},
        },
    }})
}

/// The children of `owner` (by controller UID), by name.
async fn children_of<K>(api: &Api<K>, owner: &AdvancedCronJob) -> Vec<K>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let uid = owner.uid().unwrap();
    let mut children: Vec<K> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|child| {
            child.meta().deletion_timestamp.is_none()
                && child.owner_references().iter().any(|r| r.controller == Some(true) && r.uid == uid)
        })
        .collect();
    children.sort_by_key(|child| child.name_any());
    children
}

fn names<K: Resource>(children: &[K]) -> Vec<String> {
    children.iter().map(|c| c.name_any()).collect()
}

/// Polls `check` until it gives a value; panics with `what` and the last state it saw.
async fn wait_until<T, F, Fut>(what: &str, within: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + within;
    loop {
        match check().await {
            Ok(value) => return value,
            Err(state) if Instant::now() > deadline => panic!("timed out waiting for {what}: {state}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

fn job_succeeded(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|all| all.iter().any(|c| c.type_ == "Complete" && c.status == "True"))
}

fn unix(seconds: i64) -> String {
    seconds.to_string()
}

/// The scheduled time a child was created for, in Unix seconds (from its name), checked
/// against its annotation.
fn scheduled_unix<K: Resource>(child: &K, cron_job: &str) -> i64 {
    let name = child.name_any();
    let suffix = name.strip_prefix(&format!("{cron_job}-")).unwrap_or_else(|| panic!("child name {name}"));
    let seconds: i64 = suffix.parse().unwrap_or_else(|_| panic!("child name {name}"));
    let annotation = child.annotations().get(SCHEDULED_AT).cloned().unwrap_or_default();
    let parsed: k8s_openapi::jiff::Timestamp =
        annotation.parse().unwrap_or_else(|e| panic!("{annotation}: {e}"));
    assert_eq!(parsed.as_second(), seconds, "the annotation names the same time as the name");
    assert_eq!(seconds % 60, 0, "every-minute runs are on the minute");
    seconds
}

pub async fn runs_on_schedule(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    let client = kit.client.clone();
    let cron_jobs: Api<AdvancedCronJob> = Api::namespaced(client.clone(), NAMESPACE);
    let jobs: Api<Job> = Api::namespaced(client.clone(), NAMESPACE);
    let broadcasts: Api<BroadcastJob> = Api::namespaced(client.clone(), NAMESPACE);
    let deadline = Instant::now() + Duration::from_secs(30);
    while cron_jobs.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "AdvancedCronJobs are not served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // All five must share their first boundary: do not create them in a minute's last seconds.
    let second_of_minute = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() % 60;
    if second_of_minute >= 55 {
        tokio::time::sleep(Duration::from_secs(62 - second_of_minute)).await;
    }
    let post = PostParams::default();
    for cron_job in [
        cron_job("acj-job", "Allow", job_template("acj-job", "sleep 1"), json!({})),
        cron_job("acj-bj", "Allow", broadcast_template("acj-bj"), json!({})),
        cron_job("acj-forbid", "Forbid", job_template("acj-forbid", "sleep 3600"), json!({})),
        cron_job("acj-replace", "Replace", job_template("acj-replace", "sleep 3600"), json!({})),
        cron_job(
            "acj-paused",
            "Allow",
            job_template("acj-paused", "sleep 1"),
            json!({"spec": {"paused": true}}),
        ),
    ] {
        cron_jobs.create(&post, &cron_job).await.unwrap();
    }
    let get = |name: &'static str| {
        let cron_jobs = cron_jobs.clone();
        async move { cron_jobs.get(name).await.unwrap() }
    };
    let (job_cj, bj_cj, forbid_cj, replace_cj, paused_cj) = (
        get("acj-job").await,
        get("acj-bj").await,
        get("acj-forbid").await,
        get("acj-replace").await,
        get("acj-paused").await,
    );

    // First boundary: one child each, named after the same scheduled time.
    let first = wait_until("the first run of acj-job", NEXT_MINUTE, || async {
        let children = children_of(&jobs, &job_cj).await;
        match children.as_slice() {
            [one] => Ok(one.clone()),
            other => Err(format!("children {:?}", names(other))),
        }
    })
    .await;
    let t1 = scheduled_unix(&first, "acj-job");
    assert_eq!(first.labels().get("cronjob").map(String::as_str), Some("acj-job"), "template labels copied");
    let owner = &first.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.api_version.as_str(), owner.name.as_str(), owner.block_owner_deletion),
        ("AdvancedCronJob", "apps.kruise.io/v1beta1", "acj-job", Some(true))
    );
    for (api_name, cron_job) in [("acj-forbid", &forbid_cj), ("acj-replace", &replace_cj)] {
        let children =
            wait_until(&format!("the first run of {api_name}"), Duration::from_secs(10), || async {
                let children = children_of(&jobs, cron_job).await;
                if children.len() == 1 {
                    Ok(children)
                } else {
                    Err(format!("children {:?}", names(&children)))
                }
            })
            .await;
        assert_eq!(names(&children), [format!("{api_name}-{}", unix(t1))]);
    }
    let broadcast = wait_until("the first BroadcastJob", Duration::from_secs(10), || async {
        let children = children_of(&broadcasts, &bj_cj).await;
        if children.len() == 1 {
            Ok(children[0].clone())
        } else {
            Err(format!("children {:?}", names(&children)))
        }
    })
    .await;
    assert_eq!(scheduled_unix(&broadcast, "acj-bj"), t1);
    assert_eq!(broadcast.labels().get("cronjob").map(String::as_str), Some("acj-bj"));
    assert_eq!(
        broadcast.spec.template.spec.as_ref().unwrap().containers[0].image.as_deref(),
        Some("busybox")
    );
    assert!(children_of(&jobs, &paused_cj).await.is_empty(), "a paused cron job starts nothing");

    // The Job completes; the status follows.
    wait_until(
        "acj-job's first run to complete and leave status.active",
        Duration::from_secs(30),
        || async {
            let cron_job = get("acj-job").await;
            let job = jobs.get(&first.name_any()).await.unwrap();
            let status = cron_job.status.clone().unwrap_or_default();
            let last = status.last_schedule_time.as_ref().map(|t| t.0.as_second());
            if job_succeeded(&job)
                && status.active.is_empty()
                && last == Some(t1)
                && status.type_.as_str() == "Job"
            {
                Ok(())
            } else {
                Err(format!("job status {:?}, cron job status {:?}", job.status, cron_job.status))
            }
        },
    )
    .await;
    let forbid_status = get("acj-forbid").await.status.unwrap_or_default();
    assert_eq!(
        forbid_status
            .active
            .iter()
            .map(|r| (r.kind.clone().unwrap_or_default(), r.name.clone().unwrap_or_default()))
            .collect::<Vec<_>>(),
        [("Job".to_string(), format!("acj-forbid-{}", unix(t1)))],
        "status.active lists the running Job"
    );
    let bj_status = get("acj-bj").await.status.unwrap_or_default();
    assert_eq!(bj_status.type_.as_str(), "BroadcastJob");
    assert_eq!(bj_status.last_schedule_time.map(|t| t.0.as_second()), Some(t1));

    // Resumed, the paused cron job starts the run it missed at once.
    cron_jobs
        .patch("acj-paused", &PatchParams::default(), &Patch::Merge(&json!({"spec": {"paused": false}})))
        .await
        .unwrap();
    let resumed = wait_until("the resumed cron job's run", Duration::from_secs(10), || async {
        let children = children_of(&jobs, &paused_cj).await;
        if children.len() == 1 {
            Ok(children[0].clone())
        } else {
            Err(format!("children {:?}", names(&children)))
        }
    })
    .await;
    assert_eq!(scheduled_unix(&resumed, "acj-paused"), t1, "the latest missed time");

    // Second boundary: Replace swaps its run, Forbid keeps its first, the history limit prunes.
    let t2 = t1 + 60;
    let second = format!("acj-replace-{}", unix(t2));
    wait_until("Replace to replace its run", NEXT_MINUTE, || async {
        let children = names(&children_of(&jobs, &replace_cj).await);
        if children == [second.clone()] { Ok(()) } else { Err(format!("children {children:?}")) }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        names(&children_of(&jobs, &forbid_cj).await),
        [format!("acj-forbid-{}", unix(t1))],
        "Forbid skipped the second run"
    );
    let kept = format!("acj-job-{}", unix(t2));
    wait_until("acj-job's history to keep only the second run", Duration::from_secs(30), || async {
        let children = children_of(&jobs, &job_cj).await;
        let done = children.iter().all(job_succeeded);
        if names(&children) == [kept.clone()] && done {
            Ok(())
        } else {
            Err(format!("children {:?}", names(&children)))
        }
    })
    .await;
    let broadcast_names = names(&children_of(&broadcasts, &bj_cj).await);
    assert!(
        broadcast_names.contains(&format!("acj-bj-{}", unix(t2))),
        "second BroadcastJob: {broadcast_names:?}"
    );

    // Events are written in the background: give them a moment.
    let expected: [(&str, &str); 4] = [
        ("acj-job", "SuccessfulCreate"),
        ("acj-job", "SuccessfulDelete"),
        ("acj-replace", "SuccessfulDelete"),
        ("acj-forbid", "JobAlreadyActive"),
    ];
    for (name, reason) in expected {
        wait_until(&format!("a {reason} event on {name}"), Duration::from_secs(10), || async {
            let reasons = kit.event_reasons("AdvancedCronJob", name).await;
            if reasons.contains_key(reason) { Ok(()) } else { Err(format!("{reasons:?}")) }
        })
        .await;
    }
    kit.shutdown().await;
    Ok(())
}
