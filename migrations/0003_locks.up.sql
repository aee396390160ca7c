-- Distributed locks of the PostgreSQL lock adapter (internal/lock/pglock), in
-- the ShedLock JDBC style: one row per lock name, held while lock_until is in
-- the future. Every time is the database's clock, never an application's.
--
-- A release does not delete the row: it sets lock_until to '-infinity' and
-- locked_by to NULL, so the fence survives and the next holder's token is
-- above it. A row deleted by hand restarts its fence from the database
-- clock in microseconds, above every token handed out before.
--
-- The table is pglock.Schema("locks"), which pglock.Migrate creates where
-- these migrations do not run; internal/postgres's tests compare the two.
CREATE TABLE locks (
    name       text        PRIMARY KEY,
    -- The lock is held while lock_until > clock_timestamp(); '-infinity'
    -- once released, 'infinity' for a lock held by hand with no end.
    lock_until timestamptz NOT NULL,
    -- When the current or last holder acquired it.
    locked_at  timestamptz NOT NULL,
    -- The holder's random owner token; NULL once released.
    locked_by  text,
    -- The fencing token of the last acquisition.
    fence      bigint      NOT NULL
);
