-- Every booking reads its schedule by id: the booking statement's own
-- look-up, and the foreign key check of the reservation it inserts (a
-- query PostgreSQL plans, and caches, like any other). Its cost model
-- scans a table of a few pages whole rather than through the primary key:
-- with up to some 300 schedules, analyzed, every booking read every
-- schedule. Kept sparse, each page holding a tenth of what it could, the
-- table is as many pages as the cost model needs to choose the key from
-- some 60 schedules on. Schedules are few and small, so the space is
-- nothing; existing rows stay where they are.
ALTER TABLE schedules SET (fillfactor = 10);
