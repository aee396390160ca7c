-- A hold's claims are written only by the statement that makes the hold,
-- in its transaction, with the id it has just been given: the foreign key
-- from a claim to its hold could never fail, and checking it read the
-- hold again for every seat. The claims of a hold that is purged are
-- deleted by the purge itself (postgres.Store.PurgeHolds) instead of by
-- the key's cascade.
ALTER TABLE seat_claims DROP CONSTRAINT seat_claims_hold_id_fkey;
