//! The store behind the service API: audit records, rollouts and their state transitions, and
//! image pulls and recreates ([`TaskRow`]) with theirs.
//!
//! PostgreSQL (`postgres://…`) is the production store; `kruise up` uses an embedded SQLite file
//! in its data directory. Both run the same SQL (`$n` placeholders work in both) against their
//! own migrations, embedded in the binary with `sqlx::migrate!`. Every write is a committed
//! transaction before the call returns (SQLite in WAL mode with `synchronous=FULL`), so a record
//! the API acknowledged survives a crash of the API.
//!
//! Pagination is keyset pagination on an internal, monotonic sequence number (newest first):
//! stable while records are added, and cheap at any depth. The cursor clients see is opaque
//! ([`cursor`]).

pub mod cursor;

use std::{path::Path, str::FromStr, time::Duration};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{
    AssertSqlSafe, PgPool, SqlitePool,
    postgres::PgPoolOptions,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
    types::Json,
};
use utoipa::ToSchema;

/// Why the store could not do something.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached or refused the statement.
    #[error("{0}")]
    Database(#[from] sqlx::Error),
    /// The migrations could not be applied.
    #[error("migrating the schema: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The URL names no supported database.
    #[error("unsupported database URL (expected postgres://…, postgresql://… or sqlite:…)")]
    UnsupportedUrl,
    /// A unique key (the idempotency key) is already taken.
    #[error("duplicate key")]
    Duplicate,
}

impl StoreError {
    fn from_write(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::Database(db) if db.is_unique_violation() => Self::Duplicate,
            _ => Self::Database(error),
        }
    }
}

/// Which database a store uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    /// PostgreSQL (production).
    Postgres,
    /// An embedded SQLite file.
    Sqlite,
}

#[derive(Clone, Debug)]
enum Pool {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

/// Runs `$body` with `$pool` bound to the concrete pool: the same SQL and bindings are checked
/// against each database's types.
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            Pool::Postgres($pool) => $body,
            Pool::Sqlite($pool) => $body,
        }
    };
}

/// Binds a list of [`Param`]s in order.
macro_rules! bind_params {
    ($query:expr, $params:expr) => {{
        let mut query = $query;
        for param in $params {
            query = match param {
                Param::Text(value) => query.bind(value.clone()),
                Param::Time(value) => query.bind(*value),
                Param::Int(value) => query.bind(*value),
            };
        }
        query
    }};
}

mod tasks;
pub use tasks::{NewTask, NewTaskTransition, TaskKind, TaskRow, TaskState, TaskTransitionRow};

/// A value bound into a dynamically built query.
#[derive(Clone, Debug)]
enum Param {
    Text(String),
    Time(DateTime<Utc>),
    Int(i64),
}

/// The audit store and rollout history.
#[derive(Clone, Debug)]
pub struct Store {
    pool: Pool,
}

/// The current time at the store's precision (microseconds), so what is written reads back equal.
pub fn now() -> DateTime<Utc> {
    let now = Utc::now();
    DateTime::from_timestamp_micros(now.timestamp_micros()).unwrap_or(now)
}

