package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seatlock/seatlock/internal/reservation"
)

func TestInvalidText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"NUL or invalid byte sequence", fmt.Errorf("insert: %w", &pgconn.PgError{Code: pgerrcode.CharacterNotInRepertoire}), true},
		{"untranslatable character", &pgconn.PgError{Code: pgerrcode.UntranslatableCharacter}, true},
		{"other data exception", &pgconn.PgError{Code: pgerrcode.NumericValueOutOfRange}, false},
		{"unique violation", &pgconn.PgError{Code: pgerrcode.UniqueViolation}, false},
		{"not a server error", errors.New("boom"), false},
	} {
		if got := invalidText(tt.err); got != tt.want {
			t.Errorf("%s: invalidText(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// The store counts as an outage what the PostgreSQL lock backend counts
// (pglock.Unreachable, tested there), and the client's bad text as its
// invalid field.
func TestWrapClassifiesAsThePglockBackend(t *testing.T) {
	t.Parallel()
	if err := wrap("insert", &pgconn.PgError{Code: pgerrcode.ConnectionFailure}); !errors.Is(err, reservation.ErrUnavailable) {
		t.Errorf("wrap(connection failure) = %v, want ErrUnavailable", err)
	}
	if err := wrap("insert", &pgconn.PgError{Code: pgerrcode.UniqueViolation}); errors.Is(err, reservation.ErrUnavailable) {
		t.Errorf("wrap(unique violation) = %v, must not be ErrUnavailable", err)
	}
	var invalid *reservation.InvalidError
	if err := wrapText("insert", "title", &pgconn.PgError{Code: pgerrcode.CharacterNotInRepertoire}); !errors.As(err, &invalid) || invalid.Field != "title" {
		t.Errorf("wrapText(22021) = %v, want an InvalidError on title", err)
	}
}
