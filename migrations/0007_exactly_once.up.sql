-- Exactly once: one claim row per seat for holds and bookings alike, the
-- idempotency claim that made a reservation or a hold, and the seat
-- changes waiting to be relayed to the live seat map.

-- seat_holds becomes seat_claims: the one row of a seat that every claim
-- on it takes, under one primary key, so PostgreSQL orders a hold and a
-- one-click booking of the same seat whatever the seat locks did. A hold's
-- claim names its hold and lives until expires_at; a booking's claim has
-- no hold and has already expired ('-infinity'): it only makes the
-- booking wait for, and then see, a hold being written at the same time.
-- The reservation's unique index keeps the seat booked.
ALTER TABLE seat_holds RENAME TO seat_claims;
ALTER TABLE seat_claims RENAME CONSTRAINT seat_holds_pkey TO seat_claims_pkey;
ALTER TABLE seat_claims RENAME CONSTRAINT seat_holds_hold_id_fkey TO seat_claims_hold_id_fkey;
ALTER TABLE seat_claims RENAME CONSTRAINT seat_holds_seat_id_check TO seat_claims_seat_id_check;
ALTER TABLE seat_claims ALTER COLUMN hold_id DROP NOT NULL;
DROP INDEX seat_holds_hold_id;
DROP INDEX seat_holds_expires_at;
-- Only holds' claims are looked up by hold or by expiry; a booking's claim
-- costs its row and the primary key's entry, nothing more.
CREATE INDEX seat_claims_hold_id ON seat_claims (hold_id) WHERE hold_id IS NOT NULL;
CREATE INDEX seat_claims_expires_at ON seat_claims (expires_at) WHERE hold_id IS NOT NULL;

-- The idempotency claim (idempotency_keys.claim) of the request that made
-- the row, committed with it: a retry of a request whose answer was lost
-- finds what it made, and is answered with it.
ALTER TABLE reservations ADD COLUMN idempotency_claim uuid;
CREATE UNIQUE INDEX reservations_idempotency_claim ON reservations (idempotency_claim)
    WHERE idempotency_claim IS NOT NULL;
ALTER TABLE holds ADD COLUMN idempotency_claim uuid;
CREATE UNIQUE INDEX holds_idempotency_claim ON holds (idempotency_claim)
    WHERE idempotency_claim IS NOT NULL;

-- The transactional outbox of seat changes: every statement that changes a
-- seat's status writes its row here in the same transaction; the relay
-- (one at a time, under a job lock) appends them to the schedule's Redis
-- stream in id order and deletes them. Changes of one seat are serialised
-- (its claim row, its reservation's unique index, its lock), and the id is
-- drawn after the wait, so one seat's ids follow its commits: id is the
-- change's position, and a consumer de-duplicates by it.
CREATE TABLE seat_changes (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    schedule_id bigint      NOT NULL,
    seat_id     integer     NOT NULL,
    status      text        NOT NULL CHECK (status IN ('available', 'held', 'reserved')),
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
