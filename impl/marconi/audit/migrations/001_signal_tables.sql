-- Spec 002 §0.1: the physical PG tables of the signal envelope, its trace
-- events and its obligation, and (Stage 4) their *_shadow twins, which the
-- PG archiver writes in shadow mode for byte-for-byte comparison with the
-- legacy synchronous write. signal_id is the archiver's idempotency key
-- (§4.2 "idempotent signal_id UPSERT").
CREATE TABLE IF NOT EXISTS signal_queue (
    signal_id  text PRIMARY KEY,
    tenant_id  text NOT NULL,
    project_id text NOT NULL,
    sender     text NOT NULL,
    recipient  text NOT NULL,
    kind       text NOT NULL,
    payload    bytea NOT NULL,
    meta       jsonb,
    outcome    text NOT NULL,
    created_at timestamptz NOT NULL,
    arrived_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS signal_trace_events (
    signal_id text NOT NULL,
    seq       integer NOT NULL,
    event     text NOT NULL,
    at        timestamptz NOT NULL,
    detail    text NOT NULL,
    PRIMARY KEY (signal_id, seq)
);

CREATE TABLE IF NOT EXISTS signal_obligations (
    signal_id            text PRIMARY KEY,
    kind                 text NOT NULL,
    ack_sla_seconds      integer NOT NULL,
    terminal_sla_seconds integer NOT NULL,
    created_at           timestamptz NOT NULL,
    ack_received_at      timestamptz,
    terminal_received_at timestamptz,
    durability_status    text NOT NULL
);

CREATE TABLE IF NOT EXISTS signal_queue_shadow (LIKE signal_queue INCLUDING ALL);
CREATE TABLE IF NOT EXISTS signal_trace_events_shadow (LIKE signal_trace_events INCLUDING ALL);
CREATE TABLE IF NOT EXISTS signal_obligations_shadow (LIKE signal_obligations INCLUDING ALL);
