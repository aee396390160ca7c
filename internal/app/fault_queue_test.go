package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/testenv"
)

// TestFaultQueueInstanceKilledMidSale: buyers join through two instances
// while admission runs; one instance is SIGKILLed. Every ticket it gave
// is still there, admission goes on (the survivor's rounds) in line
// order, and nobody has two tickets.
func TestFaultQueueInstanceKilledMidSale(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, faultTuning) // instance 0 survives
	victim := h.startChild(t, nil)
	h.bases = append(h.bases, victim.base) // instance 1
	schedule := h.createSchedule(10)
	h.openQueue(schedule, 20, "")
	var inLine []*queueBuyer
	for i := range 80 {
		if i == 40 {
			victim.kill9(t)
			h.bases = h.bases[:1]
		}
		user := fmt.Sprint("buyer", i)
		inLine = append(inLine, &queueBuyer{user: user, ticket: h.mustJoin(i%len(h.bases), user, schedule)})
	}
	for _, b := range inLine[:40] {
		again := h.join(0, b.user, schedule)
		if again.status != http.StatusOK || str(again.body, "ticket") != b.ticket {
			t.Fatalf("%s after the kill: %d %s", b.user, again.status, again.raw)
		}
	}
	h.expectAdmittedInOrder(inLine, 60*time.Second)
}

// TestFaultQueueSentinelFailover: buyers join one after the other through
// two instances that reach Redis through Sentinel, each retrying a 503
// until it has a ticket; the primary is SIGKILLed meanwhile. With writes
// acknowledged once a replica has them (SEAT_FEED_REPLICAS=1), no
// acknowledged ticket is lost, none is given twice, and admission goes on
// in line order on the promoted replica.
func TestFaultQueueSentinelFailover(t *testing.T) {
	t.Parallel()
	s := testenv.StartSentinel(t)
	h := newHarnessWith(t, 0, func(cfg *config.Config) {
		faultTuning(cfg)
		cfg.RedisURL = s.URL
		cfg.SeatFeedReplicas = 1
		cfg.RateLimitUser = 1_000_000
		cfg.RateLimitIP = 1_000_000
	})
	h.bases = append(h.bases, h.serve(h.cfg), h.serve(h.cfg))
	schedule := h.createScheduleDirect(10)
	h.openQueue(schedule, 10, "")

	ctx := context.Background()
	oldMaster, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var inLine []*queueBuyer
	var failed, killedAt int
	deadline := time.Now().Add(sentinelRecoveryBound + 30*time.Second)
	for i := range 60 {
		if i == 20 {
			s.Server(oldMaster).Kill()
			killedAt = i
		}
		user := fmt.Sprint("buyer", i)
		for {
			resp := h.join(i%2, user, schedule)
			if resp.status == http.StatusCreated || resp.status == http.StatusOK {
				inLine = append(inLine, &queueBuyer{user: user, ticket: str(resp.body, "ticket")})
				break
			}
			if resp.status != http.StatusServiceUnavailable || resp.code() != "unavailable" {
				t.Fatalf("join %s: %d %s", user, resp.status, resp.raw)
			}
			failed++
			if time.Now().After(deadline) {
				t.Fatalf("no join succeeds %s after the kill", sentinelRecoveryBound+30*time.Second)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("primary killed before the %dth join; %d joins answered 503 meanwhile", killedAt+1, failed)
	if addr, err := s.MasterAddr(ctx); err != nil || addr == oldMaster {
		t.Fatalf("no failover: master %s %v", addr, err)
	}
	for _, b := range inLine {
		again := h.join(0, b.user, schedule)
		if again.status != http.StatusOK || str(again.body, "ticket") != b.ticket {
			t.Fatalf("%s after the failover: %d %s (acknowledged %s)", b.user, again.status, again.raw, b.ticket)
		}
	}
	h.expectAdmittedInOrder(inLine, 60*time.Second)
}
