package main

// -scenario on-sale: a crowd at the opening of a sale behind the waiting
// room.
//
//  1. A fresh venue is made as best-available's is (-rows, -row-seats,
//     -sections, -layout), and given a queue (PUT /schedules/{id}/queue)
//     opening -prequeue-share of -join-window after the first join,
//     admitting -admit-rate buyers a second (at most -max-active at once).
//  2. The -users buyers, a token each, join (POST /schedules/{id}/queue)
//     evenly spread over -join-window: those before the opening join the
//     pre-queue, the others the end of the line.
//  3. Each follows their ticket (GET /queue/{ticket}), asking again when
//     its Retry-After says (1 s without one), until admitted.
//  4. Admitted, a buyer holds the best available seats (POST /holds
//     {scheduleId, quantity} with the Admission header), a quantity drawn
//     from -quantity; refused not_enough_seats, fewer, down to 1, and then
//     gives up; confirms the hold (POST /holds/{id}/confirm, no Admission:
//     one's own hold needs none), and leaves (DELETE /queue/{ticket}).
//     One buyer in sampleEvery first sends a hold without Admission, which
//     must be refused 403 admission_required, and joins again, which must
//     answer the ticket they have.
//  5. When every buyer is done (or -duration from the first join is up),
//     the queue's counts and the seat map are read back and the queue is
//     deleted.
//
// The report (onsale_report.go) gives the joins and their latency, the
// time to admission, the admissions a second per 10 s window, the order
// of admission against the line's (onsale_order.go), the seats sold and
// the time to sell out, and how good the wait estimates were.

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// sampleEvery: one buyer in this many tries a hold without Admission
	// and joins twice.
	sampleEvery = 20
	// defaultPollWait is how long a buyer waits between polls when the
	// service sends no Retry-After.
	defaultPollWait = time.Second
	// maxHoldRetries bounds the retries of one quantity answered
	// seats_contended or rate_limited.
	maxHoldRetries = 3
)

// The requests of a buyer, as they are counted in the report's responses.
const (
	opJoin       = "join"
	opRejoin     = "join again"
	opPoll       = "poll"
	opUnadmitted = "hold without admission"
	opHold       = "hold"
	opConfirm    = "confirm"
	opLeave      = "leave"
)

// How a buyer's sale ended.
const (
	endBought      = "bought"
	endSoldOut     = "sold out"
	endNoTicket    = "no ticket"
	endTicketGone  = "ticket expired, left or gone before admission"
	endNotAdmitted = "not admitted in time"
	endHoldFailed  = "hold failed"
	endNotLeft     = "could not leave"
)

// buyerRun is what one buyer did and saw.
type buyerRun struct {
	User   string
	Sample bool
	// Join is the first join's answer; Ticket its ticket and Prequeue
	// whether it was a pre-queue one.
	Join     queueCall
	Ticket   string
	Prequeue bool
	// RejoinTicket is the sampled buyer's second join's ticket.
	RejoinTicket string
	Polls        int
	// FirstWaiting is the first answer that showed the ticket waiting,
	// with its position and estimate.
	FirstWaiting *queueCall
	// LastNotAdmitted is when the last poll that found the ticket still
	// in line (waiting or pre-queue) was sent: the ticket was in line
	// some time after it.
	LastNotAdmitted time.Time
	// AdmittedSeen is when the first answer that showed the ticket
	// admitted came; zero if none did.
	AdmittedSeen time.Time
	Admission    string
	// Unadmitted is the sampled hold without Admission.
	Unadmitted *holdOutcome
	Holds      []holdOutcome
	Seats      int // confirmed
	// Confirmation is the last hold's confirmation answered 200.
	Confirmation *queueCall
	// SoldOut is when a hold was refused not_enough_seats with no seat
	// available; zero if none was.
	SoldOut time.Time
	Left    bool
	End     string
	Done    time.Time
	// Responses counts the answers by key and request.
	Responses     map[string]int
	TransportErrs []string
}

// count adds an answer of op to the buyer's histogram.
func (b *buyerRun) count(op, key, err string) {
	b.Responses[key+" ("+op+")"]++
	if key == keyTransportError {
		b.TransportErrs = appendSamples(b.TransportErrs, err)
	}
}

// sale is one on-sale run: where it sells, to whom, and when the queue
// opens. Its cfg.OnSale and cfg.Users are the sale's own (on-sales runs
// several, each with its own).
type sale struct {
	api     *api
	cfg     config
	venue   venue
	users   []user
	stadium bool // on-sales' big one
	opensAt time.Time
	start   time.Time // of the joining
}

// target is the target of buyer i's requests: the buyers spread over the
// instances, each buyer staying on one.
func (s *sale) target(i int) string { return s.cfg.Targets[i%len(s.cfg.Targets)] }

