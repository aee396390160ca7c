package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// maxBody caps what we read of any response: the full seat map of a
// venue of 100,000 seats is some 11 MB, the other bodies are tiny, and a
// misbehaving server must not make the hammer buffer without bound.
const maxBody = 64 << 20

// api is the one place that talks HTTP to the service: setup calls,
// reservations and seat-map reads all go through send. It uses fasthttp's
// client, which costs a fraction of net/http's per request: the hammer
// shares the machine with what it measures, and every cycle it spends is
// one the service under test does not get.
type api struct {
	client  *fasthttp.Client
	std     *http.Client // with -client nethttp, instead of client
	timeout time.Duration
	conns   *connSet
}

// The HTTP clients -client chooses from.
const (
	clientFast = "fasthttp"
	clientStd  = "nethttp"
)

// newAPI returns a client with up to one connection per worker and target,
// so the timed phase reuses connections instead of measuring TCP
// handshakes.
func newAPI(workers, targets int, timeout time.Duration, kind string) *api {
	conns := &connSet{open: map[net.Conn]struct{}{}}
	if kind == clientStd {
		dial := conns.dial(timeout)
		return &api{
			std: &http.Client{Timeout: timeout, Transport: &http.Transport{
				MaxConnsPerHost:     workers,
				MaxIdleConnsPerHost: workers,
				DialContext:         func(_ context.Context, _, addr string) (net.Conn, error) { return dial(addr) },
			}},
			timeout: timeout,
			conns:   conns,
		}
	}
	return &api{
		client: &fasthttp.Client{
			MaxConnsPerHost:          workers,
			MaxConnWaitTimeout:       timeout,
			ReadTimeout:              timeout,
			WriteTimeout:             timeout,
			MaxResponseBodySize:      maxBody,
			NoDefaultUserAgentHeader: true,
			Dial:                     conns.dial(timeout),
		},
		timeout: timeout,
		conns:   conns,
	}
}

func (a *api) close() {
	if a.std != nil {
		a.std.CloseIdleConnections()
	} else {
		a.client.CloseIdleConnections()
	}
	a.conns.closeAll()
}

// stopOnCancel closes every connection when ctx ends, so requests in flight
// fail at once instead of at their timeout. Call the returned func to stop
// watching.
func (a *api) stopOnCancel(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, a.conns.closeAll)
}

// connSet tracks the client's connections.
type connSet struct {
	mu   sync.Mutex
	open map[net.Conn]struct{}
	// spread, when set, has each connection to a loopback IPv4 address
	// come from a loopback address of its own (127.0.0.2, 127.0.0.3, ...):
	// next numbers them, sources counts the connections so made.
	spread  bool
	next    atomic.Int64
	sources atomic.Int64
}

// spreadSources has each connection to a loopback target come from a
// loopback address of its own, as clients on as many machines would:
// the service limits its public routes per client address (RATE_LIMIT_IP).
// Call it before the first request.
func (a *api) spreadSources() { a.conns.spread = true }

// sourceAddresses is how many source addresses spreadSources gave out.
func (a *api) sourceAddresses() int { return int(min(a.conns.sources.Load(), maxSources)) }

// maxSources is how many loopback source addresses spreadSources uses
// (127.0.0.2 to 127.0.255.251), before it takes them again.
const maxSources = 256 * 250

// source is the local address of the next connection to addr: nil but
// for a loopback IPv4 target when spreading.
func (s *connSet) source(addr string) *net.TCPAddr {
	if !s.spread {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	if err != nil || ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		return nil
	}
	n := (s.next.Add(1) - 1) % maxSources
	return &net.TCPAddr{IP: net.IPv4(127, 0, byte(n/250), byte(n%250+2))}
}

func (s *connSet) dial(timeout time.Duration) fasthttp.DialFunc {
	return func(addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: timeout}
		if src := s.source(addr); src != nil {
			d.LocalAddr = src
		}
		c, err := d.Dial("tcp", addr)
		switch {
		case err != nil && d.LocalAddr != nil:
			d.LocalAddr = nil // a system that will not bind it: from the usual address
			c, err = d.Dial("tcp", addr)
		case d.LocalAddr != nil:
			s.sources.Add(1)
		}
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.open[c] = struct{}{}
		s.mu.Unlock()
		return &trackedConn{Conn: c, set: s}, nil
	}
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.open {
		_ = c.Close()
		delete(s.open, c)
	}
}

