package seatfeed_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/seatfeed"
	"github.com/seatlock/seatlock/internal/testenv"
)

// env is a test's own outbox (a fresh database) and Redis.
type env struct {
	t      *testing.T
	pool   *pgxpool.Pool
	outbox *postgres.SeatChanges
	rdb    *redis.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	pool := testenv.Pool(t)
	return &env{t: t, pool: pool, outbox: postgres.NewSeatChanges(pool), rdb: lockenv.Redis(t)}
}

// schedule is a schedule id of this test alone (streams live in the shared
// Redis).
func schedule() int64 { return rand.Int64N(1<<40) + 1 }

var statuses = []string{"held", "reserved", "available"}

// write commits n changes of the schedule's seats 1..seats, cycling
// through the statuses, and returns them as the stream should show them
// ("seat:status@pos"), in id order.
func (e *env) write(scheduleID int64, seats, n int) []string {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `
		INSERT INTO seat_changes (schedule_id, seat_id, status)
		SELECT $1, (g % $2) + 1, ($3::text[])[(g / $2) % 3 + 1] FROM generate_series(0, $4 - 1) g
		RETURNING id, seat_id, status`, scheduleID, seats, statuses, n)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			id     int64
			seat   int
			status string
		)
		if err := rows.Scan(&id, &seat, &status); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%s@%d", seat, status, id))
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// backlog is the outbox's pending row count.
func (e *env) backlog() int64 {
	e.t.Helper()
	rows, _, err := e.outbox.Backlog(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return rows
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run runs r until the test ends (or stop is called).
func runRelay(t *testing.T, r *seatfeed.Relay) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func relayFeed(t *testing.T, rdb redis.UniversalClient) *seatfeed.Feed {
	f := seatfeed.New(rdb, seatfeed.Config{})
	t.Cleanup(f.Close)
	return f
}

// metric reads one gauge or counter of reg (-1 when absent).
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		m := f.GetMetric()[0]
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}
	return -1
}

// Every committed change reaches its schedule's stream once, in id order,
// carrying its position, over full and partial batches and several
// schedules; the outbox ends empty.
func TestRelayStreamsEveryChangeOnceInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	metrics, err := seatfeed.NewRelayMetrics(reg, e.outbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := schedule(), schedule()
	wantA := e.write(a, 40, 700)
	wantB := e.write(b, 7, 90)
	runRelay(t, seatfeed.NewRelay(lock.New(memlock.New(), lock.Config{}), e.outbox, relayFeed(t, e.rdb),
		seatfeed.RelayConfig{BatchSize: 128, Metrics: metrics}))
	// Changes made while it runs follow.
	wantA = append(wantA, e.write(a, 40, 30)...)

	eventually(t, "outbox empty", func() bool { return e.backlog() == 0 })
	if got := streamEntries(t, e.rdb, a); !slices.Equal(got, wantA) {
		t.Errorf("stream a: %d entries, want %d in order (first differences: %v)", len(got), len(wantA), firstDiff(got, wantA))
	}
	if got := streamEntries(t, e.rdb, b); !slices.Equal(got, wantB) {
		t.Errorf("stream b: %v, want %v", firstDiff(got, wantB), wantB[:3])
	}
	if got := metric(t, reg, "seatlock_seat_changes_relayed_total"); got != 820 {
		t.Errorf("relayed_total = %v, want 820", got)
	}
	if got := metric(t, reg, "seatlock_seat_changes_lag_seconds"); got != 0 {
		t.Errorf("lag_seconds with an empty outbox = %v, want 0", got)
	}
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d: %s, want %s", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}

// failingOutbox fails Delete while failDeletes is set: the append was done,
// the rows were not deleted (an instance that died between the two).
type failingOutbox struct {
	*postgres.SeatChanges
	failDeletes atomic.Bool
}

func (o *failingOutbox) Delete(ctx context.Context, ids []int64) error {
	if o.failDeletes.Load() {
		return errors.New("died before the delete")
	}
	return o.SeatChanges.Delete(ctx, ids)
}

// A re-delivery (appended, not deleted) adds nothing to the stream.
func TestRelayRedeliveryAddsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := schedule()
	want := e.write(s, 5, 12)
	outbox := &failingOutbox{SeatChanges: e.outbox}
	relay := seatfeed.NewRelay(lock.New(memlock.New(), lock.Config{}), outbox, relayFeed(t, e.rdb), seatfeed.RelayConfig{})

	outbox.failDeletes.Store(true)
	if _, err := relay.Pass(context.Background()); err == nil {
		t.Fatal("Pass succeeded although its delete failed")
	}
	if got := streamEntries(t, e.rdb, s); !slices.Equal(got, want) {
		t.Fatalf("after the first delivery: %v, want %v", got, want)
	}
	if n := e.backlog(); n != 12 {
		t.Fatalf("outbox after a failed delete: %d rows, want all 12 kept", n)
	}
	outbox.failDeletes.Store(false)
	if n, err := relay.Pass(context.Background()); err != nil || n != 12 {
		t.Fatalf("re-delivery Pass = %d, %v", n, err)
	}
	if got := streamEntries(t, e.rdb, s); !slices.Equal(got, want) {
		t.Errorf("after the re-delivery: %v, want %v (each once)", got, want)
	}
	if n := e.backlog(); n != 0 {
		t.Errorf("outbox after the re-delivery: %d rows", n)
	}
}

