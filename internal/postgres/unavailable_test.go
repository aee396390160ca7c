package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// storeCalls exercises every method that reaches PostgreSQL.
func storeCalls(scheduleID int64, reservationID uuid.UUID) map[string]func(context.Context, *postgres.Store) error {
	sched, _ := reservation.NewSchedule("Hamlet", startsAt, 10)
	return map[string]func(context.Context, *postgres.Store) error{
		"CreateSchedule": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.CreateSchedule(ctx, sched)
			return err
		},
		"Schedule": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.Schedule(ctx, scheduleID)
			return err
		},
		"OccupiedSeats": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.OccupiedSeats(ctx, scheduleID)
			return err
		},
		"CancelReservation": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.CancelReservation(ctx, reservationID, nextFence())
			return err
		},
		"InsertHold": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.InsertHold(ctx, reservation.NewHold{ScheduleID: scheduleID, SeatIDs: []int{5}, Fences: []int64{nextFence()},
				UserID: "bob", TTL: time.Minute})
			return err
		},
		"UnavailableSeats": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.UnavailableSeats(ctx, scheduleID, []int{1, 2})
			return err
		},
		"Hold": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.Hold(ctx, reservationID)
			return err
		},
		"ConfirmHold": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.ConfirmHold(ctx, reservationID, "bob")
			return err
		},
		"ReleaseHold": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.ReleaseHold(ctx, reservationID, "bob")
			return err
		},
		"PurgeHolds": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.PurgeHolds(ctx, time.Now())
			return err
		},
		"ExpiredClaims": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.ExpiredClaims(ctx, 10)
			return err
		},
		"DropExpiredClaim": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.DropExpiredClaim(ctx, reservation.SeatRef{ScheduleID: scheduleID, SeatID: 1})
			return err
		},
		"SeatReservation": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.SeatReservation(ctx, scheduleID, 1)
			return err
		},
		"InsertReservation": func(ctx context.Context, s *postgres.Store) error {
			_, err := insert(ctx, s, scheduleID, 2, "bob", nextFence())
			return err
		},
		"Reservation": func(ctx context.Context, s *postgres.Store) error {
			_, err := s.Reservation(ctx, reservationID)
			return err
		},
		"Ping": func(ctx context.Context, s *postgres.Store) error { return s.Ping(ctx) },
	}
}

// checkUnavailable calls every method on store and wants each error to be
// reservation.ErrUnavailable; why explains a failure.
func checkUnavailable(t *testing.T, ctx context.Context, store *postgres.Store, scheduleID int64, reservationID uuid.UUID, why string) {
	t.Helper()
	for name, call := range storeCalls(scheduleID, reservationID) {
		err := call(ctx, store)
		if !errors.Is(err, reservation.ErrUnavailable) {
			t.Errorf("%s error = %v, want errors.Is(err, reservation.ErrUnavailable)%s", name, err, why)
		}
	}
}

func TestUnreachableServerIsUnavailable(t *testing.T) {
	t.Parallel()
	pool, err := postgres.Open(testContext(t), "postgres://x:y@127.0.0.1:1/db?connect_timeout=1")
	if err != nil {
		t.Fatalf("Open must not dial: %v", err)
	}
	t.Cleanup(pool.Close)

	checkUnavailable(t, testContext(t), postgres.NewStore(pool), 1, uuid.New(), "")
	if err := postgres.Migrate(pool); err == nil {
		t.Error("Migrate on an unreachable server succeeded")
	}
}

func TestClosedPoolIsUnavailable(t *testing.T) {
	t.Parallel()
	pool, err := postgres.Open(testContext(t), lockenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	store := postgres.NewStore(pool)
	s := mustSchedule(t, store, 10)
	r := mustReserve(t, store, s.ID(), 1, "alice")
	pool.Close()

	// A request still in flight while the service shuts down must get a
	// 503-class error, not an unclassified one.
	checkUnavailable(t, testContext(t), store, s.ID(), r.ID(),
		": internal/postgres/errors.go unreachable() does not recognise puddle.ErrClosedPool (\"closed pool\"), "+
			"which pgxpool returns after Close, so a request in flight during shutdown gets a 500 instead of a 503")
}

func TestExpiredDeadlineIsUnavailable(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	s := mustSchedule(t, store, 10)
	r := mustReserve(t, store, s.ID(), 1, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()

	checkUnavailable(t, ctx, store, s.ID(), r.ID(), "")
}

func TestOpenRejectsBadURLWithoutLeakingIt(t *testing.T) {
	t.Parallel()
	_, err := postgres.Open(context.Background(), "postgres://user:s3cret@127.0.0.1:5432/db?connect_timeout=notanumber")
	if err == nil {
		t.Fatal("Open accepted an invalid URL")
	}
	if msg := err.Error(); strings.Contains(msg, "s3cret") {
		t.Errorf("Open error %q leaks the password", msg)
	}
}

// A server that drops the session (restart, failover, an operator's
// pg_terminate_backend) is an outage for the request that hit it; the pool
// then recovers on its own.
func TestTerminatedSessionIsReplaced(t *testing.T) {
	t.Parallel()
	url := lockenv.DatabaseURL(t)
	ctx := testContext(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	// One connection, never health-checked on acquire, so the store's next
	// query is certain to run on the terminated session.
	cfg.MaxConns = 1
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	store := postgres.NewStore(pool)
	s := mustSchedule(t, store, 10)

	var pid uint32
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(ctx) }()
	var terminated bool
	// The timeout makes pg_terminate_backend wait until the backend is gone.
	if err := admin.QueryRow(ctx, `SELECT pg_terminate_backend($1, 10000)`, pid).Scan(&terminated); err != nil || !terminated {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, terminated, err)
	}

	// The server said it ended the session: the statement did not run,
	// and is sent again on a new connection.
	if _, err := store.Schedule(ctx, s.ID()); err != nil {
		t.Errorf("Schedule on a terminated session: %v, want it run again on a new connection", err)
	}
	var now uint32
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&now); err != nil || now == pid {
		t.Errorf("the pool's session is %d (%v), want a new one in place of %d", now, err, pid)
	}
}

// The pool is DefaultMaxConns wide unless the URL says otherwise.
func TestOpenPoolSize(t *testing.T) {
	url := lockenv.DatabaseURL(t)
	for _, tt := range []struct {
		url  string
		want int32
	}{
		{url, postgres.DefaultMaxConns},
		{url + "&pool_max_conns=3", 3},
	} {
		pool, err := postgres.Open(context.Background(), tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := pool.Config().MaxConns; got != tt.want {
			t.Errorf("MaxConns = %d, want %d", got, tt.want)
		}
		pool.Close()
	}
}

// A pool that follows a primary among several hosts gives the writes under
// seat locks room for a switchover's gap; a single server keeps the
// service's default.
func TestWriteTimeout(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	for _, tt := range []struct {
		url  string
		want time.Duration
	}{
		{"postgres://u:p@127.0.0.1:1/db?sslmode=disable", 0},
		{"postgres://u:p@127.0.0.1:1,127.0.0.1:2/db?sslmode=disable&target_session_attrs=read-write", postgres.FailoverWriteTimeout},
	} {
		pool, err := postgres.Open(ctx, tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := postgres.WriteTimeout(pool); got != tt.want {
			t.Errorf("WriteTimeout(%s) = %v, want %v", tt.url, got, tt.want)
		}
		pool.Close()
	}
}