type trackedConn struct {
	net.Conn
	set *connSet
}

func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.open, c.Conn)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// problem is the part of an RFC 9457 body the hammer looks at.
type problem struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// apiError is a non-success answer during setup or verification.
type apiError struct {
	Op      string
	Status  int
	Problem problem
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d", e.Op, e.Status)
	if e.Problem.Code != "" {
		msg += " " + e.Problem.Code
	}
	if e.Problem.Detail != "" {
		msg += ": " + e.Problem.Detail
	}
	return msg
}

// send makes one request, bounded by the client's timeouts and failing
// at once when ctx has ended, and returns the status and a copy of the
// (capped) body. latency covers sending the request and reading the body.
func (a *api) send(ctx context.Context, method, url, token string, body []byte) (status int, data []byte, latency time.Duration, err error) {
	status, data, _, latency, err = a.sendReading(ctx, method, url, token, body, "")
	return status, data, latency, err
}

// sendReading is send that also returns the value of the response header
// named header ("" reads none).
func (a *api) sendReading(ctx context.Context, method, url, token string, body []byte, header string) (status int, data []byte, value string, latency time.Duration, err error) {
	return a.exchange(ctx, method, url, token, body, nil, header)
}

// exchange is sendReading with extra request headers (name, value pairs:
// the waiting room's Admission).
func (a *api) exchange(ctx context.Context, method, url, token string, body []byte, extra []string, header string) (status int, data []byte, value string, latency time.Duration, err error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, "", 0, err
	}
	if a.std != nil {
		return a.sendStd(ctx, method, url, token, body, extra, header)
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	req.Header.SetMethod(method)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	start := time.Now()
	err = a.client.Do(req, resp)
	latency = time.Since(start)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return 0, nil, "", latency, err
	}
	if header != "" {
		value = string(resp.Header.Peek(header))
	}
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), value, latency, nil
}

// sendStd is sendReading on net/http.
func (a *api) sendStd(ctx context.Context, method, url, token string, body []byte, extra []string, header string) (status int, data []byte, value string, latency time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, "", 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	start := time.Now()
	resp, err := a.std.Do(req)
	if err != nil {
		return 0, nil, "", time.Since(start), err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	latency = time.Since(start)
	if err != nil {
		return 0, nil, "", latency, err
	}
	if header != "" {
		value = resp.Header.Get(header)
	}
	return resp.StatusCode, data, value, latency, nil
}

// getOptions are a GET's extra request headers (name, value pairs), the
// response headers to return, and whether to keep the body (else only
// its size is kept).
type getOptions struct {
	header   []string
	read     []string
	keepBody bool
}

// getResult is a GET's answer: Size is the body's length as it came over
// the wire (compressed, when the server compressed it: neither client
// decompresses a body whose Accept-Encoding the request set itself).
type getResult struct {
	Status  int
	Size    int
	Body    []byte   // with keepBody
	Header  []string // the values of opt.read, in order
	Latency time.Duration
}

// get sends one GET with opt's headers, bounded as send is.
func (a *api) get(ctx context.Context, url string, opt getOptions) (getResult, error) {
	var res getResult
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if a.std != nil {
		return a.getStd(ctx, url, opt)
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	req.Header.SetMethod(http.MethodGet)
	for i := 0; i+1 < len(opt.header); i += 2 {
		req.Header.Set(opt.header[i], opt.header[i+1])
	}
	start := time.Now()
	err := a.client.Do(req, resp)
	res.Latency = time.Since(start)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return res, err
	}
	res.Status, res.Size = resp.StatusCode(), len(resp.Body())
	if opt.keepBody {
		res.Body = append([]byte(nil), resp.Body()...)
	}
	for _, name := range opt.read {
		res.Header = append(res.Header, string(resp.Header.Peek(name)))
	}
	return res, nil
}

// getStd is get on net/http.
func (a *api) getStd(ctx context.Context, url string, opt getOptions) (getResult, error) {
	var res getResult
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return res, err
	}
	for i := 0; i+1 < len(opt.header); i += 2 {
		req.Header.Set(opt.header[i], opt.header[i+1])
	}
	start := time.Now()
	resp, err := a.std.Do(req)
	if err != nil {
		res.Latency = time.Since(start)
		return res, err
	}
	defer func() { _ = resp.Body.Close() }()
	body := io.LimitReader(resp.Body, maxBody)
	if opt.keepBody {
		res.Body, err = io.ReadAll(body)
		res.Size = len(res.Body)
	} else {
		var n int64
		n, err = io.Copy(io.Discard, body)
		res.Size = int(n)
	}
	res.Latency = time.Since(start)
	if err != nil {
		return res, err
	}
	res.Status = resp.StatusCode
	for _, name := range opt.read {
		res.Header = append(res.Header, resp.Header.Get(name))
	}
	return res, nil
}

