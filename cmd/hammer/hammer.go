package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// seatMapView is a schedule's seat map as one target reported it after the
// run.
type seatMapView struct {
	Target   string
	Schedule int64
	Statuses map[int]string
	Err      error
}

// session is what every run starts with, whatever its scenario: its id
// (in the names of its users and schedules), its client, the admin's
// token, and how long its tokens last (tokenTTL).
type session struct {
	cfg   config
	id    string
	api   *api
	admin string
	ttl   time.Duration
	// progressOut, if not nil, gets a progress bar on runs longer than a
	// couple of seconds.
	progressOut io.Writer
}

// hammer runs cfg end to end, as its scenario says. An error means the
// run could not be carried out at all; a failed verdict is in the report.
func hammer(ctx context.Context, cfg config, progressOut io.Writer) (*report, error) {
	sess := &session{cfg: cfg, id: newRunID(), api: newAPI(cfg.C, len(cfg.Targets), cfg.Timeout, cfg.Client), ttl: tokenTTL(cfg),
		progressOut: progressOut}
	defer sess.api.close()
	defer sess.api.stopOnCancel(ctx)()
	var err error
	if sess.admin, err = auth.Mint(cfg.Secret, "hammer-"+sess.id+"-admin", auth.RoleAdmin, sess.ttl); err != nil {
		return nil, fmt.Errorf("mint admin token: %w", err)
	}
	others := otherWebhooks(ctx, sess)
	r, err := runScenario(ctx, sess)
	if r != nil {
		r.OtherWebhooks = others
	}
	return r, err
}

// runScenario runs the session's scenario.
func runScenario(ctx context.Context, sess *session) (*report, error) {
	switch sess.cfg.Scenario {
	case scenarioBestAvailable:
		return hammerBest(ctx, sess)
	case scenarioSeatMap:
		return hammerSeatMap(ctx, sess)
	case scenarioOnSale:
		return hammerOnSale(ctx, sess)
	case scenarioOnSales:
		return hammerOnSales(ctx, sess)
	case scenarioPlatform:
		return hammerPlatform(ctx, sess)
	}
	return hammerBookings(ctx, sess)
}

// otherWebhooks counts the webhook endpoints registered on the service
// before the run: it delivers every change to them, and works through
// any backlog a dead one left, on the machine the run measures. Nil when
// there are none or they cannot be listed (a service without webhooks).
func otherWebhooks(ctx context.Context, sess *session) *otherWebhooksReport {
	n, more, err := sess.api.enabledWebhooks(ctx, sess.cfg.Targets[0], sess.admin)
	if err != nil || n == 0 {
		return nil
	}
	return &otherWebhooksReport{Enabled: n, More: more}
}

// hammerBookings runs hot-seat, fresh-seats and contended: set the seats
// up, fire every request, read the seat maps back and judge.
func hammerBookings(ctx context.Context, sess *session) (*report, error) {
	cfg, a := sess.cfg, sess.api
	var watch *watcher
	if cfg.Watch {
		watch = newWatcher(cfg.WatchURL, cfg.Streams, cfg.Form, "reserved")
		defer watch.stop()
	}
	hooks, err := startWebhooks(ctx, sess)
	if err != nil {
		return nil, err
	}
	defer hooks.close()
	w, err := setUp(ctx, sess, watch)
	if err != nil {
		return nil, err
	}
	users, err := mintUsers(cfg.Secret, sess.id, cfg.Users, sess.ttl)
	if err != nil {
		return nil, err
	}
	if cfg.Scenario == scenarioHotSeat {
		if err := bookBeforehand(ctx, sess, w.fixed[0]); err != nil {
			return nil, err
		}
	}

	onTick, finish := progress(sess.progressOut, cfg)
	hooks.loadStarted(ctx)
	res := fire(ctx, a, cfg, w, users, onTick)
	finish()
	if res.err != nil {
		return nil, res.err
	}
	hooks.commitBookings(res.outcomes)

	var views []seatMapView
	var acked *ackReport
	// An interrupted run fails anyway; reading the seat maps back would
	// only delay the exit the user asked for.
	if cfg.Verify && ctx.Err() == nil {
		// Right after a failover the service may still answer 503: the
		// reads wait for it together.
		p := newPatience()
		views = readBack(ctx, a, cfg, w.scheduleIDs(), bookedSeats(res.outcomes), p)
		acked = checkAcknowledged(ctx, a, cfg.Targets[0], users, res.outcomes, cfg.C, p)
	}
	r := summarize(cfg, sess.id, w, res, views)
	r.Acknowledged = acked
	if watch != nil {
		r.Watch = watch.finish(res.outcomes)
		r.Watch.Streams = cfg.Streams * len(w.scheduleIDs())
	}
	r.Webhooks = hooks.finish(ctx)
	r.Verdict = judge(r, views)
	return r, nil
}

