package main

import (
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/reservation"
)

const testSecret = "hammer-test-secret-0123456789abcdef"

// fakeAPI implements the three endpoints the hammer uses, in memory, guarded
// by one mutex. Its knobs make it misbehave in the ways the verdict must
// catch.
type fakeAPI struct {
	verifier *auth.Verifier
	hold     time.Duration // how long a winning request holds the seat lock

	doubleBook        bool          // let two requests win each seat
	unavailableEvery  int           // every k-th reservation answers 503
	dropEvery         int           // every k-th reservation loses its connection
	noSeatMap         bool          // no GET /schedules/{id}/seats, like the plain baseline
	fullOnly          bool          // the seat map's full form, whatever the form asked
	noGzip            bool          // seat maps never compressed
	notModifiedAlways bool          // the seat map answers 304 even without If-None-Match, once anything changed
	holdTwice         bool          // best available: the first seat held is offered again, once
	scatter           bool          // best available: a hold of several seats takes one per row
	contendAll        bool          // best available: every request answers seats_contended
	onHold            func()        // called for each hold granted, with f.mu held
	stall             chan struct{} // reservations block until closed or cancelled
	arrived           chan struct{} // receives once per stalled reservation
	internalEvery     int           // every k-th reservation answers 500 internal
	loseEvery         int           // every k-th booking is answered 200 but not kept under its id (the seat stays reserved)
	refuseReads       int           // the next k reads of a seat map or reservation answer 503 unavailable
	refuseSetup       int           // the next k schedules made or seat streams opened answer 503 unavailable
	mapLag            time.Duration // the seat map shows a booking this long after it was made, as an instance shows another's when its seat event arrives
	// outageAfter and outageFor make a database failover: from outageAfter
	// after the first reservation, for outageFor, everything that reads or
	// writes the database (schedules, reservations, seat maps and their
	// streams) answers 503 unavailable with Retry-After.
	outageAfter, outageFor time.Duration

	mu        sync.Mutex
	nextID    int64
	schedules map[int64]*fakeSchedule
	calls     int
	seatMaps  int // seat-map requests answered
	users     map[string]bool
	// watchers are the open streams' channels by schedule; events numbers
	// the seat events sent.
	watchers map[int64][]chan string
	events   int
	// firstCall is when the first reservation came (outageAfter counts
	// from it); bookings are the reservations by id, booked counts them.
	firstCall time.Time
	bookings  map[string]fakeReservation
	booked    int
}

// fakeReservation is a booking as GET /reservations/{id} reads it.
type fakeReservation struct {
	schedule int64
	seat     int
	user     string
}

type fakeSchedule struct {
	seats    int
	locked   map[int]bool
	reserved map[int]int
	rows     []venueRow // every row, section by section
	// sectioned: rows are of named sections (their Section).
	sectioned bool
	held      map[int]int // holds per seat
	holds     int
	// offered is set once holdTwice has offered a held seat again.
	offered bool
	// version counts the changes of the seat map.
	version int64
	// bookedAt and heldAt are when each seat was last reserved and held;
	// the seat map shows none reserved or held after hideAfter (when set:
	// fakeAPI.mapLag).
	bookedAt, heldAt map[int]time.Time
	hideAfter        time.Time
}

func newFakeAPI(tb testing.TB) *fakeAPI {
	tb.Helper()
	v, err := auth.NewVerifier([]byte(testSecret))
	if err != nil {
		tb.Fatal(err)
	}
	return &fakeAPI{verifier: v, hold: time.Millisecond, schedules: map[int64]*fakeSchedule{}, users: map[string]bool{}}
}

// serve starts n servers sharing f, like stateless instances sharing one
// database, and returns their URLs and per-server request counters.
func (f *fakeAPI) serve(tb testing.TB, n int) ([]string, []*counter) {
	tb.Helper()
	var urls []string
	var counters []*counter
	h := f.handler()
	for range n {
		c := &counter{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.add()
			h.ServeHTTP(w, r)
		}))
		tb.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
		counters = append(counters, c)
	}
	return urls, counters
}

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) add() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (f *fakeAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /schedules", f.createSchedule)
	mux.HandleFunc("POST /reservations", f.reserve)
	mux.HandleFunc("GET /schedules/{id}/seats", f.seatMap)
	mux.HandleFunc("GET /schedules/{id}/seats/events", f.seatEvents)
	mux.HandleFunc("GET /schedules/{id}", f.getSchedule)
	mux.HandleFunc("POST /holds", f.createHold)
	mux.HandleFunc("GET /reservations/{id}", f.getReservation)
	return mux
}

