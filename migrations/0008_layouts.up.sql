-- A schedule's venue layout: its rows front to back, each
-- {"label", "seats", "category"}; seat ids run 1..seat_count row by row.
-- NULL is the layout of a schedule made from a seat count: one row "A".
ALTER TABLE schedules ADD COLUMN layout jsonb
    CHECK (layout IS NULL OR jsonb_typeof(layout) = 'array' AND jsonb_array_length(layout) BETWEEN 1 AND 100);
