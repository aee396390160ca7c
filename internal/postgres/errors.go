package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/seatlock/seatlock/internal/reservation"
)

// wrap adds context to err and marks "could not reach the server in time"
// failures with reservation.ErrUnavailable, so the HTTP edge answers 503.
func wrap(op string, err error) error {
	if unreachable(err) {
		return fmt.Errorf("postgres: %s: %w: %w", op, reservation.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

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
	// A closed pool is a service shutting down: retrying elsewhere helps.
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, puddle.ErrClosedPool) || pgconn.Timeout(err) ||
		errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// isViolation reports a PostgreSQL error of the given SQLSTATE on the named
// constraint.
func isViolation(err error, code, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code && pgErr.ConstraintName == constraint
}