// down answers 503 unavailable, as the service does while its database
// fails over, when the outage is on or refused (refuseReads or
// refuseSetup, when not nil) has refusals left, and reports whether it
// did.
func (f *fakeAPI) down(w http.ResponseWriter, refused *int) bool {
	f.mu.Lock()
	since := time.Since(f.firstCall)
	out := !f.firstCall.IsZero() && f.outageFor > 0 && since >= f.outageAfter && since < f.outageAfter+f.outageFor
	if !out && refused != nil && *refused > 0 {
		*refused--
		out = true
	}
	f.mu.Unlock()
	if out {
		w.Header().Set("Retry-After", "2")
		writeProblem(w, http.StatusServiceUnavailable, "unavailable")
	}
	return out
}

// getReservation reads one of the caller's reservations; anyone else's is
// 404, as an unknown id.
func (f *fakeAPI) getReservation(w http.ResponseWriter, r *http.Request) {
	p, ok := f.auth(w, r)
	if !ok || f.down(w, &f.refuseReads) {
		return
	}
	f.mu.Lock()
	b, found := f.bookings[r.PathValue("id")]
	f.mu.Unlock()
	if !found || b.user != p.UserID {
		writeProblem(w, http.StatusNotFound, "reservation_not_found")
		return
	}
	writeJSONBody(w, http.StatusOK, map[string]any{
		"id": r.PathValue("id"), "scheduleId": b.schedule, "seatId": b.seat, "userId": b.user,
		"createdAt": time.Now().UTC().Format(time.RFC3339Nano), "status": "active",
	})
}

func (f *fakeAPI) createSchedule(w http.ResponseWriter, r *http.Request) {
	p, ok := f.auth(w, r)
	if !ok {
		return
	}
	if !p.IsAdmin() {
		writeProblem(w, http.StatusForbidden, "forbidden")
		return
	}
	if f.down(w, &f.refuseSetup) {
		return
	}
	var in struct {
		scheduleIn
		Layout *layoutIn `json:"layout"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeProblem(w, http.StatusBadRequest, "malformed_json")
		return
	}
	var rows []venueRow
	sectioned := false
	if in.Layout != nil {
		if _, err := in.Layout.check(); err != nil && !strings.Contains(err.Error(), "rows alone") {
			writeProblem(w, http.StatusUnprocessableEntity, "validation_failed")
			return
		}
		add := func(section, sectionCategory string, row layoutRowIn) {
			category := cmp.Or(row.Category, sectionCategory, "standard")
			rows = append(rows, venueRow{Section: section, Label: row.Label, Seats: row.Seats, Category: category, FirstSeat: in.SeatCount + 1})
			in.SeatCount += row.Seats
		}
		for _, row := range in.Layout.Rows {
			add("", "", row)
		}
		for _, sec := range in.Layout.Sections {
			sectioned = true
			for _, row := range sec.Rows {
				add(sec.Name, sec.Category, row)
			}
		}
	} else {
		rows = []venueRow{{Label: "A", Seats: in.SeatCount, Category: "standard", FirstSeat: 1}}
	}
	if _, err := time.Parse(time.RFC3339, in.StartsAt); err != nil || in.Title == "" || in.SeatCount < 1 || in.SeatCount > reservation.MaxSeatCount {
		writeProblem(w, http.StatusUnprocessableEntity, "validation_failed")
		return
	}
	f.mu.Lock()
	f.nextID++
	id := f.nextID
	s := &fakeSchedule{seats: in.SeatCount, locked: map[int]bool{}, reserved: map[int]int{}, rows: rows, sectioned: sectioned, held: map[int]int{}}
	f.schedules[id] = s
	f.mu.Unlock()
	writeJSONBody(w, http.StatusCreated, s.describe(id, in.Title, in.StartsAt))
}

func (s *fakeSchedule) describe(id int64, title, startsAt string) map[string]any {
	layout := map[string]any{"rows": s.rows}
	if s.sectioned {
		var sections []venueSection
		for _, r := range s.rows {
			if len(sections) == 0 || sections[len(sections)-1].Name != r.Section {
				sections = append(sections, venueSection{Name: r.Section, Category: "standard"})
			}
			last := &sections[len(sections)-1]
			last.Rows = append(last.Rows, r)
		}
		layout = map[string]any{"sections": sections}
	}
	return map[string]any{"id": id, "title": title, "startsAt": startsAt, "seatCount": s.seats, "layout": layout}
}

func (f *fakeAPI) getSchedule(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.schedules[id]
	if s == nil {
		writeProblem(w, http.StatusNotFound, "schedule_not_found")
		return
	}
	writeJSONBody(w, http.StatusOK, s.describe(id, "fake", "2030-01-01T00:00:00Z"))
}

// createHold holds seats named or the first free ones, front row first: a
// chooser without contention, so every 201 takes one attempt.
func (f *fakeAPI) createHold(w http.ResponseWriter, r *http.Request) {
	p, ok := f.auth(w, r)
	if !ok {
		return
	}
	var in struct {
		ScheduleID int64  `json:"scheduleId"`
		SeatIDs    []int  `json:"seatIds"`
		Quantity   int    `json:"quantity"`
		Category   string `json:"category"`
		Section    string `json:"section"`
		Adjacent   *bool  `json:"adjacent"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeProblem(w, http.StatusBadRequest, "malformed_json")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.schedules[in.ScheduleID]
	if s == nil {
		writeProblem(w, http.StatusNotFound, "schedule_not_found")
		return
	}
	free := func(seat int) bool { return s.held[seat] == 0 && s.reserved[seat] == 0 }
	seats := in.SeatIDs
	if seats == nil && f.contendAll {
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusConflict, "seats_contended")
		return
	}
	if seats == nil {
		seats = s.choose(in.Quantity, in.Category, in.Section, in.Adjacent == nil || *in.Adjacent, f.scatter, free)
		if f.holdTwice && !s.offered && len(seats) > 0 && s.holds > 0 {
			// The bug under test: the first seat ever held is offered
			// again, as if free.
			seats[0], s.offered = s.rows[0].FirstSeat, true
			slices.Sort(seats)
			seats = slices.Compact(seats)
		}
		if seats == nil {
			available := 0
			for seat := 1; seat <= s.seats; seat++ {
				if free(seat) {
					available++
				}
			}
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(map[string]any{"status": 409, "code": "not_enough_seats", "available": available})
			return
		}
		w.Header().Set(holdAttemptsHeader, "1")
	} else {
		for _, seat := range seats {
			if seat < 1 || seat > s.seats || !free(seat) {
				writeProblem(w, http.StatusConflict, "seats_unavailable")
				return
			}
		}
	}
	if s.heldAt == nil {
		s.heldAt = map[int]time.Time{}
	}
	for _, seat := range seats {
		s.held[seat]++
		s.heldAt[seat] = time.Now()
		f.publish(in.ScheduleID, seat, "held")
	}
	s.holds++
	s.version++
	if f.onHold != nil {
		f.onHold()
	}
	writeJSONBody(w, http.StatusCreated, map[string]any{
		"id": fmt.Sprintf("00000000-0000-4000-9000-%012d", s.holds), "scheduleId": in.ScheduleID, "seatIds": seats,
		"userId": p.UserID, "status": "active",
	})
}

