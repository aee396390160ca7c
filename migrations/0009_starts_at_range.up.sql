-- A schedule's start must be one a client can read back: RFC 3339, and so
-- every JSON encoder, writes the years 1..9999 only. A start stored outside
-- them before this check existed is moved to the nearest instant inside,
-- so that reading it answers rather than fails.
UPDATE schedules SET starts_at = '0001-01-01 00:00:00+00'
    WHERE starts_at < '0001-01-01 00:00:00+00';
UPDATE schedules SET starts_at = '9999-12-31 23:59:59.999999+00'
    WHERE starts_at > '9999-12-31 23:59:59.999999+00';
ALTER TABLE schedules ADD CONSTRAINT schedules_starts_at_check
    CHECK (starts_at BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00');
