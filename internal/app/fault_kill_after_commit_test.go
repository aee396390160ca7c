package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/reservation"
)

// killAfterCommitEnv makes a child instance kill itself (SIGKILL) as soon
// as one of its seat-changing writes has committed: before it answers,
// before it ends the seat's lease, before anything after the COMMIT.
// Such an instance runs no periodic jobs (it would die holding the relay).
const killAfterCommitEnv = "SEATLOCK_TEST_KILL_AFTER_COMMIT"

// killAfterCommit is the store of such an instance.
type killAfterCommit struct{ reservation.Repository }

func (killAfterCommit) die() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

func (k killAfterCommit) InsertReservation(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	r, err := k.Repository.InsertReservation(ctx, nr)
	if err == nil {
		k.die()
	}
	return r, err
}

func (k killAfterCommit) CancelReservation(ctx context.Context, id uuid.UUID, fence int64) (reservation.Reservation, error) {
	r, err := k.Repository.CancelReservation(ctx, id, fence)
	if err == nil {
		k.die()
	}
	return r, err
}

func (k killAfterCommit) InsertHold(ctx context.Context, h reservation.NewHold) (reservation.Hold, error) {
	held, err := k.Repository.InsertHold(ctx, h)
	if err == nil {
		k.die()
	}
	return held, err
}

func (k killAfterCommit) ConfirmHold(ctx context.Context, id uuid.UUID, userID string) ([]reservation.Reservation, error) {
	rs, err := k.Repository.ConfirmHold(ctx, id, userID)
	if err == nil {
		k.die()
	}
	return rs, err
}

func (k killAfterCommit) ReleaseHold(ctx context.Context, id uuid.UUID, userID string) ([]int, error) {
	freed, err := k.Repository.ReleaseHold(ctx, id, userID)
	if err == nil {
		k.die()
	}
	return freed, err
}

// killedChanges is how many instances die right after a COMMIT.
const killedChanges = 50

// An instance killed with SIGKILL right after a seat change committed —
// before it answered, streamed anything or ended the seat's lease — loses
// no seat event: the change was recorded in its own transaction, and the
// relay on the surviving instance streams it. Fifty changes (bookings,
// cancellations, holds, confirmations, releases), each by an instance
// that dies right after its COMMIT: every one appears in the schedule's
// stream exactly once, in each seat's order, with its position, and a
// watcher's page ends equal to the seat map.
func TestFaultKilledRightAfterCommitLosesNoSeatEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1) // instance 0 survives and relays
	u, err := url.Parse(h.cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	ns := strings.TrimPrefix(u.Path, "/") + "/"
	const seats = 10
	schedule := h.createScheduleDirect(seats)
	watcher := h.stream(0, schedule, "")
	page := snapshotSeats(t, watcher.next(10*time.Second))
	token := h.token("alice", "")

	want := map[int][]string{} // seat -> the statuses its changes set, in order
	status := func(seat int) string {
		if n := len(want[seat]); n > 0 {
			return want[seat][n-1]
		}
		return "available"
	}
	// Each seat goes through one of two scripts of five changes.
	scripts := [2][]string{
		{"book", "cancel", "hold", "confirm", "cancel"},
		{"hold", "release", "hold", "confirm", "cancel"},
	}
	for i := range killedChanges {
		seat := i%seats + 1
		var method, path, body, next string
		switch op := scripts[seat%2][i/seats]; op {
		case "book":
			method, path, next = http.MethodPost, "/reservations", "reserved"
			body = fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, seat)
		case "hold":
			method, path, next = http.MethodPost, "/holds", "held"
			body = fmt.Sprintf(`{"scheduleId":%d,"seatIds":[%d]}`, schedule, seat)
		case "cancel":
			method, path, next = http.MethodDelete, "/reservations/"+h.activeReservation(schedule, seat), "available"
		case "confirm":
			method, path, next = http.MethodPost, "/holds/"+h.activeHold(schedule, seat)+"/confirm", "reserved"
		case "release":
			method, path, next = http.MethodDelete, "/holds/"+h.activeHold(schedule, seat), "available"
		}
		h.waitSeatUnlocked(schedule, seat) // the last victim of this seat died holding its lock
		victim := startChildInstance(t, ns, map[string]string{
			"DATABASE_URL": h.cfg.DatabaseURL, "REDIS_URL": h.cfg.RedisURL, "AUTH_SECRET": testSecret,
			"LOCK_TTL": "1s", killAfterCommitEnv: "1",
		})
		if answer, err := rawRequest(victim.base, method, path, token, body); err == nil {
			t.Fatalf("change %d (%s %s): the instance answered %s instead of dying after its COMMIT", i, method, path, answer)
		}
		victim.waitKilled(t)
		want[seat] = append(want[seat], next)
	}

	// The relay catches up.
	deadline := time.Now().Add(30 * time.Second)
	for h.pendingSeatChanges(schedule) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d seat changes still unrelayed after 30 s", h.pendingSeatChanges(schedule))
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, entries := h.streamedStatuses(schedule)
	missing := 0
	for seat := 1; seat <= seats; seat++ {
		if !slices.Equal(got[seat], want[seat]) {
			t.Errorf("seat %d streamed %v, want %v", seat, got[seat], want[seat])
		}
		missing += max(0, len(want[seat])-len(got[seat]))
	}
	t.Logf("%d changes, each by an instance killed right after its COMMIT: %d streamed, %d missing",
		killedChanges, entries, missing)

	// The watcher's page, updated by every event it was sent, is the seat map.
	for range entries {
		ev := watcher.next(30 * time.Second)
		var change struct {
			SeatID int    `json:"seatId"`
			Status string `json:"status"`
		}
		if ev.name != "seat" || json.Unmarshal([]byte(ev.data), &change) != nil {
			t.Fatalf("watcher got %+v, want a seat event", ev)
		}
		page[change.SeatID] = change.Status
	}
	seatMap := h.seatStatuses(schedule)
	for seat := 1; seat <= seats; seat++ {
		if page[seat] != seatMap[seat] || seatMap[seat] != status(seat) {
			t.Errorf("seat %d: the watcher's page says %q, the seat map %q, the changes made %q",
				seat, page[seat], seatMap[seat], status(seat))
		}
	}
}

