-- Checkout: cancellable reservations, seat holds with expiry, and stored
-- answers for Idempotency-Key retries.

-- A cancelled reservation keeps its row with cancelled_at set. Only active
-- reservations take part in the one-reservation-per-seat rule, so a
-- cancelled seat can be booked again, exactly once.
ALTER TABLE reservations ADD COLUMN cancelled_at timestamptz;
ALTER TABLE reservations DROP CONSTRAINT reservations_schedule_seat_key;
CREATE UNIQUE INDEX reservations_active_seat_key ON reservations (schedule_id, seat_id)
    WHERE cancelled_at IS NULL;

-- A hold: seats of one schedule kept for one user until expires_at, then
-- confirmed (its reservations carry hold_id), released, or expired. Its
-- status is decided when read: active while neither confirmed nor released
-- and expires_at is in the future.
CREATE TABLE holds (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    schedule_id  bigint      NOT NULL REFERENCES schedules (id),
    user_id      text        NOT NULL CHECK (char_length(user_id) BETWEEN 1 AND 255),
    seat_ids     integer[]   NOT NULL CHECK (cardinality(seat_ids) BETWEEN 1 AND 10),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    confirmed_at timestamptz,
    released_at  timestamptz,
    CHECK (confirmed_at IS NULL OR released_at IS NULL)
);
CREATE INDEX holds_expires_at ON holds (expires_at);

ALTER TABLE reservations ADD COLUMN hold_id uuid REFERENCES holds (id);
CREATE INDEX reservations_hold_id ON reservations (hold_id) WHERE hold_id IS NOT NULL;

-- The seats an unconfirmed hold claims, one row per seat: the primary key
-- makes two live claims on one seat impossible. A claim whose expires_at
-- has passed counts as gone, and the next hold of the seat replaces it in
-- place; confirming or releasing a hold deletes its claims.
CREATE TABLE seat_holds (
    schedule_id bigint      NOT NULL,
    seat_id     integer     NOT NULL CHECK (seat_id >= 1),
    hold_id     uuid        NOT NULL REFERENCES holds (id) ON DELETE CASCADE,
    -- The fencing token of the seat lock under which the hold was made.
    fence       bigint      NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (schedule_id, seat_id)
);
CREATE INDEX seat_holds_hold_id ON seat_holds (hold_id);
CREATE INDEX seat_holds_expires_at ON seat_holds (expires_at);

-- One row per (user, Idempotency-Key): the request's fingerprint and, once
-- it finished, the answer to replay. status is NULL while the first request
-- runs; locked_until lets a key whose request died with its instance be
-- taken over, and claim tells the request that owns the row now.
CREATE TABLE idempotency_keys (
    user_id      text        NOT NULL,
    key          text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
    fingerprint  bytea       NOT NULL,
    claim        uuid        NOT NULL,
    status       integer,
    header       jsonb,
    body         bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    locked_until timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