impl Store {
    /// Connects to `url` (`postgres://…`, `postgresql://…`, or `sqlite:PATH`) and applies the
    /// migrations. A PostgreSQL pool gives up on a connection after 3 s, so an outage turns into
    /// prompt 503s instead of hung requests.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(Duration::from_secs(3))
                .connect(url)
                .await?;
            sqlx::migrate!("./migrations/postgres").run(&pool).await?;
            Ok(Self { pool: Pool::Postgres(pool) })
        } else if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)?;
            Self::open_sqlite_with(options).await
        } else {
            Err(StoreError::UnsupportedUrl)
        }
    }

    /// Opens (creating when missing) an SQLite file and applies the migrations.
    pub async fn open_sqlite(path: &Path) -> Result<Self, StoreError> {
        Self::open_sqlite_with(SqliteConnectOptions::new().filename(path)).await
    }

    async fn open_sqlite_with(options: SqliteConnectOptions) -> Result<Self, StoreError> {
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(3))
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
        Ok(Self { pool: Pool::Sqlite(pool) })
    }

    /// Which database this is.
    pub fn kind(&self) -> StoreKind {
        match self.pool {
            Pool::Postgres(_) => StoreKind::Postgres,
            Pool::Sqlite(_) => StoreKind::Sqlite,
        }
    }

    /// Whether the database answers (readiness).
    pub async fn ping(&self) -> Result<(), StoreError> {
        with_pool!(self, pool => sqlx::query("SELECT 1").execute(pool).await.map(|_| ()))?;
        Ok(())
    }

    /// Closes every connection (the server is stopping).
    pub async fn close(&self) {
        with_pool!(self, pool => pool.close().await)
    }

    // ---- audit ------------------------------------------------------------------------------

    /// Writes one audit record (committed when this returns).
    pub async fn insert_audit(&self, record: &NewAuditRecord) -> Result<(), StoreError> {
        with_pool!(self, pool => {
            insert_audit_query(record).execute(pool).await.map_err(StoreError::from_write)?;
        });
        Ok(())
    }

    /// Records how a request that was recorded as pending ended.
    pub async fn finish_audit(&self, id: &str, finish: &AuditFinish<'_>) -> Result<(), StoreError> {
        let sql = "UPDATE audit_records SET outcome = $1, http_status = $2, grpc_status = $3, \
                   message = $4, finished_at = $5, rollout_id = COALESCE($6, rollout_id), \
                   task_id = COALESCE($7, task_id) WHERE id = $8";
        with_pool!(self, pool => {
            sqlx::query(sql)
                .bind(finish.outcome.as_str())
                .bind(i32::from(finish.http_status))
                .bind(finish.grpc_status)
                .bind(finish.message.map(str::to_string))
                .bind(now())
                .bind(finish.rollout_id.map(str::to_string))
                .bind(finish.task_id.map(str::to_string))
                .bind(id.to_string())
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// One page of audit records, newest first.
    pub async fn query_audit(&self, query: &AuditQuery) -> Result<Page<AuditRow>, StoreError> {
        let mut clauses: Vec<String> = Vec::new();
        let mut params: Vec<Param> = Vec::new();
        let mut push = |clause: &str, values: Vec<Param>| {
            let mut clause = clause.to_string();
            for value in values {
                params.push(value);
                clause = clause.replacen('?', &format!("${}", params.len()), 1);
            }
            clauses.push(clause);
        };
        if let Some(allowed) = &query.allowed_namespaces {
            if allowed.is_empty() {
                push("1 = 0", vec![]);
            } else {
                let marks = vec!["?"; allowed.len()].join(", ");
                push(
                    &format!("namespace IN ({marks})"),
                    allowed.iter().map(|ns| Param::Text(ns.clone())).collect(),
                );
            }
        }
        if let Some(namespace) = &query.namespace {
            push("namespace = ?", vec![Param::Text(namespace.clone())]);
        }
        if let Some(actor) = &query.actor {
            push("actor = ?", vec![Param::Text(actor.clone())]);
        }
        if let Some(action) = &query.action {
            if action.contains('.') {
                push("action = ?", vec![Param::Text(action.clone())]);
            } else {
                push("action LIKE ?", vec![Param::Text(format!("{action}.%"))]);
            }
        }
        if let Some(target) = &query.target {
            push("target = ?", vec![Param::Text(target.clone())]);
        }
        if let Some(outcome) = query.outcome {
            push("outcome = ?", vec![Param::Text(outcome.as_str().into())]);
        }
        if let Some(since) = query.since {
            push("time >= ?", vec![Param::Time(since)]);
        }
        if let Some(until) = query.until {
            push("time < ?", vec![Param::Time(until)]);
        }
        if let Some(before) = query.before_seq {
            push("seq < ?", vec![Param::Int(before)]);
        }
        let filter =
            if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
        let limit = i64::from(query.limit.max(1));
        params.push(Param::Int(limit + 1));
        let sql = format!(
            "SELECT seq, id, time, actor, action, namespace, target, rollout_id, task_id, request, outcome, \
             http_status, grpc_status, correlation_id, message, finished_at FROM audit_records {filter} \
             ORDER BY seq DESC LIMIT ${}",
            params.len()
        );
        let rows: Vec<AuditRow> = with_pool!(self, pool => {
            bind_params!(sqlx::query_as::<_, AuditRow>(AssertSqlSafe(sql.clone())), &params).fetch_all(pool).await?
        });
        Ok(Page::from_rows(rows, limit as usize, |row| row.seq))
    }

    // ---- rollouts ---------------------------------------------------------------------------

    /// Writes the audit record of a rollout request and the rollout itself in one transaction,
    /// before anything is changed in the cluster. [`StoreError::Duplicate`] when the
    /// idempotency key is taken (a concurrent retry won the race).
    pub async fn create_rollout(
        &self,
        audit: &NewAuditRecord,
        rollout: &NewRollout,
    ) -> Result<(), StoreError> {
        let sql = "INSERT INTO rollouts (id, namespace, workload_kind, workload_name, spec, state, \
                   previous_revision, created_by, created_at, updated_at, idempotency_key, body_hash, message) \
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12)";
        let transition = NewTransition {
            rollout_id: rollout.id.clone(),
            time: rollout.created_at,
            from_state: None,
            to_state: RolloutState::Pending,
            actor: rollout.created_by.clone(),
            reason: "Requested".into(),
            message: rollout.reason.clone(),
            progress: None,
        };
        with_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            insert_audit_query(audit).execute(&mut *tx).await.map_err(StoreError::from_write)?;
            sqlx::query(sql)
                .bind(rollout.id.clone())
                .bind(rollout.namespace.clone())
                .bind(rollout.workload_kind.clone())
                .bind(rollout.workload_name.clone())
                .bind(Json(rollout.spec.clone()))
                .bind(RolloutState::Pending.as_str())
                .bind(rollout.previous_revision.clone())
                .bind(rollout.created_by.clone())
                .bind(rollout.created_at)
                .bind(rollout.idempotency_key.clone())
                .bind(rollout.body_hash.clone())
                .bind(rollout.reason.clone())
                .execute(&mut *tx)
                .await
                .map_err(StoreError::from_write)?;
            insert_transition_query(&transition).execute(&mut *tx).await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// The rollout a caller created with an idempotency key in a namespace.
    pub async fn rollout_by_idempotency_key(
        &self,
        actor: &str,
        namespace: &str,
        key: &str,
    ) -> Result<Option<RolloutRow>, StoreError> {
        let sql =
            format!("{ROLLOUT_COLUMNS} WHERE created_by = $1 AND namespace = $2 AND idempotency_key = $3");
        let row = with_pool!(self, pool => {
            sqlx::query_as::<_, RolloutRow>(AssertSqlSafe(sql.clone()))
                .bind(actor.to_string())
                .bind(namespace.to_string())
                .bind(key.to_string())
                .fetch_optional(pool)
                .await?
        });
        Ok(row)
    }

    /// A rollout by id.
    pub async fn rollout(&self, id: &str) -> Result<Option<RolloutRow>, StoreError> {
        let sql = format!("{ROLLOUT_COLUMNS} WHERE id = $1");
        let row = with_pool!(self, pool => {
            sqlx::query_as::<_, RolloutRow>(AssertSqlSafe(sql.clone())).bind(id.to_string()).fetch_optional(pool).await?
        });
        Ok(row)
    }

    /// One page of a namespace's rollouts, newest first.
    pub async fn list_rollouts(&self, query: &RolloutQuery) -> Result<Page<RolloutRow>, StoreError> {
        let mut sql = format!("{ROLLOUT_COLUMNS} WHERE namespace = $1");
        let mut params = vec![Param::Text(query.namespace.clone())];
        if let Some(name) = &query.workload_name {
            params.push(Param::Text(name.clone()));
            sql.push_str(&format!(" AND workload_name = ${}", params.len()));
        }
        if let Some(kind) = &query.workload_kind {
            params.push(Param::Text(kind.clone()));
            sql.push_str(&format!(" AND workload_kind = ${}", params.len()));
        }
        if let Some(state) = query.state {
            params.push(Param::Text(state.as_str().into()));
            sql.push_str(&format!(" AND state = ${}", params.len()));
        }
        if let Some(before) = query.before_seq {
            params.push(Param::Int(before));
            sql.push_str(&format!(" AND seq < ${}", params.len()));
        }
        let limit = i64::from(query.limit.max(1));
        params.push(Param::Int(limit + 1));
        sql.push_str(&format!(" ORDER BY seq DESC LIMIT ${}", params.len()));
        let rows: Vec<RolloutRow> = with_pool!(self, pool => {
            bind_params!(sqlx::query_as::<_, RolloutRow>(AssertSqlSafe(sql.clone())), &params).fetch_all(pool).await?
        });
        Ok(Page::from_rows(rows, limit as usize, |row| row.seq))
    }

    /// Every rollout not in a terminal state (what the watcher follows).
    pub async fn active_rollouts(&self) -> Result<Vec<RolloutRow>, StoreError> {
        let sql = format!("{ROLLOUT_COLUMNS} WHERE state IN ($1, $2, $3) ORDER BY seq");
        let rows = with_pool!(self, pool => {
            sqlx::query_as::<_, RolloutRow>(AssertSqlSafe(sql.clone()))
                .bind(RolloutState::Pending.as_str())
                .bind(RolloutState::Progressing.as_str())
                .bind(RolloutState::Paused.as_str())
                .fetch_all(pool)
                .await?
        });
        Ok(rows)
    }

    /// Records what creating the rollout produced: the workload generation it wrote, the revision
    /// it targets (when already known) and the revision it replaced.
    pub async fn set_rollout_target(
        &self,
        id: &str,
        generation: Option<i64>,
        revision: Option<&str>,
        previous_revision: Option<&str>,
    ) -> Result<(), StoreError> {
        let sql = "UPDATE rollouts SET generation = $1, revision = COALESCE($2, revision), \
                   previous_revision = COALESCE($3, previous_revision), updated_at = $4 WHERE id = $5";
        with_pool!(self, pool => {
            sqlx::query(sql)
                .bind(generation)
                .bind(revision.map(str::to_string))
                .bind(previous_revision.map(str::to_string))
                .bind(now())
                .bind(id.to_string())
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Moves a rollout from `from` to `transition.to_state` (compare-and-set, so concurrent
    /// watchers in several API replicas record a transition once) and appends the transition.
    /// Returns whether this call made the change.
    pub async fn transition(
        &self,
        from: RolloutState,
        revision: Option<&str>,
        transition: &NewTransition,
    ) -> Result<bool, StoreError> {
        let finished = transition.to_state.is_terminal().then_some(transition.time);
        let sql = "UPDATE rollouts SET state = $1, message = $2, progress = COALESCE($3, progress), \
                   revision = COALESCE($4, revision), updated_at = $5, finished_at = COALESCE($6, finished_at) \
                   WHERE id = $7 AND state = $8";
        let changed = with_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let result = sqlx::query(sql)
                .bind(transition.to_state.as_str())
                .bind(transition.message.clone())
                .bind(transition.progress.clone().map(Json))
                .bind(revision.map(str::to_string))
                .bind(transition.time)
                .bind(finished)
                .bind(transition.rollout_id.clone())
                .bind(from.as_str())
                .execute(&mut *tx)
                .await?;
            let changed = result.rows_affected() == 1;
            if changed {
                insert_transition_query(transition).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            changed
        });
        Ok(changed)
    }

    /// Fills in the revision a rollout targets once the controller has named it.
    pub async fn set_rollout_revision(&self, id: &str, revision: &str) -> Result<(), StoreError> {
        let sql = "UPDATE rollouts SET revision = $1, updated_at = $2 WHERE id = $3 AND revision IS NULL";
        with_pool!(self, pool => {
            sqlx::query(sql).bind(revision.to_string()).bind(now()).bind(id.to_string()).execute(pool).await?;
        });
        Ok(())
    }

    /// Every transition of a rollout, oldest first.
    pub async fn transitions(&self, rollout_id: &str) -> Result<Vec<TransitionRow>, StoreError> {
        let sql = "SELECT seq, rollout_id, time, from_state, to_state, actor, reason, message, progress \
                   FROM rollout_transitions WHERE rollout_id = $1 ORDER BY seq";
        let rows = with_pool!(self, pool => {
            sqlx::query_as::<_, TransitionRow>(sql).bind(rollout_id.to_string()).fetch_all(pool).await?
        });
        Ok(rows)
    }
}

const ROLLOUT_COLUMNS: &str = "SELECT seq, id, namespace, workload_kind, workload_name, spec, state, revision, \
    previous_revision, generation, message, progress, created_by, created_at, updated_at, finished_at, \
    idempotency_key, body_hash FROM rollouts";

fn insert_audit_query<DB: sqlx::Database>(
    record: &NewAuditRecord,
) -> sqlx::query::Query<'static, DB, DB::Arguments>
where
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<DateTime<Utc>>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i32: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i32>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Json<Value>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let finished = (record.outcome != Outcome::Pending).then_some(record.time);
    sqlx::query(
        "INSERT INTO audit_records (id, time, actor, action, namespace, target, rollout_id, task_id, request, \
         outcome, http_status, grpc_status, correlation_id, message, finished_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    )
    .bind(record.id.clone())
    .bind(record.time)
    .bind(record.actor.clone())
    .bind(record.action.clone())
    .bind(record.namespace.clone())
    .bind(record.target.clone())
    .bind(record.rollout_id.clone())
    .bind(record.task_id.clone())
    .bind(Json(record.request.clone()))
    .bind(record.outcome.as_str().to_string())
    .bind(i32::from(record.http_status))
    .bind(record.grpc_status)
    .bind(record.correlation_id.clone())
    .bind(record.message.clone())
    .bind(finished)
}

fn insert_transition_query<DB: sqlx::Database>(
    transition: &NewTransition,
) -> sqlx::query::Query<'static, DB, DB::Arguments>
where
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<Json<Value>>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    sqlx::query(
        "INSERT INTO rollout_transitions (rollout_id, time, from_state, to_state, actor, reason, message, progress) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(transition.rollout_id.clone())
    .bind(transition.time)
    .bind(transition.from_state.map(|s| s.as_str().to_string()))
    .bind(transition.to_state.as_str().to_string())
    .bind(transition.actor.clone())
    .bind(transition.reason.clone())
    .bind(transition.message.clone())
    .bind(transition.progress.clone().map(Json))
}

/// How a request ended, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// Recorded before the cluster was changed; the request has not finished (or the API stopped
    /// before it could record the end).
    Pending,
    /// Done (2xx).
    Accepted,
    /// Refused as invalid or conflicting (4xx other than 401 and 403); nothing was changed.
    Rejected,
    /// Refused: the token's scope does not cover it (403).
    Denied,
    /// Refused: no valid token (401).
    Unauthenticated,
    /// Failed on the server's side (5xx).
    Failed,
}

impl Outcome {
    /// The stored and query-parameter form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Accepted => "accepted",
            Self::Rejected => "rejected",
            Self::Denied => "denied",
            Self::Unauthenticated => "unauthenticated",
            Self::Failed => "failed",
        }
    }

    /// Parses the stored form.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pending, Self::Accepted, Self::Rejected, Self::Denied, Self::Unauthenticated, Self::Failed]
            .into_iter()
            .find(|outcome| outcome.as_str() == text)
    }
}

/// The state of a rollout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum RolloutState {
    /// Recorded; the workload controller has not yet picked up the change.
    Pending,
    /// Pods are being moved to the new revision.
    Progressing,
    /// Stopped: paused, or every pod allowed by the partition is updated (promote to go on).
    Paused,
    /// Every pod runs the new revision and is ready.
    Succeeded,
    /// The workload reported that the rollout stalled (progress deadline) or it was deleted.
    Failed,
    /// Aborted (rolled back to the previous revision) or superseded by a newer change.
    Aborted,
}

impl RolloutState {
    /// The stored form (the variant name).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Progressing => "Progressing",
            Self::Paused => "Paused",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Aborted => "Aborted",
        }
    }

    /// Parses the stored form.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pending, Self::Progressing, Self::Paused, Self::Succeeded, Self::Failed, Self::Aborted]
            .into_iter()
            .find(|state| state.as_str() == text)
    }

    /// Whether the rollout has ended (nothing changes it any more).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Aborted)
    }
}

