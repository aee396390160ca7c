INSERT INTO seat_changes (schedule_id, seat_id, status, created_at)
SELECT c.schedule_id, s.seat, c.status, c.created_at
FROM seat_changes c CROSS JOIN LATERAL unnest(c.seat_ids) WITH ORDINALITY AS s(seat, n)
WHERE c.seat_ids IS NOT NULL
ORDER BY c.id, s.n;
DELETE FROM seat_changes WHERE seat_ids IS NOT NULL;
ALTER TABLE seat_changes
    DROP CONSTRAINT seat_changes_seats_check,
    DROP COLUMN seat_ids,
    ALTER COLUMN seat_id SET NOT NULL;
