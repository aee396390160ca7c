package pglock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/seatlock/seatlock/internal/lock/pglock"
)

func TestUnreachable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection exception", &pgconn.PgError{Code: pgerrcode.ConnectionFailure}, true},
		{"admin shutdown", &pgconn.PgError{Code: pgerrcode.AdminShutdown}, true},
		{"too many connections", &pgconn.PgError{Code: pgerrcode.TooManyConnections}, true},
		{"a write on a standby", &pgconn.PgError{Code: pgerrcode.ReadOnlySQLTransaction}, true},
		{"unique violation", &pgconn.PgError{Code: pgerrcode.UniqueViolation}, false},
		{"syntax error", &pgconn.PgError{Code: pgerrcode.SyntaxError}, false},
		{"connection found closed in a transaction", fmt.Errorf("insert hold: %w", pgconn.ErrConnClosed), true},
		{"closed pool", puddle.ErrClosedPool, true},
		{"deadline", context.DeadlineExceeded, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"anything else", errors.New("boom"), false},
	} {
		if got := pglock.Unreachable(tt.err); got != tt.want {
			t.Errorf("%s: Unreachable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
