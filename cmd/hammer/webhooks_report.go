package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// maxLostExamples bounds the lost changes a report names.
const maxLostExamples = 3

// webhooksReport is what -webhooks found, receiver by receiver.
type webhooksReport struct {
	// Committed counts the changes the hammer was answered 2xx for:
	// each owes every receiver a message.
	Committed int `json:"committed"`
	// Waited is how long after the load (and the outage) the hammer
	// waited for them, at most Drain.
	Waited    duration         `json:"waitedMs"`
	Drain     duration         `json:"drainMs"`
	Receivers []receiverReport `json:"receivers"`
	// Errors are the registrations that could not be deleted.
	Errors []string `json:"errors,omitempty"`
}

// receiverReport is one receiver's count of what came.
type receiverReport struct {
	Receiver int    `json:"receiver"`
	URL      string `json:"url"`
	// Events counts the distinct event ids accepted, Messages every
	// accepted message; Duplicates the difference (at least once means
	// some). Others counts the events of no change the hammer committed:
	// holds expiring, other clients' changes.
	Events     int `json:"events"`
	Messages   int `json:"messages"`
	Duplicates int `json:"duplicates"`
	Others     int `json:"others"`
	// Lost counts the committed changes (object and event type) that no
	// message brought: the target is 0.
	Lost         int      `json:"lost"`
	LostExamples []string `json:"lostExamples,omitempty"`
	// OutOfOrder counts the events that first came after a later event
	// of their object (created after cancelled, confirmed or released;
	// or an older timestamp after a newer one), Objects their objects.
	OutOfOrder        int `json:"outOfOrder"`
	ObjectsOutOfOrder int `json:"objectsOutOfOrder"`
	// Bad counts the messages refused 400, by why: signature, timestamp
	// (beyond 5 minutes), headers, body.
	Bad map[string]int `json:"bad,omitempty"`
	// Answered500 counts the messages answered 500 in an outage.
	Answered500 int `json:"answered500,omitempty"`
	// Latency runs from each committed change's event timestamp to its
	// first arrival; AfterAnswer from the hammer's 2xx answer instead
	// (an event that came before the answer counts as 0).
	Latency     latency `json:"latencyMs"`
	AfterAnswer latency `json:"afterAnswerMs"`
	// Outage is receiver 1's, with -webhook-outage.
	Outage *outageReport `json:"outage,omitempty"`
	// Service is what the service said of its deliveries afterwards.
	Service *serviceDeliveries `json:"service,omitempty"`
}

// outageReport is how receiver 1's outage went and how its backlog
// drained.
type outageReport struct {
	Span duration `json:"spanMs"`
	// Start is when it went down, from the load's start.
	Start duration `json:"startMs"`
	// Backlog counts the changes committed before its return that had
	// not reached it then; Drain is the time from its return to the
	// last of them arriving (complete when none was lost).
	Backlog  int      `json:"backlog"`
	Drain    duration `json:"backlogDrainMs"`
	Complete bool     `json:"complete"`
	// NotDone says why the outage did not run its course.
	NotDone string `json:"notDone,omitempty"`
}

// serviceDeliveries are a registration's deliveries pending and failed
// as GET /webhooks/{id}/deliveries lists them (the first page: More says
// there are more).
type serviceDeliveries struct {
	Pending     int    `json:"pending"`
	PendingMore bool   `json:"pendingMore,omitempty"`
	Failed      int    `json:"failed"`
	FailedMore  bool   `json:"failedMore,omitempty"`
	Error       string `json:"error,omitempty"`
}

// summarize counts what each receiver got of committed.
func (w *webhooks) summarize(committed map[change]time.Time, waited time.Duration) *webhooksReport {
	rep := &webhooksReport{Committed: len(committed), Waited: duration(waited), Drain: duration(w.cfg.Drain)}
	for _, r := range w.receivers {
		rr := r.summarize(committed)
		if r.n == 1 && w.outage != nil {
			rr.Outage = w.outageReport(r, committed)
		}
		rep.Receivers = append(rep.Receivers, rr)
	}
	return rep
}

// summarize counts what r got of committed.
func (r *receiver) summarize(committed map[change]time.Time) receiverReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	rr := receiverReport{Receiver: r.n, URL: r.url(), Events: len(r.events), Messages: r.messages,
		Duplicates: r.messages - len(r.events), Answered500: r.failed, Bad: maps.Clone(r.bad)}
	fromEvent, fromAnswer := newLatencyHistogram(), newLatencyHistogram()
	for _, a := range r.events {
		answered, ok := committed[change{Object: a.Object, Type: a.Type}]
		if !ok {
			rr.Others++
			continue
		}
		recordLatency(fromEvent, a.First.Sub(a.Timestamp))
		recordLatency(fromAnswer, a.First.Sub(answered))
	}
	rr.Latency, rr.AfterAnswer = latencyOf(fromEvent), latencyOf(fromAnswer)
	var lost []string
	for c := range committed {
		if _, ok := r.arrived[c]; !ok {
			lost = append(lost, c.Type+" of "+c.Object)
		}
	}
	rr.Lost = len(lost)
	slices.Sort(lost)
	rr.LostExamples = lost[:min(len(lost), maxLostExamples)]
	for _, ids := range r.order {
		if n := outOfOrder(r.events, ids); n > 0 {
			rr.OutOfOrder += n
			rr.ObjectsOutOfOrder++
		}
	}
	return rr
}

