package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/postgres"
)

// serve runs the service until ctx ends; accessLog, when set, receives the
// request log directly (see app.WithAccessLog).
func serve(ctx context.Context, env map[string]string, logger *slog.Logger, accessLog io.Writer) error {
	cfg, err := config.Load(env)
	if err != nil {
		return err
	}
	a, err := app.New(ctx, cfg, logger, app.WithAccessLog(accessLog))
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return err
	}
	if err := a.Serve(ctx, ln); err != nil {
		return err
	}
	a.Close()
	logger.Info("stopped cleanly")
	return nil
}

func migrate(ctx context.Context, env map[string]string, logger *slog.Logger) error {
	cfg, err := config.LoadDatabase(env)
	if err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.Migrate(pool); err != nil {
		return err
	}
	logger.Info("migrations applied")
	return nil
}

func token(args []string, env map[string]string, stdout io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	user := fs.String("user", "", "user id (the token's sub)")
	role := fs.String("role", "", `role, e.g. "admin"`)
	ttl := fs.Duration("ttl", 24*time.Hour, "lifetime")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = fmt.Fprintln(stdout, "usage: api token --user U [--role admin] [--ttl D]\n\nPrints a bearer token signed with AUTH_SECRET.\n\nflags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return fmt.Errorf("%w (api token -h lists the flags)", err)
	}
	if *user == "" {
		return fmt.Errorf("--user is required (api token -h lists the flags)")
	}
	cfg, err := config.LoadSecret(env)
	if err != nil {
		return err
	}
	t, err := auth.Mint([]byte(cfg.AuthSecret), *user, *role, *ttl)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, t)
	return err
}
