package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// maxBody caps what we read of any response; the API's bodies are tiny and a
// misbehaving server must not make the hammer buffer without bound.
const maxBody = 1 << 20

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
}

func (s *connSet) dial(timeout time.Duration) fasthttp.DialFunc {
	return func(addr string) (net.Conn, error) {
		c, err := net.DialTimeout("tcp", addr, timeout)
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
	if err := ctx.Err(); err != nil {
		return 0, nil, 0, err
	}
	if a.std != nil {
		return a.sendStd(ctx, method, url, token, body)
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
	start := time.Now()
	err = a.client.Do(req, resp)
	latency = time.Since(start)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return 0, nil, latency, err
	}
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), latency, nil
}

// sendStd is send on net/http.
func (a *api) sendStd(ctx context.Context, method, url, token string, body []byte) (status int, data []byte, latency time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := a.std.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	latency = time.Since(start)
	if err != nil {
		return 0, nil, latency, err
	}
	return resp.StatusCode, data, latency, nil
}

// call sends in as JSON (nil: no body) and decodes the answer into out when
// the status is want; any other status is an *apiError.
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

type seatMapOut struct {
	ScheduleID int64 `json:"scheduleId"`
	Seats      []struct {
		SeatID int    `json:"seatId"`
		Status string `json:"status"`
	} `json:"seats"`
}

// seatMap returns the status of every seat of a schedule by seat id.
func (a *api) seatMap(ctx context.Context, target string, scheduleID int64) (map[int]string, error) {
	var out seatMapOut
	url := target + "/schedules/" + strconv.FormatInt(scheduleID, 10) + "/seats"
	if err := a.call(ctx, "get seat map", http.MethodGet, url, "", nil, &out, http.StatusOK); err != nil {
		return nil, err
	}
	if out.ScheduleID != scheduleID {
		return nil, fmt.Errorf("get seat map: answer is for schedule %d, want %d", out.ScheduleID, scheduleID)
	}
	statuses := make(map[int]string, len(out.Seats))
	for _, s := range out.Seats {
		statuses[s.SeatID] = s.Status
	}
	return statuses, nil
}

type reservationOut struct {
	ID         string `json:"id"`
	ScheduleID int64  `json:"scheduleId"`
	SeatID     int    `json:"seatId"`
	UserID     string `json:"userId"`
}

// reserve sends one POST /reservations for seat as u and classifies the
// answer.
func (a *api) reserve(ctx context.Context, target string, u user, seat seatRef) outcome {
	o := outcome{Seat: seat, Sent: true}
	body := fmt.Appendf(nil, `{"scheduleId":%d,"seatId":%d}`, seat.Schedule, seat.Seat)
	status, data, latency, err := a.send(ctx, http.MethodPost, target+"/reservations", u.token, body)
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
	return o
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
