package app_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/testenv"
)

// roundTrips counts what reaches Redis (one per command, a script call is
// one) and PostgreSQL (one per statement or prepare).
type roundTrips struct {
	mu       sync.Mutex
	redis    []string
	postgres []string
}

func (c *roundTrips) reset() (redisCmds, pgQueries []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	redisCmds, pgQueries = c.redis, c.postgres
	c.redis, c.postgres = nil, nil
	return redisCmds, pgQueries
}

// go-redis hook.
func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.mu.Lock()
		c.redis = append(c.redis, cmd.Name())
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.mu.Lock()
		c.redis = append(c.redis, "pipeline")
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

// pgx tracer.
func (c *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.postgresTrip(strings.Fields(data.SQL)[0])
	return ctx
}
func (c *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.postgresTrip("prepare")
	return ctx
}
func (c *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// A batch is one round trip, whatever it holds.
func (c *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.postgresTrip("batch")
	return ctx
}
func (c *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (c *roundTrips) postgresTrip(what string) {
	c.mu.Lock()
	c.postgres = append(c.postgres, what)
	c.mu.Unlock()
}

// countedService is the booking use case on the real adapters, as app
// wires them, with every round trip counted. One connection each, so that
// statements prepared during the warm-up are the ones used afterwards.
func countedService(t *testing.T, fastPath bool) (*reservation.Service, *roundTrips, *redis.Client) {
	t.Helper()
	counts := &roundTrips{}
	pgCfg, err := pgxpool.ParseConfig(lockenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	pgCfg.MaxConns = 1
	pgCfg.ConnConfig.Tracer = counts
	pool, err := pgxpool.NewWithConfig(context.Background(), pgCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	testenv.SpreadScheduleIDs(t, pool)
	rdb := lockenv.Redis(t)
	rdb.AddHook(counts)
	backend := redislock.New(rdb)
	t.Cleanup(func() { _ = backend.Close() })
	locker := lock.New(backend, lock.Config{RememberSeals: fastPath})
	t.Cleanup(locker.Close)
	svc := reservation.NewService(postgres.NewStore(pool), locker,
		reservation.Config{SealBooked: fastPath}, nil)
	return svc, counts, rdb
}

func book(t *testing.T, svc *reservation.Service, schedule int64, seat int, user string) error {
	t.Helper()
	_, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: schedule, SeatID: seat, UserID: user})
	return err
}

func wantTrips(t *testing.T, what string, counts *roundTrips, redisWant, pgWant int) {
	t.Helper()
	redisCmds, pgQueries := counts.reset()
	if len(redisCmds) != redisWant || len(pgQueries) != pgWant {
		t.Errorf("%s: Redis %d %v, PostgreSQL %d %v; want %d and %d",
			what, len(redisCmds), redisCmds, len(pgQueries), pgQueries, redisWant, pgWant)
	}
}

// The round trips of each path, counted: a fresh booking is 2 Redis calls
// (acquire with fence, seal) and 1 PostgreSQL statement; a booked seat is 1
// Redis call and no PostgreSQL at all, and none while the instance
// remembers the seal (lock.SealMemory); the owner's retry adds one look-up;
// a lost seal costs one statement and is rebuilt.
func TestRoundTripsPerBooking(t *testing.T) {
	t.Parallel()
	svc, counts, rdb := countedService(t, true)
	schedule, err := svc.CreateSchedule(context.Background(), "round trips", time.Now().Add(24*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	// Warm-up: the schedule cache, the scripts (EVALSHA, then EVAL once),
	// the prepared statements (the owner's retry's look-up among them).
	if err := book(t, svc, schedule.ID(), 1, "warm"); err != nil {
		t.Fatal(err)
	}
	if err := book(t, svc, schedule.ID(), 1, "warm-other"); !errors.Is(err, reservation.ErrSeatTaken) {
		t.Fatalf("warm-up on a booked seat: %v", err)
	}
	if err := book(t, svc, schedule.ID(), 1, "warm"); err != nil {
		t.Fatalf("warm-up of the owner's retry: %v", err)
	}
	counts.reset()

	if err := book(t, svc, schedule.ID(), 2, "alice"); err != nil {
		t.Fatalf("fresh seat: %v", err)
	}
	wantTrips(t, "fresh seat", counts, 2, 1)

	// This instance sealed the seat and remembers it.
	for range 3 {
		if err := book(t, svc, schedule.ID(), 2, "bob"); !errors.Is(err, reservation.ErrSeatTaken) {
			t.Fatalf("booked seat: %v, want ErrSeatTaken", err)
		}
		wantTrips(t, "booked seat, seal remembered", counts, 0, 0)
	}
	// The owner's retry: its reservation, for one look-up, and no Redis
	// call while the seal is remembered.
	if err := book(t, svc, schedule.ID(), 2, "alice"); err != nil {
		t.Fatalf("the owner's retry: %v, want its reservation", err)
	}
	wantTrips(t, "the owner's retry, seal remembered", counts, 0, 1)
	// Once the memory expires: one Redis call, then remembered again.
	time.Sleep(lock.SealMemory)
	for i := range 3 {
		if err := book(t, svc, schedule.ID(), 2, "bob"); !errors.Is(err, reservation.ErrSeatTaken) {
			t.Fatalf("booked seat: %v, want ErrSeatTaken", err)
		}
		redisCalls := 0
		if i == 0 {
			redisCalls = 1
		}
		wantTrips(t, "booked seat, asked again", counts, redisCalls, 0)
	}

	// The seal is lost (FLUSHALL, a failover): one statement finds the
	// seat taken, and the seal is back.
	key := reservation.SeatLockKey(schedule.ID(), 2)
	rdb.Del(context.Background(), key)
	time.Sleep(lock.SealMemory)
	counts.reset()
	if err := book(t, svc, schedule.ID(), 2, "bob"); !errors.Is(err, reservation.ErrSeatTaken) {
		t.Fatalf("booked seat without its seal: %v, want ErrSeatTaken", err)
	}
	wantTrips(t, "booked seat whose seal was lost", counts, 2, 1)
	if v, want := rdb.Get(context.Background(), key).Val(), redislock.SealedWith(reservation.OwnerNote("alice")); v != want {
		t.Errorf("seat key after the refusal = %q, want the seal rebuilt with its owner's note, %q", v, want)
	}
	time.Sleep(lock.SealMemory)
	counts.reset()
	if err := book(t, svc, schedule.ID(), 2, "carol"); !errors.Is(err, reservation.ErrSeatTaken) {
		t.Fatalf("booked seat: %v, want ErrSeatTaken", err)
	}
	wantTrips(t, "booked seat, seal rebuilt, not remembered", counts, 1, 0)
}

// A hold is one lock call and one release in Redis, and three round
// trips to PostgreSQL: begin, the hold, its claims, their check and the
// user's count in one batch, commit. Its confirmation reads the hold
// first, then books it in as many (a Store that writes webhook events
// adds one round trip to each, the event's insert).
func TestRoundTripsPerHoldAndConfirmation(t *testing.T) {
	t.Parallel()
	svc, counts, _ := countedService(t, true)
	ctx := context.Background()
	schedule, err := svc.CreateSchedule(ctx, "round trips of holds", time.Now().Add(24*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	holdAndConfirm := func(user string, seats ...int) {
		t.Helper()
		held, err := svc.Hold(ctx, reservation.HoldCommand{ScheduleID: schedule.ID(), SeatIDs: seats, UserID: user})
		if err != nil {
			t.Fatalf("hold %v: %v", seats, err)
		}
		wantTrips(t, "hold", counts, 2, 3)
		if _, err := svc.Confirm(ctx, held.ID(), user); err != nil {
			t.Fatalf("confirm: %v", err)
		}
		wantTrips(t, "confirmation", counts, 2, 4)
	}
	// Warm-up: the scripts and the prepared statements.
	warm, err := svc.Hold(ctx, reservation.HoldCommand{ScheduleID: schedule.ID(), SeatIDs: []int{1}, UserID: "warm"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Confirm(ctx, warm.ID(), "warm"); err != nil {
		t.Fatal(err)
	}
	counts.reset()
	holdAndConfirm("alice", 2, 3)
	holdAndConfirm("bob", 4)
}

// With the fast path off, a booked seat is found taken by the statement
// under its lock: one query per request for a booked seat.
func TestRoundTripsWithoutFastPath(t *testing.T) {
	t.Parallel()
	svc, counts, rdb := countedService(t, false)
	schedule, err := svc.CreateSchedule(context.Background(), "no fast path", time.Now().Add(24*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := book(t, svc, schedule.ID(), 1, "warm"); err != nil {
		t.Fatal(err)
	}
	counts.reset()
	for range 3 {
		if err := book(t, svc, schedule.ID(), 1, "bob"); !errors.Is(err, reservation.ErrSeatTaken) {
			t.Fatalf("booked seat: %v, want ErrSeatTaken", err)
		}
		wantTrips(t, "booked seat, fast path off", counts, 2, 1)
	}
	if n := rdb.Exists(context.Background(), reservation.SeatLockKey(schedule.ID(), 1)).Val(); n != 0 {
		t.Error("seat key left behind with the fast path off, want it released")
	}
}
