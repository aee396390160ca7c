package dispatch

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// fanOut takes a batch of events and delivers them: to an endpoint whose
// worker runs here and is not failing, the fan-out sends the event
// itself, so that a delivery that succeeds at once is written once, with
// its outcome; every other delivery is written pending for the
// endpoint's worker, which is woken. It says whether the batch was full
// (more may be waiting).
//
// unknown is called when an event is for an endpoint with no worker here,
// before its deliveries are decided.
func (d *Dispatcher) fanOut(ctx context.Context, workers map[uuid.UUID]*worker, unknown func()) (full bool) {
	// A fan-out under way when the instance stops is finished, not cut
	// short: attempts made and not written would be made again.
	pass := &pass{d: d, ctx: context.WithoutCancel(ctx), workers: workers, unknown: unknown, written: make(chan struct{}),
		pending: map[uuid.UUID]bool{}, gone: map[uuid.UUID]bool{}}
	if time.Since(d.lastFullLook) >= fullLookEvery {
		d.from, d.lastFullLook = 0, time.Now()
	}
	events, lowest, err := d.store.FanOut(pass.ctx, d.from, d.cfg.FanOutBatch, pass.deliver)
	close(pass.written)
	if events > 0 {
		d.from = lowest
	}
	if err != nil && ctx.Err() == nil {
		d.log.Warn("webhooks: cannot fan events out", "err", err)
	}
	pass.after()
	return err == nil && events == d.cfg.FanOutBatch
}

// fullLookEvery is how often the fan-out looks for undispatched events
// from the first, not from the lowest it took last: an event seen late
// (its transaction committed after a later event's) waits at most this.
const fullLookEvery = 5 * time.Second

// objectKey is one object's deliveries to one endpoint, which go in order.
type objectKey struct {
	endpoint, object uuid.UUID
}

// pass is one fan-out: what it sent, and what it leaves to the workers.
type pass struct {
	d       *Dispatcher
	ctx     context.Context
	workers map[uuid.UUID]*worker
	unknown func()
	// written is closed once the fan-out's deliveries are written: an
	// attempt that outlasted the fan-out's wait records its outcome only
	// then, over the pending delivery written for it.
	written chan struct{}
	pending map[uuid.UUID]bool // endpoints left deliveries to their workers
	gone    map[uuid.UUID]bool // endpoints that answered 410
}

// chain is one object's fresh events to one endpoint, sent one after the
// other, in the order they happened.
type chain struct {
	w      *worker
	events []*Fresh
	// made is the chain's deliveries so far: one per event sent. Once
	// the fan-out stops waiting (cut), the chain's sender writes nothing
	// more here and starts no other attempt; sending says an attempt is
	// under way, and left that one was when the fan-out stopped waiting.
	mu      sync.Mutex
	made    []Made
	cut     bool
	sending bool
	left    bool
}

// deliver decides every fresh event's delivery to each endpoint
// subscribed to it and makes those it can at once: it waits for them up
// to FanOutWait.
func (p *pass) deliver(fresh []Fresh) []Made {
	var made []Made
	asked := false
	chains := map[objectKey]*chain{}
	var order []*chain
	held := map[objectKey]bool{}
	now := time.Now()
	for i := range fresh {
		f := &fresh[i]
		for _, ep := range f.Endpoints {
			key := objectKey{ep, f.ObjectID}
			w := p.workers[ep]
			if w == nil && !asked {
				asked = true
				p.unknown()
				w = p.workers[ep]
			}
			if held[key] || w == nil || w.failing.Load() || slices.Contains(f.Held, ep) {
				// Behind an earlier delivery of its object, or for an
				// endpoint this instance does not send to now: pending,
				// due at once (its worker keeps the order).
				held[key] = true
				made = append(made, p.leave(ep, f.Seq, now))
				continue
			}
			c := chains[key]
			if c == nil {
				c = &chain{w: w}
				chains[key] = c
				order = append(order, c)
			}
			c.events = append(c.events, f)
		}
	}
	var wg sync.WaitGroup
	for _, c := range order {
		wg.Go(func() { p.send(c) })
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(p.d.cfg.FanOutWait)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	}
	now = time.Now()
	for _, c := range order {
		made = append(made, p.close(c, now)...)
	}
	p.judge(order)
	return made
}

