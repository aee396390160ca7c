package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/redisconn"
	"github.com/seatlock/seatlock/internal/testenv"
)

// sentinelRecoveryBound is how soon after the primary's death bookings must
// succeed again: Sentinel needs down-after-milliseconds (1 s) to see the
// primary gone, a vote and a promotion; the rest is margin for a busy
// machine.
const sentinelRecoveryBound = 30 * time.Second

// sentinelFreshPace spaces each fresh-seat worker's bookings so that the
// stream of fresh seats outlasts the bound: unpaced, the workers sold every
// fresh seat within a second or two of the kill, and the stream could end
// before its first 503 was counted.
const sentinelFreshPace = 20 * time.Millisecond

// sentinelOutcome is one request of the failover test's stream.
type sentinelOutcome struct {
	start, end time.Time
	instance   int
	hot        bool // the hot seat (else a fresh seat)
	schedule   int64
	seat       int
	user       string
	status     int // 0: no HTTP answer (transport error)
	code       string
}

func (o sentinelOutcome) failed() bool { return o.status == 0 || o.status >= 500 }

// Two instances reach Redis through Sentinel (REDIS_URL redis+sentinel://)
// for the locks, the seat feed and the rate limits, under a stream of
// bookings: workers on fresh seats, contenders on one hot seat (whose
// winner cancels, so that it stays contended). The primary is SIGKILLed;
// the Sentinels promote the replica; the instances follow it by themselves.
// The test measures the first 503 (if any), the time until bookings sent
// after the kill succeed again and the requests failed, and checks that no seat is booked twice, that
// every 200 has its row, that no lock is left once the TTLs pass, and
// that every booking's and cancellation's webhook event is delivered.
func TestFaultRedisSentinelFailover(t *testing.T) {
	t.Parallel()
	s := testenv.StartSentinel(t)
	h := newHarnessWith(t, 0, func(cfg *config.Config) {
		faultTuning(cfg)
		cfg.RedisURL = s.URL
		cfg.RateLimitUser = 1_000_000 // through Sentinel too, never refusing
		cfg.RateLimitIP = 1_000_000
		withLocalWebhooks(cfg)
	})
	h.bases = append(h.bases, h.serve(h.cfg), h.serve(h.cfg))
	// An integrator's endpoint: every booking and cancellation across the
	// failover reaches it (the events live in PostgreSQL, which Redis's
	// failover must not disturb).
	receiver := newHookReceiver(t)
	h.createWebhook(webhookBody(receiver.srv.URL))
	rdb, err := redisconn.Open(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })

	const seatsPerSchedule = 2000
	const freshWorkers, hotWorkers = 12, 4
	// Enough fresh seats for the paced workers until the bound is past,
	// with a quarter to spare.
	streamFor := 2*time.Second + sentinelRecoveryBound + 5*time.Second
	freshSeats := int(streamFor/sentinelFreshPace) * freshWorkers * 5 / 4
	hotSchedule := h.createScheduleDirect(1)
	var fresh []int64
	for range (freshSeats + seatsPerSchedule - 1) / seatsPerSchedule {
		fresh = append(fresh, h.createScheduleDirect(seatsPerSchedule))
	}
	var nextFresh atomic.Int64
	tokens := map[string]string{}
	for w := range freshWorkers {
		user := fmt.Sprintf("fan-%d", w)
		tokens[user] = h.token(user, "")
	}
	for w := range hotWorkers {
		user := fmt.Sprintf("hot-%d", w)
		tokens[user] = h.token(user, "")
	}

	var mu sync.Mutex
	var outcomes []sentinelOutcome
	var unexpected []string
	send := func(instance int, method, path, user, body string) (int, string, map[string]any) {
		return h.sendRaw(instance, method, path, tokens[user], body, nil)
	}
	book := func(instance int, user string, hot bool, schedule int64, seat int) (sentinelOutcome, string) {
		o := sentinelOutcome{start: time.Now(), instance: instance, hot: hot, schedule: schedule, seat: seat, user: user}
		var body map[string]any
		o.status, o.code, body = send(instance, http.MethodPost, "/reservations", user,
			fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, seat))
		o.end = time.Now()
		id, _ := body["id"].(string)
		ok := o.status == http.StatusOK ||
			o.status == http.StatusServiceUnavailable && o.code == "unavailable" ||
			hot && o.status == http.StatusConflict && (o.code == "seat_locked" || o.code == "seat_taken")
		mu.Lock()
		outcomes = append(outcomes, o)
		if !ok {
			unexpected = append(unexpected, fmt.Sprintf("seat %d/%d on instance %d: %d %s", schedule, seat, instance, o.status, o.code))
		}
		mu.Unlock()
		return o, id
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range freshWorkers {
		wg.Go(func() {
			user := fmt.Sprintf("fan-%d", w)
			for {
				select {
				case <-stop:
					return
				case <-time.After(sentinelFreshPace):
				}
				n := int(nextFresh.Add(1)) - 1
				if n >= len(fresh)*seatsPerSchedule {
					return
				}
				book(n%2, user, false, fresh[n/seatsPerSchedule], n%seatsPerSchedule+1)
			}
		})
	}
	for w := range hotWorkers {
		wg.Go(func() {
			user := fmt.Sprintf("hot-%d", w)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				o, id := book((w+i)%2, user, true, hotSchedule, 1)
				if o.status != http.StatusOK {
					continue
				}
				// The winner lets the seat go again, retrying through
				// the failover, so the seat stays contended.
				time.Sleep(20 * time.Millisecond)
				for {
					status, _, _ := send((w+i)%2, http.MethodDelete, "/reservations/"+id, user, "")
					if status == http.StatusNoContent {
						break
					}
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
		})
	}

	// Bookings flow; then the master (whichever the Sentinels name now)
	// dies.
	time.Sleep(2 * time.Second)
	ctx := context.Background()
	oldMaster, err := s.MasterAddr(ctx)
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	killedAt := time.Now()
	s.Server(oldMaster).Kill()
	promoted := make(chan time.Time, 1)
	go func() {
		defer close(promoted)
		for time.Since(killedAt) < sentinelRecoveryBound+5*time.Second {
			if addr, err := s.MasterAddr(ctx); err == nil && addr != oldMaster {
				promoted <- time.Now()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()

	// The stream goes on until every instance has booked again and then
	// for 2 s more, or until the bound is past.
	var first503, recovered time.Time
	var recoveredBy map[int]time.Time
	measure := func() {
		mu.Lock()
		defer mu.Unlock()
		first503, recovered, recoveredBy = time.Time{}, time.Time{}, map[int]time.Time{}
		for _, o := range outcomes {
			if o.end.After(killedAt) && o.status == http.StatusServiceUnavailable && (first503.IsZero() || o.end.Before(first503)) {
				first503 = o.end
			}
		}
		// Recovered: a fresh seat booked by a request sent after the kill.
		// Whether any request is answered 503 first depends on how the
		// retries meet the promotion: on a busy machine every request may
		// wait through it and succeed.
		for _, o := range outcomes {
			if !o.hot && o.status == http.StatusOK && o.start.After(killedAt) {
				if at, ok := recoveredBy[o.instance]; !ok || o.end.Before(at) {
					recoveredBy[o.instance] = o.end
				}
			}
		}
		if len(recoveredBy) == 2 {
			recovered = recoveredBy[0]
			if recoveredBy[1].After(recovered) {
				recovered = recoveredBy[1]
			}
		}
	}
	soldOut := false
	for {
		time.Sleep(100 * time.Millisecond)
		measure()
		if !recovered.IsZero() && time.Since(recovered) > 2*time.Second {
			break
		}
		if time.Since(killedAt) > sentinelRecoveryBound+5*time.Second {
			break
		}
		if nextFresh.Load() >= int64(len(fresh)*seatsPerSchedule) {
			soldOut = true
			break
		}
	}
	close(stop)
	wg.Wait()
	stoppedAt := time.Now()
	// Requests still in flight when the stream stopped count too.
	measure()

	promotedAt, wasPromoted := <-promoted
	if !wasPromoted {
		t.Fatalf("the Sentinels promoted no replica within %v\n%s", sentinelRecoveryBound+5*time.Second, s.Sentinels[0].Log(30))
	}
	newMaster, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if newMaster == oldMaster {
		t.Fatalf("the Sentinels still name the dead primary %s as master", oldMaster)
	}
	// The outage as requests saw it: the slowest across the kill.
	var slowest time.Duration
	for _, o := range outcomes {
		if o.end.After(killedAt) && o.start.Before(promotedAt) {
			slowest = max(slowest, o.end.Sub(o.start))
		}
	}
	if recovered.IsZero() && soldOut {
		t.Fatalf("every fresh seat was sold %v after the primary's death, before bookings succeeded again on both instances (by instance: %v)",
			time.Since(killedAt).Round(time.Millisecond), recoveredBy)
	}
	if recovered.IsZero() {
		t.Fatalf("bookings did not succeed again on both instances within %v of the primary's death (by instance: %v)\n%s",
			sentinelRecoveryBound, recoveredBy, s.Sentinels[0].Log(30))
	}
	recovery := recovered.Sub(killedAt)
	if recovery > sentinelRecoveryBound {
		t.Errorf("bookings succeeded again %v after the primary died, want within %v", recovery, sentinelRecoveryBound)
	}

	// The figures.
	var total, failed, failedFresh, ok200 int
	var lastFailure time.Time
	booked := map[[2]int64]string{} // fresh seats answered 200 -> user
	for _, o := range outcomes {
		total++
		if o.status == http.StatusOK {
			ok200++
			if !o.hot {
				booked[[2]int64{o.schedule, int64(o.seat)}] = o.user
			}
		}
		if o.failed() {
			failed++
			if !o.hot {
				failedFresh++
			}
			if o.end.After(lastFailure) {
				lastFailure = o.end
			}
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("%d unexpected answers, first: %s", len(unexpected), strings.Join(unexpected[:min(5, len(unexpected))], "; "))
	}
	if lastFailure.After(recovered) {
		t.Logf("a request failed %v after recovery (last failure %v after the kill)", lastFailure.Sub(recovered), lastFailure.Sub(killedAt))
	}

	// The invariant: every 200 has its row, no seat is booked twice (the
	// fresh schedules and the hot seat), none is held, and no lock key is
	// left on the new master once the TTLs pass.
	rows := map[int64]map[int][]storedBooking{}
	for _, schedule := range fresh {
		rows[schedule] = h.activeBookings(schedule)
	}
	for seat, user := range booked {
		if stored := rows[seat[0]][int(seat[1])]; len(stored) != 1 || stored[0].user != user {
			t.Errorf("seat %v answered 200 for %s, stored %v", seat, user, stored)
		}
	}
	used := int(nextFresh.Load())
	for i, schedule := range fresh {
		if seats := min(seatsPerSchedule, max(0, used-i*seatsPerSchedule)); seats > 0 {
			h.expectSettled(rdb, schedule, seats)
		}
	}
	h.expectSettled(rdb, hotSchedule, 1)
	// As in the other failover row: from the last request answered.
	unlocked := time.Since(stoppedAt)

	afterKill := func(at time.Time) string {
		if at.IsZero() {
			return "none"
		}
		return at.Sub(killedAt).Round(time.Millisecond).String() + " after the kill"
	}
	t.Logf("fault=redis-sentinel-failover: %d requests (%d answered 200), %d failed (%d of them on fresh seats), "+
		"first 503: %s; both instances booking again %v after the kill (instance 0: %v, instance 1: %v); "+
		"last failure: %s; slowest request across the outage %v; Sentinel named the new master %v after the kill (%s -> %s); %d fresh seats booked",
		total, ok200, failed, failedFresh, afterKill(first503), recovery.Round(time.Millisecond),
		recoveredBy[0].Sub(killedAt).Round(time.Millisecond), recoveredBy[1].Sub(killedAt).Round(time.Millisecond),
		afterKill(lastFailure), slowest.Round(time.Millisecond), promotedAt.Sub(killedAt).Round(time.Millisecond), oldMaster, newMaster, len(booked))
	firstFailure := time.Duration(-1) // none: logFault writes "-"
	if !first503.IsZero() {
		firstFailure = first503.Sub(killedAt)
	}
	logFault(t, "redis-sentinel-failover", firstFailure, recovery, unlocked)
	delivered := expectEveryEventDelivered(t, h, receiver)
	t.Logf("fault=redis-sentinel-failover webhooks: %d events, %d messages, %d sent again", delivered.events, delivered.messages, delivered.duplicates)
}
