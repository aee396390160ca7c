package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/testenv"
	"github.com/seatlock/seatlock/internal/testenv/instances"
)

const testSecret = "test-secret-test-secret-test-secret!"

// harness is one or more API instances over real listeners, sharing one
// Redis and one fresh PostgreSQL database.
type harness struct {
	t      *testing.T
	cfg    config.Config
	opts   []app.Option // for every instance
	bases  []string
	redis  *redis.Client
	pool   *pgxpool.Pool
	client *http.Client
	// logger, when set, gets the instances' logs; otherwise their errors
	// are kept in failures, and the first of them printed if the test
	// fails (a 5xx's cause is logged, never answered).
	logger   *slog.Logger
	failures *testenv.SyncBuffer
}

func newHarness(t *testing.T, instances int) *harness {
	t.Helper()
	return newHarnessOn(t, instances, config.BackendRedis)
}

// newHarnessOn is newHarness with the given LOCK_BACKEND.
func newHarnessOn(t *testing.T, instances int, backend string) *harness {
	t.Helper()
	return newHarnessWith(t, instances, func(cfg *config.Config) { cfg.LockBackend = backend })
}

// newHarnessWith is newHarness with the configuration changed by tune.
func newHarnessWith(t *testing.T, n int, tune func(*config.Config), opts ...app.Option) *harness {
	t.Helper()
	cfg := instances.Config(t)
	cfg.AuthSecret = testSecret
	tune(&cfg)
	// Every test has a database of its own, and its instances run the
	// periodic jobs for it: namespaced by the database, as separate
	// deployments sharing one Redis would be.
	if u, err := url.Parse(cfg.DatabaseURL); err == nil {
		opts = append([]app.Option{app.WithJobNamespace(strings.TrimPrefix(u.Path, "/") + "/")}, opts...)
	}
	h := &harness{
		t:     t,
		cfg:   cfg,
		opts:  opts,
		redis: lockenv.Redis(t),
		client: &http.Client{Timeout: 30 * time.Second, Transport: contractTransport{t: t,
			next: &http.Transport{MaxIdleConnsPerHost: 256}}},
	}
	pool, err := postgres.Open(context.Background(), cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	h.pool = pool
	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	testenv.SpreadScheduleIDs(t, pool)
	for range n {
		h.bases = append(h.bases, h.serve(cfg))
	}
	return h
}

// newRaceHarness is newHarness for a test that proves what concurrent
// requests are answered (only 2xx, 409 and 429): its instances wait up to
// raceMargin for a Redis reply and for a write under seat locks, instead
// of the production bounds (a second and two). The machine's disk and
// cores are shared with other tests' databases and Redis processes; a
// stall past a production bound is answered 503 unavailable, correctly,
// and would say nothing of the race under test.
func newRaceHarness(t *testing.T, instances int) *harness {
	t.Helper()
	return newHarnessWith(t, instances, func(cfg *config.Config) {
		u, err := url.Parse(cfg.RedisURL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("read_timeout", raceMargin.String())
		q.Set("write_timeout", raceMargin.String())
		u.RawQuery = q.Encode()
		cfg.RedisURL = u.String()
	}, app.WithWriteTimeout(raceMargin))
}

// raceMargin is newRaceHarness's bound on Redis replies and writes.
const raceMargin = 10 * time.Second

// serve starts one instance on 127.0.0.1:0 and returns its base URL; the
// test's end shuts it down and checks that the shutdown was clean.
func (h *harness) serve(cfg config.Config) string {
	h.t.Helper()
	logger := h.logger
	if logger == nil {
		logger = h.failureLog()
	}
	a, err := app.New(context.Background(), cfg, logger, h.opts...)
	if err != nil {
		h.t.Fatalf("app.New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("Serve: %v", err)
		}
		a.Close()
	})
	return "http://" + ln.Addr().String()
}

// failureLog is the logger of instances whose test set none: it keeps
// their errors, and the test prints the first maxFailureLines of them if
// it fails (a failover's many 503s would drown the rest).
func (h *harness) failureLog() *slog.Logger {
	if h.failures == nil {
		h.failures = &testenv.SyncBuffer{}
		logs := h.failures
		h.t.Cleanup(func() {
			if !h.t.Failed() {
				return
			}
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if lines[0] == "" {
				return
			}
			for _, line := range lines[:min(maxFailureLines, len(lines))] {
				h.t.Logf("instance log: %s", line)
			}
			if len(lines) > maxFailureLines {
				h.t.Logf("instance log: %d lines more", len(lines)-maxFailureLines)
			}
		})
	}
	return slog.New(slog.NewJSONHandler(h.failures, &slog.HandlerOptions{Level: slog.LevelError}))
}

// maxFailureLines is how many of its instances' errors a failed test prints.
const maxFailureLines = 10

func (h *harness) token(user, role string) string {
	h.t.Helper()
	tok, err := auth.Mint([]byte(testSecret), user, role, time.Hour)
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// response is a finished HTTP exchange with its body decoded as JSON.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (r response) code() string {
	c, _ := r.body["code"].(string)
	return c
}

type request struct {
	method, path, token, contentType, body string
	base                                   int // index of the instance
	prefer                                 string
	header                                 map[string]string
	// added are sent after everything else, each value as a header line
	// of its own (a header sent twice is two values).
	added http.Header
}

func (h *harness) do(req request) response {
	h.t.Helper()
	httpReq, err := http.NewRequest(req.method, h.bases[req.base]+req.path, strings.NewReader(req.body))
	if err != nil {
		h.t.Fatal(err)
	}
	if req.token != "" {
		httpReq.Header.Set("Authorization", "Bearer "+req.token)
	}
	if req.contentType != "" {
		httpReq.Header.Set("Content-Type", req.contentType)
	}
	if req.prefer != "" {
		httpReq.Header.Set("Prefer", req.prefer)
	}
	for name, value := range req.header {
		httpReq.Header.Set(name, value)
	}
	for name, values := range req.added {
		for _, v := range values {
			httpReq.Header.Add(name, v)
		}
	}
	resp, err := h.client.Do(httpReq)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	out := response{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			h.t.Fatalf("%s %s: body is not a JSON object: %q", req.method, req.path, raw)
		}
	}
	return out
}

