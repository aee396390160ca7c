package pglock

import (
	"context"
	"errors"
	"fmt"

	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/pgerr"
)

// classify adds context to err and wraps "could not reach the database in
// time" failures with backend.ErrUnavailable. A cancelled context stays the
// caller's own error; other server errors stay plain.
func classify(op string, err error) error {
	if !errors.Is(err, context.Canceled) && pgerr.Unreachable(err) {
		return fmt.Errorf("pglock: %s: %w: %w", op, backend.ErrUnavailable, err)
	}
	return fmt.Errorf("pglock: %s: %w", op, err)
}
