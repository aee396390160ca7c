package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seatlock/seatlock/internal/pgerr"
	"github.com/seatlock/seatlock/internal/reservation"
)

// wrap adds context to err and marks "could not reach the server in time"
// failures with reservation.ErrUnavailable, so the HTTP edge answers 503.
func wrap(op string, err error) error {
	if pgerr.Unreachable(err) {
		return fmt.Errorf("postgres: %s: %w: %w", op, reservation.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// isViolation reports a PostgreSQL error of the given SQLSTATE on the named
// constraint.
func isViolation(err error, code, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code && pgErr.ConstraintName == constraint
}
