-- The fencing token of the lock holder that made the booking. A seat's
-- fence is the highest of its reservation's and of its seat_fences row, so
-- a booking records its fence with its row alone: one write, not two.
-- seat_fences keeps the fence of a seat whose reservation is gone. Rows
-- booked before this column existed carry 0, below every fence.
ALTER TABLE reservations ADD COLUMN fence bigint NOT NULL DEFAULT 0;