/// An audit record to write.
#[derive(Clone, Debug)]
pub struct NewAuditRecord {
    /// Its id (UUID).
    pub id: String,
    /// When the request arrived.
    pub time: DateTime<Utc>,
    /// The token's name, or `anonymous`.
    pub actor: String,
    /// `rollout.create`, `rollout.pause`, …
    pub action: String,
    /// The namespace acted in.
    pub namespace: Option<String>,
    /// What was acted on (`CloneSet/web`, `rollouts/<id>`, the path).
    pub target: String,
    /// The rollout concerned.
    pub rollout_id: Option<String>,
    /// The image pull or recreate concerned.
    pub task_id: Option<String>,
    /// The sanitized request.
    pub request: Value,
    /// How it ended (or [`Outcome::Pending`]).
    pub outcome: Outcome,
    /// The HTTP status (the equivalent one for gRPC requests).
    pub http_status: u16,
    /// The gRPC status code, for gRPC requests.
    pub grpc_status: Option<i32>,
    /// The request's correlation id.
    pub correlation_id: String,
    /// Why it was refused or failed.
    pub message: Option<String>,
}

/// How a request recorded as pending ended ([`Store::finish_audit`]).
#[derive(Clone, Copy, Debug)]
pub struct AuditFinish<'a> {
    /// How it ended.
    pub outcome: Outcome,
    /// The HTTP status (the equivalent one for gRPC requests).
    pub http_status: u16,
    /// The gRPC status code, for gRPC requests.
    pub grpc_status: Option<i32>,
    /// Why it was refused or failed.
    pub message: Option<&'a str>,
    /// The rollout it concerned, when known only now.
    pub rollout_id: Option<&'a str>,
    /// The image pull or recreate it concerned, when known only now.
    pub task_id: Option<&'a str>,
}

