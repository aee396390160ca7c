package seatfeed_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// streamEntries lists a schedule's stream as "seat:status@pos".
func streamEntries(t *testing.T, rdb redis.UniversalClient, schedule int64) []string {
	t.Helper()
	entries, err := rdb.XRange(context.Background(), seatfeed.StreamKey(schedule), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = fmt.Sprintf("%v:%v@%v", e.Values["seat"], e.Values["status"], e.Values["pos"])
	}
	return out
}

func change(pos int64, seat int, status reservation.SeatStatus) seatfeed.Change {
	return seatfeed.Change{Pos: pos, SeatID: seat, Status: status}
}

// Append adds each change once, in order, with its position; a
// re-delivery adds nothing, and a stale change of a seat (below the seat's
// last position) is skipped while newer changes of other seats go in.
func TestAppendDeduplicatesByPosition(t *testing.T) {
	t.Parallel()
	for name, rdb := range map[string]redis.UniversalClient{"single": lockenv.Redis(t), "cluster": lockenv.RedisCluster(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := seatfeed.New(rdb, seatfeed.Config{})
			t.Cleanup(f.Close)
			ctx := context.Background()
			a, b := rand.Int64N(1<<40), rand.Int64N(1<<40)
			batch := []seatfeed.ScheduleChanges{
				{ScheduleID: a, Changes: []seatfeed.Change{change(10, 1, reservation.SeatHeld), change(12, 2, reservation.SeatHeld), change(15, 1, reservation.SeatReserved)}},
				{ScheduleID: b, Changes: []seatfeed.Change{change(11, 7, reservation.SeatReserved)}},
			}
			if added, err := f.Append(ctx, batch); err != nil || added != 4 {
				t.Fatalf("Append = %d, %v; want 4 added", added, err)
			}
			// The relay died before deleting its rows: the same batch again.
			if added, err := f.Append(ctx, batch); err != nil || added != 0 {
				t.Fatalf("re-delivery: Append = %d, %v; want nothing added", added, err)
			}
			// A stale change of seat 1 (below 15), and a new one of seat 2.
			stale := []seatfeed.ScheduleChanges{{ScheduleID: a, Changes: []seatfeed.Change{
				change(13, 1, reservation.SeatAvailable), change(16, 2, reservation.SeatAvailable)}}}
			if added, err := f.Append(ctx, stale); err != nil || added != 1 {
				t.Fatalf("stale: Append = %d, %v; want 1 added", added, err)
			}
			if got, want := streamEntries(t, rdb, a), []string{"1:held@10", "2:held@12", "1:reserved@15", "2:available@16"}; !slices.Equal(got, want) {
				t.Errorf("stream of a: %v, want %v", got, want)
			}
			if got, want := streamEntries(t, rdb, b), []string{"7:reserved@11"}; !slices.Equal(got, want) {
				t.Errorf("stream of b: %v, want %v", got, want)
			}
			// Both keys expire with the stream's retention.
			for _, key := range []string{seatfeed.StreamKey(a), seatfeed.PosKey(a)} {
				if ttl, err := rdb.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > seatfeed.DefaultRetention {
					t.Errorf("PTTL %s = %s, %v", key, ttl, err)
				}
			}
			// Existing readers see the entries, with their positions.
			events, ok, err := f.Since(ctx, a, seatfeed.ZeroID)
			if err != nil || !ok || len(events) != 4 {
				t.Fatalf("Since = %d events, %v, %v", len(events), ok, err)
			}
			if e := events[2]; e.SeatID != 1 || e.Status != reservation.SeatReserved || e.Pos != 15 {
				t.Errorf("event = %+v", e)
			}
		})
	}
}

// Redis unreachable: Append fails with reservation.ErrUnavailable.
func TestAppendUnavailable(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	f := seatfeed.New(rdb, seatfeed.Config{})
	t.Cleanup(f.Close)
	_, err := f.Append(context.Background(), []seatfeed.ScheduleChanges{{ScheduleID: 1, Changes: []seatfeed.Change{change(1, 1, reservation.SeatHeld)}}})
	if !errors.Is(err, reservation.ErrUnavailable) {
		t.Fatalf("Append = %v, want ErrUnavailable", err)
	}
}
