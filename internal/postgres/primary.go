package postgres

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultPrimaryWait is how long a new connection waits for a primary when
// the last attempt found none: about what Patroni takes to promote the
// standby after the primary's death (its ttl, 8 s in `make cluster`), so
// that a request arriving in a failover's gap waits for the new primary
// instead of failing, and one arriving during a planned switchover (a
// second or two) is served.
const DefaultPrimaryWait = 10 * time.Second

// primaryProbeEvery spaces the probes while no primary answers.
const primaryProbeEvery = 100 * time.Millisecond

// primaryGate makes a pool's new connections wait through a failover. With
// several hosts and target_session_attrs=read-write, a connection tries
// each host in turn and takes the first that accepts writes; during a
// failover none does (the primary is gone or shutting down, the standby
// not yet promoted), and pgxpool would hand the error to every request at
// once. The gate notices an attempt that failed on its last host and
// holds the next attempts until a probe finds a primary, or until the
// acquirer's context or the wait runs out (then the attempt goes ahead and
// fails with its own error). In steady state it costs nothing: no probe
// runs while connections succeed.
type primaryGate struct {
	probe *pgconn.Config
	wait  time.Duration
	last  string // host:port of the last host tried

	mu      sync.Mutex
	down    bool
	probing chan struct{} // closed when the running probe ends; nil if none
}

// followsPrimary reports whether cfg's DATABASE_URL names a primary among
// several hosts and asks for the one that takes writes
// (target_session_attrs=read-write): pgx then validates each server it
// reaches.
func followsPrimary(cfg *pgxpool.Config) bool { return cfg.ConnConfig.ValidateConnect != nil }

// withPrimaryGate installs a primaryGate on cfg, whose connections
// validate the server they reach (target_session_attrs): with one server
// and no such check, there is no other primary to wait for.
func withPrimaryGate(cfg *pgxpool.Config, wait time.Duration) {
	g := &primaryGate{wait: wait}
	cc := &cfg.ConnConfig.Config
	g.last = net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
	if n := len(cc.Fallbacks); n > 0 {
		g.last = net.JoinHostPort(cc.Fallbacks[n-1].Host, strconv.Itoa(int(cc.Fallbacks[n-1].Port)))
	}
	dial := cc.DialFunc
	cc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil && addr == g.last {
			g.markDown()
		}
		return conn, err
	}
	validate := cc.ValidateConnect
	cc.ValidateConnect = func(ctx context.Context, conn *pgconn.PgConn) error {
		err := validate(ctx, conn)
		if err != nil && conn.Conn().RemoteAddr().String() == g.last {
			g.markDown()
		}
		return err
	}
	g.probe = cc.Copy()
	before := cfg.BeforeConnect
	cfg.BeforeConnect = func(ctx context.Context, c *pgx.ConnConfig) error {
		g.awaitPrimary(ctx)
		if before != nil {
			return before(ctx, c)
		}
		return nil
	}
}

func (g *primaryGate) markDown() {
	g.mu.Lock()
	g.down = true
	g.mu.Unlock()
}

// awaitPrimary returns at once unless the last attempt found no primary;
// then it waits until a probe finds one, ctx ends or the wait passes.
func (g *primaryGate) awaitPrimary(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, g.wait)
	defer cancel()
	for {
		g.mu.Lock()
		if !g.down {
			g.mu.Unlock()
			return
		}
		// One probe at a time: the others wait for its verdict.
		probing := g.probing
		if probing == nil {
			probing = make(chan struct{})
			g.probing = probing
			go g.runProbe(probing)
		}
		g.mu.Unlock()
		select {
		case <-probing:
		case <-ctx.Done():
			return
		}
	}
}

// runProbe connects once (with the pool's own settings: a host that takes
// writes) and records whether a primary answered, after a pause when none
// did, so that waiters probe again at primaryProbeEvery.
func (g *primaryGate) runProbe(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), g.wait)
	defer cancel()
	conn, err := pgconn.ConnectConfig(ctx, g.probe)
	if err == nil {
		_ = conn.Close(ctx)
	} else {
		time.Sleep(primaryProbeEvery)
	}
	g.mu.Lock()
	if err == nil {
		g.down = false
	}
	g.probing = nil
	g.mu.Unlock()
	close(done)
}

// FailoverWriteTimeout is the bound on a write under seat locks for a pool
// that follows a primary among several hosts (WriteTimeout): a planned
// switchover leaves no primary for about two seconds (2.1–2.2 s measured
// on `make cluster`), and a write that began as it started must outlast
// that gap, waiting in the pool, to be served rather than answered 503.
const FailoverWriteTimeout = 4 * time.Second

// WriteTimeout is the bound on the service's writes under seat locks that
// suits pool (reservation.Config.WriteTimeout): FailoverWriteTimeout when
// it follows a primary among several hosts, else zero (the service's
// default).
func WriteTimeout(pool *pgxpool.Pool) time.Duration {
	if !followsPrimary(pool.Config()) {
		return 0
	}
	return FailoverWriteTimeout
}

// DefaultStartupWait is how long AwaitPrimary waits at an instance's
// start: longer than a failover, so that instances started during one (or
// with the database) come up when it ends.
const DefaultStartupWait = time.Minute

// AwaitPrimary waits until pool reaches a primary, when its DATABASE_URL
// names several hosts to choose the primary from (target_session_attrs),
// at most wait; an instance that starts while no node takes writes (a
// failover under way, the cluster starting) then migrates and serves once
// one does. With a single server it returns at once: its errors are
// reported by the first statement.
func AwaitPrimary(ctx context.Context, pool *pgxpool.Pool, wait time.Duration) error {
	if !followsPrimary(pool.Config()) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		err := pool.Ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres: no primary answered within %v: %w", wait, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
