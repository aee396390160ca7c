-- Fails while a schedule has more than 2,000 seats or sections: going
-- down would lose them.
ALTER TABLE schedules DROP CONSTRAINT schedules_layout_check,
    ADD CONSTRAINT schedules_layout_check CHECK (
        layout IS NULL OR jsonb_typeof(layout) = 'array' AND jsonb_array_length(layout) BETWEEN 1 AND 100);
ALTER TABLE schedules DROP CONSTRAINT schedules_seat_count_check,
    ADD CONSTRAINT schedules_seat_count_check CHECK (seat_count BETWEEN 1 AND 2000);