// stage ranks an event type within its object's life: created first,
// then the one change that ends it (confirmed, released, expired,
// cancelled).
func stage(eventType string) int {
	if strings.HasSuffix(eventType, ".created") {
		return 0
	}
	return 1
}

// outOfOrder counts the events of one object, ids in the order they first
// came, that came after a later one: of a later stage, or of a later
// timestamp.
func outOfOrder(events map[string]*arrival, ids []string) int {
	n, maxStage := 0, -1
	var maxAt time.Time
	for _, id := range ids {
		a := events[id]
		if stage(a.Type) < maxStage || a.Timestamp.Before(maxAt) {
			n++
		}
		maxStage = max(maxStage, stage(a.Type))
		if a.Timestamp.After(maxAt) {
			maxAt = a.Timestamp
		}
	}
	return n
}

// outageReport is how r's outage went: the backlog is the changes
// committed before it was back that had not reached it by then.
func (w *webhooks) outageReport(r *receiver, committed map[change]time.Time) *outageReport {
	start, returned, err := w.outage.times()
	o := &outageReport{Span: duration(w.cfg.Outage)}
	if !start.IsZero() {
		o.Start = duration(start.Sub(w.loadStart))
	}
	switch {
	case err != nil:
		o.NotDone = err.Error()
	case returned.IsZero():
		o.NotDone = "the run ended before the receiver was back"
	}
	if returned.IsZero() {
		return o
	}
	o.Complete = true
	for c, at := range committed {
		if !at.Before(returned) {
			continue
		}
		arrived, ok := r.arrivedAt(c)
		switch {
		case !ok:
			o.Backlog++
			o.Complete = false
		case !arrived.Before(returned):
			o.Backlog++
			o.Drain = max(o.Drain, duration(arrived.Sub(returned)))
		}
	}
	return o
}

// writeWebhooksText prints what -webhooks found, if anything.
func writeWebhooksText(p printer, wr *webhooksReport) {
	if wr == nil {
		return
	}
	p("webhooks:\t%d receivers; %d changes committed (2xx), each owed to every receiver; waited %s for them after the load and its checks (at most %s)",
		len(wr.Receivers), wr.Committed, wr.Waited, wr.Drain)
	p("  latency:\tfrom the event's timestamp to its first arrival (in brackets: from the hammer's 2xx)")
	var othersP99 duration // the slowest p99 of the receivers without an outage
	for _, rr := range wr.Receivers {
		if rr.Outage == nil {
			othersP99 = max(othersP99, rr.Latency.P99)
		}
	}
	for _, rr := range wr.Receivers {
		lat := "latency none: no committed change came"
		if rr.Events > rr.Others {
			lat = fmt.Sprintf("p50 %s p99 %s (p50 %s p99 %s)", rr.Latency.P50, rr.Latency.P99, rr.AfterAnswer.P50, rr.AfterAnswer.P99)
		}
		p("  receiver %d\t%d events, %d duplicates, %d others; lost %d (target 0); out of order %d in %d objects; bad %d%s; %s",
			rr.Receiver, rr.Events, rr.Duplicates, rr.Others, rr.Lost, rr.OutOfOrder, rr.ObjectsOutOfOrder,
			total(rr.Bad), badReasons(rr.Bad), lat)
		if len(rr.LostExamples) > 0 {
			p("    lost\te.g. %s", strings.Join(rr.LostExamples, "; "))
		}
		if o := rr.Outage; o != nil {
			writeOutageText(p, o, rr.Answered500, othersP99)
		}
		if s := rr.Service; s != nil && (s.Pending+s.Failed > 0 || s.Error != "") {
			p("    service says\t%s", s)
		}
	}
	for _, e := range wr.Errors {
		p("  error:\t%s", e)
	}
}

// writeOutageText prints receiver 1's outage and its backlog's drain,
// next to the slowest p99 of the other receivers.
func writeOutageText(p printer, o *outageReport, answered500 int, othersP99 duration) {
	p("    outage\t%s from %s into the load: refused, then %d messages answered 500", o.Span, o.Start, answered500)
	switch {
	case o.NotDone != "":
		p("    backlog\tnot measured: %s", o.NotDone)
	case o.Complete:
		p("    backlog\t%d changes drained %s after its return (the other receivers' p99: %s)", o.Backlog, o.Drain, othersP99)
	default:
		p("    backlog\t%d changes, not all arrived (see lost)", o.Backlog)
	}
}

func (s *serviceDeliveries) String() string {
	if s.Error != "" {
		return "deliveries unknown: " + s.Error
	}
	plus := func(more bool) string {
		if more {
			return "+"
		}
		return ""
	}
	return fmt.Sprintf("%d%s deliveries pending, %d%s failed", s.Pending, plus(s.PendingMore), s.Failed, plus(s.FailedMore))
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// badReasons is " (signature 2, timestamp 1)", or "" when there is none.
func badReasons(bad map[string]int) string {
	if len(bad) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(bad)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, bad[k]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// judgeWebhooks fails a receiver that lost a committed change (nothing
// when wr is nil); the rest is reported.
func judgeWebhooks(wr *webhooksReport, fail func(string, ...any)) {
	if wr == nil {
		return
	}
	for _, rr := range wr.Receivers {
		if rr.Lost > 0 {
			fail("webhook receiver %d: %d of %d committed changes never arrived (e.g. %s)", rr.Receiver, rr.Lost, wr.Committed, rr.LostExamples[0])
		}
	}
}
