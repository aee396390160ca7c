package pglock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// classify adds context to err and wraps "could not reach the database in
// time" failures (Unreachable) with backend.ErrUnavailable. A cancelled
// context stays the caller's own error; other server errors stay plain.
func classify(op string, err error) error {
	if !errors.Is(err, context.Canceled) && Unreachable(err) {
		return fmt.Errorf("pglock: %s: %w: %w", op, backend.ErrUnavailable, err)
	}
	return fmt.Errorf("pglock: %s: %w", op, err)
}

// Unreachable reports whether err means PostgreSQL could not be reached in
// time: the errors a Backend reports as backend.ErrUnavailable, where another
// attempt, or another instance, may succeed. They are connection exceptions
// (class 08), a server shutting down or out of connections, a write sent
// to a standby, dial, network
// and timeout errors, a deadline, a connection found closed, and a closed
// pool (a service shutting down). Other server errors (constraint
// violations, syntax) are answers, not outages. Code of the same program
// that talks to PostgreSQL can use it to agree with the lock on what an
// outage is.
func Unreachable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		// The whole class 08 (connection exception), read by its class as
		// SQLSTATEs are meant to be: pgerrcode.IsConnectionException lists
		// only the codes known when it was generated.
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == pgerrcode.ConnectionException[:2]:
			return true
		case pgErr.Code == pgerrcode.AdminShutdown, pgErr.Code == pgerrcode.CrashShutdown, pgErr.Code == pgerrcode.CannotConnectNow,
			pgErr.Code == pgerrcode.TooManyConnections,
			// read_only_sql_transaction: a write reached a standby (a
			// primary demoted under a session, or a URL naming a standby
			// without target_session_attrs); the primary is elsewhere.
			pgErr.Code == pgerrcode.ReadOnlySQLTransaction:
			return true
		}
		return false
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	// ErrConnClosed: the connection died under an earlier statement of
	// the same transaction, and the next one found it closed.
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, puddle.ErrClosedPool) || pgconn.Timeout(err) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
