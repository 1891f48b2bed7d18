//! The store on both databases (SQLite, and a real PostgreSQL started by the integration
//! harness): the same operations give the same answers. Audit records are written and
//! completed, filtered and paginated newest first; a taken idempotency key is reported as a
//! duplicate and writes nothing; transitions are compare-and-set and appended in order; the same
//! for image pulls and recreates (tasks), whose plan and result are kept.
//!
//! The PostgreSQL half is skipped, with a message, only when no PostgreSQL binaries exist.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use chrono::Duration;
use kruise_api::store::{
    AuditFinish, AuditQuery, NewAuditRecord, NewRollout, NewTask, NewTaskTransition, NewTransition, Outcome,
    RolloutQuery, RolloutState, Store, StoreError, TaskKind, TaskState, now,
};
use kruise_integration::{HarnessError, postgres::Postgres};
use serde_json::json;

#[tokio::test]
async fn sqlite_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(&dir.path().join("store.db")).await.unwrap();
    exercise(&store).await;
    store.close().await;
    // Reopening runs the migrations again (a no-op) and keeps every record.
    let store = Store::connect(&format!("sqlite:{}", dir.path().join("store.db").display())).await.unwrap();
    let all = store.query_audit(&AuditQuery { limit: 500, ..Default::default() }).await.unwrap();
    assert_eq!(all.items.len(), 35, "30 records, 3 rollouts, 2 tasks");
}

#[tokio::test]
async fn postgres_store() {
    let postgres = match Postgres::start() {
        Ok(postgres) => postgres,
        Err(HarnessError::PostgresMissing(message)) => {
            eprintln!("SKIPPED postgres_store: {message}");
            return;
        }
        Err(error) => panic!("starting PostgreSQL: {error}"),
    };
    let store = Store::connect(&postgres.url()).await.unwrap();
    exercise(&store).await;
    store.close().await;
    let store = Store::connect(&postgres.url()).await.unwrap();
    let all = store.query_audit(&AuditQuery { limit: 500, ..Default::default() }).await.unwrap();
    assert_eq!(all.items.len(), 35, "30 records, 3 rollouts, 2 tasks");
    store.close().await;
}

fn record(index: usize, time: chrono::DateTime<chrono::Utc>) -> NewAuditRecord {
    NewAuditRecord {
        id: format!("audit-{index:02}"),
        time,
        actor: if index.is_multiple_of(3) { "ci".into() } else { "admin".into() },
        action: if index.is_multiple_of(2) { "rollout.create".into() } else { "rollout.pause".into() },
        namespace: Some(if index.is_multiple_of(5) { "team".into() } else { "default".into() }),
        target: format!("CloneSet/web-{}", index % 4),
        rollout_id: None,
        task_id: None,
        request: json!({"method": "POST", "index": index}),
        outcome: if index.is_multiple_of(7) { Outcome::Pending } else { Outcome::Rejected },
        http_status: if index.is_multiple_of(7) { 0 } else { 422 },
        grpc_status: None,
        correlation_id: format!("corr-{index}"),
        message: Some("because".into()),
    }
}

