-- The service API's store (PostgreSQL): one audit record per request, the rollouts requested
-- through the API, and every state transition of each rollout. Times are UTC; request
-- documents are sanitized JSON (no secrets, no tokens).

CREATE TABLE audit_records (
    seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id             TEXT        NOT NULL UNIQUE,
    time           TIMESTAMPTZ NOT NULL,
    actor          TEXT        NOT NULL,
    action         TEXT        NOT NULL,
    namespace      TEXT,
    target         TEXT        NOT NULL,
    rollout_id     TEXT,
    request        JSONB       NOT NULL,
    outcome        TEXT        NOT NULL,
    http_status    INTEGER     NOT NULL,
    grpc_status    INTEGER,
    correlation_id TEXT        NOT NULL,
    message        TEXT,
    finished_at    TIMESTAMPTZ
);
CREATE INDEX audit_records_time ON audit_records (time);
CREATE INDEX audit_records_namespace ON audit_records (namespace, seq);
CREATE INDEX audit_records_actor ON audit_records (actor, seq);
CREATE INDEX audit_records_target ON audit_records (target, seq);

CREATE TABLE rollouts (
    seq               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                TEXT        NOT NULL UNIQUE,
    namespace         TEXT        NOT NULL,
    workload_kind     TEXT        NOT NULL,
    workload_name     TEXT        NOT NULL,
    spec              JSONB       NOT NULL,
    state             TEXT        NOT NULL,
    revision          TEXT,
    previous_revision TEXT,
    generation        BIGINT,
    message           TEXT,
    progress          JSONB,
    created_by        TEXT        NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL,
    finished_at       TIMESTAMPTZ,
    idempotency_key   TEXT,
    body_hash         TEXT,
    UNIQUE (created_by, namespace, idempotency_key)
);
CREATE INDEX rollouts_namespace ON rollouts (namespace, seq);
CREATE INDEX rollouts_workload ON rollouts (namespace, workload_kind, workload_name, seq);
CREATE INDEX rollouts_state ON rollouts (state);

CREATE TABLE rollout_transitions (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    rollout_id TEXT        NOT NULL REFERENCES rollouts (id),
    time       TIMESTAMPTZ NOT NULL,
    from_state TEXT,
    to_state   TEXT        NOT NULL,
    actor      TEXT        NOT NULL,
    reason     TEXT        NOT NULL,
    message    TEXT,
    progress   JSONB
);
CREATE INDEX rollout_transitions_rollout ON rollout_transitions (rollout_id, seq);
