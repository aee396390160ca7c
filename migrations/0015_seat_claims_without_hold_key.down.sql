DELETE FROM seat_claims c
WHERE c.hold_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.id = c.hold_id);
ALTER TABLE seat_claims ADD CONSTRAINT seat_claims_hold_id_fkey
    FOREIGN KEY (hold_id) REFERENCES holds (id) ON DELETE CASCADE;
