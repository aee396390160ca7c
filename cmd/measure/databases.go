package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// freshDatabase drops the database name on the PostgreSQL of adminURL
// (the service's DATABASE_URL, whose role may create databases) and makes
// it anew, empty; it returns adminURL naming it instead.
func freshDatabase(ctx context.Context, adminURL, name string) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("fresh database %s: %w", name, err)
	}
	defer func() { _ = conn.Close(ctx) }()
	ident := pgx.Identifier{name}.Sanitize()
	for _, sql := range []string{"DROP DATABASE IF EXISTS " + ident + " WITH (FORCE)", "CREATE DATABASE " + ident} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return "", fmt.Errorf("fresh database %s: %w", name, err)
		}
	}
	u.Path = "/" + name
	return u.String(), nil
}

// redisDatabase is redisURL naming database n instead.
func redisDatabase(redisURL string, n int) string {
	base := redisURL
	if i := strings.LastIndex(redisURL, "/"); i > len("redis://") {
		base = redisURL[:i]
	}
	return base + "/" + strconv.Itoa(n)
}

// freshRedis empties database n of the Redis of redisURL and returns its
// URL. An instance on a database made anew needs one: its schedules are
// numbered from 1 again, and the lock keys and seals of an earlier run's
// (or another instance's) schedule 1 would say its seats are held or taken.
func freshRedis(ctx context.Context, redisURL string, n int) (string, error) {
	dbURL := redisDatabase(redisURL, n)
	opts, err := redis.ParseURL(dbURL)
	if err != nil {
		return "", fmt.Errorf("REDIS_URL: %w", err)
	}
	client := redis.NewClient(opts)
	defer func() { _ = client.Close() }()
	if err := client.FlushDB(ctx).Err(); err != nil {
		return "", fmt.Errorf("empty Redis database %d: %w", n, err)
	}
	return dbURL, nil
}

// own is the settings of an instance with databases of its own, as a
// deployment of its own would have (PostgreSQL database name and Redis
// database n, both made anew): instances sharing a Redis database would
// also share the rate limits' registry, and each would admit half as much
// from memory.
func own(ctx context.Context, servers env, name string, n int) ([]string, error) {
	db, err := freshDatabase(ctx, servers["DATABASE_URL"], name)
	if err != nil {
		return nil, err
	}
	rdb, err := freshRedis(ctx, servers["REDIS_URL"], n)
	if err != nil {
		return nil, err
	}
	return []string{"DATABASE_URL=" + db, "REDIS_URL=" + rdb}, nil
}