// call sends in as JSON (nil: no body) and decodes the answer into out
// (nil: not decoded, as for a 204) when the status is want; any other
// status is an *apiError.
func (a *api) call(ctx context.Context, op, method, url, token string, in, out any, want int) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	status, data, _, err := a.send(ctx, method, url, token, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if status != want {
		e := &apiError{Op: op, Status: status}
		_ = json.Unmarshal(data, &e.Problem) // a non-problem body still yields the status
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: decode body: %w", op, err)
	}
	return nil
}

type scheduleIn struct {
	Title     string `json:"title"`
	StartsAt  string `json:"startsAt"`
	SeatCount int    `json:"seatCount"`
}

type scheduleOut struct {
	ID        int64 `json:"id"`
	SeatCount int   `json:"seatCount"`
}

// createSchedule creates a schedule a day ahead with seats seats and returns
// its id.
func (a *api) createSchedule(ctx context.Context, target, adminToken, title string, seats int) (int64, error) {
	in := scheduleIn{Title: title, StartsAt: time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), SeatCount: seats}
	var out scheduleOut
	if err := a.call(ctx, "create schedule", http.MethodPost, target+"/schedules", adminToken, in, &out, http.StatusCreated); err != nil {
		return 0, err
	}
	if out.ID <= 0 || out.SeatCount != seats {
		return 0, fmt.Errorf("create schedule: answer has id %d and seatCount %d, want a positive id and %d", out.ID, out.SeatCount, seats)
	}
	return out.ID, nil
}

// seatMap returns the status of every seat of a schedule by seat id,
// reading the compact form (a server that does not know it answers the
// full form, which is read as well).
func (a *api) seatMap(ctx context.Context, target string, scheduleID int64) (map[int]string, error) {
	url := target + "/schedules/" + strconv.FormatInt(scheduleID, 10) + "/seats?form=" + formCompact
	status, data, _, err := a.send(ctx, http.MethodGet, url, "", nil)
	if err != nil {
		return nil, fmt.Errorf("get seat map: %w", err)
	}
	if status != http.StatusOK {
		e := &apiError{Op: "get seat map", Status: status}
		_ = json.Unmarshal(data, &e.Problem)
		return nil, e
	}
	m, err := parseSeatMap(data)
	if err != nil {
		return nil, fmt.Errorf("get seat map: %w", err)
	}
	if m.ScheduleID != scheduleID {
		return nil, fmt.Errorf("get seat map: answer is for schedule %d, want %d", m.ScheduleID, scheduleID)
	}
	return m.Statuses, nil
}

type reservationOut struct {
	ID         string `json:"id"`
	ScheduleID int64  `json:"scheduleId"`
	SeatID     int    `json:"seatId"`
	UserID     string `json:"userId"`
	Status     string `json:"status"` // active or cancelled (GET /reservations/{id})
}

// reserve sends one POST /reservations for seat as u and classifies the
// answer.
func (a *api) reserve(ctx context.Context, target string, u user, seat seatRef) outcome {
	o := outcome{Seat: seat, Sent: true}
	body := fmt.Appendf(nil, `{"scheduleId":%d,"seatId":%d}`, seat.Schedule, seat.Seat)
	status, data, retryAfter, latency, err := a.sendReading(ctx, http.MethodPost, target+"/reservations", u.token, body, "Retry-After")
	o.Latency, o.At = latency, time.Now()
	if err != nil {
		o.Canceled = ctx.Err() != nil
		o.Err = err.Error()
		return o
	}
	o.Status = status
	if status == http.StatusOK {
		var r reservationOut
		err := json.Unmarshal(data, &r)
		o.BadSuccess = err != nil || r.ID == "" || r.ScheduleID != seat.Schedule || r.SeatID != seat.Seat || r.UserID != u.id
		o.Reservation = r.ID
		return o
	}
	o.Code = problemCode(data)
	if secs, err := strconv.Atoi(retryAfter); err == nil && secs > 0 {
		o.RetryAfter = time.Duration(secs) * time.Second
	}
	return o
}

