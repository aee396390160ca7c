-- Webhooks for integrators (docs/api.md, "Webhooks").

-- An endpoint: where to send, which event types, and its signing secrets,
-- sealed (AES-256-GCM under a key derived from AUTH_SECRET; never stored
-- in the clear). After a rotation the previous secret stays valid, and
-- every message carries both signatures, until previous_secret_until.
CREATE TABLE webhook_endpoints (
    id                    uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    url                   text        NOT NULL CHECK (char_length(url) <= 2000),
    events                text[]      NOT NULL,
    description           text        NOT NULL DEFAULT '',
    enabled               boolean     NOT NULL DEFAULT true,
    -- Why it was disabled by the service, not by an admin ('gone': it
    -- answered 410); null while enabled or disabled by an admin.
    disabled_reason       text,
    secret                bytea       NOT NULL,
    previous_secret       bytea,
    previous_secret_until timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);

-- Every event, written by the transaction of the change it tells of (the
-- outbox): a change that rolls back leaves none. seq orders one object's
-- events as they happened (each change of a hold or reservation locks its
-- row, so the next one's transaction starts after this one committed).
-- data is the object as the API shows it, kept as sent (json, not jsonb,
-- so the signed bytes never change). dispatched turns true once the
-- event has a delivery for every endpoint that wanted it; events are kept
-- for WEBHOOK_RETENTION.
CREATE TABLE webhook_events (
    seq         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          text        NOT NULL UNIQUE DEFAULT 'msg_' || replace(gen_random_uuid()::text, '-', ''),
    type        text        NOT NULL,
    object_id   uuid        NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    data        json        NOT NULL,
    dispatched  boolean     NOT NULL DEFAULT false
);
-- The data of a reservation.created event written by a booking: the
-- reservation as GET /reservations/{id} shows it, rendered in the
-- booking's own statement so that a booking stays one round trip
-- (createdAt as Go writes it: UTC, the fraction's trailing zeros
-- dropped). internal/app's tests hold it equal to the API's answer.
CREATE FUNCTION reservation_created_data(id uuid, schedule_id bigint, seat_id integer, user_id text, created_at timestamptz)
RETURNS json LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object('id', id, 'scheduleId', schedule_id, 'seatId', seat_id, 'userId', user_id,
        'createdAt', regexp_replace(to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '\.?0+$', '') || 'Z',
        'status', 'active')
$$;
CREATE INDEX webhook_events_undispatched ON webhook_events (seq) WHERE NOT dispatched;
CREATE INDEX webhook_events_occurred_at ON webhook_events (occurred_at);

-- The delivery log: one row per endpoint and event, its attempts and
-- outcome. A pending delivery of an object holds back that object's
-- later events to the same endpoint (order per object).
CREATE TABLE webhook_deliveries (
    endpoint_id      uuid        NOT NULL REFERENCES webhook_endpoints ON DELETE CASCADE,
    seq              bigint      NOT NULL,
    event_id         text        NOT NULL,
    type             text        NOT NULL,
    object_id        uuid        NOT NULL,
    status           text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    last_attempt_at  timestamptz,
    last_status_code integer,
    last_error       text,
    next_attempt_at  timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (endpoint_id, seq)
);
CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries (endpoint_id, event_id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_pending_object ON webhook_deliveries (endpoint_id, object_id, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_created_at ON webhook_deliveries (created_at);

-- A hold's expiry is an event too: expiry_announced_at says its
-- hold.expired was written. Holds that expired before webhooks existed
-- are marked, so that none is announced late.
ALTER TABLE holds ADD COLUMN expiry_announced_at timestamptz;
UPDATE holds SET expiry_announced_at = expires_at
WHERE confirmed_at IS NULL AND released_at IS NULL AND expires_at <= now();
CREATE INDEX holds_expiry_unannounced ON holds (expires_at)
    WHERE confirmed_at IS NULL AND released_at IS NULL AND expiry_announced_at IS NULL;