// leave is a delivery written pending for ep's worker, due at.
func (p *pass) leave(ep uuid.UUID, seq int64, at time.Time) Made {
	p.pending[ep] = true
	return Made{Endpoint: ep, Attempt: Attempt{Seq: seq, Status: Pending, NextAt: at}}
}

// send makes c's attempts in order, until one does not succeed: the
// events after it wait for its retry.
func (p *pass) send(c *chain) {
	ep := c.w.endpoint.Load()
	for _, f := range c.events {
		c.w.slots <- struct{}{}
		c.mu.Lock()
		if c.cut {
			c.mu.Unlock()
			<-c.w.slots
			return
		}
		c.sending = true
		c.mu.Unlock()
		a := c.w.attempt(p.ctx, ep, f.Due)
		<-c.w.slots
		c.mu.Lock()
		c.sending = false
		cut := c.cut
		if !cut {
			c.made = append(c.made, Made{Endpoint: ep.ID, Attempted: true, Attempt: a})
		}
		c.mu.Unlock()
		if cut {
			// The fan-out wrote this delivery pending and leased while
			// the attempt went on: its outcome is recorded over it.
			p.d.observe(a, f.OccurredAt)
			p.lateRecord(ep.ID, a)
			return
		}
		if a.Status != Succeeded {
			return
		}
	}
}

// close ends c's part in the fan-out at now: the deliveries it made, one
// still under way leased to its sender, and the rest pending behind them.
func (p *pass) close(c *chain, now time.Time) []Made {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	made := slices.Clone(c.made)
	ep := c.w.endpoint.Load().ID
	rest := c.events[len(c.made):]
	if len(rest) == 0 {
		return made
	}
	if c.sending {
		// Under way: leased for as long as an attempt may take, then
		// made again by the worker if its outcome was never written.
		made = append(made, p.leave(ep, rest[0].Seq, now.Add(p.d.cfg.Lease)))
		rest = rest[1:]
		c.left = true
		p.d.late.Add(1)
	}
	for _, f := range rest {
		made = append(made, p.leave(ep, f.Seq, now))
	}
	return made
}

// lateRecord writes the outcome of an attempt that outlasted the
// fan-out's wait, once the fan-out's deliveries are written.
func (p *pass) lateRecord(ep uuid.UUID, a Attempt) {
	defer p.d.late.Done()
	<-p.written
	ctx, cancel := context.WithTimeout(p.ctx, recordTimeout)
	defer cancel()
	if err := p.d.store.Record(ctx, ep, []Attempt{a}); err != nil {
		p.d.log.Warn("webhooks: cannot record an attempt; it is made again when its lease ends", "endpoint", ep, "err", err)
	}
}

// judge counts the fan-out's attempts per endpoint: one whose every
// attempt failed, or that kept an attempt past the wait, is left to its
// worker (probed) from now on; one that answered 410 is disabled after.
func (p *pass) judge(order []*chain) {
	tallies := map[*worker]*outcomes{}
	for _, c := range order {
		o := tallies[c.w]
		if o == nil {
			o = &outcomes{}
			tallies[c.w] = o
		}
		for i, m := range c.made {
			p.d.observe(m.Attempt, c.events[i].OccurredAt)
			o.add(m.Attempt)
		}
		if c.left {
			o.failed++ // still unanswered when the wait ended
		}
	}
	for w, o := range tallies {
		if o.gone {
			p.gone[w.endpoint.Load().ID] = true
		}
		if o.allFailed() {
			w.startFailing()
		}
	}
}

// after disables the endpoints that answered 410 and wakes the workers
// left deliveries.
func (p *pass) after() {
	for id := range p.gone {
		if !p.d.disableGone(p.ctx, id) {
			continue
		}
		if w, ok := p.workers[id]; ok {
			w.stop()
			delete(p.workers, id)
		}
	}
	for id := range p.pending {
		if w, ok := p.workers[id]; ok {
			w.wake()
		}
	}
}
