package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// onBooking is a pgx tracer that calls do once, as the first booking
// statement (which commits on its own) is about to be sent.
// Until armed it does nothing, so that a first booking can prepare the
// statement on the connection (preparing is a round trip of its own).
type onBooking struct {
	armed atomic.Bool
	once  sync.Once
	do    func()
}

func (c *onBooking) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if c.armed.Load() && strings.Contains(data.SQL, "INSERT INTO reservations") {
		c.once.Do(c.do)
	}
	return ctx
}

func (c *onBooking) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// lookupCountingRepo books through one store and answers SeatReservation
// from another, counting the look-ups.
type lookupCountingRepo struct {
	reservation.Repository
	lookups *postgres.Store
	count   atomic.Int32
}

func (r *lookupCountingRepo) SeatReservation(ctx context.Context, scheduleID int64, seatID int) (reservation.Reservation, error) {
	r.count.Add(1)
	return r.lookups.SeatReservation(ctx, scheduleID, seatID)
}

// The client hangs up, and the lease runs out, while the booking
// statement's reply is held back by the network: PostgreSQL committed, but
// the insert only learns that its context ended. The use case looks the seat up and answers with the
// booking it made; there is exactly one row.
//
// The booking's pool goes through a fault proxy whose replies are delayed
// by a second from the moment the booking is sent; the request is cancelled half
// way through that second, and the 300 ms lease has ended by then too. The
// look-up uses a direct pool: what is tested is that it happens, and what
// it answers.
func TestReserveClientGoneDuringCommitFindsTheBooking(t *testing.T) {
	t.Parallel()
	const (
		replyDelay = time.Second
		hangUpPast = replyDelay / 2 // after COMMIT is sent, long before its reply
		lockTTL    = 300 * time.Millisecond
	)
	dbURL := lockenv.DatabaseURL(t)
	direct, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(direct.Close)
	if err := postgres.Migrate(direct); err != nil {
		t.Fatal(err)
	}
	store := postgres.NewStore(direct)
	s := mustSchedule(t, store, 10)

	target, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := lockenv.NewProxy(t, target.Host)
	target.Host = proxy.Addr()
	ctx, hangUp := context.WithCancel(testContext(t))
	defer hangUp()
	cfg, err := pgxpool.ParseConfig(target.String())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1 // the warm-up's prepared statement is the booking's
	tracer := &onBooking{do: func() {
		proxy.AddToxic(lockenv.Toxic{Name: "slow-commit", Type: "latency", Stream: "downstream",
			Attributes: map[string]any{"latency": replyDelay.Milliseconds()}})
		time.AfterFunc(hangUpPast, hangUp)
	}}
	cfg.ConnConfig.Tracer = tracer
	slow, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(slow.Close)

	repo := &lookupCountingRepo{Repository: postgres.NewStore(slow), lookups: store}
	locker := lock.New(memlock.New(), lock.Config{})
	svc := reservation.NewService(repo, locker, reservation.Config{LockTTL: lockTTL}, nil)
	warm := mustSchedule(t, store, 1)
	if _, err := svc.Reserve(testContext(t), reservation.ReserveCommand{ScheduleID: warm.ID(), SeatID: 1, UserID: "warm-up"}); err != nil {
		t.Fatalf("warm-up booking: %v", err)
	}
	tracer.armed.Store(true)

	r, err := svc.Reserve(ctx, reservation.ReserveCommand{ScheduleID: s.ID(), SeatID: 4, UserID: "alice"})

	if err != nil {
		t.Fatalf("Reserve: %v, want the booking that committed", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the request's context did not end during the booking: the scenario did not happen")
	}
	if r.ScheduleID() != s.ID() || r.SeatID() != 4 || r.UserID() != "alice" {
		t.Errorf("Reserve = %+v, want alice's seat 4", r)
	}
	if n := repo.count.Load(); n != 1 {
		t.Errorf("seat look-ups = %d, want 1 (the insert's outcome was unknown)", n)
	}
	if n := countReservations(t, direct, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want 1", n)
	}
	stored, err := store.Reservation(testContext(t), r.ID())
	if err != nil || stored.UserID() != "alice" || stored.SeatID() != 4 {
		t.Errorf("stored reservation %v = %+v, %v; want alice's seat 4", r.ID(), stored, err)
	}
}
