package pgerr_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seatlock/seatlock/internal/lock/pglock"
	"github.com/seatlock/seatlock/internal/pgerr"
)

// Unreachable is pglock's classification (tested there): the store and the
// lock must agree on what an outage is.
func TestUnreachableIsTheLockBackends(t *testing.T) {
	t.Parallel()
	for _, err := range []error{&pgconn.PgError{Code: "08006"}, &pgconn.PgError{Code: "23505"}, io.ErrUnexpectedEOF, errors.New("boom")} {
		if got, want := pgerr.Unreachable(err), pglock.Unreachable(err); got != want {
			t.Errorf("Unreachable(%v) = %v, pglock.Unreachable = %v", err, got, want)
		}
	}
}

func TestInvalidText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"NUL or invalid byte sequence", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "22021"}), true},
		{"untranslatable character", &pgconn.PgError{Code: "22P05"}, true},
		{"other data exception", &pgconn.PgError{Code: "22003"}, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"not a server error", errors.New("boom"), false},
	} {
		if got := pgerr.InvalidText(tt.err); got != tt.want {
			t.Errorf("%s: InvalidText(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
