package pglock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/seatlock/seatlock/internal/lock"
)

// classify adds context to err and wraps "could not reach the database in
// time" failures with lock.ErrUnavailable. A cancelled context stays the
// caller's own error; other server errors stay plain.
func classify(op string, err error) error {
	if !errors.Is(err, context.Canceled) && unreachable(err) {
		return fmt.Errorf("pglock: %s: %w: %w", op, lock.ErrUnavailable, err)
	}
	return fmt.Errorf("pglock: %s: %w", op, err)
}

// unreachable follows internal/postgres's classification: connection
// exceptions, a server shutting down or out of connections, dial, network and
// timeout errors, and a closed pool.
func unreachable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutting down, cannot connect now
			pgErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, puddle.ErrClosedPool) || pgconn.Timeout(err) ||
		errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
