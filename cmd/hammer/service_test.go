package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	service "github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
)

// serveService starts instances of the real service on 127.0.0.1, sharing
// the test servers' Redis and a fresh PostgreSQL database of the test's
// own (lockenv's servers), and returns their URLs.
func serveService(t *testing.T, instances int) []string {
	t.Helper()
	cfg := service.Config{
		DatabaseURL: lockenv.DatabaseURL(t),
		RedisURL:    lockenv.RedisURL(t),
		AuthSecret:  testSecret,
		LockTTL:     5 * time.Second,
		LockMaxWait: 10 * time.Second,
		LockBackend: service.BackendRedis,
		FastPath:    true,
		HoldTTL:     10 * time.Minute,
		BatchLanes:  2,
	}
	pool, err := postgres.Open(t.Context(), cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	// Redis is shared with other tests: schedule ids of their own keep
	// the seat locks apart.
	testenv.SpreadScheduleIDs(t, pool)
	u, err := url.Parse(cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for range instances {
		a, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler), app.WithJobNamespace(strings.TrimPrefix(u.Path, "/")+"/"))
		if err != nil {
			t.Fatalf("app.New: %v", err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx, ln) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
			a.Close()
		})
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls
}

// The scenario end to end against two instances of the real service: the
// venue sells out to parties of one to four, every hold adjacent and no
// seat in two; both seat maps hold exactly the seats granted, and the
// explicit phase holds every block.
func TestBestAvailableAgainstTheService(t *testing.T) {
	urls := serveService(t, 2)
	var stdout bytes.Buffer
	code := run(t.Context(), []string{"-url", strings.Join(urls, ","), "-scenario", "best-available",
		"-rows", "10", "-row-seats", "20", "-quantity", "1-4", "-c", "16", "-users", "200", "-json"}, testEnv, &stdout, &stdout)
	if code != exitPass {
		t.Fatalf("exit %d:\n%s", code, stdout.String())
	}
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-rows", "10", "-row-seats", "20",
		"-quantity", "2-4", "-c", "16", "-users", "200", "-category", "stalls"))
	var text bytes.Buffer
	if err := writeText(&text, r); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", text.String())
	b := r.Best
	if !r.Verdict.Pass || b.Best.StoppedBy != stopSoldOut || b.Explicit.SeatsHeld != 200 || b.Best.Attempts.Max < 1 {
		t.Fatalf("verdict %+v; best available %+v; explicit %+v", r.Verdict, b.Best, b.Explicit)
	}
	// Parties of two or more leave the single seats nobody can have: as
	// many free seats as the seat map shows, all of them stranded when
	// the venue is sold out for two.
	if b.SeatsSold+b.FreeSeats != 200 || b.StrandedSingles != b.FreeSeats {
		t.Errorf("sold %d, free %d, stranded %d: want sold + free = 200, every free seat stranded", b.SeatsSold, b.FreeSeats, b.StrandedSingles)
	}
}
