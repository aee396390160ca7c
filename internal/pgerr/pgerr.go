// Package pgerr tells failures to reach PostgreSQL from answers PostgreSQL
// gave, for every adapter that talks to it.
package pgerr

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// Unreachable reports whether err means PostgreSQL could not be reached in
// time: connection exceptions (class 08), a server shutting down or out of
// connections, dial, network and timeout errors, a deadline, a connection
// found closed, and a closed pool (a service shutting down: retrying
// elsewhere helps). Other server
// errors (constraint violations, syntax) are answers, not outages.
func Unreachable(err error) bool {
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
	// ErrConnClosed: the connection died under an earlier statement of
	// the same transaction, and the next one found it closed.
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, puddle.ErrClosedPool) || pgconn.Timeout(err) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// InvalidText reports PostgreSQL refusing a text value a client sent: a
// NUL byte or a byte sequence invalid in the database encoding
// (character_not_in_repertoire, 22021) or a character the encoding cannot
// hold (untranslatable_character, 22P05). An answer about the request,
// not a fault of the service: the edge answers it as a client error.
func InvalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}