// reservation reads one of u's reservations by its id.
func (a *api) reservation(ctx context.Context, target string, u user, id string) (reservationOut, error) {
	var out reservationOut
	err := a.call(ctx, "get reservation", http.MethodGet, target+"/reservations/"+id, u.token, nil, &out, http.StatusOK)
	return out, err
}

// problemCode is the "code" member of a problem body. The usual bodies are
// answered by a byte search (the hammer reads thousands a second); anything
// else goes through the JSON decoder.
func problemCode(body []byte) string {
	for _, known := range knownCodes {
		if bytes.Contains(body, known.member) {
			return known.code
		}
	}
	var p problem
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Code
}

// knownCodes are the problem codes a hammered seat answers, as they appear
// in a body.
var knownCodes = func() []struct {
	code   string
	member []byte
} {
	var codes []struct {
		code   string
		member []byte
	}
	for _, c := range []string{"seat_taken", "seat_locked", "unavailable", "internal"} {
		codes = append(codes, struct {
			code   string
			member []byte
		}{c, []byte(`"code":"` + c + `"`)})
	}
	return codes
}()

type layoutScheduleIn struct {
	Title    string   `json:"title"`
	StartsAt string   `json:"startsAt"`
	Layout   layoutIn `json:"layout"`
}

// createVenue creates a schedule a day ahead laid out as layout says and
// returns it as the service answered, rows numbered.
func (a *api) createVenue(ctx context.Context, target, adminToken, title string, layout layoutIn) (venue, error) {
	in := layoutScheduleIn{Title: title, StartsAt: time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), Layout: layout}
	var out venue
	if err := a.call(ctx, "create schedule", http.MethodPost, target+"/schedules", adminToken, in, &out, http.StatusCreated); err != nil {
		return venue{}, err
	}
	if err := out.check(&layout); err != nil {
		return venue{}, fmt.Errorf("create schedule: %w", err)
	}
	return out, nil
}

// venue reads a schedule and its layout.
func (a *api) venue(ctx context.Context, target string, scheduleID int64) (venue, error) {
	var out venue
	url := target + "/schedules/" + strconv.FormatInt(scheduleID, 10)
	if err := a.call(ctx, "get schedule", http.MethodGet, url, "", nil, &out, http.StatusOK); err != nil {
		return venue{}, err
	}
	if out.ID != scheduleID {
		return venue{}, fmt.Errorf("get schedule: answer is for schedule %d, want %d", out.ID, scheduleID)
	}
	if err := out.check(nil); err != nil {
		return venue{}, fmt.Errorf("get schedule: %w", err)
	}
	return out, nil
}

// holdAttemptsHeader says how many choices a best-available hold tried.
const holdAttemptsHeader = "Hold-Attempts"

// holdOut is the part of a 201 hold the hammer checks.
type holdOut struct {
	ID         string `json:"id"`
	ScheduleID int64  `json:"scheduleId"`
	SeatIDs    []int  `json:"seatIds"`
	UserID     string `json:"userId"`
	Status     string `json:"status"`
}

// holdOutcome is what one POST /holds produced: outcome's status, code,
// error and latency, and the hold's seats.
type holdOutcome struct {
	outcome
	Quantity int
	Asked    []int // explicit seats: the seats asked for
	Seats    []int // a 201's seats, ascending
	Hold     string
	// Attempts is a best-available 201's Hold-Attempts (0 when absent or
	// not a number).
	Attempts int
	// Available is not_enough_seats's count of free seats (-1 without).
	Available int
}

// Histogram keys of holds.
const (
	keyHeld          = "201"
	keyBadHold       = "201 unexpected body"
	keyNotEnough     = "409 not_enough_seats"
	keyContended     = "409 seats_contended"
	keyRateLimited   = "429 rate_limited"
	keyTooManyHolds  = "409 too_many_holds"
	keySeatsRefused  = "409 seats_unavailable"
	codeNotEnough    = "not_enough_seats"
	codeTooManyHolds = "too_many_holds"
)

