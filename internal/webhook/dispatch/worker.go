package dispatch

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/webhook"
)

// recordTimeout bounds the writing of a round's outcomes, which goes on
// when the worker is stopped: an attempt made and not recorded would be
// made again once its lease ends.
const recordTimeout = 10 * time.Second

// worker sends one endpoint's deliveries.
type worker struct {
	d        *Dispatcher
	endpoint atomic.Pointer[webhook.Endpoint]
	ctx      context.Context
	stop     context.CancelFunc
	woken    chan struct{}
	// failing is true after a round whose every attempt failed (the
	// worker's or a fan-out's): the fan-out then leaves the endpoint's
	// events to the worker, which probes with one delivery at a time
	// until one succeeds, and brings the backlog forward when it does.
	failing atomic.Bool
	// slots bounds the attempts a fan-out makes to the endpoint at once.
	slots chan struct{}
}

// fanOutSlots is how many attempts a fan-out makes to one endpoint at
// once: as many connections as the sender keeps idle to one host.
const fanOutSlots = 128

func (d *Dispatcher) newWorker(parent context.Context, ep webhook.Endpoint) *worker {
	ctx, stop := context.WithCancel(parent)
	w := &worker{d: d, ctx: ctx, stop: stop, woken: make(chan struct{}, 1), slots: make(chan struct{}, fanOutSlots)}
	w.endpoint.Store(&ep)
	return w
}

// wake has the worker look for due deliveries now.
func (w *worker) wake() {
	select {
	case w.woken <- struct{}{}:
	default:
	}
}

func (w *worker) run() {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		sent, gone := w.round()
		if gone {
			return
		}
		if sent == w.d.cfg.Batch && !w.failing.Load() {
			continue
		}
		wait, woken := w.d.cfg.PollEvery, w.woken
		if w.failing.Load() {
			// A failing endpoint is probed on its own clock, not at the
			// pace of the events it gets.
			wait, woken = w.d.cfg.ProbeEvery, nil
		}
		timer.Reset(wait)
		select {
		case <-w.ctx.Done():
			return
		case <-woken:
		case <-timer.C:
		}
	}
}

// round claims the due deliveries, sends them at once (one per object at
// most), and records the outcomes. It returns how many it sent, and
// whether the endpoint answered 410 Gone and was disabled.
func (w *worker) round() (sent int, gone bool) {
	ep := w.endpoint.Load()
	limit := w.d.cfg.Batch
	if w.failing.Load() {
		limit = 1
	}
	due, err := w.d.store.ClaimDue(w.ctx, ep.ID, limit, w.d.cfg.Lease)
	if err != nil {
		if w.ctx.Err() == nil {
			w.d.log.Warn("webhooks: cannot claim deliveries", "endpoint", ep.ID, "err", err)
		}
		return 0, false
	}
	if len(due) == 0 {
		return 0, false
	}
	attempts := make([]Attempt, len(due))
	var wg sync.WaitGroup
	for i, dv := range due {
		wg.Go(func() { attempts[i] = w.attempt(w.ctx, ep, dv) })
	}
	wg.Wait()
	var o outcomes
	for i, a := range attempts {
		w.d.observe(a, due[i].OccurredAt)
		o.add(a)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), recordTimeout)
	defer cancel()
	if err := w.d.store.Record(ctx, ep.ID, attempts); err != nil {
		w.d.log.Warn("webhooks: cannot record attempts; they are made again when their lease ends",
			"endpoint", ep.ID, "attempts", len(attempts), "err", err)
	}
	if o.gone {
		w.d.disableGone(ctx, ep.ID)
		return len(due), true
	}
	switch {
	case o.succeeded > 0 && w.failing.Load():
		w.failing.Store(false)
		moved, err := w.d.store.DueNow(ctx, ep.ID, w.d.cfg.Lease)
		if err != nil {
			w.d.log.Warn("webhooks: cannot bring an endpoint's backlog forward", "endpoint", ep.ID, "err", err)
		}
		w.d.log.Info("webhooks: endpoint answers again; its backlog is due now", "endpoint", ep.ID, "deliveries", moved)
	case o.allFailed():
		w.startFailing("error", attempts[0].Error, "status", attempts[0].StatusCode)
	}
	return len(due), false
}

// outcomes counts the attempts of a round, or a fan-out's to one
// endpoint, as they decide the endpoint's fate.
type outcomes struct {
	succeeded, failed int
	gone              bool // an attempt was answered 410 Gone
}

func (o *outcomes) add(a Attempt) {
	switch {
	case a.Status == Succeeded:
		o.succeeded++
	case a.StatusCode == http.StatusGone:
		o.gone = true
	default:
		o.failed++
	}
}

// allFailed: attempts were made and none succeeded (a 410 aside).
func (o *outcomes) allFailed() bool { return o.succeeded == 0 && o.failed > 0 }

// disableGone disables an endpoint that answered 410 Gone; false when
// the store could not.
func (d *Dispatcher) disableGone(ctx context.Context, id uuid.UUID) bool {
	if err := d.store.DisableWebhook(ctx, id, GoneReason); err != nil {
		d.log.Warn("webhooks: cannot disable an endpoint that answered 410", "endpoint", id, "err", err)
		return false
	}
	d.log.Info("webhooks: endpoint answered 410 Gone and is disabled", "endpoint", id)
	return true
}

// startFailing leaves the endpoint's deliveries to the worker, which
// probes it one at a time, after a round or a fan-out whose every attempt
// failed; it says so once.
func (w *worker) startFailing(why ...any) {
	if !w.failing.Swap(true) {
		w.d.log.Info("webhooks: endpoint fails; probing it one delivery at a time",
			append([]any{"endpoint", w.endpoint.Load().ID}, why...)...)
	}
}

// observe tells the metrics of an attempt at an event that occurred at
// occurred.
func (d *Dispatcher) observe(a Attempt, occurred time.Time) {
	if a.Status == Succeeded {
		d.observer.Attempted(Succeeded, a.At.Sub(occurred))
		return
	}
	d.observer.Attempted(a.Status, 0)
}

// attempt sends one delivery and says what became of it.
func (w *worker) attempt(ctx context.Context, ep *webhook.Endpoint, dv Due) Attempt {
	a := Attempt{Seq: dv.Seq, At: time.Now()}
	body, err := webhook.Body(dv.Type, dv.OccurredAt, dv.Data)
	var res webhook.Result
	if err != nil {
		res = webhook.Result{Error: "the event's data cannot be sent: " + err.Error()}
	} else {
		res = w.d.sender.Send(ctx, webhook.Attempt{URL: ep.URL, EventID: dv.EventID, Body: body, Secrets: ep.Secrets, At: a.At})
	}
	a.StatusCode, a.Error = res.Status, res.Error
	switch {
	case res.OK():
		a.Status = Succeeded
	case res.Gone():
		a.Status = Failed
	default:
		if wait, again := w.d.cfg.Schedule.Next(dv.Attempts+1, w.d.rnd); again {
			a.Status, a.NextAt = Pending, a.At.Add(wait)
		} else {
			a.Status = Failed
		}
	}
	return a
}
