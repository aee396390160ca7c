DROP TABLE reservations;
DROP TABLE schedules;
