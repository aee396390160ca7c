-- A user's open holds (neither confirmed nor released; expiry is checked
-- when read), counted against MAX_HOLDS_PER_USER at every new hold.
CREATE INDEX holds_open_by_user ON holds (user_id) WHERE confirmed_at IS NULL AND released_at IS NULL;