// rawRequest sends one request and reads its answer; an error is what a
// client of an instance that died sees.
func rawRequest(base, method, path, token, body string) (string, error) {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var b strings.Builder
	_, err = fmt.Fprintf(&b, "%d", resp.StatusCode)
	return b.String(), err
}

// waitKilled waits for the instance to end, and fails unless SIGKILL ended it.
func (c *childInstance) waitKilled(t *testing.T) {
	t.Helper()
	_ = c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the instance ended with %v, not by SIGKILL:\n%s", c.cmd.ProcessState, c.output())
	}
}

// waitSeatUnlocked waits until no lease holds the seat's lock key (a seal
// is no lease).
func (h *harness) waitSeatUnlocked(schedule int64, seat int) {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := h.redis.Get(context.Background(), reservation.SeatLockKey(schedule, seat)).Result()
		if err == redis.Nil || err == nil && strings.HasPrefix(v, "sealed") {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("seat %d still locked after 30 s (%q, %v)", seat, v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) activeReservation(schedule int64, seat int) string {
	h.t.Helper()
	var id string
	if err := h.pool.QueryRow(context.Background(),
		`SELECT id FROM reservations WHERE schedule_id = $1 AND seat_id = $2 AND cancelled_at IS NULL`, schedule, seat).Scan(&id); err != nil {
		h.t.Fatalf("seat %d's reservation: %v", seat, err)
	}
	return id
}

func (h *harness) activeHold(schedule int64, seat int) string {
	h.t.Helper()
	var id string
	if err := h.pool.QueryRow(context.Background(),
		`SELECT hold_id FROM seat_claims WHERE schedule_id = $1 AND seat_id = $2 AND hold_id IS NOT NULL AND expires_at > now()`,
		schedule, seat).Scan(&id); err != nil {
		h.t.Fatalf("seat %d's hold: %v", seat, err)
	}
	return id
}

func (h *harness) pendingSeatChanges(schedule int64) int {
	h.t.Helper()
	var n int
	if err := h.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM seat_changes WHERE schedule_id = $1`, schedule).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}
