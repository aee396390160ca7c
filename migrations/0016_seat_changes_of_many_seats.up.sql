-- A change that one statement makes to several seats of one schedule (a
-- hold's seats held, its confirmation's reserved, its release's
-- available) is one row: seat_ids lists the seats, in seat order, and
-- seat_id is NULL. The relay then reads and deletes one row for the
-- hold rather than one a seat. The seats share the row's id as their
-- position; positions are compared seat by seat, so that is enough for
-- them to follow each seat's commits.
ALTER TABLE seat_changes
    ALTER COLUMN seat_id DROP NOT NULL,
    ADD COLUMN seat_ids integer[],
    ADD CONSTRAINT seat_changes_seats_check CHECK ((seat_id IS NULL) <> (seat_ids IS NULL));
