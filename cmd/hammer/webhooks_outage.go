package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// defaultOutageAfter is how far into the load -webhook-outage starts:
// late enough that deliveries are flowing, early enough that a short run
// still books through it.
const defaultOutageAfter = 5 * time.Second

// outage takes receiver 1 down for a while during the load, as a
// customer's endpoint goes down: for the first half of it connections
// are refused (its listener closed, its connections cut), for the second
// it answers 500 to everything; then it is back. The service must keep
// the events it could not deliver and deliver them all once it is back:
// the report gives how long that backlog took to drain.
type outage struct {
	r     *receiver
	after time.Duration // from the load's start
	span  time.Duration

	mu       sync.Mutex
	start    time.Time // when it went down
	returned time.Time // when it was back; zero until then
	err      error     // the listener could not be opened again
	done     chan struct{}
}

func newOutage(r *receiver, after, span time.Duration) *outage {
	return &outage{r: r, after: after, span: span, done: make(chan struct{})}
}

// run takes the receiver down after o.after from loadStart, then brings
// it back, unless ctx ends first (the receiver is then left as it is: the
// run is over).
func (o *outage) run(ctx context.Context, loadStart time.Time) {
	defer close(o.done)
	steps := []struct {
		at   time.Time
		step func() error
	}{
		{loadStart.Add(o.after), o.r.refuseConnections},
		{loadStart.Add(o.after + o.span/2), o.r.fail},
		{loadStart.Add(o.after + o.span), o.r.restore},
	}
	for i, s := range steps {
		if !sleepUntil(ctx, s.at) {
			return
		}
		err := s.step()
		o.mu.Lock()
		switch {
		case i == 0:
			o.start = time.Now()
		case i == len(steps)-1:
			o.returned = time.Now()
		}
		if err != nil && o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
	}
}

// wait blocks until the outage is over (or was abandoned).
func (o *outage) wait() { <-o.done }

// times are when the outage started and when the receiver was back (zero
// when it was not), and why it could not be brought back, if so.
func (o *outage) times() (start, returned time.Time, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.start, o.returned, o.err
}

// refuseConnections closes the receiver's listener and every connection
// it has: a sender now gets "connection refused".
func (r *receiver) refuseConnections() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state = receiverRefusing
	err := r.ln.Close()
	for c := range r.conns {
		_ = c.Close()
	}
	return err
}

// fail opens the receiver's port again, answering 500 to every message.
func (r *receiver) fail() error {
	ln, err := net.Listen("tcp", r.addr)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state = receiverFailing
	if err != nil {
		return fmt.Errorf("webhook receiver %d: listen again on %s: %w", r.n, r.addr, err)
	}
	r.ln = ln
	go func() { _ = r.srv.Serve(ln) }()
	return nil
}

// restore answers as usual again.
func (r *receiver) restore() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state = receiverUp
	return nil
}
