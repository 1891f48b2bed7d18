-- Image pulls and container recreates requested through the API ("tasks"), with every state
-- transition, and the task an audit record concerns. `plan` is what the API keeps to carry a
-- task on across restarts (the ImagePullJobs it created; the pods of a recreate and which of
-- them got their ContainerRecreateRequest); `result` is the last observed per-node/per-pod
-- outcome, kept so that a task reads the same after its Kubernetes objects are gone.

ALTER TABLE audit_records ADD COLUMN task_id TEXT;
CREATE INDEX audit_records_task ON audit_records (task_id);

CREATE TABLE tasks (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              TEXT        NOT NULL UNIQUE,
    kind            TEXT        NOT NULL,
    namespace       TEXT        NOT NULL,
    target          TEXT        NOT NULL,
    spec            JSONB       NOT NULL,
    plan            JSONB       NOT NULL,
    result          JSONB,
    state           TEXT        NOT NULL,
    message         TEXT,
    created_by      TEXT        NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    finished_at     TIMESTAMPTZ,
    idempotency_key TEXT,
    body_hash       TEXT,
    UNIQUE (kind, created_by, namespace, idempotency_key)
);
CREATE INDEX tasks_namespace ON tasks (namespace, kind, seq);
CREATE INDEX tasks_state ON tasks (state);

CREATE TABLE task_transitions (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id    TEXT        NOT NULL REFERENCES tasks (id),
    time       TIMESTAMPTZ NOT NULL,
    from_state TEXT,
    to_state   TEXT        NOT NULL,
    actor      TEXT        NOT NULL,
    reason     TEXT        NOT NULL,
    message    TEXT
);
CREATE INDEX task_transitions_task ON task_transitions (task_id, seq);
