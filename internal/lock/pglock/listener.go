package pglock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// Timings of the listener.
const (
	// defaultHealthInterval is how long the listener waits for a
	// notification before it pings its connection: a peer that vanished
	// without closing the TCP connection is noticed within
	// healthInterval+pingTimeout, not after the kernel's TCP keepalive.
	defaultHealthInterval = 30 * time.Second
	pingTimeout           = 5 * time.Second
	// connectTimeout bounds opening the connection and its LISTEN, in case
	// the pool's configuration sets no connect_timeout.
	connectTimeout = 10 * time.Second
	closeTimeout   = time.Second
	minBackoff     = 50 * time.Millisecond
	maxBackoff     = 2 * time.Second
)

var errClosed = errors.New("pglock: backend closed")

// listener multiplexes the release notifications of every waiter of a
// Backend over one connection that LISTENs on the Backend's channel, so a
// thousand waiting requests cost one connection, not a thousand. One
// goroutine owns the connection: it opens it and runs LISTEN, then waits for
// notifications and hands each to the subscriptions of the lock it names,
// and reconnects when the connection fails. It starts with the first
// subscription and runs until close.
type listener struct {
	config         *pgx.ConnConfig
	channel        string // the NOTIFY channel, as notifications name it
	listenSQL      string // the LISTEN statement of channel
	healthInterval time.Duration

	mu     sync.Mutex
	subs   backend.Waiters
	state  *attempt // the current connection attempt; nil until started
	closed bool
	stop   context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned
}

// attempt is one try at a listening connection. done is closed once LISTEN is
// confirmed (err nil) or the try failed (err set).
type attempt struct {
	done chan struct{}
	err  error
}

func newAttempt() *attempt { return &attempt{done: make(chan struct{})} }

func newListener(config *pgx.ConnConfig, n names) *listener {
	return &listener{config: config, channel: n.channel, listenSQL: n.listen, healthInterval: defaultHealthInterval}
}

// subscribe registers a subscription to key and returns once the listening
// connection has confirmed its LISTEN.
func (l *listener) subscribe(ctx context.Context, key string) (*backend.Waker, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, fmt.Errorf("%w: %w", backend.ErrUnavailable, errClosed)
	}
	if l.state == nil {
		var runCtx context.Context
		runCtx, l.stop = context.WithCancel(context.Background())
		l.state, l.done = newAttempt(), make(chan struct{})
		go l.run(runCtx)
	}
	// Registered before looking at the state: once the state says
	// "listening", every notification received from then on finds s.
	s, _ := l.subs.Add(key)
	state := l.state
	l.mu.Unlock()

	select {
	case <-state.done:
		if state.err != nil {
			s.Close()
			return nil, state.err
		}
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// run owns the listening connection until ctx ends.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	defer l.resolve(fmt.Errorf("%w: %w", backend.ErrUnavailable, errClosed))
	backoff := minBackoff
	lost := false // a connection that listened has failed since the last wake-up
	for {
		conn, err := l.listen(ctx)
		if ctx.Err() != nil {
			if conn != nil {
				closeConn(conn)
			}
			return
		}
		if err != nil {
			l.resolve(classify("listen", err))
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, maxBackoff)
			l.retry()
			continue
		}
		backoff = minBackoff
		l.resolve(nil)
		if lost {
			// Releases committed while no connection listened were
			// not delivered: let every waiter look again.
			l.wakeAll()
		}
		l.receive(ctx, conn)
		closeConn(conn)
		if ctx.Err() != nil {
			return
		}
		lost = true
		l.retry()
	}
}

// listen opens a connection and runs LISTEN on it.
func (l *listener) listen(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, l.config)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, l.listenSQL); err != nil {
		closeConn(conn)
		return nil, err
	}
	return conn, nil
}

// receive dispatches notifications until the connection fails or ctx ends.
// A connection idle for healthInterval is pinged.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) {
	for {
		waitCtx, cancel := context.WithTimeout(ctx, l.healthInterval)
		n, err := conn.WaitForNotification(waitCtx)
		idle := waitCtx.Err() != nil
		cancel()
		if n != nil && n.Channel == l.channel {
			l.dispatch(n.Payload)
		}
		if err == nil {
			continue
		}
		if ctx.Err() != nil || !idle {
			return
		}
		pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
		err = conn.Ping(pingCtx)
		cancel()
		if err != nil {
			return
		}
	}
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = conn.Close(ctx)
}

// resolve settles the current attempt, unless it is settled already.
func (l *listener) resolve(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.state.done:
	default:
		l.state.err = err
		close(l.state.done)
	}
}

// retry starts a new attempt: subscribers from now on wait for it.
func (l *listener) retry() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state = newAttempt()
}

// dispatch wakes the subscriptions of key.
func (l *listener) dispatch(key string) { l.subs.Wake(key) }

// wakeAll wakes every subscription.
func (l *listener) wakeAll() { l.subs.WakeAll() }

// close stops the goroutine, which closes the connection, and waits for it.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}
