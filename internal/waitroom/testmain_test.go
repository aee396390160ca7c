package waitroom_test

import (
	"testing"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// The tests' Redis: TEST_REDIS_URL, or a server of this test binary's own.
func TestMain(m *testing.M) { lockenv.Run(m) }
