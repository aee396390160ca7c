-- Each user's live holds, one row per user: {hold id: expires_at} of the
-- holds neither confirmed nor released that had not expired when the row
-- was last written. MAX_HOLDS_PER_USER is checked on this row alone, so a
-- new hold reads one row however many holds its user made before; the
-- row's lock, taken by the hold's own upsert, is what makes one user's
-- concurrent holds count one after another. Writers drop the entries that
-- have expired by their clock whenever they rewrite the row; confirming,
-- releasing and extending a hold change its entry in the same
-- transaction.
CREATE TABLE live_holds_by_user (
    user_id text  PRIMARY KEY,
    holds   jsonb NOT NULL CHECK (jsonb_typeof(holds) = 'object')
);

INSERT INTO live_holds_by_user (user_id, holds)
SELECT user_id, jsonb_object_agg(id::text, expires_at)
FROM holds
WHERE confirmed_at IS NULL AND released_at IS NULL AND expires_at > now()
GROUP BY user_id;

-- The count of open holds it served is gone.
DROP INDEX holds_open_by_user;
