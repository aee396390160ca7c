package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/ratelimit"
	"github.com/seatlock/seatlock/internal/testenv"
)

// Two limiters on one Redis, as two instances have, share one budget per
// key; other keys have budgets of their own.
func TestLimitIsSharedByInstancesAndKeptPerKey(t *testing.T) {
	t.Parallel()
	name := "test" + strconv.Itoa(rand.IntN(1<<30))
	a := ratelimit.New(testenv.Redis(t), name, 4)
	b := ratelimit.New(testenv.Redis(t), name, 4)
	ctx := context.Background()
	allowed := 0
	for i := range 8 {
		l := a
		if i%2 == 1 {
			l = b
		}
		ok, wait, err := l.Allow(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		} else if wait <= 0 || wait > time.Second {
			t.Errorf("refused with retry after %v, want within the second", wait)
		}
	}
	// Four a second with a burst of four: the eight calls take well under
	// the quarter second that would admit a fifth.
	if allowed != 4 {
		t.Errorf("admitted %d of 8 quick calls, want the burst of 4", allowed)
	}
	if ok, _, err := a.Allow(ctx, "bob"); err != nil || !ok {
		t.Errorf("another key: allowed %v, %v; want its own budget", ok, err)
	}
}

func TestRedisDownIsAnError(t *testing.T) {
	t.Parallel()
	client := testenv.Redis(t)
	l := ratelimit.New(client, "down", 4)
	_ = client.Close()
	if _, _, err := l.Allow(context.Background(), "alice"); err == nil {
		t.Fatal("Allow on a closed client: want an error")
	}
}