/// An audit record as stored.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct AuditRow {
    /// Internal order.
    pub seq: i64,
    /// Its id.
    pub id: String,
    /// When the request arrived.
    pub time: DateTime<Utc>,
    /// Who sent it.
    pub actor: String,
    /// What it asked for.
    pub action: String,
    /// Where.
    pub namespace: Option<String>,
    /// On what.
    pub target: String,
    /// The rollout concerned.
    pub rollout_id: Option<String>,
    /// The image pull or recreate concerned.
    pub task_id: Option<String>,
    /// The sanitized request.
    pub request: Json<Value>,
    /// How it ended.
    pub outcome: String,
    /// HTTP status.
    pub http_status: i32,
    /// gRPC status.
    pub grpc_status: Option<i32>,
    /// Correlation id.
    pub correlation_id: String,
    /// Why it was refused or failed.
    pub message: Option<String>,
    /// When its outcome was recorded.
    pub finished_at: Option<DateTime<Utc>>,
}

/// Filters of an audit query.
#[derive(Clone, Debug, Default)]
pub struct AuditQuery {
    /// Only these namespaces (the caller's scope); `None`: any.
    pub allowed_namespaces: Option<Vec<String>>,
    /// Exactly this namespace.
    pub namespace: Option<String>,
    /// Exactly this actor.
    pub actor: Option<String>,
    /// This action (`rollout.create`), or every action of a resource (`rollout`).
    pub action: Option<String>,
    /// Exactly this target.
    pub target: Option<String>,
    /// This outcome.
    pub outcome: Option<Outcome>,
    /// At or after.
    pub since: Option<DateTime<Utc>>,
    /// Before.
    pub until: Option<DateTime<Utc>>,
    /// Page size.
    pub limit: u32,
    /// Records older than this sequence number (from the cursor).
    pub before_seq: Option<i64>,
}

