//! Image pulls and container recreates ("tasks"): what was asked for, the plan the API follows
//! to carry it out (kept here so that it survives API restarts), the last observed result, and
//! every state transition.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{AssertSqlSafe, types::Json};
use utoipa::ToSchema;

use super::{NewAuditRecord, Pool, Store, StoreError, insert_audit_query, now};

/// What kind of task a row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskKind {
    /// An image pre-pull (ImagePullJobs).
    ImagePull,
    /// A container recreate (ContainerRecreateRequests).
    Recreate,
}

impl TaskKind {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ImagePull => "image-pull",
            Self::Recreate => "recreate",
        }
    }

    /// What clients call it in messages.
    pub fn noun(self) -> &'static str {
        match self {
            Self::ImagePull => "image pull",
            Self::Recreate => "recreate",
        }
    }
}

/// The state of an image pull or a recreate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum TaskState {
    /// Recorded; nothing has started in the cluster yet.
    Pending,
    /// Work is under way.
    Running,
    /// Everything finished and succeeded.
    Succeeded,
    /// Everything finished and something failed (or it could not be carried out).
    Failed,
}

impl TaskState {
    /// The stored form (the variant name).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Running => "Running",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
        }
    }

    /// Parses the stored form.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pending, Self::Running, Self::Succeeded, Self::Failed]
            .into_iter()
            .find(|state| state.as_str() == text)
    }

    /// Whether the task has ended.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed)
    }
}

/// A task to record.
#[derive(Clone, Debug)]
pub struct NewTask {
    /// Its id.
    pub id: String,
    /// Its kind.
    pub kind: TaskKind,
    /// The namespace.
    pub namespace: String,
    /// What it acts on (`CloneSet/web`, `Pod/web-1`, `nodes`).
    pub target: String,
    /// The request body.
    pub spec: Value,
    /// How it will be carried out.
    pub plan: Value,
    /// The actor.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// The caller's idempotency key.
    pub idempotency_key: Option<String>,
    /// SHA-256 of the canonical request body.
    pub body_hash: Option<String>,
    /// The caller's reason.
    pub reason: Option<String>,
}

/// A task as stored.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct TaskRow {
    /// Internal order.
    pub seq: i64,
    /// Its id.
    pub id: String,
    /// `image-pull` or `recreate`.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// What it acts on.
    pub target: String,
    /// The request body.
    pub spec: Json<Value>,
    /// How it is carried out.
    pub plan: Json<Value>,
    /// The last observed result.
    pub result: Option<Json<Value>>,
    /// The stored state.
    pub state: String,
    /// Detail of the state.
    pub message: Option<String>,
    /// Who created it.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// Last change of the row.
    pub updated_at: DateTime<Utc>,
    /// When it ended.
    pub finished_at: Option<DateTime<Utc>>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
    /// Body hash.
    pub body_hash: Option<String>,
}

impl TaskRow {
    /// The stored state (an unknown stored value reads as Failed, loudly).
    pub fn state(&self) -> TaskState {
        TaskState::parse(&self.state).unwrap_or_else(|| {
            tracing::warn!(task = %self.id, state = %self.state, "unknown stored task state");
            TaskState::Failed
        })
    }
}

/// A task transition to append.
#[derive(Clone, Debug)]
pub struct NewTaskTransition {
    /// The task.
    pub task_id: String,
    /// When.
    pub time: DateTime<Utc>,
    /// From (none for the first).
    pub from_state: Option<TaskState>,
    /// To.
    pub to_state: TaskState,
    /// Who caused it (`watcher` for observed changes).
    pub actor: String,
    /// Machine-readable reason (`Requested`, `Started`, `Completed`, `CreateFailed`, …).
    pub reason: String,
    /// Human-readable detail.
    pub message: Option<String>,
}

/// A task transition as stored.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct TaskTransitionRow {
    /// Internal order.
    pub seq: i64,
    /// The task.
    pub task_id: String,
    /// When.
    pub time: DateTime<Utc>,
    /// From.
    pub from_state: Option<String>,
    /// To.
    pub to_state: String,
    /// Who.
    pub actor: String,
    /// Why.
    pub reason: String,
    /// Detail.
    pub message: Option<String>,
}

const TASK_COLUMNS: &str = "SELECT seq, id, kind, namespace, target, spec, plan, result, state, message, \
    created_by, created_at, updated_at, finished_at, idempotency_key, body_hash FROM tasks";

fn insert_task_transition_query<DB: sqlx::Database>(
    transition: &NewTaskTransition,
) -> sqlx::query::Query<'static, DB, DB::Arguments>
where
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    sqlx::query(
        "INSERT INTO task_transitions (task_id, time, from_state, to_state, actor, reason, message) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(transition.task_id.clone())
    .bind(transition.time)
    .bind(transition.from_state.map(|s| s.as_str().to_string()))
    .bind(transition.to_state.as_str().to_string())
    .bind(transition.actor.clone())
    .bind(transition.reason.clone())
    .bind(transition.message.clone())
}