// Two relays at once (each believes it holds the lock: separate lock
// stores, as after a lost lease), while changes keep coming: every change
// is in the stream exactly once, each seat's in order.
func TestTwoRelaysAtOnceAddNothingTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := schedule()
	cfg := seatfeed.RelayConfig{BatchSize: 16, Interval: time.Millisecond}
	for range 2 {
		runRelay(t, seatfeed.NewRelay(lock.New(memlock.New(), lock.Config{}), e.outbox, relayFeed(t, e.rdb), cfg))
	}
	var want []string
	for range 40 {
		want = append(want, e.write(s, 6, 10)...)
	}
	eventually(t, "outbox empty", func() bool { return e.backlog() == 0 })

	got := streamEntries(t, e.rdb, s)
	if len(got) != len(want) {
		t.Errorf("stream has %d entries, want %d", len(got), len(want))
	}
	seen := map[string]bool{}
	lastPos := map[string]int64{}
	for _, entry := range got {
		if seen[entry] {
			t.Errorf("%s twice", entry)
		}
		seen[entry] = true
		seat, pos := splitEntry(t, entry)
		if pos <= lastPos[seat] {
			t.Errorf("seat %s: position %d after %d", seat, pos, lastPos[seat])
		}
		lastPos[seat] = pos
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("%s never streamed", w)
		}
	}
}

