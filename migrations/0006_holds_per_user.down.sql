DROP INDEX holds_open_by_user;
