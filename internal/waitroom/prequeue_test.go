package waitroom_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/waitroom"
	"github.com/seatlock/seatlock/internal/waitroom/redisroom"
)

// TestPrequeueOrderIsUniform: 5,000 buyers join before the opening, one
// after the other; after it, their order in line is independent of when
// they joined. Chi-square test of independence of the join-time decile and
// the line-position decile (a 10×10 table, 50 expected in each cell, 81
// degrees of freedom). A uniform shuffle passes at p > 0.01 in 99 runs of
// 100; the test fails below p = 0.001, so that a correct shuffle fails one
// run in a thousand, while an order that keeps any trace of the joining
// order (arrival order gives a chi-square of about 45,000) fails always.
func TestPrequeueOrderIsUniform(t *testing.T) {
	const buyers, deciles = 5000, 10
	ctx := context.Background()
	store := redisroom.New(lockenv.Redis(t), redisroom.Config{Namespace: lockenv.Name("queue-test-") + "/"})
	room := waitroom.NewRoom(store, waitroom.NewAdmissions([]byte("secret")), waitroom.Config{})
	id := rand.Int64N(1<<50) + 1
	opens := time.Now().Add(time.Hour)
	if _, err := room.Put(ctx, id, waitroom.Settings{OpensAt: opens, AdmitPerSecond: 1, AdmissionTTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = room.Delete(ctx, id) })
	tickets := make([]string, buyers)
	for i := range buyers {
		ticket, created, err := room.Join(ctx, id, fmt.Sprint("buyer", i))
		if err != nil || !created || ticket.State != waitroom.Prequeue {
			t.Fatalf("join %d: %+v %v", i, ticket, err)
		}
		tickets[i] = ticket.ID
	}
	// Open the queue now: the pre-queue's order shows.
	if _, err := room.Put(ctx, id, waitroom.Settings{OpensAt: time.Now().Add(-time.Millisecond), AdmitPerSecond: 1, AdmissionTTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	snap, err := store.Places(ctx, id, tickets...)
	if err != nil {
		t.Fatal(err)
	}
	var table [deciles][deciles]float64
	seen := map[int]bool{}
	for i, p := range snap.Places {
		if p.State != waitroom.Waiting || seen[p.Position] {
			t.Fatalf("buyer %d: %+v", i, p)
		}
		seen[p.Position] = true
		table[i*deciles/buyers][(p.Position-1)*deciles/buyers]++
	}
	var chi2 float64
	const expected = float64(buyers) / deciles / deciles
	for _, row := range table {
		for _, observed := range row {
			chi2 += (observed - expected) * (observed - expected) / expected
		}
	}
	p := distuv.ChiSquared{K: (deciles - 1) * (deciles - 1)}.Survival(chi2)
	t.Logf("chi-square %.1f with 81 degrees of freedom: p = %.3f", chi2, p)
	if p < 0.001 {
		t.Fatalf("the pre-queue's order depends on the joining order: chi-square %.1f, p = %.5f", chi2, p)
	}
}
