package main

// -scenario best-available: a sale of a venue to buyers who ask for a
// number of seats and let the service choose them.
//
//  1. Two fresh schedules of the same layout are made: -rows rows of
//     -row-seats seats; with -sections, that many sections of such rows;
//     or the layout of the file -layout names.
//  2. The best-available phase: -c connections send POST /holds
//     {quantity, category?, adjacent?}, request i for a quantity drawn
//     from -quantity by a generator seeded with -seed and i, as user
//     userOf(i), until the venue is sold out for the range: a request of
//     the range's least quantity is refused not_enough_seats and the seat
//     map then shows no room for that quantity (no run of that many
//     available seats in a row; with -adjacent=false, fewer available
//     seats than that). -duration bounds the phase.
//  3. Its seat map and layout are read back and checked (verify.go).
//  4. The explicit phase: the same connections, as users of its own, hold
//     the second venue with POST /holds {seatIds}: every row cut into consecutive
//     blocks of quantities drawn from the same range, the blocks shuffled,
//     so no two requests share a seat. Its holds/s is the yardstick of
//     the best-available holds/s.
//  5. Its seat map is read back and checked the same way.
//
// With -database-url, the report gives the rows
// PostgreSQL read in each phase (the delta of tup_returned + tup_fetched
// of the service's database in pg_stat_database, background work
// included) per hold made.
//
// The best-available venue's seat map is read in both forms with
// Accept-Encoding: gzip before the first phase (all seats free) and at
// the end (sold), and the report gives the bodies' sizes on the wire.
//
// With -watch (or -streams), the best-available venue's live seat map is
// followed (in the -form asked) through its phase, and each seat of each
// 201 is matched with its "held" event.

