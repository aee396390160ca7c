package main

import (
	"context"
	"fmt"
	"sync"
)

// seatRef is one seat of one schedule.
type seatRef struct {
	Schedule int64 `json:"scheduleId"`
	Seat     int   `json:"seatId"`
}

// workload says which seat each request books and through which target.
// hot-seat and contended hammer a fixed set of seats, request i the seat
// i mod len(fixed), so every seat is contended from the start. fresh-seats
// gives every request a seat of its own, in schedules of maxSeats seats
// made as the run needs them.
type workload struct {
	fixed []seatRef

	newSchedule func(ctx context.Context) (int64, error) // fresh-seats
	mu          sync.Mutex
	schedules   []int64 // request i books seat i%maxSeats+1 of schedules[i/maxSeats]
}

// seat is the seat request i books.
func (w *workload) seat(ctx context.Context, i int) (seatRef, error) {
	if w.fixed != nil {
		return w.fixed[i%len(w.fixed)], nil
	}
	if err := w.ensure(ctx, i+1); err != nil {
		return seatRef{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return seatRef{Schedule: w.schedules[i/maxSeats], Seat: i%maxSeats + 1}, nil
}

// ensure makes the schedules that n fresh seats need.
func (w *workload) ensure(ctx context.Context, n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.schedules)*maxSeats < n {
		id, err := w.newSchedule(ctx)
		if err != nil {
			return fmt.Errorf("fresh seats: %w", err)
		}
		w.schedules = append(w.schedules, id)
	}
	return nil
}

// target is the target of request i: the requests for one seat rotate
// through the targets, so every seat is contended through every instance.
func (w *workload) target(i, targets int) int {
	if w.fixed == nil {
		return i % targets
	}
	return (i%len(w.fixed) + i/len(w.fixed)) % targets
}

// scheduleIDs lists the schedules the run touches, in order.
func (w *workload) scheduleIDs() []int64 {
	if w.fixed == nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		return append([]int64(nil), w.schedules...)
	}
	var ids []int64
	for _, s := range w.fixed {
		if len(ids) == 0 || ids[len(ids)-1] != s.Schedule {
			ids = append(ids, s.Schedule)
		}
	}
	return ids
}