func (h *harness) postJSON(path, token string, body any) response {
	h.t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		h.t.Fatal(err)
	}
	return h.do(request{method: http.MethodPost, path: path, token: token, contentType: "application/json", body: buf.String()})
}

// createSchedule makes a schedule through the API and returns its id.
func (h *harness) createSchedule(seats int) int64 {
	h.t.Helper()
	resp := h.postJSON("/schedules", h.token("admin", auth.RoleAdmin), map[string]any{
		"title": "Dune", "startsAt": "2026-12-24T19:30:00+09:00", "seatCount": seats,
	})
	if resp.status != http.StatusCreated {
		h.t.Fatalf("create schedule: %d %s", resp.status, resp.raw)
	}
	return int64(resp.body["id"].(float64))
}

// reservationRows counts the stored reservations of one seat.
func (h *harness) reservationRows(scheduleID int64, seatID int) int {
	h.t.Helper()
	var n int
	err := h.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM reservations WHERE schedule_id = $1 AND seat_id = $2`, scheduleID, seatID).Scan(&n)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// expectProblem checks an RFC 9457 answer with the given status and code.
func expectProblem(t *testing.T, resp response, status int, code string) {
	t.Helper()
	if resp.status != status || resp.code() != code {
		t.Fatalf("got %d %q (%s), want %d %q", resp.status, resp.code(), resp.raw, status, code)
	}
	if ct := resp.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	for _, member := range []string{"type", "title", "detail"} {
		if s, _ := resp.body[member].(string); s == "" {
			t.Errorf("problem member %q missing in %s", member, resp.raw)
		}
	}
	if got, _ := resp.body["status"].(float64); int(got) != status {
		t.Errorf("problem status = %v, want %d", resp.body["status"], status)
	}
}

// expectNoLeak fails if a client-visible body carries internal detail.
func expectNoLeak(t *testing.T, resp response) {
	t.Helper()
	for _, s := range []string{"postgres", "redis", "pgx", "dial", "127.0.0.1", "SQLSTATE", "goroutine", ".go:"} {
		if strings.Contains(strings.ToLower(resp.raw), strings.ToLower(s)) {
			t.Errorf("body leaks internal detail %q: %s", s, resp.raw)
		}
	}
}

// createScheduleDirect stores a schedule without an API instance.
func (h *harness) createScheduleDirect(seats int) int64 {
	h.t.Helper()
	s, err := reservation.NewSchedule("Dune", time.Now().Add(24*time.Hour), seats)
	if err != nil {
		h.t.Fatal(err)
	}
	stored, err := postgres.NewStore(h.pool).CreateSchedule(context.Background(), s)
	if err != nil {
		h.t.Fatal(err)
	}
	return stored.ID()
}
