// Command pagecheck proves that the live seat-map page works against a
// running service, typically three instances behind HAProxy while they are
// restarted one by one (make rolling-restart, cmd/drill):
//
//	go run ./tools/pagecheck -url http://127.0.0.1:8080 [-admin-token T] [-user-token T] [-duration 10s] [-json]
//
// The tokens default to $ADMIN and $ALICE (make run and make cluster write
// them to DIR/tokens.env). It creates a schedule as the admin, opens URL/?schedule=N
// in headless Chromium (CHROMIUM, else /usr/bin/chromium) with the user's
// token pasted, books a distinct seat through the API every -interval for
// -duration (retrying transport errors, 5xx and the like with the same
// Idempotency-Key), books 2 seats together from the page, and then waits
// up to -settle for the page to show exactly the API's seat map. Meanwhile
// an instance that goes away ends the page's stream, and the browser must
// reconnect and catch up by Last-Event-ID.
//
// It prints one line (or a JSON object with -json) and exits 0 when the
// page agreed, 1 with the reason when anything failed, 2 on bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/reservation"
)

// seatsPerRow is the width of the venue; rows are added until every
// planned booking has a seat and one row is left whole for the page's
// "Book 2 together".
const seatsPerRow = 20

type config struct {
	baseURL               string
	adminToken, userToken string
	duration, interval    time.Duration
	settle                time.Duration
	jsonOut               bool
}

// result is what a run found; the JSON of -json.
type result struct {
	Pass     bool   `json:"pass"`
	Reason   string `json:"reason,omitempty"`
	URL      string `json:"url"`
	Schedule int64  `json:"schedule,omitempty"`
	Seats    int    `json:"seats,omitempty"`
	// Bookings answered 200 through the API, and the extra attempts they
	// took (by cause: an HTTP status or "transport").
	Bookings    int            `json:"bookings"`
	Retries     int            `json:"retries"`
	RetryCauses map[string]int `json:"retryCauses,omitempty"`
	// Replayed counts retries the service answered Idempotent-Replayed:
	// the earlier attempt had booked, its answer was lost.
	Replayed   int      `json:"replayed"`
	PageBooked []string `json:"pageBooked,omitempty"`
	// MapSeconds is the time from the page's own booking's answer until
	// the service's seat map, read through the address given, showed
	// every booking.
	MapSeconds float64 `json:"mapSeconds"`
	// AgreeSeconds is the time from the page's own booking's answer until
	// the page showed the API's seat map.
	AgreeSeconds float64      `json:"agreeSeconds"`
	Stream       *streamStats `json:"stream,omitempty"`
	Seconds      float64      `json:"seconds"`
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pagecheck:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Everything below has its own bound; this one is the backstop that
	// makes a hang impossible: Chromium's start, the page, the settle wait.
	ctx, cancel := context.WithTimeout(ctx, cfg.duration+cfg.settle+2*time.Minute)
	defer cancel()

	began := time.Now()
	res := &result{URL: cfg.baseURL}
	if err := check(ctx, cfg, res); err != nil {
		res.Reason = err.Error()
	} else {
		res.Pass = true
	}
	res.Seconds = math.Round(time.Since(began).Seconds()*10) / 10
	report(os.Stdout, cfg.jsonOut, res)
	if !res.Pass {
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("pagecheck", flag.ContinueOnError)
	var cfg config
	fs.StringVar(&cfg.baseURL, "url", "", "the service's base URL, e.g. http://127.0.0.1:8080 (required)")
	fs.StringVar(&cfg.adminToken, "admin-token", os.Getenv("ADMIN"), "an admin's bearer token, to create the schedule (default $ADMIN)")
	fs.StringVar(&cfg.userToken, "user-token", os.Getenv("ALICE"), "a user's bearer token, for the bookings and the page (default $ALICE)")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long to book seats through the API")
	fs.DurationVar(&cfg.interval, "interval", 150*time.Millisecond, "the pace of those bookings: one seat every interval")
	fs.DurationVar(&cfg.settle, "settle", 15*time.Second, "how long the page may take, once its own booking is answered, to show the API's seat map")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print the result as one JSON object")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.baseURL = strings.TrimRight(cfg.baseURL, "/")
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.baseURL == "":
		return cfg, errors.New("-url is required")
	case cfg.adminToken == "" || cfg.userToken == "":
		return cfg, errors.New("need -admin-token and -user-token (or ADMIN and ALICE in the environment; . DIR/tokens.env)")
	case cfg.duration <= 0 || cfg.interval <= 0 || cfg.settle <= 0:
		return cfg, errors.New("-duration, -interval and -settle must be positive")
	case rowsFor(cfg) > reservation.MaxRows:
		return cfg, fmt.Errorf("-duration %s at -interval %s needs more than the %d seats a schedule may have", cfg.duration, cfg.interval, reservation.MaxRows*seatsPerRow)
	}
	return cfg, nil
}

