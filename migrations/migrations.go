// Package migrations embeds the SQL schema migrations so that the binary
// carries them and applies them at start-up.
package migrations

import "embed"

// FS holds the golang-migrate files (NNNN_name.up.sql / .down.sql).
//
//go:embed *.sql
var FS embed.FS
