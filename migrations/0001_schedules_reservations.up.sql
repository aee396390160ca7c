CREATE TABLE schedules (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    title      text        NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
    starts_at  timestamptz NOT NULL,
    seat_count integer     NOT NULL CHECK (seat_count BETWEEN 1 AND 2000),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE reservations (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    schedule_id bigint      NOT NULL REFERENCES schedules (id),
    seat_id     integer     NOT NULL CHECK (seat_id >= 1),
    user_id     text        NOT NULL CHECK (char_length(user_id) BETWEEN 1 AND 255),
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- The last line of defence: whatever the Redis lock does, a seat of a
    -- schedule has at most one reservation.
    CONSTRAINT reservations_schedule_seat_key UNIQUE (schedule_id, seat_id)
);
