-- seat_changes is a queue: every booking inserts a row that the relay
-- deletes a moment later, so the table is nearly empty and its dead rows
-- are what grows. The relay vacuums it as it deletes
-- (postgres.SeatChanges.Reclaim); these settings make autovacuum, at each
-- of its visits, vacuum it whenever a thousand rows died or arrived since
-- the last time, whatever the table's size, and at full speed: the
-- default thresholds are fractions of a size that swings between empty and
-- full, and the default cost delay paces a vacuum that has only a few
-- pages to read.
ALTER TABLE seat_changes SET (
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_cost_delay = 0
);
