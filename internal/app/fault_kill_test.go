package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// victimLockTTL is the killed instance's LOCK_TTL (the default).
const victimLockTTL = 5 * time.Second

// An instance killed with SIGKILL while it holds seat locks (bookings and
// a hold in flight, their PostgreSQL statements stalled) releases nothing:
// its locks stay until their TTL. Another instance answers 409 seat_locked
// with Retry-After meanwhile, then books and holds those seats; no seat is
// booked twice and no lock key is left.
//
// The victim's locks live LOCK_TTL's default, 5 s: long enough that all
// five are seen held at once however busy the machine.
func TestFaultInstanceKilledHoldingLocks(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, faultTuning) // instance 0 survives
	// The victim keeps connections open (the requests below find them
	// ready): its stalled statements, not connecting, must hold it up.
	dbURL, pgProxy := proxiedURL(t, withParam(t, h.cfg.DatabaseURL, "pool_min_conns", "6"))
	victim := h.startChild(t, map[string]string{
		"DATABASE_URL":  dbURL,
		"LOCK_TTL":      durationEnv(victimLockTTL),
		"LOCK_MAX_WAIT": durationEnv(faultLockMaxWait),
	})
	h.bases = append(h.bases, victim.base) // instance 1
	const seats = 7
	schedule := h.createScheduleDirect(seats)
	// Warm up the victim's booking and hold paths (the schedule cached).
	if resp := h.reserve(1, "carol", schedule, 6); resp.status != http.StatusOK {
		t.Fatalf("booking on the instance before the kill: %d %s", resp.status, resp.raw)
	}
	if held := h.hold(1, "carol", schedule, 7); held.status != http.StatusCreated {
		t.Fatalf("hold on the instance before the kill: %d %s", held.status, held.raw)
	} else if resp := h.release(1, "carol", str(held.body, "id")); resp.status != http.StatusNoContent {
		t.Fatalf("release on the instance before the kill: %d %s", resp.status, resp.raw)
	}

	// The victim's statements stall on their way to PostgreSQL: whatever
	// it locks stays locked, up to the lock's TTL, and nothing it does can
	// finish.
	pgProxy.AddToxic(lockenv.Toxic{Name: "stall", Type: "latency", Stream: "upstream",
		Attributes: map[string]any{"latency": 60000}})
	inFlight := make(chan error, 4)
	post := func(path, body string) {
		req, err := http.NewRequest(http.MethodPost, victim.base+path, strings.NewReader(body))
		if err != nil {
			inFlight <- err
			return
		}
		req.Header.Set("Authorization", "Bearer "+h.token("alice", ""))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			err = fmt.Errorf("answered %d", resp.StatusCode)
		}
		inFlight <- err
	}
	for seat := 1; seat <= 3; seat++ {
		go post("/reservations", fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, seat))
	}
	go post("/holds", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[4,5]}`, schedule))
	deadline := time.Now().Add(faultPatience)
	for len(lockedSeatsIn(t, h.redis, schedule, seats)) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the victim never held seats 1-5: locked %v", lockedSeatsIn(t, h.redis, schedule, seats))
		}
		time.Sleep(5 * time.Millisecond)
	}

	victim.kill9(t)
	killedAt := time.Now()
	// The dead process's connections end with it: nothing it sent is
	// still on its way to PostgreSQL.
	pgProxy.Cut()
	for range 4 {
		if err := <-inFlight; err == nil || strings.HasPrefix(err.Error(), "answered") {
			t.Errorf("a request to the killed instance: %v, want a broken connection", err)
		}
	}

	first := h.reserve(0, "bob", schedule, 1)
	if first.status == http.StatusConflict {
		expectProblem(t, first, http.StatusConflict, "seat_locked")
		if first.header.Get("Retry-After") == "" {
			t.Error("seat_locked without Retry-After")
		}
		t.Logf("fault=instance-kill-9: the survivor's first booking of a dead holder's seat: 409 seat_locked, Retry-After %s", first.header.Get("Retry-After"))
	} else if first.status != http.StatusOK {
		t.Fatalf("the survivor's first booking after the kill: %d %s, want 409 seat_locked or 200", first.status, first.raw)
	}
	for seat := 1; seat <= 3; seat++ {
		if first.status != http.StatusOK || seat > 1 {
			h.bookUntilOK(0, "bob", schedule, seat)
		}
	}
	for {
		held := h.hold(0, "bob", schedule, 4, 5)
		if held.status == http.StatusCreated {
			if resp := h.release(0, "bob", str(held.body, "id")); resp.status != http.StatusNoContent {
				t.Fatalf("release: %d %s", resp.status, resp.raw)
			}
			break
		}
		if reasons := unavailableSeats(t, held); reasons[4] != "locked" && reasons[5] != "locked" {
			t.Fatalf("hold after the kill: %s, want only seats locked by the dead instance", held.raw)
		}
		if time.Since(killedAt) > faultPatience {
			t.Fatalf("seats 4-5 still locked %v after the kill", faultPatience)
		}
		time.Sleep(50 * time.Millisecond)
	}
	recovery := time.Since(killedAt)
	if recovery > victimLockTTL+10*time.Second {
		t.Errorf("the dead instance's seats were free only %v after the kill, want within its lock TTL (%v) and slack", recovery, victimLockTTL)
	}

	for seat := 1; seat <= 3; seat++ {
		if n := h.activeRows(schedule, seat); n != 1 {
			t.Errorf("seat %d has %d active reservations, want bob's alone", seat, n)
		}
	}
	h.expectSettled(h.redis, schedule, seats)
	logFault(t, "instance-kill-9", -1, recovery, time.Since(killedAt))
}
