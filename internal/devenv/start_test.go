package devenv_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/devenv"
)

// make run's servers: a start writes DIR/env and serves what it names, a
// second start reuses them, Stop says what it stopped, and Remove leaves
// nothing behind, not even a cluster kept under the postgres user's home
// (a test's directory is one that user cannot enter).
func TestStartReuseStopRemove(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	t.Cleanup(func() { _ = devenv.Remove(dir, nil) })
	first, err := devenv.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, first.DatabaseURL)
	if err != nil {
		t.Fatalf("PostgreSQL of DIR/env: %v", err)
	}
	_ = conn.Close(ctx)
	opts, err := redis.ParseURL(first.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	defer func() { _ = client.Close() }()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis of DIR/env: %v", err)
	}

	again, err := devenv.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Errorf("a second start chose %+v, want the first's %+v", again, first)
	}
	if loaded, err := devenv.LoadEnv(dir); err != nil || loaded != first {
		t.Errorf("LoadEnv: %+v, %v; want %+v", loaded, err, first)
	}

	var said bytes.Buffer
	if err := devenv.Stop(dir, &said); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"devenv: stopped Redis", "devenv: stopped PostgreSQL"} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("Stop said %q, want a line %q", said.String(), want)
		}
	}
	if err := client.Ping(ctx).Err(); err == nil {
		t.Error("Redis still answers after Stop")
	}

	if err := devenv.Remove(dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{dir, first.PGDir} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there after Remove (%v)", gone, err)
		}
	}
}