func splitEntry(t *testing.T, entry string) (seat string, pos int64) {
	t.Helper()
	var status string
	var n int
	if _, err := fmt.Sscanf(entry, "%d:%s", &n, &status); err != nil {
		t.Fatal(err)
	}
	at := len(entry) - 1
	for entry[at] != '@' {
		at--
	}
	pos, err := strconv.ParseInt(entry[at+1:], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(n), pos
}

// Only one of several instances relays at a time: with one lock store,
// the standby takes over when the relay stops, and goes on from there.
func TestStandbyTakesOverWhenTheRelayStops(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := schedule()
	store := memlock.New()
	cfg := seatfeed.RelayConfig{Standby: 20 * time.Millisecond}
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	mA, _ := seatfeed.NewRelayMetrics(regA, e.outbox, nil)
	mB, _ := seatfeed.NewRelayMetrics(regB, e.outbox, nil)
	cfgA, cfgB := cfg, cfg
	cfgA.Metrics, cfgB.Metrics = mA, mB
	stopA := runRelay(t, seatfeed.NewRelay(lock.New(store, lock.Config{}), e.outbox, relayFeed(t, e.rdb), cfgA))
	eventually(t, "a relays", func() bool {
		e.write(s, 3, 1)
		return metric(t, regA, "seatlock_seat_changes_relayed_total") > 0
	})
	runRelay(t, seatfeed.NewRelay(lock.New(store, lock.Config{}), e.outbox, relayFeed(t, e.rdb), cfgB))
	e.write(s, 3, 5)
	eventually(t, "outbox empty", func() bool { return e.backlog() == 0 })
	if got := metric(t, regB, "seatlock_seat_changes_relayed_total"); got != 0 {
		t.Errorf("the standby relayed %v changes while the relay ran", got)
	}
	stopA()
	want := e.write(s, 3, 9)
	eventually(t, "the standby relays", func() bool { return e.backlog() == 0 })
	if got := streamEntries(t, e.rdb, s); !slices.Equal(got[len(got)-9:], want) {
		t.Errorf("after the take-over: %v, want %v", got[len(got)-9:], want)
	}
}

// A relay stopped for a while: the backlog and lag metrics grow, the bound
// drops the oldest changes and counts them, and on restart the rest is
// relayed, none lost.
func TestStoppedRelayLagGrowsBoundDropsRestartCatchesUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	metrics, err := seatfeed.NewRelayMetrics(reg, e.outbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := schedule()
	relay := seatfeed.NewRelay(lock.New(memlock.New(), lock.Config{}), e.outbox, relayFeed(t, e.rdb),
		seatfeed.RelayConfig{MaxBacklog: 200, Metrics: metrics})
	// Under the bound, nothing goes.
	first := e.write(s, 50, 150)
	if dropped, err := relay.EnforceBound(context.Background()); err != nil || dropped != 0 {
		t.Fatalf("EnforceBound under the bound = %d, %v", dropped, err)
	}
	if got := metric(t, reg, "seatlock_seat_changes_backlog"); got != 150 {
		t.Errorf("backlog = %v, want 150", got)
	}
	lag := metric(t, reg, "seatlock_seat_changes_lag_seconds")
	eventually(t, "lag grows", func() bool { return metric(t, reg, "seatlock_seat_changes_lag_seconds") >= lag+0.05 })
	second := e.write(s, 50, 150)
	if got := metric(t, reg, "seatlock_seat_changes_backlog"); got != 300 {
		t.Errorf("backlog = %v, want 300", got)
	}

	if dropped, err := relay.EnforceBound(context.Background()); err != nil || dropped != 100 {
		t.Fatalf("EnforceBound = %d, %v; want the 100 oldest dropped", dropped, err)
	}
	if got := metric(t, reg, "seatlock_seat_changes_dropped_total"); got != 100 {
		t.Errorf("dropped_total = %v, want 100", got)
	}
	if got := metric(t, reg, "seatlock_seat_changes_backlog"); got != 200 {
		t.Errorf("backlog after the bound = %v, want 200", got)
	}

	runRelay(t, relay)
	eventually(t, "caught up", func() bool { return e.backlog() == 0 })
	want := append(first[100:], second...)
	if got := streamEntries(t, e.rdb, s); !slices.Equal(got, want) {
		t.Errorf("after the restart: %s", firstDiff(got, want))
	}
	if got := metric(t, reg, "seatlock_seat_changes_relayed_total"); got != 200 {
		t.Errorf("relayed_total = %v, want 200", got)
	}
}

// Redis unreachable: the changes stay in the outbox, failures are counted,
// and when Redis is back they are relayed, none lost.
func TestRedisFailureKeepsTheChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	opts := e.rdb.Options()
	proxy := lockenv.NewProxy(t, opts.Addr)
	proxied := *opts
	proxied.Addr = proxy.Addr()
	proxied.MaxRetries = -1
	rdb := redis.NewClient(&proxied)
	t.Cleanup(func() { _ = rdb.Close() })
	reg := prometheus.NewRegistry()
	metrics, err := seatfeed.NewRelayMetrics(reg, e.outbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := schedule()
	runRelay(t, seatfeed.NewRelay(lock.New(memlock.New(), lock.Config{}), e.outbox, relayFeed(t, rdb),
		seatfeed.RelayConfig{MaxBackoff: 200 * time.Millisecond, Metrics: metrics}))
	want := e.write(s, 4, 8)
	eventually(t, "relayed", func() bool { return e.backlog() == 0 })

	proxy.Cut()
	more := e.write(s, 4, 8)
	eventually(t, "failures counted", func() bool { return metric(t, reg, "seatlock_seat_changes_relay_failures_total") >= 3 })
	if n := e.backlog(); n != 8 {
		t.Fatalf("outbox while Redis is away: %d rows, want the 8 new ones kept", n)
	}
	proxy.Restore()
	eventually(t, "relayed after Redis came back", func() bool { return e.backlog() == 0 })
	want = append(want, more...)
	if got := streamEntries(t, e.rdb, s); !slices.Equal(got, want) {
		t.Errorf("stream: %v, want %v", got, want)
	}
}