// rowsFor is the number of rows that seat every booking of the run, plus
// one row left free for the page's booking of 2 seats together.
func rowsFor(cfg config) int {
	bookings := int(cfg.duration/cfg.interval) + 1
	return (bookings+seatsPerRow-1)/seatsPerRow + 1
}

// check runs the whole check, filling res as it goes; an error is the
// reason the check failed.
func check(ctx context.Context, cfg config, res *result) error {
	// The browser first: without one, nothing is left behind.
	page, closeBrowser, err := startBrowser(ctx)
	if err != nil {
		return err
	}
	defer closeBrowser()

	svc := newAPI(cfg.baseURL)
	schedule, seats, err := svc.createSchedule(ctx, cfg.adminToken, rowsFor(cfg))
	if err != nil {
		return fmt.Errorf("create the schedule: %w", err)
	}
	res.Schedule, res.Seats = schedule, seats
	progress("schedule %d created (%d seats)", schedule, seats)

	if err := openPage(page, cfg.baseURL, schedule, seats, cfg.userToken); err != nil {
		return err
	}
	// Whatever happens next, report what the page's stream went through:
	// it tells a page that stopped reconnecting from a service that lost
	// events.
	defer func() {
		if stats, err := readStreamStats(page); err == nil {
			res.Stream = &stats
		}
	}()
	progress("page open, all %d seats available; booking one seat every %s for %s", seats, cfg.interval, cfg.duration)

	booked, err := bookSteadily(ctx, svc, cfg, schedule, seats-seatsPerRow)
	res.Bookings, res.Retries, res.RetryCauses, res.Replayed = len(booked), svc.retries, svc.retryCauses, svc.replayed
	if err != nil {
		return err
	}
	progress("%d seats booked through the API (%d retries); booking 2 together from the page", len(booked), svc.retries)

	labels, err := bookTogether(page)
	if err != nil {
		return err
	}
	res.PageBooked = labels
	answered := time.Now()
	want, err := settledSeatMap(ctx, svc, schedule, booked, labels, cfg.settle)
	if err != nil {
		return err
	}
	res.MapSeconds = math.Round(time.Since(answered).Seconds()*100) / 100

	agreed, err := waitForAgreement(page, want, cfg.settle)
	if err != nil {
		return err
	}
	res.AgreeSeconds = math.Round(agreed.Sub(answered).Seconds()*100) / 100
	return nil
}

// bookSteadily books seats 1, 2, ... (at most lastSeat) one at a time,
// one every cfg.interval for cfg.duration, and returns the seats booked.
// A booking that fails after its retries ends it.
func bookSteadily(ctx context.Context, svc *api, cfg config, schedule int64, lastSeat int) ([]int, error) {
	tick := time.NewTicker(cfg.interval)
	defer tick.Stop()
	end := time.Now().Add(cfg.duration)
	var booked []int
	for seat := 1; seat <= lastSeat && time.Now().Before(end); seat++ {
		if err := svc.reserve(ctx, cfg.userToken, schedule, seat); err != nil {
			return booked, fmt.Errorf("book seat %d through the API: %w", seat, err)
		}
		booked = append(booked, seat)
		select {
		case <-tick.C:
		case <-ctx.Done():
			return booked, fmt.Errorf("booking: %w", ctx.Err())
		}
	}
	return booked, nil
}

