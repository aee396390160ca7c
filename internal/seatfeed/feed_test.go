package seatfeed_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

func newFeed(t *testing.T, cfg seatfeed.Config) (*seatfeed.Feed, int64) {
	t.Helper()
	cfg.Block = 200 * time.Millisecond
	f := seatfeed.New(lockenv.Redis(t), cfg)
	t.Cleanup(f.Close)
	return f, rand.Int64N(1 << 40) // a schedule of this test alone
}

func publish(t *testing.T, f *seatfeed.Feed, schedule int64, status reservation.SeatStatus, seats ...int) {
	t.Helper()
	changes := make([]reservation.Seat, len(seats))
	for i, s := range seats {
		changes[i] = reservation.Seat{ID: s, Status: status}
	}
	if err := f.SeatsChanged(context.Background(), schedule, changes); err != nil {
		t.Fatal(err)
	}
}

func receive(t *testing.T, sub *seatfeed.Subscription, n int) []seatfeed.Event {
	t.Helper()
	got, _ := receiveBatches(t, sub, n)
	return got
}

func TestSubscribersOnTwoFeedsSeeEveryChangeInOrder(t *testing.T) {
	t.Parallel()
	a, schedule := newFeed(t, seatfeed.Config{})
	b := seatfeed.New(lockenv.Redis(t), seatfeed.Config{Block: 200 * time.Millisecond})
	t.Cleanup(b.Close)
	ctx := context.Background()
	if head, err := a.Head(ctx, schedule); err != nil || head != seatfeed.ZeroID {
		t.Fatalf("Head of a new schedule = %q, %v; want %s", head, err, seatfeed.ZeroID)
	}
	subA, err := a.Subscribe(ctx, schedule, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer subA.Close()
	subB, err := b.Subscribe(ctx, schedule, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer subB.Close()

	publish(t, a, schedule, reservation.SeatHeld, 1, 2)
	publish(t, b, schedule, reservation.SeatReserved, 1)
	for name, sub := range map[string]*seatfeed.Subscription{"a": subA, "b": subB} {
		got := receive(t, sub, 3)
		want := []struct {
			seat   int
			status reservation.SeatStatus
		}{{1, reservation.SeatHeld}, {2, reservation.SeatHeld}, {1, reservation.SeatReserved}}
		for i, ev := range got {
			if ev.SeatID != want[i].seat || ev.Status != want[i].status {
				t.Errorf("%s: event %d = %+v, want seat %d %s", name, i, ev, want[i].seat, want[i].status)
			}
			if i > 0 && !seatfeed.After(ev.ID, got[i-1].ID) {
				t.Errorf("%s: event ids out of order: %s after %s", name, ev.ID, got[i-1].ID)
			}
		}
	}
	head, err := b.Head(ctx, schedule)
	if err != nil || head == seatfeed.ZeroID {
		t.Fatalf("Head = %q, %v", head, err)
	}
}

func TestSinceResumesOrSaysItCannot(t *testing.T) {
	t.Parallel()
	f, schedule := newFeed(t, seatfeed.Config{MaxLen: 1000})
	ctx := context.Background()
	// A snapshot of a schedule without changes carries ZeroID, from which
	// every change can be told.
	if none, ok, err := f.Since(ctx, schedule, seatfeed.ZeroID); err != nil || !ok || len(none) != 0 {
		t.Fatalf("Since(ZeroID) on no stream = %+v, %v, %v; want nothing missed", none, ok, err)
	}
	publish(t, f, schedule, reservation.SeatHeld, 1)
	if all, ok, err := f.Since(ctx, schedule, seatfeed.ZeroID); err != nil || !ok || len(all) != 1 {
		t.Fatalf("Since(ZeroID) = %+v, %v, %v; want the one change", all, ok, err)
	}
	mark, err := f.Head(ctx, schedule)
	if err != nil {
		t.Fatal(err)
	}
	publish(t, f, schedule, reservation.SeatReserved, 1, 2)

	missed, ok, err := f.Since(ctx, schedule, mark)
	if err != nil || !ok || len(missed) != 2 || missed[0].SeatID != 1 || missed[1].SeatID != 2 {
		t.Fatalf("Since(mark) = %+v, %v, %v; want the two later changes", missed, ok, err)
	}
	if none, ok, err := f.Since(ctx, schedule, missed[1].ID); err != nil || !ok || len(none) != 0 {
		t.Errorf("Since(head) = %+v, %v, %v; want nothing missed", none, ok, err)
	}
	for _, id := range []string{"", "garbage", "1-0", "99999999999999-0"} {
		if _, ok, err := f.Since(ctx, schedule, id); ok || err != nil {
			t.Errorf("Since(%q) = ok %v, %v; want a snapshot instead", id, ok, err)
		}
	}
}

// A subscriber that does not read is ended as lagged, and the others go
// on: a slow client never holds the feed up.
func TestLaggingSubscriberIsEnded(t *testing.T) {
	t.Parallel()
	f, schedule := newFeed(t, seatfeed.Config{})
	ctx := context.Background()
	slow, err := f.Subscribe(ctx, schedule, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fast, err := f.Subscribe(ctx, schedule, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	// Each publication reaches the subscribers as a batch of its own,
	// given time to be read apart.
	for seat := 1; seat <= 5; seat++ {
		publish(t, f, schedule, reservation.SeatHeld, seat)
		receive(t, fast, 1)
	}
	deadline := time.After(5 * time.Second)
	for n := 0; ; {
		select {
		case _, open := <-slow.C:
			if open {
				n++
				continue
			}
			if !slow.Lagged() || n > 2 {
				t.Fatalf("slow subscriber ended after %d batches, lagged=%v; want ended as lagged after at most 2", n, slow.Lagged())
			}
			return
		case <-deadline:
			t.Fatal("the slow subscriber was not ended")
		}
	}
}

// Once the stream was trimmed, ZeroID cannot be resumed from.
func TestSinceZeroAfterTrimming(t *testing.T) {
	t.Parallel()
	f, schedule := newFeed(t, seatfeed.Config{MaxLen: 1})
	for seat := 1; seat <= 200; seat++ {
		publish(t, f, schedule, reservation.SeatHeld, seat)
	}
	if _, ok, err := f.Since(context.Background(), schedule, seatfeed.ZeroID); ok || err != nil {
		t.Errorf("Since(ZeroID) on a trimmed stream = ok %v, %v; want a snapshot instead", ok, err)
	}
}

// Changes published one by one, faster than the feed reads, reach a
// subscriber in few batches: a thousand subscribers must not wake once per
// change. Reads are Interval apart, or further when the subscribers would
// receive more than MaxDeliveries batches a second.
func TestChangesFasterThanTheReadsArriveTogether(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		cfg         seatfeed.Config
		subscribers int
		spacing     time.Duration
	}{
		{"interval", seatfeed.Config{Interval: 100 * time.Millisecond}, 1, 100 * time.Millisecond},
		{"deliveries", seatfeed.Config{Interval: 10 * time.Millisecond, MaxDeliveries: 20}, 2, 100 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, schedule := newFeed(t, c.cfg)
			subs := make([]*seatfeed.Subscription, c.subscribers)
			for i := range subs {
				sub, err := f.Subscribe(context.Background(), schedule, 1000)
				if err != nil {
					t.Fatal(err)
				}
				defer sub.Close()
				subs[i] = sub
			}
			const changes = 100
			start := time.Now()
			for seat := 1; seat <= changes; seat++ {
				publish(t, f, schedule, reservation.SeatReserved, seat)
				time.Sleep(2 * time.Millisecond)
			}
			for i, sub := range subs {
				got, batches := receiveBatches(t, sub, changes)
				elapsed := time.Since(start)
				// One read per spacing, and one more at each end.
				if most := int(elapsed/c.spacing) + 2; batches > most {
					t.Errorf("subscriber %d: %d changes came in %d batches over %v; want at most %d", i, changes, batches, elapsed, most)
				}
				for j, ev := range got {
					if ev.SeatID != j+1 {
						t.Fatalf("subscriber %d: event %d is seat %d, want %d", i, j, ev.SeatID, j+1)
					}
				}
			}
		})
	}
}

func receiveBatches(t *testing.T, sub *seatfeed.Subscription, n int) (got []seatfeed.Event, batches int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for len(got) < n {
		select {
		case batch, open := <-sub.C:
			if !open {
				t.Fatalf("subscription ended after %d of %d events", len(got), n)
			}
			batches++
			got = append(got, batch.Events...)
		case <-timeout:
			t.Fatalf("got %d of %d events in 10 s", len(got), n)
		}
	}
	return got, batches
}