/// A rollout to record.
#[derive(Clone, Debug)]
pub struct NewRollout {
    /// Its id.
    pub id: String,
    /// The workload's namespace.
    pub namespace: String,
    /// `CloneSet`, …
    pub workload_kind: String,
    /// The workload's name.
    pub workload_name: String,
    /// The requested change (sanitized request body).
    pub spec: Value,
    /// The revision the workload was moving to before.
    pub previous_revision: Option<String>,
    /// The actor.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// The caller's idempotency key.
    pub idempotency_key: Option<String>,
    /// SHA-256 of the canonical request body (for idempotent retries).
    pub body_hash: Option<String>,
    /// The caller's reason.
    pub reason: Option<String>,
}

/// A rollout as stored.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct RolloutRow {
    /// Internal order.
    pub seq: i64,
    /// Its id.
    pub id: String,
    /// Namespace.
    pub namespace: String,
    /// Workload kind.
    pub workload_kind: String,
    /// Workload name.
    pub workload_name: String,
    /// The requested change.
    pub spec: Json<Value>,
    /// The stored state.
    pub state: String,
    /// The revision it moves to.
    pub revision: Option<String>,
    /// The revision before.
    pub previous_revision: Option<String>,
    /// The workload generation the change produced.
    pub generation: Option<i64>,
    /// Detail of the state.
    pub message: Option<String>,
    /// Progress at the last transition.
    pub progress: Option<Json<Value>>,
    /// Who created it.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// Last change of the row.
    pub updated_at: DateTime<Utc>,
    /// When it reached a terminal state.
    pub finished_at: Option<DateTime<Utc>>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
    /// Body hash.
    pub body_hash: Option<String>,
}

