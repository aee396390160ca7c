package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// pausingRepo stalls the first InsertReservation until released, and then
// writes with a context that nothing cancels: a holder frozen by a GC pause
// or a suspended VM, whose own timers never fired, waking up after its lease
// ran out.
type pausingRepo struct {
	*postgres.Store
	paused chan struct{} // closed when the first insert is stalled
	resume chan struct{}
	first  bool
}

func (p *pausingRepo) InsertReservation(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	if !p.first {
		p.first = true
		close(p.paused)
		<-p.resume
		return p.Store.InsertReservation(context.Background(), nr)
	}
	return p.Store.InsertReservation(ctx, nr)
}

func TestStaleHolderCannotWriteAfterNewerHolder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	schedule := h.createScheduleDirect(1)
	backend := redislock.New(h.redis)
	t.Cleanup(func() { _ = backend.Close() })
	locker := lock.New(backend, lock.Config{})
	repo := &pausingRepo{Store: postgres.NewStore(h.pool), paused: make(chan struct{}), resume: make(chan struct{})}
	const ttl = 300 * time.Millisecond
	service := reservation.NewService(repo, locker, reservation.Config{LockTTL: ttl}, nil)

	stale := make(chan error, 1)
	go func() {
		_, err := service.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: schedule, SeatID: 1, UserID: "paused"})
		stale <- err
	}()
	<-repo.paused
	time.Sleep(ttl + 100*time.Millisecond) // the paused holder's lease runs out

	newer, err := service.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: schedule, SeatID: 1, UserID: "newer"})
	if err != nil {
		t.Fatalf("newer holder: %v", err)
	}
	close(repo.resume)
	err = <-stale
	var locked *reservation.UnavailableSeat
	if !errors.As(err, &locked) || !errors.Is(err, reservation.ErrStaleFence) {
		t.Fatalf("paused holder after waking: %v, want ErrSeatLocked from a stale fence", err)
	}
	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Fatalf("rows = %d, want exactly 1", n)
	}
	got, err := repo.Reservation(context.Background(), newer.ID())
	if err != nil || got.UserID() != "newer" {
		t.Errorf("the seat belongs to %v (%v), want the newer holder", got.UserID(), err)
	}
}