func (o holdOutcome) key() string {
	if o.Sent && !o.Canceled && o.Status == http.StatusCreated && o.BadSuccess {
		return keyBadHold
	}
	return o.outcome.key()
}

// granted reports whether the service answered 201: the seats it names
// are held, even when the body is not as it should be (keyBadHold).
func (o holdOutcome) granted() bool {
	return o.Sent && !o.Canceled && o.Status == http.StatusCreated
}

// holdBest sends one best-available POST /holds as u.
func (a *api) holdBest(ctx context.Context, target string, u user, schedule int64, quantity int, category string, adjacent bool) holdOutcome {
	return a.holdBestWith(ctx, target, u, schedule, quantity, category, adjacent, nil)
}

// holdBestWith is holdBest with extra request headers (name, value pairs).
func (a *api) holdBestWith(ctx context.Context, target string, u user, schedule int64, quantity int, category string, adjacent bool, extra []string) holdOutcome {
	body := fmt.Appendf(nil, `{"scheduleId":%d,"quantity":%d`, schedule, quantity)
	if category != "" {
		body = fmt.Appendf(body, `,"category":%q`, category)
	}
	if !adjacent {
		body = append(body, `,"adjacent":false`...)
	}
	body = append(body, '}')
	o := a.holdWith(ctx, target, u, schedule, body, extra)
	o.Quantity = quantity
	if o.Status == http.StatusCreated {
		o.BadSuccess = o.BadSuccess || len(o.Seats) != quantity || o.Attempts < 1
	}
	return o
}

// holdSeats sends one POST /holds for seats as u.
func (a *api) holdSeats(ctx context.Context, target string, u user, schedule int64, seats []int) holdOutcome {
	body, _ := json.Marshal(struct {
		ScheduleID int64 `json:"scheduleId"`
		SeatIDs    []int `json:"seatIds"`
	}{schedule, seats}) // ints do not fail to marshal
	o := a.hold(ctx, target, u, schedule, body)
	o.Quantity, o.Asked = len(seats), seats
	if o.Status == http.StatusCreated {
		o.BadSuccess = o.BadSuccess || !slices.Equal(o.Seats, seats)
	}
	return o
}

// hold sends one POST /holds and classifies the answer; a 201 whose body
// is no live hold of schedule for u, seats ascending, is a BadSuccess.
func (a *api) hold(ctx context.Context, target string, u user, schedule int64, body []byte) holdOutcome {
	return a.holdWith(ctx, target, u, schedule, body, nil)
}

// holdWith is hold with extra request headers (name, value pairs).
func (a *api) holdWith(ctx context.Context, target string, u user, schedule int64, body []byte, extra []string) holdOutcome {
	o := holdOutcome{outcome: outcome{Seat: seatRef{Schedule: schedule}, Sent: true}, Available: -1}
	status, data, attempts, latency, err := a.exchange(ctx, http.MethodPost, target+"/holds", u.token, body, extra, holdAttemptsHeader)
	o.Latency, o.At = latency, time.Now()
	if err != nil {
		o.Canceled = ctx.Err() != nil
		o.Err = err.Error()
		return o
	}
	o.Status = status
	if status == http.StatusCreated {
		var h holdOut
		err := json.Unmarshal(data, &h)
		o.Seats, o.Hold = h.SeatIDs, h.ID
		o.Attempts, _ = strconv.Atoi(attempts)
		o.BadSuccess = err != nil || h.ID == "" || h.ScheduleID != schedule || h.UserID != u.id || h.Status != "active" ||
			len(h.SeatIDs) == 0 || !ascending(h.SeatIDs)
		return o
	}
	var p struct {
		Code      string `json:"code"`
		Available *int   `json:"available"`
	}
	if json.Unmarshal(data, &p) == nil {
		o.Code = p.Code
		if p.Available != nil {
			o.Available = *p.Available
		}
	}
	return o
}

// ascending reports whether seats rise strictly: sorted, none repeated.
func ascending(seats []int) bool {
	for i := 1; i < len(seats); i++ {
		if seats[i] <= seats[i-1] {
			return false
		}
	}
	return true
}
