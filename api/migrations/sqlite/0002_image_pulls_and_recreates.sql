-- Image pulls and container recreates (the same tables as the PostgreSQL schema): tasks, their
-- transitions, and the task an audit record concerns.

ALTER TABLE audit_records ADD COLUMN task_id TEXT;
CREATE INDEX audit_records_task ON audit_records (task_id);

CREATE TABLE tasks (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    namespace       TEXT NOT NULL,
    target          TEXT NOT NULL,
    spec            TEXT NOT NULL,
    plan            TEXT NOT NULL,
    result          TEXT,
    state           TEXT NOT NULL,
    message         TEXT,
    created_by      TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    finished_at     TEXT,
    idempotency_key TEXT,
    body_hash       TEXT,
    UNIQUE (kind, created_by, namespace, idempotency_key)
);
CREATE INDEX tasks_namespace ON tasks (namespace, kind, seq);
CREATE INDEX tasks_state ON tasks (state);

CREATE TABLE task_transitions (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    TEXT NOT NULL REFERENCES tasks (id),
    time       TEXT NOT NULL,
    from_state TEXT,
    to_state   TEXT NOT NULL,
    actor      TEXT NOT NULL,
    reason     TEXT NOT NULL,
    message    TEXT
);
CREATE INDEX task_transitions_task ON task_transitions (task_id, seq);
