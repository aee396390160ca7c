ALTER TABLE reservations DROP COLUMN fence;