// choose is the fake's best available: the first quantity free seats of
// category (and section), consecutive in a row when adjacent; with
// scatter, a hold of several seats takes the first free seat of as many
// rows.
func (s *fakeSchedule) choose(quantity int, category, section string, adjacent, scatter bool, free func(int) bool) []int {
	var seats []int
	if scatter && quantity > 1 {
		for _, r := range s.rows {
			for seat := r.FirstSeat; seat < r.FirstSeat+r.Seats; seat++ {
				if free(seat) {
					seats = append(seats, seat)
					break
				}
			}
			if len(seats) == quantity {
				return seats
			}
		}
		seats = nil
	}
	for _, r := range s.rows {
		if category != "" && r.Category != category || section != "" && r.Section != section {
			continue
		}
		if !adjacent {
			for seat := r.FirstSeat; seat < r.FirstSeat+r.Seats && len(seats) < quantity; seat++ {
				if free(seat) {
					seats = append(seats, seat)
				}
			}
			if len(seats) == quantity {
				return seats
			}
			continue
		}
		run := 0
		for seat := r.FirstSeat; seat < r.FirstSeat+r.Seats; seat++ {
			if run = run + 1; !free(seat) {
				run = 0
			}
			if run == quantity {
				out := make([]int, quantity)
				for k := range out {
					out[k] = seat - quantity + 1 + k
				}
				return out
			}
		}
	}
	return nil
}

