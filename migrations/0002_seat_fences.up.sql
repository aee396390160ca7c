-- The highest lock fencing token that has written to each seat. A booking
-- moves it forward in the same transaction as its INSERT and is refused if a
-- newer lock holder got there first, so a holder whose lease ran out while it
-- was paused can never write after its successor.
CREATE TABLE seat_fences (
    schedule_id bigint  NOT NULL REFERENCES schedules (id),
    seat_id     integer NOT NULL CHECK (seat_id >= 1),
    fence       bigint  NOT NULL,
    PRIMARY KEY (schedule_id, seat_id)
);
