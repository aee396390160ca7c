DROP TABLE idempotency_keys;
DROP TABLE seat_holds;
ALTER TABLE reservations DROP COLUMN hold_id;
DROP TABLE holds;
DELETE FROM reservations WHERE cancelled_at IS NOT NULL;
DROP INDEX reservations_active_seat_key;
ALTER TABLE reservations ADD CONSTRAINT reservations_schedule_seat_key UNIQUE (schedule_id, seat_id);
ALTER TABLE reservations DROP COLUMN cancelled_at;
