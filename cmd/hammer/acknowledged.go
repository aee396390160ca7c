package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
)

// ackReport is the bookings answered 200 read back by their ids after the
// run (GET /reservations/{id} as their users, through the first target):
// no booking the service acknowledged may be lost, as a database failover
// could lose a commit the service had answered for. The seat map alone
// would not tell: a seat reserved by another request than the one
// answered 200 shows reserved all the same.
type ackReport struct {
	// Checked counts the distinct reservations answered 200; Found those
	// read back as answered (the same schedule, seat and user, active).
	Checked int `json:"checked"`
	Found   int `json:"found"`
	// Lost counts those the service does not know (404) or knows
	// otherwise than it answered (another seat or user, cancelled);
	// Unchecked those that could not be read (any other answer, or 503
	// beyond unavailablePatience).
	Lost      int      `json:"lost"`
	Unchecked int      `json:"unchecked"`
	Examples  []string `json:"examples,omitempty"` // a few lost or unchecked, and why
}

// checkAcknowledged reads back every distinct reservation of outcomes
// answered 200 (with a body as it should be: the others fail the verdict
// anyway) as the user who made it, from workers readers, retrying 503s
// with p.
func checkAcknowledged(ctx context.Context, a *api, target string, users []user, outcomes []outcome, workers int, p *patience) *ackReport {
	type booking struct {
		seat seatRef
		id   string
		user int
	}
	var todo []booking
	seen := map[string]bool{}
	for _, o := range outcomes {
		if o.key() != keyOK || seen[o.Reservation] {
			continue
		}
		seen[o.Reservation] = true
		todo = append(todo, booking{o.Seat, o.Reservation, o.User})
	}
	r := &ackReport{Checked: len(todo)}
	var (
		next  atomic.Int64
		found atomic.Int64
		mu    sync.Mutex // guards r's counts of faults and its examples
		wg    sync.WaitGroup
	)
	fault := func(count *int, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		*count++
		if len(r.Examples) < maxExamples {
			r.Examples = append(r.Examples, fmt.Sprintf(format, args...))
		}
	}
	for range min(workers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(todo) || ctx.Err() != nil {
					return
				}
				b, u := todo[i], users[todo[i].user]
				var got reservationOut
				err := p.do(ctx, func() (err error) {
					got, err = a.reservation(ctx, target, u, b.id)
					return err
				})
				var e *apiError
				switch {
				case errors.As(err, &e) && e.Status == http.StatusNotFound:
					fault(&r.Lost, "reservation %s of seat %d/%d, answered 200, is not found", b.id, b.seat.Schedule, b.seat.Seat)
				case err != nil:
					fault(&r.Unchecked, "reservation %s of seat %d/%d: %v", b.id, b.seat.Schedule, b.seat.Seat, err)
				case got.ID != b.id || got.ScheduleID != b.seat.Schedule || got.SeatID != b.seat.Seat || got.UserID != u.id || got.Status != "active":
					fault(&r.Lost, "reservation %s of seat %d/%d, answered 200, reads as %s of seat %d/%d of %s, %s",
						b.id, b.seat.Schedule, b.seat.Seat, got.ID, got.ScheduleID, got.SeatID, got.UserID, got.Status)
				default:
					found.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	r.Found = int(found.Load())
	r.Unchecked = r.Checked - r.Found - r.Lost // with those never read: the run was interrupted
	slices.Sort(r.Examples)
	return r
}