// setUp makes the seats the scenario hammers (with -watch, following each
// new schedule's stream before any booking) and, with -verify, checks them
// on the seat map: free for contended and fresh-seats (the verdict "one 200
// per seat" would be meaningless otherwise), existing for hot-seat.
func setUp(ctx context.Context, sess *session, watch *watcher) (*workload, error) {
	cfg, a := sess.cfg, sess.api
	create := func(ctx context.Context, seats int) (id int64, err error) {
		// fresh-seats makes schedules as the run goes, through a
		// failover too: the run goes on, and its answers are judged.
		err = newPatience().do(ctx, func() (err error) {
			id, err = a.createSchedule(ctx, cfg.Targets[0], sess.admin, "hammer "+sess.id, seats)
			return err
		})
		if err == nil && watch != nil {
			err = watch.follow(ctx, id)
		}
		return id, err
	}
	w := &workload{}
	switch {
	case cfg.Scenario == scenarioFreshSeats:
		w.newSchedule = func(ctx context.Context) (int64, error) { return create(ctx, maxSeats) }
		if cfg.N > 0 {
			if err := w.ensure(ctx, cfg.N); err != nil {
				return nil, err
			}
		}
		return w, nil // fresh schedules: free by construction
	case cfg.ScheduleID > 0:
		w.fixed = []seatRef{{Schedule: cfg.ScheduleID, Seat: cfg.Seat}}
	default:
		id, err := create(ctx, cfg.Seats)
		if err != nil {
			return nil, err
		}
		for s := 1; s <= cfg.Seats; s++ {
			w.fixed = append(w.fixed, seatRef{Schedule: id, Seat: s})
		}
	}
	if !cfg.Verify {
		return w, nil
	}
	var statuses map[int]string
	err := newPatience().do(ctx, func() (err error) {
		statuses, err = a.seatMap(ctx, cfg.Targets[0], w.fixed[0].Schedule)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("before the run: %w", err)
	}
	for _, s := range w.fixed {
		switch st, ok := statuses[s.Seat]; {
		case !ok:
			return nil, fmt.Errorf("before the run: schedule %d has no seat %d", s.Schedule, s.Seat)
		case st != "available" && cfg.Scenario == scenarioContended:
			return nil, fmt.Errorf("before the run: seat %d of schedule %d is %q, want available (hammer a fresh seat)", s.Seat, s.Schedule, st)
		}
	}
	return w, nil
}

// bookBeforehand books the hot seat before the clock starts, as a user of
// its own; a seat booked already (an existing -seat) is as good.
func bookBeforehand(ctx context.Context, sess *session, seat seatRef) error {
	id := userID(sess.id, -1)
	token, err := auth.Mint(sess.cfg.Secret, id, "", sess.ttl)
	if err != nil {
		return fmt.Errorf("mint token: %w", err)
	}
	o := sess.api.reserve(ctx, sess.cfg.Targets[0], user{id: id, token: token}, seat)
	switch {
	case o.Status == http.StatusOK && !o.BadSuccess, o.key() == keySeatTaken:
		return nil
	case o.Err != "":
		return fmt.Errorf("book the hot seat beforehand: %s", o.Err)
	default:
		return errors.New("book the hot seat beforehand: " + o.key())
	}
}

// readBack fetches the seat maps through every target, so an instance that
// disagrees with the others is caught too, each until it shows every seat
// booked (answered 200) reserved (readSettled); p retries those refused
// 503.
func readBack(ctx context.Context, a *api, cfg config, schedules []int64, booked map[int64][]int, p *patience) []seatMapView {
	settled := time.Now().Add(mapSettleTime)
	var views []seatMapView
	for _, t := range cfg.Targets {
		for _, id := range schedules {
			statuses, err := a.readSettled(ctx, t, id, settled, p, func(statuses map[int]string) bool {
				return showsAll(statuses, booked[id], "reserved")
			})
			views = append(views, seatMapView{Target: t, Schedule: id, Statuses: statuses, Err: err})
		}
	}
	return views
}

// bookedSeats is the seats of each schedule that outcomes booked.
func bookedSeats(outcomes []outcome) map[int64][]int {
	booked := map[int64][]int{}
	for _, o := range outcomes {
		if o.Status == http.StatusOK && !o.BadSuccess {
			booked[o.Seat.Schedule] = append(booked[o.Seat.Schedule], o.Seat.Seat)
		}
	}
	return booked
}

// mapSettleTime is how long a seat map may take to show the last
// changes: an instance shows another instance's change when its seat
// event arrives, tens of milliseconds after the commit (seconds while a
// Redis failover settles).
const mapSettleTime = 3 * time.Second

// readSettled reads schedule's seat map through target again until shows
// says it shows what the run was answered, a read fails, or deadline
// (mapSettleTime after the first read) passes: the last read is the one
// judged. p retries the reads refused 503.
func (a *api) readSettled(ctx context.Context, target string, schedule int64, deadline time.Time, p *patience,
	shows func(statuses map[int]string) bool) (statuses map[int]string, err error) {
	for {
		err = p.do(ctx, func() (err error) {
			statuses, err = a.seatMap(ctx, target, schedule)
			return err
		})
		if err != nil || shows(statuses) || !time.Now().Before(deadline) || !sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			return statuses, err
		}
	}
}

// showsAll reports whether statuses show every one of seats as status.
func showsAll(statuses map[int]string, seats []int, status string) bool {
	for _, seat := range seats {
		if statuses[seat] != status {
			return false
		}
	}
	return true
}