impl Store {
    /// Writes the audit record of a task request and the task itself (state Pending) in one
    /// transaction, before anything is changed in the cluster. [`StoreError::Duplicate`] when
    /// the idempotency key is taken.
    pub async fn create_task(&self, audit: &NewAuditRecord, task: &NewTask) -> Result<(), StoreError> {
        let sql = "INSERT INTO tasks (id, kind, namespace, target, spec, plan, state, created_by, created_at, \
                   updated_at, idempotency_key, body_hash, message) \
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12)";
        let transition = NewTaskTransition {
            task_id: task.id.clone(),
            time: task.created_at,
            from_state: None,
            to_state: TaskState::Pending,
            actor: task.created_by.clone(),
            reason: "Requested".into(),
            message: task.reason.clone(),
        };
        with_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            insert_audit_query(audit).execute(&mut *tx).await.map_err(StoreError::from_write)?;
            sqlx::query(sql)
                .bind(task.id.clone())
                .bind(task.kind.as_str())
                .bind(task.namespace.clone())
                .bind(task.target.clone())
                .bind(Json(task.spec.clone()))
                .bind(Json(task.plan.clone()))
                .bind(TaskState::Pending.as_str())
                .bind(task.created_by.clone())
                .bind(task.created_at)
                .bind(task.idempotency_key.clone())
                .bind(task.body_hash.clone())
                .bind(task.reason.clone())
                .execute(&mut *tx)
                .await
                .map_err(StoreError::from_write)?;
            insert_task_transition_query(&transition).execute(&mut *tx).await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// A task by id.
    pub async fn task(&self, id: &str) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!("{TASK_COLUMNS} WHERE id = $1");
        let row = with_pool!(self, pool => {
            sqlx::query_as::<_, TaskRow>(AssertSqlSafe(sql.clone())).bind(id.to_string()).fetch_optional(pool).await?
        });
        Ok(row)
    }

    /// The task of `kind` a caller created with an idempotency key in a namespace.
    pub async fn task_by_idempotency_key(
        &self,
        kind: TaskKind,
        actor: &str,
        namespace: &str,
        key: &str,
    ) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!(
            "{TASK_COLUMNS} WHERE kind = $1 AND created_by = $2 AND namespace = $3 AND idempotency_key = $4"
        );
        let row = with_pool!(self, pool => {
            sqlx::query_as::<_, TaskRow>(AssertSqlSafe(sql.clone()))
                .bind(kind.as_str())
                .bind(actor.to_string())
                .bind(namespace.to_string())
                .bind(key.to_string())
                .fetch_optional(pool)
                .await?
        });
        Ok(row)
    }

    /// Every task not in a terminal state (what the watcher carries on), oldest first.
    pub async fn active_tasks(&self) -> Result<Vec<TaskRow>, StoreError> {
        let sql = format!("{TASK_COLUMNS} WHERE state IN ($1, $2) ORDER BY seq");
        let rows = with_pool!(self, pool => {
            sqlx::query_as::<_, TaskRow>(AssertSqlSafe(sql.clone()))
                .bind(TaskState::Pending.as_str())
                .bind(TaskState::Running.as_str())
                .fetch_all(pool)
                .await?
        });
        Ok(rows)
    }

    /// Replaces a task's plan and/or result (without a state change).
    pub async fn update_task(
        &self,
        id: &str,
        plan: Option<&Value>,
        result: Option<&Value>,
    ) -> Result<(), StoreError> {
        let sql = "UPDATE tasks SET plan = COALESCE($1, plan), result = COALESCE($2, result), updated_at = $3 \
                   WHERE id = $4";
        with_pool!(self, pool => {
            sqlx::query(sql)
                .bind(plan.cloned().map(Json))
                .bind(result.cloned().map(Json))
                .bind(now())
                .bind(id.to_string())
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Moves a task from `from` to `transition.to_state` (compare-and-set, so concurrent
    /// watchers record a transition once), with its plan and result at that moment, and appends
    /// the transition. Returns whether this call made the change.
    pub async fn task_transition(
        &self,
        from: TaskState,
        transition: &NewTaskTransition,
        plan: Option<&Value>,
        result: Option<&Value>,
    ) -> Result<bool, StoreError> {
        let finished = transition.to_state.is_terminal().then_some(transition.time);
        let sql = "UPDATE tasks SET state = $1, message = $2, plan = COALESCE($3, plan), \
                   result = COALESCE($4, result), updated_at = $5, finished_at = COALESCE($6, finished_at) \
                   WHERE id = $7 AND state = $8";
        let changed = with_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let outcome = sqlx::query(sql)
                .bind(transition.to_state.as_str())
                .bind(transition.message.clone())
                .bind(plan.cloned().map(Json))
                .bind(result.cloned().map(Json))
                .bind(transition.time)
                .bind(finished)
                .bind(transition.task_id.clone())
                .bind(from.as_str())
                .execute(&mut *tx)
                .await?;
            let changed = outcome.rows_affected() == 1;
            if changed {
                insert_task_transition_query(transition).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            changed
        });
        Ok(changed)
    }

    /// Every transition of a task, oldest first.
    pub async fn task_transitions(&self, task_id: &str) -> Result<Vec<TaskTransitionRow>, StoreError> {
        let sql = "SELECT seq, task_id, time, from_state, to_state, actor, reason, message \
                   FROM task_transitions WHERE task_id = $1 ORDER BY seq";
        let rows = with_pool!(self, pool => {
            sqlx::query_as::<_, TaskTransitionRow>(sql).bind(task_id.to_string()).fetch_all(pool).await?
        });
        Ok(rows)
    }
}
