package reservation_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatmap"
)

// polled has best available read images of repo's seats listed again
// when older than 100 ms.
func polled(repo reservation.Repository) reservation.Config {
	return reservation.Config{SeatImages: seatmap.NewImages(nil, repo, seatmap.Config{})}
}

// seatClaimRepo keeps holds of one laid-out schedule as PostgreSQL's claim
// rows do: a hold gets all its seats or, when one is claimed already,
// none (SeatsUnavailableError). taken seats are claimed from the start,
// by someone this instance never heard of.
type seatClaimRepo struct {
	reservation.Repository
	schedule reservation.Schedule

	mu      sync.Mutex
	claimed map[int]string
	expired map[int]bool
	inserts int
	reads   int
}

func newSeatClaimRepo(layout reservation.Layout, taken ...int) *seatClaimRepo {
	r := &seatClaimRepo{
		schedule: reservation.RestoreLaidOutSchedule(scheduleID, "Hamlet", createdAt, layout),
		claimed:  map[int]string{},
	}
	for _, s := range taken {
		r.claimed[s] = "someone"
	}
	return r
}

func (r *seatClaimRepo) Schedule(_ context.Context, id int64) (reservation.Schedule, error) {
	if id != scheduleID {
		return reservation.Schedule{}, reservation.ErrScheduleNotFound
	}
	return r.schedule, nil
}

func (r *seatClaimRepo) OccupiedSeats(context.Context, int64) ([]reservation.OccupiedSeat, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	var out []reservation.OccupiedSeat
	for s := range r.claimed {
		out = append(out, reservation.OccupiedSeat{ID: s, Status: reservation.SeatHeld})
	}
	return out, nil
}

func (r *seatClaimRepo) InsertHold(_ context.Context, h reservation.NewHold) (reservation.Hold, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inserts++
	refused := &reservation.SeatsUnavailableError{}
	for _, s := range h.SeatIDs {
		if _, taken := r.claimed[s]; taken {
			refused.Seats = append(refused.Seats, reservation.UnavailableSeat{SeatID: s, Reason: reservation.ReasonHeld})
		}
	}
	if len(refused.Seats) > 0 {
		return reservation.Hold{}, refused
	}
	for _, s := range h.SeatIDs {
		r.claimed[s] = h.UserID
	}
	return reservation.RestoreHold(uuid.New(), h.ScheduleID, h.SeatIDs, h.UserID, createdAt, createdAt.Add(h.TTL), reservation.HoldActive), nil
}

func (r *seatClaimRepo) HoldByClaim(context.Context, uuid.UUID) (reservation.Hold, error) {
	return reservation.Hold{}, reservation.ErrHoldNotFound
}

