ALTER TABLE schedules RESET (fillfactor);