func (f *fakeAPI) reserve(w http.ResponseWriter, r *http.Request) {
	p, ok := f.auth(w, r)
	if !ok {
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		writeProblem(w, http.StatusUnsupportedMediaType, "unsupported_media_type")
		return
	}
	var in struct {
		ScheduleID int64 `json:"scheduleId"`
		SeatID     int   `json:"seatId"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeProblem(w, http.StatusBadRequest, "malformed_json")
		return
	}

	f.mu.Lock()
	f.calls++
	call := f.calls
	f.users[p.UserID] = true
	if f.firstCall.IsZero() {
		f.firstCall = time.Now()
	}
	f.mu.Unlock()
	if f.down(w, nil) {
		return
	}
	switch {
	case f.internalEvery > 0 && call%f.internalEvery == 0:
		writeProblem(w, http.StatusInternalServerError, "internal")
		return
	case f.stall != nil:
		f.arrived <- struct{}{}
		select {
		case <-f.stall:
		case <-r.Context().Done():
			return
		}
	case f.dropEvery > 0 && call%f.dropEvery == 0:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	case f.unavailableEvery > 0 && call%f.unavailableEvery == 0:
		w.Header().Set("Retry-After", "2")
		writeProblem(w, http.StatusServiceUnavailable, "unavailable")
		return
	}

	f.mu.Lock()
	s := f.schedules[in.ScheduleID]
	switch {
	case s == nil:
		f.mu.Unlock()
		writeProblem(w, http.StatusNotFound, "schedule_not_found")
		return
	case in.SeatID < 1 || in.SeatID > s.seats:
		f.mu.Unlock()
		writeProblem(w, http.StatusNotFound, "seat_not_found")
		return
	case f.doubleBook:
		// The bug under test: no lock, and the "already reserved" check
		// lets a second booking through.
		if s.reserved[in.SeatID] >= 2 {
			f.mu.Unlock()
			writeProblem(w, http.StatusConflict, "seat_taken")
			return
		}
	case s.reserved[in.SeatID] > 0:
		f.mu.Unlock()
		writeProblem(w, http.StatusConflict, "seat_taken")
		return
	case s.locked[in.SeatID]:
		f.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusConflict, "seat_locked")
		return
	default:
		s.locked[in.SeatID] = true
		f.mu.Unlock()
		time.Sleep(f.hold)
		f.mu.Lock()
		s.locked[in.SeatID] = false
	}
	s.reserved[in.SeatID]++
	if s.bookedAt == nil {
		s.bookedAt = map[int]time.Time{}
	}
	s.bookedAt[in.SeatID] = time.Now()
	s.version++
	f.publish(in.ScheduleID, in.SeatID, "reserved")
	f.booked++
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", f.booked)
	if f.loseEvery == 0 || f.booked%f.loseEvery != 0 {
		if f.bookings == nil {
			f.bookings = map[string]fakeReservation{}
		}
		f.bookings[id] = fakeReservation{schedule: in.ScheduleID, seat: in.SeatID, user: p.UserID}
	}
	f.mu.Unlock()
	writeJSONBody(w, http.StatusOK, map[string]any{
		"id": id, "scheduleId": in.ScheduleID, "seatId": in.SeatID,
		"userId": p.UserID, "createdAt": time.Now().UTC().Format(time.RFC3339Nano),
	})
}

// seatMap answers the full form, or the compact one for ?form=compact
// (unless fullOnly), with an ETag of the schedule's version (304 for
// If-None-Match with it), gzip-compressed for Accept-Encoding: gzip
// (unless noGzip).
func (f *fakeAPI) seatMap(w http.ResponseWriter, r *http.Request) {
	if f.noSeatMap {
		http.NotFound(w, r)
		return
	}
	if f.down(w, &f.refuseReads) {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeProblem(w, http.StatusNotFound, "schedule_not_found")
		return
	}
	f.mu.Lock()
	s := f.schedules[id]
	if s == nil {
		f.mu.Unlock()
		writeProblem(w, http.StatusNotFound, "schedule_not_found")
		return
	}
	compact := r.URL.Query().Get("form") == formCompact && !f.fullOnly
	etag := fmt.Sprintf(`"f%d"`, s.version)
	if compact {
		etag = fmt.Sprintf(`"c%d"`, s.version)
	}
	f.seatMaps++
	if inm := r.Header.Get("If-None-Match"); inm == etag || f.notModifiedAlways && s.version > 0 {
		f.mu.Unlock()
		w.Header().Set("ETag", etag)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	var body []byte
	if f.mapLag > 0 {
		s.hideAfter = time.Now().Add(-f.mapLag)
	}
	if compact {
		body = s.compactJSON(id)
	} else {
		body = s.fullJSON(id)
	}
	s.hideAfter = time.Time{}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("ETag", etag)
	if !f.noGzip && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = zw.Write(body)
		_ = zw.Close()
		return
	}
	_, _ = w.Write(body)
}

// status is the seat's status on the seat map.
func (s *fakeSchedule) status(seat int) string {
	switch {
	case s.reserved[seat] > 0 && (s.hideAfter.IsZero() || !s.bookedAt[seat].After(s.hideAfter)):
		return "reserved"
	case s.held[seat] > 0 && (s.hideAfter.IsZero() || !s.heldAt[seat].After(s.hideAfter)):
		return "held"
	}
	return "available"
}

// fullJSON is the seat map's full form: one object a seat.
func (s *fakeSchedule) fullJSON(id int64) []byte {
	type seat struct {
		SeatID int    `json:"seatId"`
		Status string `json:"status"`
	}
	seats := make([]seat, 0, s.seats)
	for i := 1; i <= s.seats; i++ {
		seats = append(seats, seat{i, s.status(i)})
	}
	body, _ := json.Marshal(map[string]any{"scheduleId": id, "seats": seats})
	return append(body, '\n')
}

// compactJSON is the seat map's compact form: a character a seat, row by
// row, section by section.
func (s *fakeSchedule) compactJSON(id int64) []byte {
	var sections []compactSection
	for _, r := range s.rows {
		if len(sections) == 0 || sections[len(sections)-1].Name != r.Section {
			sections = append(sections, compactSection{Name: r.Section})
		}
		status := make([]byte, r.Seats)
		for i := range status {
			status[i] = s.status(r.FirstSeat + i)[0]
		}
		last := &sections[len(sections)-1]
		last.Rows = append(last.Rows, compactRow{Label: r.Label, FirstSeatID: r.FirstSeat, Category: r.Category, Status: string(status)})
	}
	body, _ := json.Marshal(map[string]any{"scheduleId": id, "version": s.version, "sections": sections})
	return append(body, '\n')
}

// seatEvents is the live seat map: a snapshot (of the form asked, as the
// seat map's), then a seat event per change, until the client goes.
func (f *fakeAPI) seatEvents(w http.ResponseWriter, r *http.Request) {
	if f.down(w, &f.refuseSetup) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	s := f.schedules[id]
	if s == nil {
		f.mu.Unlock()
		writeProblem(w, http.StatusNotFound, "schedule_not_found")
		return
	}
	snapshot := s.fullJSON(id)
	if r.URL.Query().Get("form") == formCompact && !f.fullOnly {
		snapshot = s.compactJSON(id)
	}
	changes := make(chan string, 1<<16)
	if f.watchers == nil {
		f.watchers = map[int64][]chan string{}
	}
	f.watchers[id] = append(f.watchers[id], changes)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.watchers[id] = slices.DeleteFunc(f.watchers[id], func(c chan string) bool { return c == changes })
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "retry: 1000\n\nid: 0-0\nevent: snapshot\ndata: %s\n", snapshot)
	w.(http.Flusher).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case event := <-changes:
			_, _ = fmt.Fprint(w, event)
			w.(http.Flusher).Flush()
		}
	}
}

// publish sends seat's change to status to the schedule's streams; f.mu
// is held.
func (f *fakeAPI) publish(schedule int64, seat int, status string) {
	if len(f.watchers[schedule]) == 0 {
		return
	}
	f.events++
	event := fmt.Sprintf("id: %d-0\nevent: seat\ndata: {\"seatId\":%d,\"status\":%q}\n\n", f.events, seat, status)
	for _, c := range f.watchers[schedule] {
		select {
		case c <- event:
		default: // a stream that far behind loses the change, as a test would see
		}
	}
}

func (f *fakeAPI) auth(w http.ResponseWriter, r *http.Request) (auth.Principal, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		writeProblem(w, http.StatusUnauthorized, "unauthorized")
		return auth.Principal{}, false
	}
	p, err := f.verifier.Verify(token)
	if err != nil {
		writeProblem(w, http.StatusUnauthorized, "unauthorized")
		return auth.Principal{}, false
	}
	return p, true
}

// distinctUsers is how many different token subjects reserved.
func (f *fakeAPI) distinctUsers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.users)
}

// addSchedule creates a schedule directly, bypassing HTTP.
func (f *fakeAPI) addSchedule(seats int, reserved ...int) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	s := &fakeSchedule{seats: seats, locked: map[int]bool{}, reserved: map[int]int{}, held: map[int]int{},
		rows: []venueRow{{Label: "A", Seats: seats, Category: "standard", FirstSeat: 1}}}
	for _, r := range reserved {
		s.reserved[r] = 1
	}
	f.schedules[f.nextID] = s
	return f.nextID
}

func writeProblem(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": code, "code": code,
	})
}

func writeJSONBody(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