// settledSeatMap reads the seat map until checkSeatMap finds it right,
// for at most settle, and returns it; else the last thing wrong. Through
// a load balancer the read may reach an instance the page's booking did
// not, whose image shows it once the seat feed brings its events there.
func settledSeatMap(ctx context.Context, svc *api, schedule int64, booked []int, pageLabels []string, settle time.Duration) (map[int]seat, error) {
	deadline := time.Now().Add(settle)
	for {
		seatMap, err := svc.seatMap(ctx, schedule)
		if err != nil {
			return nil, fmt.Errorf("read the seat map: %w", err)
		}
		wrong := checkSeatMap(seatMap, booked, pageLabels)
		if wrong == nil {
			return seatMap, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w (still, %s after the page's booking was answered)", wrong, settle)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (then: %w)", wrong, ctx.Err())
		}
	}
}

// checkSeatMap checks the API's own word before the page is held to it:
// exactly the seats booked through the API and the page's two are
// reserved, the page's two side by side in one row, every other seat is
// available.
func checkSeatMap(seatMap map[int]seat, booked []int, pageLabels []string) error {
	reserved := map[int]bool{}
	for _, id := range booked {
		reserved[id] = true
	}
	byLabel := map[string]seat{}
	for _, s := range seatMap {
		byLabel[s.Label] = s
	}
	var together []seat
	for _, label := range pageLabels {
		s, ok := byLabel[label]
		if !ok {
			return fmt.Errorf("the page says it booked %s, a seat the seat map does not have", label)
		}
		together = append(together, s)
		reserved[s.ID] = true
	}
	if len(together) == 2 && (together[0].Row != together[1].Row || together[1].ID != together[0].ID+1) {
		return fmt.Errorf("the page booked %s and %s together: not side by side in one row", together[0].Label, together[1].Label)
	}
	for _, id := range slices.Sorted(maps.Keys(seatMap)) {
		want := "available"
		if reserved[id] {
			want = "reserved"
		}
		if s := seatMap[id]; s.Status != want {
			return fmt.Errorf("the service's seat map says seat %d (%s) is %s, want %s", id, s.Label, s.Status, want)
		}
	}
	return nil
}

// waitForAgreement polls the page until it shows exactly want, for at
// most settle, and returns when it did; else the seats still different.
func waitForAgreement(page context.Context, want map[int]seat, settle time.Duration) (time.Time, error) {
	deadline := time.Now().Add(settle)
	for {
		shown, err := pageStatuses(page)
		if err != nil {
			return time.Time{}, err
		}
		diff := differences(shown, want)
		if len(diff) == 0 {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("after %s the page still differs from the seat map on %d seats: %s",
				settle, len(diff), strings.Join(diff[:min(len(diff), 10)], "; "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// differences lists the seats the page shows otherwise than the seat map.
func differences(shown map[int]string, want map[int]seat) []string {
	var diff []string
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if got := shown[id]; got != want[id].Status {
			if got == "" {
				got = "missing"
			}
			diff = append(diff, fmt.Sprintf("%s page %s, API %s", want[id].Label, got, want[id].Status))
		}
	}
	for id := range shown {
		if _, ok := want[id]; !ok {
			diff = append(diff, fmt.Sprintf("seat %d on the page only", id))
		}
	}
	return diff
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pagecheck: "+format+"\n", args...)
}

// report writes res as one line for a person, or as JSON.
func report(w io.Writer, asJSON bool, res *result) {
	if asJSON {
		_ = json.NewEncoder(w).Encode(res)
		return
	}
	var b strings.Builder
	if res.Pass {
		b.WriteString("pagecheck: PASS: ")
	} else {
		b.WriteString("pagecheck: FAIL: " + res.Reason + "; ")
	}
	fmt.Fprintf(&b, "%d bookings through the API (%d retries", res.Bookings, res.Retries)
	if res.Retries > 0 {
		var causes []string
		for _, c := range slices.Sorted(maps.Keys(res.RetryCauses)) {
			causes = append(causes, c+" ×"+strconv.Itoa(res.RetryCauses[c]))
		}
		fmt.Fprintf(&b, ": %s; %d replayed", strings.Join(causes, ", "), res.Replayed)
	}
	b.WriteString(")")
	if len(res.PageBooked) > 0 {
		fmt.Fprintf(&b, ", %s booked together from the page", strings.Join(res.PageBooked, " and "))
	}
	if res.Pass {
		fmt.Fprintf(&b, ", the seat map showed them %.2f s after the page's booking and the page agreed %.2f s after", res.MapSeconds, res.AgreeSeconds)
	}
	if s := res.Stream; s != nil {
		state := s.Connection
		if s.ReadyState == 2 {
			state += ", closed for good"
		}
		fmt.Fprintf(&b, "; stream: %d reconnects, %d ended or failed, %d snapshots, state %s", max(s.Opens-1, 0), s.Errors, s.Snapshots, state)
	}
	if res.Schedule != 0 {
		fmt.Fprintf(&b, "; schedule %d", res.Schedule)
	}
	fmt.Fprintf(&b, "; %.1f s", res.Seconds)
	_, _ = fmt.Fprintln(w, b.String())
}

// newIdempotencyKey makes a key no other run or booking uses: a retry
// with it is answered as the first attempt, never booked twice.
func newIdempotencyKey() string { return "pagecheck-" + uuid.NewString() }
