package pglock_test

// The test environment of this package: a database of each test's own on
// the PostgreSQL server of TEST_DATABASE_URL, and Toxiproxy in front of it.
// Tests fail, never skip, when TEST_DATABASE_URL is missing: a green run
// must mean the backend ran against a real server.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/lock/pglock"
)

// uniqueName returns prefix and random hex digits, for lock names and
// databases unique to this run.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// databaseURL creates an empty database of the test's own, dropped when the
// test ends, and returns its URL.
func databaseURL(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv("TEST_DATABASE_URL")
	if admin == "" {
		tb.Fatal("TEST_DATABASE_URL is not set: run the tests with `make test`, which starts a real PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := uniqueName("test_")
	if err := adminExec(ctx, admin, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := adminExec(ctx, admin, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func adminExec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// openPool opens a pool on url, closed when the test ends. It does not
// dial: the first statement does.
func openPool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 3 * time.Second
	}
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// newPool opens a pool on a fresh database of the test's own, with the lock
// table of opts created by Migrate.
func newPool(tb testing.TB, opts ...pglock.Option) *pgxpool.Pool {
	tb.Helper()
	pool := openPool(tb, databaseURL(tb))
	if err := pglock.Migrate(context.Background(), pool, opts...); err != nil {
		tb.Fatal(err)
	}
	return pool
}

// proxy is a Toxiproxy TCP proxy in front of target ("host:port"), in the
// test's own process, stopped when the test ends.
type proxy struct {
	tb    testing.TB
	proxy *toxiproxy.Proxy
}

func newProxy(tb testing.TB, target string) *proxy {
	tb.Helper()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(server, uniqueName("proxy_"), "127.0.0.1:0", target)
	if err := p.Start(); err != nil {
		tb.Fatalf("start proxy to %s: %v", target, err)
	}
	tb.Cleanup(p.Stop)
	return &proxy{tb: tb, proxy: p}
}

// addr is the address clients dial instead of the target.
func (p *proxy) addr() string { return p.proxy.Listen }

// addToxic starts a Toxiproxy toxic of typ (e.g. "timeout") on stream
// ("downstream": server to client) of every connection, until removeToxic.
func (p *proxy) addToxic(name, typ, stream string, attributes map[string]any) {
	p.tb.Helper()
	body, err := json.Marshal(map[string]any{
		"name": name, "type": typ, "stream": stream, "toxicity": 1, "attributes": attributes,
	})
	if err != nil {
		p.tb.Fatal(err)
	}
	if _, err := p.proxy.Toxics.AddToxicJson(strings.NewReader(string(body))); err != nil {
		p.tb.Fatalf("add toxic %s: %v", name, err)
	}
}

func (p *proxy) removeToxic(name string) {
	p.tb.Helper()
	if err := p.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
		p.tb.Fatalf("remove toxic %s: %v", name, err)
	}
}

// proxyGoroutines are goleak options that pass over the goroutines
// Toxiproxy itself leaves behind when a proxy stops (a toxic stage blocked
// on a link whose other end has closed), matching only its frames.
func proxyGoroutines() []goleak.Option {
	var opts []goleak.Option
	for _, f := range []string{"/toxics.(*ToxicStub).Run", ".(*ToxicLink).read", ".(*ToxicLink).write", ".(*ToxicLink).RemoveToxic.func1"} {
		opts = append(opts, goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2"+f))
	}
	return opts
}
