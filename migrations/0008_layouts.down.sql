ALTER TABLE schedules DROP COLUMN layout;
