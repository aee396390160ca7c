ALTER TABLE schedules DROP CONSTRAINT schedules_starts_at_check;