impl RolloutRow {
    /// The stored state (an unknown stored value reads as Failed, loudly).
    pub fn state(&self) -> RolloutState {
        RolloutState::parse(&self.state).unwrap_or_else(|| {
            tracing::warn!(rollout = %self.id, state = %self.state, "unknown stored rollout state");
            RolloutState::Failed
        })
    }
}

/// Filters of a rollout listing.
#[derive(Clone, Debug, Default)]
pub struct RolloutQuery {
    /// The namespace.
    pub namespace: String,
    /// Only this workload name.
    pub workload_name: Option<String>,
    /// Only this workload kind.
    pub workload_kind: Option<String>,
    /// Only this state.
    pub state: Option<RolloutState>,
    /// Page size.
    pub limit: u32,
    /// Older than this sequence number.
    pub before_seq: Option<i64>,
}

/// A state transition to append.
#[derive(Clone, Debug)]
pub struct NewTransition {
    /// The rollout.
    pub rollout_id: String,
    /// When.
    pub time: DateTime<Utc>,
    /// From (none for the first).
    pub from_state: Option<RolloutState>,
    /// To.
    pub to_state: RolloutState,
    /// Who caused it (`watcher` for observed changes).
    pub actor: String,
    /// Machine-readable reason (`Requested`, `Observed`, `Paused`, `Aborted`, `Superseded`, …).
    pub reason: String,
    /// Human-readable detail.
    pub message: Option<String>,
    /// Progress at that moment.
    pub progress: Option<Value>,
}

/// A transition as stored.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct TransitionRow {
    /// Internal order.
    pub seq: i64,
    /// The rollout.
    pub rollout_id: String,
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
    /// Progress then.
    pub progress: Option<Json<Value>>,
}

/// One page of results and where the next starts.
#[derive(Clone, Debug)]
pub struct Page<T> {
    /// The items, newest first.
    pub items: Vec<T>,
    /// The sequence number the next page starts below, when there is one.
    pub next_before: Option<i64>,
}

impl<T> Page<T> {
    /// Cuts `limit + 1` fetched rows into a page and a continuation point.
    fn from_rows(mut rows: Vec<T>, limit: usize, seq: impl Fn(&T) -> i64) -> Self {
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next_before = if more { rows.last().map(seq) } else { None };
        Self { items: rows, next_before }
    }
}
