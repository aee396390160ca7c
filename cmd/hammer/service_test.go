package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/testenv/instances"
)

// serveService starts instances of the real service on 127.0.0.1, sharing
// the test servers' Redis and a fresh PostgreSQL database of the test's
// own (lockenv's servers), and returns their URLs.
func serveService(t *testing.T, n int) []string {
	t.Helper()
	cfg := instances.Config(t)
	cfg.AuthSecret = testSecret
	return instances.Serve(t, cfg, n)
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
	textOf(t, r)
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
