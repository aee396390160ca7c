package redisconn_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/redisconn"
)

// TestReplicasRefuseWithinTheGraceOnly: a write its replicas lack is
// refused while the last replicated one is recent; past the grace it goes
// on (with a short look instead of a wait), and a write they have again
// restarts the grace.
func TestReplicasRefuseWithinTheGraceOnly(t *testing.T) {
	const grace = 200 * time.Millisecond
	r := redisconn.NewReplicas(1, time.Second, grace, "test writes", nil)
	wait := r.Begin()
	if wait.Timeout != time.Second {
		t.Fatalf("timeout within the grace: %s", wait.Timeout)
	}
	if err := wait.Judge(0); !errors.Is(err, redisconn.ErrTooFewReplicas) {
		t.Fatalf("a write without its replica within the grace: %v", err)
	}
	if err := r.Begin().Judge(1); err != nil {
		t.Fatalf("a replicated write: %v", err)
	}
	time.Sleep(2 * grace)
	wait = r.Begin()
	if wait.Timeout != time.Millisecond {
		t.Fatalf("timeout past the grace: %s", wait.Timeout)
	}
	if err := wait.Judge(0); err != nil {
		t.Fatalf("a write without its replica past the grace: %v", err)
	}
	if err := r.Begin().Judge(1); err != nil {
		t.Fatal(err)
	}
	if err := r.Begin().Judge(0); !errors.Is(err, redisconn.ErrTooFewReplicas) {
		t.Fatalf("the grace did not restart with a replicated write: %v", err)
	}
}
