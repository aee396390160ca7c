// Command api runs the locked seat booking service.
//
//	api [serve]                                  serve HTTP (migrations applied first)
//	api migrate                                  apply migrations and exit
//	api token --user U [--role admin] [--ttl D]  print a bearer token (development)
//
// Configuration comes from the environment; see docs/operations.md.
//
// make build builds it with the tags validator_novalidatefn,grpcnotrace:
//
//	go build -tags=validator_novalidatefn,grpcnotrace ./cmd/api
//
// Without them the binary serves the same, but is about 13 MB bigger and
// keeps more pages resident: two dependencies then look methods up by name
// at run time, so the linker keeps every exported method.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/logbuf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: testable with any environment.
func run(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) int {
	logging, err := config.LoadLogging(env)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "api: %v\n", err)
		return 1
	}
	logs := logbuf.New(stdout, logbuf.DefaultInterval)
	defer func() { _ = logs.Close() }()
	logger, accessLog := newLogger(logging, logs)
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		err = serve(ctx, env, logger, accessLog)
	case "migrate":
		err = migrate(ctx, env, logger)
	case "token":
		err = token(args, env, stdout)
	case "-h", "--help", "help":
		_, _ = fmt.Fprintln(stdout, usage)
		return 0
	default:
		_, _ = fmt.Fprintf(stderr, "api: unknown command %q\n%s\n", cmd, usage)
		return 2
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "api %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// newLogger returns the logger for format and where the request log goes:
// JSON lines are written by the request logger itself, straight to out
// (one line per request costs less that way); text goes through slog.
func newLogger(l config.Logging, out io.Writer) (*slog.Logger, io.Writer) {
	if l.Format == config.LogText {
		return slog.New(slog.NewTextHandler(out, nil)), nil
	}
	return slog.New(slog.NewJSONHandler(out, nil)), out
}

const usage = `usage:
  api [serve]                                  serve HTTP (migrations applied first)
  api migrate                                  apply migrations and exit
  api token --user U [--role admin] [--ttl D]  print a bearer token`

func environ() map[string]string {
	env := make(map[string]string)
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}
