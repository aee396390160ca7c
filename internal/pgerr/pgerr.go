// Package pgerr tells failures to reach PostgreSQL from answers PostgreSQL
// gave, for every adapter that talks to it.
package pgerr

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seatlock/seatlock/internal/lock/pglock"
)

// Unreachable reports whether err means PostgreSQL could not be reached in
// time. It is pglock.Unreachable, so that the reservation store and the
// PostgreSQL lock backend, on the same database, count the same failures as
// an outage (see there for which).
func Unreachable(err error) bool { return pglock.Unreachable(err) }

// InvalidText reports PostgreSQL refusing a text value a client sent: a
// NUL byte or a byte sequence invalid in the database encoding
// (character_not_in_repertoire, 22021) or a character the encoding cannot
// hold (untranslatable_character, 22P05). An answer about the request,
// not a fault of the service: the edge answers it as a client error.
func InvalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}
