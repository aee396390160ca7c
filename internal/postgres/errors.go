package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seatlock/seatlock/internal/lock/pglock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// wrap adds context to err and marks "could not reach the server in time"
// failures with reservation.ErrUnavailable, so the HTTP edge answers 503.
// Text PostgreSQL refuses (a NUL byte) is the client's invalid userId:
// besides titles (wrapText), the user id is the only client text these
// statements take (idempotency keys are visible ASCII). The edge refuses
// such user ids first; this keeps a 500 out if one ever got through.
func wrap(op string, err error) error {
	return wrapText(op, "userId", err)
}

// oneRow is a single-row query's answer: v as scanned, notFound when
// there was no row, the failure wrapped as op (see wrap) otherwise.
func oneRow[T any](v T, err error, notFound error, op string) (T, error) {
	var zero T
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return zero, notFound
	case err != nil:
		return zero, wrap(op, err)
	}
	return v, nil
}

// wrapText is wrap for a statement that stores the client's text field.
func wrapText(op, field string, err error) error {
	switch {
	// The lock backend on the same database counts the same failures as
	// an outage (pglock.Unreachable says which).
	case pglock.Unreachable(err):
		return fmt.Errorf("postgres: %s: %w: %w", op, reservation.ErrUnavailable, err)
	case invalidText(err):
		return fmt.Errorf("postgres: %s: %w: %w", op,
			&reservation.InvalidError{Field: field, Detail: "must not contain NUL or other control characters"}, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// isViolation reports a PostgreSQL error of the given SQLSTATE on the named
// constraint.
func isViolation(err error, code, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code && pgErr.ConstraintName == constraint
}

// invalidText reports PostgreSQL refusing a text value a client sent: a
// NUL byte or a byte sequence invalid in the database encoding
// (character_not_in_repertoire, 22021) or a character the encoding cannot
// hold (untranslatable_character, 22P05). An answer about the request,
// not a fault of the service: the edge answers it as a client error.
func invalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == pgerrcode.CharacterNotInRepertoire || pgErr.Code == pgerrcode.UntranslatableCharacter)
}