import (
	"cmp"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Why a phase ended.
const (
	stopSoldOut     = "sold out"
	stopAllSent     = "every block sent"
	stopTimeLimit   = "time limit"
	stopMaxRequests = "request limit"
	stopInterrupted = "interrupted"
)

// quantityOf is the quantity request i asks for: drawn from the range by a
// generator of Seed and i, so that a run asks for the same quantities in
// the same order whichever worker takes which request.
func (b bestConfig) quantityOf(i int) int {
	span := uint64(b.MaxQuantity - b.MinQuantity + 1)
	return b.MinQuantity + int(splitmix64(splitmix64(b.Seed)+uint64(i))%span)
}

// splitmix64 is SplitMix64's output function: a good 64-bit mix of x.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// explicitBlocks cuts every row of v (of every section) into consecutive blocks of quantities
// drawn from the range (a row's last block takes the seats that are left)
// and shuffles them: disjoint holds that cover the venue.
func (b bestConfig) explicitBlocks(v venue) [][]int {
	rng := rand.New(rand.NewPCG(b.Seed, 0x5ea7))
	var blocks [][]int
	for _, r := range v.rows() {
		for n := 0; n < r.Seats; {
			q := min(b.MinQuantity+rng.IntN(b.MaxQuantity-b.MinQuantity+1), r.Seats-n)
			block := make([]int, q)
			for k := range block {
				block[k] = r.FirstSeat + n + k
			}
			blocks = append(blocks, block)
			n += q
		}
	}
	rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	return blocks
}

// phaseRun is what one timed phase of holds produced.
type phaseRun struct {
	venue    venue
	outcomes []holdOutcome // as the workers handed them in
	all      *hdrhistogram.Histogram
	held     *hdrhistogram.Histogram // the 201s
	wall     time.Duration
	// selling is the time from the start to the last 201's answer.
	selling   time.Duration
	stoppedBy string
	probe     soldOutProbe
}

// soldOutProbe is how the best-available phase decided that its venue
// was sold out: the seat-map reads after a refusal of the least quantity
// (Checks), those that found room still (RoomSeen), and the errors of
// those that failed.
type soldOutProbe struct {
	Checks   int      `json:"checks"`
	RoomSeen int      `json:"roomSeen"`
	Errors   []string `json:"errors,omitempty"`
}

// phase is what distinguishes the two phases: the request i makes (false:
// the phase has no more) and, after each answer, whether the phase ends
// (a reason, or "").
type phase struct {
	request func(ctx context.Context, target string, u user, i int) (holdOutcome, bool)
	ended   func(o holdOutcome) string
	// exhausted is why the phase ends when request has no more.
	exhausted string
	// probe, if not nil, is read when the phase has ended.
	probe *soldOutProbe
}

// runPhase sends p's requests on v from cfg.C workers until p ends, the
// time limit (cfg.Duration) or the request limit is reached, or ctx is
// cancelled. The progress bar, if any, shows the seats held of the venue.
func runPhase(ctx context.Context, sess *session, users []user, v venue, p phase, desc string) phaseRun {
	a, cfg := sess.api, sess.cfg
	var (
		mu      sync.Mutex
		res     = phaseRun{venue: v, all: newLatencyHistogram(), held: newLatencyHistogram()}
		seats   atomic.Int64
		stopped = func(reason string) bool {
			mu.Lock()
			defer mu.Unlock()
			if res.stoppedBy == "" {
				res.stoppedBy = reason
			}
			return false
		}
	)
	onTick, finish := progressBar(sess.progressOut, int64(v.SeatCount), desc, func(int64, time.Duration) int64 { return seats.Load() })
	_, res.wall = drive(ctx, a, cfg.Targets, cfg.C, onTick, func() (stepFunc, func()) {
		all, held := newLatencyHistogram(), newLatencyHistogram()
		var mine []holdOutcome
		var selling time.Duration
		step := func(_ context.Context, i int, elapsed time.Duration) bool {
			switch {
			case elapsed >= cfg.Duration:
				return stopped(stopTimeLimit)
			case i >= maxRequests:
				return stopped(stopMaxRequests)
			}
			o, ok := p.request(ctx, cfg.Targets[i%len(cfg.Targets)], users[userOf(i, len(users))], i)
			if !ok {
				return stopped(p.exhausted)
			}
			recordLatency(all, o.Latency)
			if o.granted() {
				recordLatency(held, o.Latency)
				seats.Add(int64(len(o.Seats)))
				selling = max(selling, elapsed+o.Latency)
			}
			mine = append(mine, o)
			if o.Canceled {
				return stopped(stopInterrupted)
			}
			if reason := p.ended(o); reason != "" {
				return stopped(reason)
			}
			return true
		}
		finish := func() {
			mu.Lock()
			defer mu.Unlock()
			res.all.Merge(all)
			res.held.Merge(held)
			res.outcomes = append(res.outcomes, mine...)
			res.selling = max(res.selling, selling)
		}
		return step, finish
	})
	finish()
	if ctx.Err() != nil {
		res.stoppedBy = stopInterrupted
	}
	if p.probe != nil {
		res.probe = *p.probe
	}
	return res
}

// bestPhase asks for the best available seats until the venue is sold out
// for the range: see soldOut.
func bestPhase(ctx context.Context, a *api, cfg config, v venue) phase {
	b := cfg.Best
	var checking sync.Mutex // one check at a time; it guards probe
	probe := &soldOutProbe{}
	return phase{
		probe: probe,
		request: func(ctx context.Context, target string, u user, i int) (holdOutcome, bool) {
			return a.holdBest(ctx, target, u, v.ID, b.quantityOf(i), b.Category, b.Adjacent, nil), true
		},
		ended: func(o holdOutcome) string {
			if o.Code != codeNotEnough || o.Quantity != b.MinQuantity || !checking.TryLock() {
				return ""
			}
			defer checking.Unlock()
			statuses, err := a.seatMap(ctx, cfg.Targets[0], v.ID)
			probe.Checks++
			switch {
			case err != nil:
				if len(probe.Errors) < maxErrorSamples {
					probe.Errors = append(probe.Errors, err.Error())
				}
				return ""
			case room(v, statuses, b.MinQuantity, b.Category, b.Adjacent):
				probe.RoomSeen++
				return ""
			}
			return stopSoldOut
		},
	}
}

// grantedHolds counts a phase's 201s.
func grantedHolds(outcomes []holdOutcome) int {
	n := 0
	for _, o := range outcomes {
		if o.granted() {
			n++
		}
	}
	return n
}

// explicitPhase holds the blocks, one request each, then ends.
func explicitPhase(a *api, v venue, blocks [][]int) phase {
	return phase{
		request: func(ctx context.Context, target string, u user, i int) (holdOutcome, bool) {
			if i >= len(blocks) {
				return holdOutcome{}, false
			}
			return a.holdSeats(ctx, target, u, v.ID, blocks[i]), true
		},
		ended:     func(holdOutcome) string { return "" },
		exhausted: stopAllSent,
	}
}

// room reports whether statuses leave a hold of quantity seats of
// category ("" for any) possible: that many available seats in a row (of
// any section), one after another when adjacent.
func room(v venue, statuses map[int]string, quantity int, category string, adjacent bool) bool {
	free := 0
	for _, r := range v.rows() {
		if category != "" && r.Category != category {
			continue
		}
		run := 0
		for s := r.FirstSeat; s < r.FirstSeat+r.Seats; s++ {
			if statuses[s] != "available" {
				run = 0
				continue
			}
			run++
			free++
			if adjacent && run >= quantity {
				return true
			}
		}
	}
	return !adjacent && free >= quantity
}

// hammerBest runs -scenario best-available end to end: both venues made,
// both phases run, each venue's seat map and layout read back and
// checked, the targets weighed and the verdict given. An error means the
// run could not be carried out at all.
func hammerBest(ctx context.Context, sess *session) (*report, error) {
	cfg, a, runID := sess.cfg, sess.api, sess.id
	var err error
	b := cfg.Best
	var venues [2]venue
	for k, name := range []string{"best available", "explicit seats"} {
		if venues[k], err = a.createVenue(ctx, cfg.Targets[0], sess.admin, "hammer "+runID+" "+name, b.layout()); err != nil {
			return nil, err
		}
	}
	// Each phase has users of its own: a user keeps its holds to the end
	// of the run, and may have MAX_HOLDS_PER_USER (20 by default) of them.
	users, err := mintUsers(cfg.Secret, runID, cfg.Users, sess.ttl)
	if err != nil {
		return nil, err
	}
	explicitUsers, err := mintUsers(cfg.Secret, runID+"-x", cfg.Users, sess.ttl)
	if err != nil {
		return nil, err
	}

	// The seat map's bytes on the wire, empty now and sold at the end.
	wire := &wireReport{Start: a.seatMapWires(ctx, cfg.Targets[0], venues[0].ID)}
	var meters [2]*pgMeter
	if cfg.DatabaseURL != "" {
		stats, err := openPGStats(ctx, cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		defer stats.close()
		meters = [2]*pgMeter{{stats: stats}, {stats: stats}}
	}

	var watch *watcher
	if cfg.Watch {
		// The best-available venue's stream, each seat of a 201 matched
		// with its "held" event, as -watch matches bookings.
		watch = newWatcher(cfg.WatchURL, cfg.Streams, cfg.Form, "held")
		defer watch.stop()
		if err := watch.follow(ctx, venues[0].ID); err != nil {
			return nil, err
		}
	}

	var runs [2]phaseRun
	var checks [2]phaseCheck
	var watched *watchReport
	var pg [2]*pgRows
	var pgErr error
	meters[0].start(ctx)
	runs[0] = runPhase(ctx, sess, users, venues[0], bestPhase(ctx, a, cfg, venues[0]), "seats held, best available")
	pg[0], pgErr = meters[0].stop(ctx, grantedHolds(runs[0].outcomes))
	if watch != nil {
		watched = watch.finishHolds(venues[0].ID, runs[0].outcomes)
		watched.Streams = cfg.Streams
	}
	if ctx.Err() == nil {
		checks[0] = verifyPhase(ctx, a, cfg, runs[0], b.Adjacent, b.Category)
		blocks := b.explicitBlocks(venues[1])
		meters[1].start(ctx)
		runs[1] = runPhase(ctx, sess, explicitUsers, venues[1], explicitPhase(a, venues[1], blocks), "seats held, explicit seats")
		var err error
		pg[1], err = meters[1].stop(ctx, grantedHolds(runs[1].outcomes))
		pgErr = cmp.Or(pgErr, err)
	}
	if ctx.Err() == nil {
		checks[1] = verifyPhase(ctx, a, cfg, runs[1], false, "")
		wire.End = a.seatMapWires(ctx, cfg.Targets[0], venues[0].ID)
	}
	r := summarizeBest(cfg, runID, runs, checks)
	r.Best.SeatMapBytes = wire
	r.Best.Best.Postgres, r.Best.Explicit.Postgres = pg[0], pg[1]
	switch {
	case cfg.DatabaseURL == "":
		r.Best.PostgresNote = "rows read not measured: no -database-url given (make hammer: ARGS='... -database-url $$DATABASE_URL')"
	case pgErr != nil && ctx.Err() == nil:
		r.Best.PostgresNote = "rows read not measured: " + pgErr.Error()
	default:
		r.Best.PostgresDatabase = meters[0].stats.database
	}
	r.Watch = watched
	r.Verdict = judgeBest(r)
	return r, nil
}