// joinAt is when buyer i of n joins: evenly over the window.
func (s *sale) joinAt(i, n int) time.Time {
	return s.start.Add(time.Duration(float64(s.cfg.OnSale.JoinWindow) * float64(i) / float64(n)))
}

// hammerOnSale runs -scenario on-sale end to end.
func hammerOnSale(ctx context.Context, sess *session) (*report, error) {
	cfg := sess.cfg
	s, err := newSale(ctx, sess, cfg, "hammer "+sess.id+" on-sale", sess.id)
	if err != nil {
		return nil, err
	}
	// The joining starts a moment after the queue is put, so that the
	// first buyers find it.
	if err := s.open(ctx, sess.admin, time.Now().Add(100*time.Millisecond)); err != nil {
		return nil, err
	}
	hooks, err := startWebhooks(ctx, sess)
	if err != nil {
		return nil, err
	}
	defer hooks.close()
	var done atomic.Int64
	onTick, finish := progressBar(sess.progressOut, int64(len(s.users)), "buyers done", func(int64, time.Duration) int64 { return done.Load() })
	stopTicks := tickWhile(onTick, s.start, &done)
	hooks.loadStarted(ctx)
	runs, samples := s.run(ctx, sess.admin, &done)
	stopTicks()
	finish()
	wall := time.Since(s.start)
	hooks.commitSale(runs)
	back := s.readBack(ctx, sess.admin, runs)
	back.samples = samples
	r := summarizeOnSale(cfg, sess.id, s, runs, wall, back)
	r.Webhooks = hooks.finish(ctx)
	r.Verdict = judgeOnSale(r, ctx.Err() != nil)
	return r, nil
}

// newSale makes a fresh venue as cfg.OnSale says, titled title, and mints
// its cfg.Users buyers (named after usersOf) before the clock starts.
func newSale(ctx context.Context, sess *session, cfg config, title, usersOf string) (*sale, error) {
	v, err := sess.api.createVenue(ctx, cfg.Targets[0], sess.admin, title, cfg.OnSale.layout())
	if err != nil {
		return nil, err
	}
	users, err := mintUsers(cfg.Secret, usersOf, cfg.Users, sess.ttl)
	if err != nil {
		return nil, err
	}
	return &sale{api: sess.api, cfg: cfg, venue: v, users: users}, nil
}

// open puts the sale's queue: the joining starts at start, and the queue
// opens the pre-queue's share of the window later.
func (s *sale) open(ctx context.Context, admin string, start time.Time) error {
	o := s.cfg.OnSale
	s.start = start
	s.opensAt = start.Add(time.Duration(o.PrequeueShare * float64(o.JoinWindow))).Truncate(time.Millisecond)
	return s.api.putQueue(ctx, s.cfg.Targets[0], admin, s.venue.ID, s.opensAt, o.AdmitRate, o.MaxActive)
}

// run has every buyer of the sale buy, start to end, within -duration
// from the start, counting each done in done; it returns their runs and
// the queue's counts every admissionWindow from the opening.
func (s *sale) run(ctx context.Context, admin string, done *atomic.Int64) ([]buyerRun, []queueSample) {
	runCtx, cancel := context.WithDeadline(ctx, s.start.Add(s.cfg.Duration))
	defer cancel()
	stopSampling := s.sampleQueue(runCtx, admin)
	runs := make([]buyerRun, len(s.users))
	var wg sync.WaitGroup
	for i := range s.users {
		wg.Go(func() {
			runs[i] = s.buy(runCtx, i, len(s.users), s.users[i])
			done.Add(1)
		})
	}
	wg.Wait()
	return runs, stopSampling()
}

// readBack reads the queue's counts and the venue's seat map (once it
// shows the seats confirmed) after the sale, then deletes the queue;
// nothing when ctx has ended.
func (s *sale) readBack(ctx context.Context, admin string, runs []buyerRun) readBackOnSale {
	var back readBackOnSale
	if ctx.Err() != nil {
		return back
	}
	target, id := s.cfg.Targets[0], s.venue.ID
	back.counts, back.countsErr = s.api.queueCountsOf(ctx, target, admin, id)
	confirmed := 0
	for _, b := range runs {
		confirmed += b.Seats
	}
	back.statuses, back.mapErr = s.api.readSettled(ctx, target, id, time.Now().Add(mapSettleTime), newPatience(),
		func(statuses map[int]string) bool {
			c := countSeatMap(statuses, nil)
			return c.Reserved == confirmed && c.Held == 0
		})
	back.deleteErr = s.api.deleteQueue(ctx, target, admin, id)
	return back
}

// readBackOnSale is what the service said after the sale.
type readBackOnSale struct {
	counts    queueCounts
	countsErr error
	statuses  map[int]string
	mapErr    error
	deleteErr error
	// samples are the queue's counts every 10 s of the sale.
	samples []queueSample
}

