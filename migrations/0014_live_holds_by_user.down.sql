CREATE INDEX holds_open_by_user ON holds (user_id) WHERE confirmed_at IS NULL AND released_at IS NULL;
DROP TABLE live_holds_by_user;
