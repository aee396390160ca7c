// Package devenv is the service's local topology, built on lockenv: the
// Redis and PostgreSQL that `make run` keeps under a directory (DIR), the
// replica and three Sentinels and the PostgreSQL pair under Patroni that
// `make cluster` adds, its instances behind HAProxy, and the drills run on
// them (a rolling restart, a Sentinel failover, a PostgreSQL switchover or
// failover). cmd/devenv is its command line.
//
// What outlives the command that started it (Redis, PostgreSQL, the
// Sentinels, etcd, the Patroni nodes) is found again through pid files
// under DIR, and its settings through shell-readable files of KEY=VALUE
// lines: DIR/env (REDIS_URL, DATABASE_URL, AUTH_SECRET, PG_DIR...),
// DIR/sentinel/env and DIR/pgha/env. Ports and secrets are chosen once, on
// first use, and kept there, so a second start reuses the same servers and
// data.
//
// PostgreSQL refuses to run as root, so as root it runs as the `postgres`
// system user (lockenv.PostgresUser), Patroni too. That user must reach the
// data: DIR/pg when it can enter DIR, else a directory of its own under the
// postgres user's home named after a hash of DIR, with an `origin` file
// naming DIR (PG_DIR and PGHA_DIR say where); Orphans deletes those whose
// DIR is gone.
//
// The servers' configuration texts (a Sentinel's, a Patroni node's, etcd's
// arguments, HAProxy's) are written here once: internal/testenv starts its
// Sentinels and Patroni pairs from the same functions.
package devenv