// buy is buyer i's sale, start to end. b is the named result so that the
// deferred Done lands in what is returned, however the run ends.
func (s *sale) buy(ctx context.Context, i, n int, u user) (b buyerRun) {
	b = buyerRun{User: u.id, Sample: i%sampleEvery == 0, Responses: map[string]int{}}
	defer func() { b.Done = time.Now() }()
	if !sleepUntil(ctx, s.joinAt(i, n)) {
		b.End = endNotAdmitted
		return b
	}
	target := s.target(i)
	b.Join = s.api.join(ctx, target, u, s.venue.ID)
	b.count(opJoin, b.Join.key(), b.Join.Err)
	if b.Join.Status != http.StatusCreated && b.Join.Status != http.StatusOK || b.Join.Code != "" {
		b.End = endNoTicket
		return b
	}
	b.Ticket, b.Prequeue = b.Join.Ticket.Ticket, b.Join.Ticket.State == statePrequeue
	if b.Sample {
		again := s.api.join(ctx, target, u, s.venue.ID)
		b.count(opRejoin, again.key(), again.Err)
		b.RejoinTicket = again.Ticket.Ticket
	}
	if !s.follow(ctx, target, u, &b) {
		return b
	}
	if b.Sample {
		o := s.api.holdBest(ctx, target, u, s.venue.ID, 1, s.cfg.OnSale.Category, s.cfg.OnSale.Adjacent, nil)
		b.Unadmitted = &o
		b.count(opUnadmitted, o.key(), o.Err)
	}
	b.End = s.hold(ctx, target, u, i, &b)
	c := s.api.leave(ctx, target, u, b.Ticket)
	b.count(opLeave, c.key(), c.Err)
	b.Left = c.Status == http.StatusNoContent
	if !b.Left && b.End == endBought {
		b.End = endNotLeft
	}
	return b
}

// follow polls b's ticket until it is admitted (true), gone, or ctx ends.
func (s *sale) follow(ctx context.Context, target string, u user, b *buyerRun) bool {
	c := b.Join
	for {
		if c.Status == http.StatusOK || c.Status == http.StatusCreated {
			switch c.Ticket.State {
			case statePrequeue:
				b.LastNotAdmitted = c.SentAt
			case stateWaiting:
				b.LastNotAdmitted = c.SentAt
				if b.FirstWaiting == nil {
					first := c
					b.FirstWaiting = &first
				}
			case stateAdmitted:
				b.AdmittedSeen, b.Admission = c.At, c.Ticket.Admission
				return true
			default:
				b.End = endTicketGone
				return false
			}
		}
		wait := c.RetryAfter
		if wait <= 0 {
			wait = defaultPollWait
		}
		if !sleepUntil(ctx, time.Now().Add(wait)) {
			b.End = endNotAdmitted
			return false
		}
		c = s.api.ticket(ctx, target, u, b.Ticket)
		b.Polls++
		b.count(opPoll, c.key(), c.Err)
		switch {
		case c.Canceled:
			b.End = endNotAdmitted
			return false
		case c.Status >= 400 && c.Status < 500 && c.Status != http.StatusTooManyRequests:
			// ticket_not_found and the like: asking again will not
			// change it (a 429, a 5xx or a lost connection might).
			b.End = endTicketGone
			return false
		}
	}
}

// hold holds and confirms the best available seats for admitted buyer i,
// asking for fewer while the venue has too few; it returns how the sale
// ended for them.
func (s *sale) hold(ctx context.Context, target string, u user, i int, b *buyerRun) string {
	o := s.cfg.OnSale
	admission := []string{admissionHeader, b.Admission}
	retries := 0
	for q := o.quantityOf(i); q >= 1; {
		h := s.api.holdBest(ctx, target, u, s.venue.ID, q, o.Category, o.Adjacent, admission)
		b.Holds = append(b.Holds, h)
		b.count(opHold, h.key(), h.Err)
		switch {
		case h.granted():
			c := s.api.confirm(ctx, target, u, h.Hold)
			b.count(opConfirm, c.key(), c.Err)
			if c.Status != http.StatusOK || c.Code != "" {
				return endHoldFailed
			}
			b.Seats, b.Confirmation = c.Seats, &c
			return endBought
		case h.Code == codeNotEnough && h.Available == 0:
			b.SoldOut = h.At
			return endSoldOut
		case h.Code == codeNotEnough:
			// Fewer: as many as were left, when the answer says.
			q--
			if h.Available > 0 {
				q = min(q, h.Available)
			}
			retries = 0
		case (h.Code == "seats_contended" || h.Status == http.StatusTooManyRequests) && retries < maxHoldRetries:
			retries++
			if !sleepUntil(ctx, time.Now().Add(time.Duration(retries)*100*time.Millisecond)) {
				return endHoldFailed
			}
		default:
			return endHoldFailed
		}
	}
	return endSoldOut
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
