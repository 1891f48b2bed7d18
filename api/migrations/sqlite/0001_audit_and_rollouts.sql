-- The service API's store (embedded SQLite, `kruise up`): the same tables as the PostgreSQL
-- schema. Times are RFC 3339 text in UTC (sortable as written); JSON is text.

CREATE TABLE audit_records (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             TEXT    NOT NULL UNIQUE,
    time           TEXT    NOT NULL,
    actor          TEXT    NOT NULL,
    action         TEXT    NOT NULL,
    namespace      TEXT,
    target         TEXT    NOT NULL,
    rollout_id     TEXT,
    request        TEXT    NOT NULL,
    outcome        TEXT    NOT NULL,
    http_status    INTEGER NOT NULL,
    grpc_status    INTEGER,
    correlation_id TEXT    NOT NULL,
    message        TEXT,
    finished_at    TEXT
);
CREATE INDEX audit_records_time ON audit_records (time);
CREATE INDEX audit_records_namespace ON audit_records (namespace, seq);
CREATE INDEX audit_records_actor ON audit_records (actor, seq);
CREATE INDEX audit_records_target ON audit_records (target, seq);

CREATE TABLE rollouts (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT NOT NULL UNIQUE,
    namespace         TEXT NOT NULL,
    workload_kind     TEXT NOT NULL,
    workload_name     TEXT NOT NULL,
    spec              TEXT NOT NULL,
    state             TEXT NOT NULL,
    revision          TEXT,
    previous_revision TEXT,
    generation        INTEGER,
    message           TEXT,
    progress          TEXT,
    created_by        TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    finished_at       TEXT,
    idempotency_key   TEXT,
    body_hash         TEXT,
    UNIQUE (created_by, namespace, idempotency_key)
);
CREATE INDEX rollouts_namespace ON rollouts (namespace, seq);
CREATE INDEX rollouts_workload ON rollouts (namespace, workload_kind, workload_name, seq);
CREATE INDEX rollouts_state ON rollouts (state);

CREATE TABLE rollout_transitions (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    rollout_id TEXT NOT NULL REFERENCES rollouts (id),
    time       TEXT NOT NULL,
    from_state TEXT,
    to_state   TEXT NOT NULL,
    actor      TEXT NOT NULL,
    reason     TEXT NOT NULL,
    message    TEXT,
    progress   TEXT
);
CREATE INDEX rollout_transitions_rollout ON rollout_transitions (rollout_id, seq);
