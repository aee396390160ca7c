package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// With -database-url the report gives each phase's rows read by
// PostgreSQL per hold: here the fake reads pg_class whole (some hundreds of
// rows) in the database for every hold it grants, and nothing else reads
// it.
func TestBestAvailableRowsReadPerHold(t *testing.T) {
	dbURL := lockenv.DatabaseURL(t)
	pool, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var classes int64
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_class WHERE reltuples >= -1").Scan(&classes); err != nil {
		t.Fatal(err)
	}
	// A backend publishes its counts as it exits: a connection a hold,
	// and no settling.
	settle := pgStatSettle
	pgStatSettle = time.Second
	defer func() { pgStatSettle = settle }()
	f := newFakeAPI(t)
	f.onHold = func() {
		conn, err := pgx.Connect(context.Background(), dbURL)
		if err != nil {
			t.Error(err)
			return
		}
		defer func() { _ = conn.Close(context.Background()) }()
		var n int64
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_class WHERE reltuples >= -1").Scan(&n); err != nil {
			t.Error(err)
		}
	}
	urls, _ := f.serve(t, 1)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-rows", "5", "-row-seats", "10", "-quantity", "2",
		"-c", "4", "-database-url", dbURL))
	text := textOf(t, r)
	b := r.Best
	if !r.Verdict.Pass || b.PostgresNote != "" || !strings.HasPrefix(b.PostgresDatabase, "test_") {
		t.Fatalf("verdict %+v, note %q, database %q", r.Verdict, b.PostgresNote, b.PostgresDatabase)
	}
	for _, ph := range []phaseReport{b.Best, b.Explicit} {
		pg := ph.Postgres
		// Each hold reads pg_class once; the hammer's own reads of the
		// statistics add a few rows.
		if pg == nil || ph.Holds != 25 || pg.RowsRead < 25*classes || pg.RowsPerHold < float64(classes) || pg.RowsPerHold > 2*float64(classes) {
			t.Errorf("phase %+v: postgres %+v, want about %d rows for each of 25 holds", ph, pg, classes)
		}
	}
	if !strings.Contains(text, "rows read (tup_returned + tup_fetched of database test_") {
		t.Error("the text report lacks the rows read")
	}
}

// Without a database URL the figure is left out, and the report says so.
func TestRowsReadNeedADatabase(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 1)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-rows", "2", "-row-seats", "10", "-c", "2"))
	text := textOf(t, r)
	if r.Best.Best.Postgres != nil || !strings.Contains(text, "rows read not measured: no -database-url given") {
		t.Errorf("postgres %+v:\n%s", r.Best.Best.Postgres, text)
	}

	// The service's own DATABASE_URL is not taken: reading the
	// statistics settled takes time, and is asked for.
	env := envOf(map[string]string{"AUTH_SECRET": testSecret, "DATABASE_URL": "postgres://service/db"})
	cfg, err := parseConfig([]string{"-scenario", "best-available"}, env, io.Discard)
	if err != nil || cfg.DatabaseURL != "" {
		t.Errorf("best-available with DATABASE_URL: %q, %v; want it ignored", cfg.DatabaseURL, err)
	}
	cfg, err = parseConfig([]string{"-scenario", "best-available", "-database-url", "postgres://other/db"}, env, io.Discard)
	if err != nil || cfg.DatabaseURL != "postgres://other/db" {
		t.Errorf("-database-url: %q, %v", cfg.DatabaseURL, err)
	}
	cfg, err = parseConfig([]string{"-scenario", "best-available"}, envOf(map[string]string{"AUTH_SECRET": testSecret, "HAMMER_DATABASE_URL": "postgres://h/db"}), io.Discard)
	if err != nil || cfg.DatabaseURL != "postgres://h/db" {
		t.Errorf("HAMMER_DATABASE_URL: %q, %v", cfg.DatabaseURL, err)
	}
	if _, err := parseConfig([]string{"-database-url", "postgres://other/db"}, env, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "-database-url is for -scenario best-available, not contended") {
		t.Errorf("contended with -database-url: %v", err)
	}

	// A database that cannot be reached stops the run before it starts.
	_, err = hammer(t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-rows", "2", "-row-seats", "10",
		"-database-url", "postgres://nobody:secret@127.0.0.1:1/none?connect_timeout=2"), nil)
	if err == nil || !strings.Contains(err.Error(), "-database-url") || strings.Contains(err.Error(), "secret") {
		t.Errorf("unreachable database: %v", err)
	}
}
