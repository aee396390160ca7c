-- Stadium-size venues: up to 100,000 seats, laid out in rows (a JSON array
-- of {"label", "seats", "category"}, as before) or in sections (a JSON
-- object {"sections": [{"name", "category", "rows": [...]}]}, best section
-- first, up to 500 of them, up to 100 rows each). Seat ids still run
-- 1..seat_count, section by section, row by row.
ALTER TABLE schedules DROP CONSTRAINT schedules_seat_count_check,
    ADD CONSTRAINT schedules_seat_count_check CHECK (seat_count BETWEEN 1 AND 100000);
ALTER TABLE schedules DROP CONSTRAINT schedules_layout_check,
    ADD CONSTRAINT schedules_layout_check CHECK (
        layout IS NULL
        OR jsonb_typeof(layout) = 'array' AND jsonb_array_length(layout) BETWEEN 1 AND 100
        OR jsonb_typeof(layout) = 'object' AND jsonb_typeof(layout -> 'sections') = 'array'
           AND jsonb_array_length(layout -> 'sections') BETWEEN 1 AND 500);
