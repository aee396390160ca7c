package main

// -webhooks N: does every change the service commits reach every endpoint
// registered for it, once or more, in order, signed, soon?
//
//  1. Before the load, N receivers (webhooks_receiver.go) listen on
//     127.0.0.1 and are registered with POST /webhooks for every event
//     type; each keeps the secret its registration got.
//  2. During the load the hammer records each change it is answered 2xx
//     for (webhooks_ledger.go: bookings; on-sale's holds and
//     confirmations); with -webhook-outage receiver 1 goes down
//     for a while (webhooks_outage.go).
//  3. After the load (and the outage), the hammer waits, at most
//     -webhook-drain, until every change has reached every receiver,
//     then reports per receiver (webhooks_report.go) and deletes the
//     registrations: the receivers die with the run, and registrations
//     left behind would only pile up failed deliveries.

import (
	"context"
	"fmt"
	"time"
)

// webhooks is one run's receivers, their registrations and what the run
// committed.
type webhooks struct {
	api           *api
	target, admin string
	cfg           webhookConfig
	receivers     []*receiver
	ids           []jsonID // the registrations, in the receivers' order
	ledger        *ledger
	outage        *outage
	stopOutage    context.CancelFunc
	loadStart     time.Time
	closed        bool
}

// drainPoll is how often the hammer looks whether the last messages came.
const drainPoll = 50 * time.Millisecond

// deleteTimeout bounds deleting the registrations after an interrupted
// run, whose own context has ended.
const deleteTimeout = 10 * time.Second

// startWebhooks starts sess's receivers and registers them; nil without
// -webhooks. On an error, what was started is undone.
func startWebhooks(ctx context.Context, sess *session) (*webhooks, error) {
	cfg := sess.cfg.Webhooks
	if cfg.N == 0 {
		return nil, nil
	}
	w := &webhooks{api: sess.api, target: sess.cfg.Targets[0], admin: sess.admin, cfg: cfg, ledger: newLedger()}
	for i := 1; i <= cfg.N; i++ {
		r, err := newReceiver(i, time.Now)
		if err != nil {
			w.close()
			return nil, err
		}
		w.receivers = append(w.receivers, r)
		var out webhookOut
		err = newPatience().do(ctx, func() (err error) {
			out, err = w.api.createWebhook(ctx, w.target, w.admin, r.url(), fmt.Sprintf("hammer %s receiver %d", sess.id, i))
			return err
		})
		if err == nil {
			w.ids = append(w.ids, out.ID)
			err = r.setSecret(out.Secret)
		}
		if err != nil {
			w.close()
			return nil, fmt.Errorf("webhook receiver %d: %w", i, err)
		}
	}
	return w, nil
}

// loadStarted starts the outage's clock, if there is one.
func (w *webhooks) loadStarted(ctx context.Context) {
	if w == nil {
		return
	}
	w.loadStart = time.Now()
	if w.cfg.Outage <= 0 {
		return
	}
	ctx, w.stopOutage = context.WithCancel(ctx)
	w.outage = newOutage(w.receivers[0], w.cfg.OutageAfter, w.cfg.Outage)
	go w.outage.run(ctx, w.loadStart)
}

// finish waits for the outage to end and for every committed change to
// reach every receiver (at most -webhook-drain), reports, and deletes the
// registrations; nil without -webhooks.
func (w *webhooks) finish(ctx context.Context) *webhooksReport {
	if w == nil {
		return nil
	}
	if w.outage != nil {
		w.outage.wait()
	}
	committed := w.ledger.snapshot()
	start := time.Now()
	w.waitDrained(ctx, committed, start.Add(w.cfg.Drain))
	rep := w.summarize(committed, time.Since(start))
	for i, r := range rep.Receivers {
		rep.Receivers[i].Service = w.deliveries(ctx, w.ids[r.Receiver-1])
	}
	for _, err := range w.close() {
		rep.Errors = append(rep.Errors, err.Error())
	}
	return rep
}

// waitDrained returns once every receiver has every change of committed,
// or deadline passes, or ctx ends.
func (w *webhooks) waitDrained(ctx context.Context, committed map[change]time.Time, deadline time.Time) {
	all := make([]change, 0, len(committed))
	for c := range committed {
		all = append(all, c)
	}
	missing := make([][]change, len(w.receivers))
	for i := range missing {
		missing[i] = all
	}
	for {
		done := true
		for i, r := range w.receivers {
			missing[i] = r.pending(missing[i])
			done = done && len(missing[i]) == 0
		}
		if done || !time.Now().Before(deadline) || !sleepUntil(ctx, time.Now().Add(drainPoll)) {
			return
		}
	}
}

// pending is the changes of cs that have not reached r.
func (r *receiver) pending(cs []change) []change {
	r.mu.Lock()
	defer r.mu.Unlock()
	var left []change
	for _, c := range cs {
		if _, ok := r.arrived[c]; !ok {
			left = append(left, c)
		}
	}
	return left
}

// deliveries is what the service says of a registration's deliveries
// still pending and given up: a lost change may be one it is still
// trying, or one it gave up on.
func (w *webhooks) deliveries(ctx context.Context, id jsonID) *serviceDeliveries {
	s := &serviceDeliveries{}
	var err error
	if s.Pending, s.PendingMore, err = w.api.webhookDeliveries(ctx, w.target, w.admin, id, "pending"); err == nil {
		s.Failed, s.FailedMore, err = w.api.webhookDeliveries(ctx, w.target, w.admin, id, "failed")
	}
	if err != nil {
		s.Error = err.Error()
	}
	return s
}

// close stops the outage and the receivers and deletes the registrations
// (even when ctx has ended: an interrupted run leaves none behind),
// returning what could not be deleted. It does its work once.
func (w *webhooks) close() []error {
	if w == nil || w.closed {
		return nil
	}
	w.closed = true
	if w.stopOutage != nil {
		w.stopOutage()
		w.outage.wait()
	}
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	var errs []error
	for i, id := range w.ids {
		if err := w.api.deleteWebhook(ctx, w.target, w.admin, id); err != nil {
			errs = append(errs, fmt.Errorf("webhook receiver %d: %w", i+1, err))
		}
	}
	for _, r := range w.receivers {
		r.close()
	}
	return errs
}

// commitSale records the holds granted and confirmed among runs, and
// the reservations each confirmation made.
func (w *webhooks) commitSale(runs []buyerRun) {
	if w != nil {
		w.ledger.commitSale(runs)
	}
}

// commitBookings records the reservations answered 200 among outcomes.
func (w *webhooks) commitBookings(outcomes []outcome) {
	if w != nil {
		w.ledger.commitBookings(outcomes)
	}
}