async fn exercise(store: &Store) {
    store.ping().await.unwrap();
    let start = now() - Duration::minutes(10);
    for index in 0..30 {
        store.insert_audit(&record(index, start + Duration::seconds(index as i64))).await.unwrap();
    }
    // A pending record gets its outcome.
    let finish = AuditFinish {
        outcome: Outcome::Accepted,
        http_status: 202,
        grpc_status: None,
        message: None,
        rollout_id: Some("rollout-x"),
        task_id: None,
    };
    store.finish_audit("audit-07", &finish).await.unwrap();

    let query = |f: &dyn Fn(&mut AuditQuery)| {
        let mut q = AuditQuery { limit: 500, ..Default::default() };
        f(&mut q);
        q
    };
    let all = store.query_audit(&query(&|_| {})).await.unwrap();
    let ids: Vec<&str> = all.items.iter().map(|r| r.id.as_str()).collect();
    let expected: Vec<String> = (0..30).rev().map(|i| format!("audit-{i:02}")).collect();
    assert_eq!(ids, expected, "newest first");
    assert!(all.next_before.is_none());
    let seven = all.items.iter().find(|r| r.id == "audit-07").unwrap();
    assert_eq!(
        (seven.outcome.as_str(), seven.http_status, seven.rollout_id.as_deref()),
        ("accepted", 202, Some("rollout-x"))
    );
    assert!(seven.finished_at.is_some());
    assert_eq!(seven.request.0["index"], 7);
    assert_eq!(seven.time, start + Duration::seconds(7), "times read back exactly");

    // Pages of 7 walk everything once.
    let mut walked = Vec::new();
    let mut before = None;
    loop {
        let page = store
            .query_audit(&AuditQuery { limit: 7, before_seq: before, ..Default::default() })
            .await
            .unwrap();
        assert!(page.items.len() <= 7);
        walked.extend(page.items.iter().map(|r| r.id.clone()));
        match page.next_before {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    assert_eq!(walked, expected);

    let count = |q: AuditQuery| async move { store.query_audit(&q).await.unwrap().items.len() };
    assert_eq!(count(query(&|q| q.actor = Some("ci".into()))).await, 10);
    assert_eq!(count(query(&|q| q.action = Some("rollout.pause".into()))).await, 15);
    assert_eq!(count(query(&|q| q.action = Some("rollout".into()))).await, 30);
    assert_eq!(
        count(query(&|q| q.action = Some("roll".into()))).await,
        0,
        "a prefix is a whole resource name"
    );
    assert_eq!(count(query(&|q| q.namespace = Some("team".into()))).await, 6);
    assert_eq!(count(query(&|q| q.allowed_namespaces = Some(vec!["team".into()]))).await, 6);
    assert_eq!(count(query(&|q| q.allowed_namespaces = Some(vec![]))).await, 0);
    assert_eq!(count(query(&|q| q.target = Some("CloneSet/web-1".into()))).await, 8);
    assert_eq!(count(query(&|q| q.outcome = Some(Outcome::Pending))).await, 4, "0, 14, 21, 28");
    assert_eq!(count(query(&|q| q.outcome = Some(Outcome::Accepted))).await, 1);
    assert_eq!(count(query(&|q| q.since = Some(start + Duration::seconds(20)))).await, 10);
    assert_eq!(count(query(&|q| q.until = Some(start + Duration::seconds(20)))).await, 20);
    assert_eq!(
        count(query(&|q| {
            q.since = Some(start + Duration::seconds(10));
            q.until = Some(start + Duration::seconds(20));
            q.actor = Some("admin".into());
        }))
        .await,
        7
    );

    // Rollouts: the idempotency key is unique per actor and namespace.
    let rollout = |id: &str, key: Option<&str>| NewRollout {
        id: id.into(),
        namespace: "default".into(),
        workload_kind: "CloneSet".into(),
        workload_name: "web".into(),
        spec: json!({"workload": {"kind": "CloneSet", "name": "web"}, "images": {"nginx": "nginx:1"}}),
        previous_revision: Some("web-1".into()),
        created_by: "ci".into(),
        created_at: now(),
        idempotency_key: key.map(str::to_string),
        body_hash: Some("hash".into()),
        reason: Some("why".into()),
    };
    let audit = |id: &str| NewAuditRecord { id: id.into(), outcome: Outcome::Pending, ..record(100, now()) };
    store.create_rollout(&audit("r-audit-1"), &rollout("r1", Some("k1"))).await.unwrap();
    let duplicate = store.create_rollout(&audit("r-audit-2"), &rollout("r2", Some("k1"))).await;
    assert!(matches!(duplicate, Err(StoreError::Duplicate)), "{duplicate:?}");
    let all = store.query_audit(&query(&|_| {})).await.unwrap();
    assert!(all.items.iter().any(|r| r.id == "r-audit-1"));
    assert!(
        !all.items.iter().any(|r| r.id == "r-audit-2"),
        "the refused rollout's audit record was rolled back"
    );
    store.create_rollout(&audit("r-audit-3"), &rollout("r3", None)).await.unwrap();
    store.create_rollout(&audit("r-audit-4"), &rollout("r4", None)).await.unwrap();
    let found = store.rollout_by_idempotency_key("ci", "default", "k1").await.unwrap().unwrap();
    assert_eq!(found.id, "r1");
    assert!(store.rollout_by_idempotency_key("admin", "default", "k1").await.unwrap().is_none());

    // Transitions are compare-and-set.
    store.set_rollout_target("r1", Some(2), None, None).await.unwrap();
    store.set_rollout_revision("r1", "web-2").await.unwrap();
    store.set_rollout_revision("r1", "web-3").await.unwrap();
    let transition = |from, to| NewTransition {
        rollout_id: "r1".into(),
        time: now(),
        from_state: Some(from),
        to_state: to,
        actor: "watcher".into(),
        reason: "Observed".into(),
        message: None,
        progress: Some(json!({"updated": 1})),
    };
    let progressing = transition(RolloutState::Pending, RolloutState::Progressing);
    assert!(store.transition(RolloutState::Pending, None, &progressing).await.unwrap());
    assert!(!store.transition(RolloutState::Pending, None, &progressing).await.unwrap(), "stale from-state");
    let done = transition(RolloutState::Progressing, RolloutState::Succeeded);
    assert!(store.transition(RolloutState::Progressing, None, &done).await.unwrap());
    let row = store.rollout("r1").await.unwrap().unwrap();
    assert_eq!(row.state(), RolloutState::Succeeded);
    assert_eq!(row.revision.as_deref(), Some("web-2"), "the first named revision stays");
    assert_eq!(row.generation, Some(2));
    assert!(row.finished_at.is_some());
    assert_eq!(row.progress.unwrap().0, json!({"updated": 1}));
    let history: Vec<(Option<String>, String)> =
        store.transitions("r1").await.unwrap().into_iter().map(|t| (t.from_state, t.to_state)).collect();
    assert_eq!(
        history,
        [
            (None, "Pending".to_string()),
            (Some("Pending".to_string()), "Progressing".to_string()),
            (Some("Progressing".to_string()), "Succeeded".to_string()),
        ]
    );
    let active: Vec<String> = store.active_rollouts().await.unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(active, ["r3", "r4"]);

    // Listing rollouts pages newest first and filters by state.
    let page = store
        .list_rollouts(&RolloutQuery { namespace: "default".into(), limit: 2, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(page.items.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r4", "r3"]);
    let rest = store
        .list_rollouts(&RolloutQuery {
            namespace: "default".into(),
            limit: 2,
            before_seq: page.next_before,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(rest.items.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r1"]);
    assert!(rest.next_before.is_none());
    let succeeded = store
        .list_rollouts(&RolloutQuery {
            namespace: "default".into(),
            state: Some(RolloutState::Succeeded),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(succeeded.items.len(), 1);

    // The three accepted rollouts' records joined the thirty.
    let total = store.query_audit(&query(&|_| {})).await.unwrap().items.len();
    assert_eq!(total, 33);

    exercise_tasks(store).await;
}

/// Image pulls and recreates: written with their audit record in one transaction, unique
/// idempotency keys per kind, actor and namespace, compare-and-set transitions, plan and result
/// kept, and the audit record's task id.
async fn exercise_tasks(store: &Store) {
    let task = |id: &str, kind: TaskKind, key: Option<&str>| NewTask {
        id: id.into(),
        kind,
        namespace: "default".into(),
        target: "CloneSet/web".into(),
        spec: json!({"images": ["nginx:1"], "workload": {"kind": "CloneSet", "name": "web"}}),
        plan: json!({"jobs": [{"image": "nginx:1", "job": format!("imagepull-{id}-0")}]}),
        created_by: "ops".into(),
        created_at: now(),
        idempotency_key: key.map(str::to_string),
        body_hash: Some("hash".into()),
        reason: Some("warm up".into()),
    };
    let audit = |id: &str, task: &str| NewAuditRecord {
        id: id.into(),
        outcome: Outcome::Pending,
        task_id: Some(task.into()),
        action: "image-pull.create".into(),
        ..record(200, now())
    };
    store.create_task(&audit("t-audit-1", "t1"), &task("t1", TaskKind::ImagePull, Some("k"))).await.unwrap();
    let duplicate =
        store.create_task(&audit("t-audit-2", "t2"), &task("t2", TaskKind::ImagePull, Some("k"))).await;
    assert!(matches!(duplicate, Err(StoreError::Duplicate)), "{duplicate:?}");
    // The same key for the other kind is another request.
    store.create_task(&audit("t-audit-3", "t3"), &task("t3", TaskKind::Recreate, Some("k"))).await.unwrap();
    let found =
        store.task_by_idempotency_key(TaskKind::ImagePull, "ops", "default", "k").await.unwrap().unwrap();
    assert_eq!(
        (found.id.as_str(), found.kind.as_str(), found.state()),
        ("t1", "image-pull", TaskState::Pending)
    );
    assert!(
        store.task_by_idempotency_key(TaskKind::ImagePull, "ci", "default", "k").await.unwrap().is_none()
    );
    let records = store
        .query_audit(&AuditQuery { action: Some("image-pull".into()), limit: 10, ..Default::default() })
        .await
        .unwrap();
    let ids: Vec<(&str, Option<&str>)> =
        records.items.iter().map(|r| (r.id.as_str(), r.task_id.as_deref())).collect();
    assert_eq!(ids, [("t-audit-3", Some("t3")), ("t-audit-1", Some("t1"))], "t-audit-2 was rolled back");

    let transition = |to| NewTaskTransition {
        task_id: "t1".into(),
        time: now(),
        from_state: None,
        to_state: to,
        actor: "watcher".into(),
        reason: "Observed".into(),
        message: Some(format!("now {to:?}")),
    };
    let running = transition(TaskState::Running);
    assert!(store.task_transition(TaskState::Pending, &running, None, None).await.unwrap());
    assert!(!store.task_transition(TaskState::Pending, &running, None, None).await.unwrap(), "stale");
    store.update_task("t1", None, Some(&json!([{"image": "nginx:1", "desired": 3}]))).await.unwrap();
    let plan = json!({"jobs": []});
    let done = transition(TaskState::Succeeded);
    assert!(store.task_transition(TaskState::Running, &done, Some(&plan), None).await.unwrap());
    let row = store.task("t1").await.unwrap().unwrap();
    assert_eq!(row.state(), TaskState::Succeeded);
    assert_eq!(row.plan.0, plan);
    assert_eq!(row.result.unwrap().0, json!([{"image": "nginx:1", "desired": 3}]), "a result is kept");
    assert_eq!(row.message.as_deref(), Some("now Succeeded"));
    assert!(row.finished_at.is_some());
    let history: Vec<String> =
        store.task_transitions("t1").await.unwrap().into_iter().map(|t| t.to_state).collect();
    assert_eq!(history, ["Pending", "Running", "Succeeded"]);
    let active: Vec<String> = store.active_tasks().await.unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!(active, ["t3"]);
}