func rowsOf(t *testing.T, rows, seats int) reservation.Layout {
	t.Helper()
	rs := make([]reservation.Row, rows)
	for i := range rs {
		rs[i] = reservation.Row{Label: fmt.Sprintf("R%d", i+1), Seats: seats}
	}
	l, err := reservation.NewLayout(rs)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestHoldBestSpreadsConcurrentRequests: 100 requests for 4 together at
// once in one instance all get disjoint seats at their first attempt (the
// instance's view marks each choice before its locks are taken), and
// PostgreSQL's list of occupied seats is read once for many of them.
func TestHoldBestSpreadsConcurrentRequests(t *testing.T) {
	t.Parallel()
	layout := rowsOf(t, 20, 30)
	repo := newSeatClaimRepo(layout)
	svc := reservation.NewService(repo, lock.New(memlock.New(), lock.Config{}), polled(repo), nil)

	const requests = 100
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		attempts []int
		holds    [][]int
	)
	for i := range requests {
		wg.Go(func() {
			h, n, err := svc.HoldBest(context.Background(), reservation.BestHoldCommand{
				ScheduleID: scheduleID, Quantity: 4, Adjacent: true, UserID: fmt.Sprintf("u%d", i)})
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, n)
			holds = append(holds, h.SeatIDs())
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, seats := range holds {
		first, _ := layout.Place(seats[0])
		last, _ := layout.Place(seats[len(seats)-1])
		if first.Row != last.Row || seats[len(seats)-1]-seats[0] != len(seats)-1 {
			t.Errorf("hold %v is not 4 together in one row", seats)
		}
		for _, s := range seats {
			if seen[s] {
				t.Errorf("seat %d held twice", s)
			}
			seen[s] = true
		}
	}
	if slices.Max(attempts) != 1 {
		t.Errorf("attempts = %v, want 1 each: one instance never sends two requests to the same seats", attempts)
	}
	// One read is shared by every request; a slow run reloads it every
	// 100 ms in the background, never once per request.
	if repo.reads > requests/4 {
		t.Errorf("occupied seats read %d times for %d requests, want a read shared by many", repo.reads, requests)
	}
}

// TestHoldBestTriesTheNextChoice: seats held by someone this instance does
// not know of cost one attempt each, then the next choice is held; past
// MaxBestAttempts the answer is ErrSeatsContended, and a quantity that
// fits nowhere is *NotEnoughSeatsError with the free seats counted.
func TestHoldBestTriesTheNextChoice(t *testing.T) {
	t.Parallel()
	layout := rowsOf(t, 1, 10)
	ctx := context.Background()
	// A row of 5: the first request takes the centre (3). Then another
	// instance takes 2 and 4, the next best, unknown to this one's view:
	// the next request tries both (2 attempts) and holds 1 or 5.
	five := newSeatClaimRepo(rowsOf(t, 1, 5))
	svc := reservation.NewService(five, lock.New(memlock.New(), lock.Config{}), polled(five), nil)
	best := func(user string) (reservation.Held, int, error) {
		return svc.HoldBest(ctx, reservation.BestHoldCommand{ScheduleID: scheduleID, Quantity: 1, Adjacent: true, UserID: user})
	}
	if h, n, err := best("first"); err != nil || n != 1 || !slices.Equal(h.SeatIDs(), []int{3}) {
		t.Fatalf("first = %v, %d attempts, %v; want seat 3 at once", h.SeatIDs(), n, err)
	}
	five.mu.Lock()
	five.claimed[2], five.claimed[4] = "elsewhere", "elsewhere"
	five.mu.Unlock()
	h, n, err := best("second")
	if err != nil || n != 3 || (h.SeatIDs()[0] != 1 && h.SeatIDs()[0] != 5) {
		t.Fatalf("second = %v, %d attempts, %v; want seat 1 or 5 at the third attempt", h.SeatIDs(), n, err)
	}

	full := newSeatClaimRepo(layout, 1, 3, 5, 7, 9)
	svc = reservation.NewService(full, lock.New(memlock.New(), lock.Config{}), polled(full), nil)
	_, _, err = svc.HoldBest(ctx, reservation.BestHoldCommand{ScheduleID: scheduleID, Quantity: 2, Adjacent: true, UserID: "x"})
	var notEnough *reservation.NotEnoughSeatsError
	if !errors.As(err, &notEnough) || notEnough.Available != 5 || !errors.Is(err, reservation.ErrNotEnoughSeats) {
		t.Fatalf("2 together among single seats: %v, want NotEnoughSeatsError with 5 available", err)
	}

	// Every choice claimed behind the view's back: 5 attempts, then
	// ErrSeatsContended.
	busy := newSeatClaimRepo(rowsOf(t, 1, 40))
	svc = reservation.NewService(busy, lock.New(memlock.New(), lock.Config{}), polled(busy), nil)
	if _, _, err := svc.HoldBest(ctx, reservation.BestHoldCommand{ScheduleID: scheduleID, Quantity: 1, Adjacent: true, UserID: "load"}); err != nil {
		t.Fatal(err)
	}
	busy.mu.Lock()
	for s := 1; s <= 40; s++ {
		if busy.claimed[s] == "" {
			busy.claimed[s] = "elsewhere"
		}
	}
	busy.mu.Unlock()
	_, n, err = svc.HoldBest(ctx, reservation.BestHoldCommand{ScheduleID: scheduleID, Quantity: 2, Adjacent: true, UserID: "late"})
	if !errors.Is(err, reservation.ErrSeatsContended) || n != reservation.MaxBestAttempts {
		t.Fatalf("every choice taken: %v after %d attempts, want ErrSeatsContended after %d", err, n, reservation.MaxBestAttempts)
	}
}

// expire ends the claims of seats by the clock, as PostgreSQL's expiry
// does: ExpiredClaims lists them until DropExpiredClaim drops them.
func (r *seatClaimRepo) expire(seats []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.expired == nil {
		r.expired = map[int]bool{}
	}
	for _, s := range seats {
		r.expired[s] = true
	}
}

func (r *seatClaimRepo) ExpiredClaims(context.Context, int) ([]reservation.SeatRef, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []reservation.SeatRef
	for s := range r.expired {
		out = append(out, reservation.SeatRef{ScheduleID: scheduleID, SeatID: s})
	}
	return out, nil
}

func (r *seatClaimRepo) DropExpiredClaim(_ context.Context, seat reservation.SeatRef) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.expired[seat.SeatID] {
		return false, nil
	}
	delete(r.expired, seat.SeatID)
	delete(r.claimed, seat.SeatID)
	return true, nil
}

// TestExpiredSeatsAreFreeAtOnceWhereTheyWereCleared: the seats of an
// expired hold that this instance clears (the expire-holds job) are free
// in its image, for the seat map and for best available, at once, as a
// release's are: not only when their events arrive or the image is listed
// again. Here the hold was chosen by best available on this instance too.
func TestExpiredSeatsAreFreeAtOnceWhereTheyWereCleared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newSeatClaimRepo(rowsOf(t, 1, 4))
	images := seatmap.NewImages(nil, repo, seatmap.Config{})
	svc := reservation.NewService(repo, lock.New(memlock.New(), lock.Config{}), reservation.Config{SeatImages: images}, nil)
	best := reservation.BestHoldCommand{ScheduleID: scheduleID, Quantity: 4, Adjacent: true, UserID: "alice"}
	held, _, err := svc.HoldBest(ctx, best)
	if err != nil {
		t.Fatal(err)
	}
	image, err := images.Image(ctx, repo.schedule)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(image.State().Status); got != "hhhh" {
		t.Fatalf("seats %q after the hold, want hhhh", got)
	}

	repo.expire(held.SeatIDs())
	if n, err := svc.ExpireHolds(ctx); err != nil || n != 4 {
		t.Fatalf("ExpireHolds = %d, %v; want the 4 seats freed", n, err)
	}
	if got := string(image.State().Status); got != "aaaa" {
		t.Errorf("seats %q once their claims were cleared here, want aaaa", got)
	}
	best.UserID = "bob"
	if again, _, err := svc.HoldBest(ctx, best); err != nil || !slices.Equal(again.SeatIDs(), held.SeatIDs()) {
		t.Errorf("best 4 after the expiry = %v, %v; want seats %v", again.SeatIDs(), err, held.SeatIDs())
	}
}

// TestHoldBestWithoutSeatImages: a Service wired without Config.SeatImages
// answers best available with an error, never a panic, and holds nothing.
func TestHoldBestWithoutSeatImages(t *testing.T) {
	t.Parallel()
	repo := newSeatClaimRepo(rowsOf(t, 1, 5))
	svc := reservation.NewService(repo, lock.New(memlock.New(), lock.Config{}), reservation.Config{}, nil)
	_, _, err := svc.HoldBest(context.Background(), reservation.BestHoldCommand{ScheduleID: scheduleID, Quantity: 1, Adjacent: true, UserID: "u"})
	if err == nil || !strings.Contains(err.Error(), "Config.SeatImages") {
		t.Fatalf("HoldBest without seat images: %v, want an error naming Config.SeatImages", err)
	}
	repo.mu.Lock()
	defer repo.mu.Unlock()
	if len(repo.claimed) != 0 {
		t.Fatalf("claimed %v, want nothing held", repo.claimed)
	}
}
