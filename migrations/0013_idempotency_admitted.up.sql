-- admitted records that a key's request passed the waiting room's gate
-- (its admission was checked and valid) before it did any work: a retry
-- that resumes the key after a lost answer finishes that request without
-- an admission, and every other retry is gated like a new request.
-- Existing keys were never recorded, so they count as not admitted.
ALTER TABLE idempotency_keys ADD COLUMN admitted boolean NOT NULL DEFAULT false;
