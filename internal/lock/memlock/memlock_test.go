package memlock_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/lock/locktest"
	"github.com/seatlock/seatlock/internal/lock/memlock"
)

// The watchdog and waiters must leave no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestContract(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Harness {
		b := memlock.New()
		return locktest.Harness{Backend: b, Delete: b.Delete, Wipe: b.Wipe}
	})
}
