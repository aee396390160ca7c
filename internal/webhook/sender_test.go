package webhook_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/webhook"
)

// local is the configuration that reaches an httptest server: plain http
// on 127.0.0.1. A generous timeout keeps a busy machine from failing tests
// that do not test it.
func local() webhook.Config {
	cfg := webhook.DefaultConfig()
	cfg.AllowInsecure, cfg.AllowPrivate = true, true
	cfg.Timeout = 30 * time.Second
	return cfg
}

// receiver starts a server for the test that answers with handler.
func receiver(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

func newSender(t *testing.T, cfg webhook.Config) *webhook.Sender {
	t.Helper()
	s := webhook.NewSender(cfg)
	t.Cleanup(s.Close)
	return s
}

func attempt(url string, secrets ...webhook.Secret) webhook.Attempt {
	return webhook.Attempt{URL: url, EventID: "evt_7", Body: []byte(body), Secrets: secrets, At: time.Now()}
}

// The request is what the specification says, checked by the reference
// library as a receiver would, during a rotation (two secrets).
func TestSendHeadersAsTheSpecification(t *testing.T) {
	previous, current := webhook.NewSecret(), webhook.NewSecret()
	got := make(chan message, 1)
	var method, path, contentType string
	var header http.Header
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		method, path, contentType, header = r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Clone()
		got <- message{b, r.Header}
		w.WriteHeader(http.StatusNoContent)
	})
	a := attempt(srv.URL+"/hooks", current, previous)
	res := newSender(t, local()).Send(context.Background(), a)
	if !res.OK() || res.Status != http.StatusNoContent || res.Error != "" || res.Gone() {
		t.Fatalf("Send = %+v; want OK, 204", res)
	}
	m := <-got
	if method != http.MethodPost || path != "/hooks" || contentType != "application/json" || string(m.body) != body {
		t.Errorf("request %s %s, Content-Type %q, body %s", method, path, contentType, m.body)
	}
	if header.Get("webhook-id") != "evt_7" || header.Get("webhook-timestamp") != strconv.FormatInt(a.At.Unix(), 10) {
		t.Errorf("webhook-id %q, webhook-timestamp %q", header.Get("webhook-id"), header.Get("webhook-timestamp"))
	}
	if sigs := strings.Split(header.Get("webhook-signature"), " "); len(sigs) != 2 {
		t.Errorf("webhook-signature %q: want two signatures", header.Get("webhook-signature"))
	}
	for _, s := range []webhook.Secret{current, previous} {
		if err := verify(t, s, m); err != nil {
			t.Errorf("reference library: %v", err)
		}
	}
	if _, ok := header["Idempotency-Key"]; ok {
		t.Error("an Idempotency-Key header went out")
	}
}

func TestSendOutcomes(t *testing.T) {
	for _, tc := range []struct {
		status    int
		ok, gone  bool
		wantError string
	}{
		{http.StatusOK, true, false, ""},
		{http.StatusAccepted, true, false, ""},
		{http.StatusBadRequest, false, false, "HTTP 400 Bad Request"},
		{http.StatusInternalServerError, false, false, "HTTP 500 Internal Server Error"},
		{http.StatusGone, false, true, "HTTP 410 Gone"},
		{599, false, false, "HTTP 599"},
	} {
		srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(tc.status) })
		res := newSender(t, local()).Send(context.Background(), attempt(srv.URL, webhook.NewSecret()))
		if res.Status != tc.status || res.OK() != tc.ok || res.Gone() != tc.gone || res.Error != tc.wantError {
			t.Errorf("answer %d: %+v, OK %v, Gone %v; want OK %v, Gone %v, error %q", tc.status, res, res.OK(), res.Gone(), tc.ok, tc.gone, tc.wantError)
		}
	}
}

// A redirect is the answer, a failure: the Sender does not follow it, so
// an endpoint cannot point deliveries at an address it was refused.
func TestSendFollowsNoRedirect(t *testing.T) {
	var hits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	mux.HandleFunc("/hooks", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	srv := receiver(t, mux.ServeHTTP)
	res := newSender(t, local()).Send(context.Background(), attempt(srv.URL+"/hooks", webhook.NewSecret()))
	if res.OK() || res.Status != http.StatusFound || res.Error != "redirect not followed: HTTP 302 Found" {
		t.Errorf("Send = %+v; want a failed 302", res)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests, want 0", n)
	}
}

func TestSendTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client hang up
		select {                           // until the Sender hangs up, or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	cfg := local()
	cfg.Timeout = 300 * time.Millisecond
	start := time.Now()
	res := newSender(t, cfg).Send(context.Background(), attempt(srv.URL, webhook.NewSecret()))
	if res.OK() || res.Status != 0 || !strings.HasPrefix(res.Error, "timed out after ") {
		t.Errorf("Send = %+v; want no status, timed out", res)
	}
	if took := time.Since(start); took < cfg.Timeout || took > 10*time.Second {
		t.Errorf("took %v; want about %v", took, cfg.Timeout)
	}
}

// A receiver that answers 10 MB has 64 KiB read and its connection
// closed: the Sender does not wait for the rest.
func TestSendReadsAtMost64KiB(t *testing.T) {
	const total = 10 << 20
	hungUp := make(chan int, 1) // bytes written when the Sender hung up
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client hang up
		w.Header().Set("Content-Length", strconv.Itoa(total))
		chunk := make([]byte, 128<<10) // more than the Sender reads
		n, _ := w.Write(chunk)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done(): // the client closed the connection
			hungUp <- n
		case <-time.After(20 * time.Second):
			hungUp <- -1
		}
		for n < total { // the rest, if anyone still reads
			m, err := w.Write(chunk[:min(len(chunk), total-n)])
			if err != nil {
				return
			}
			n += m
		}
	})
	res := newSender(t, local()).Send(context.Background(), attempt(srv.URL, webhook.NewSecret()))
	if !res.OK() {
		t.Fatalf("Send = %+v; want OK", res)
	}
	if n := <-hungUp; n != 128<<10 {
		t.Errorf("the Sender hung up after %d bytes were written; want it to hang up after the first 128 KiB", n)
	}
	if res.Duration > 10*time.Second {
		t.Errorf("Send took %v: it waited for the whole body", res.Duration)
	}
}

// Without AllowPrivate the dialer refuses 127.0.0.1 whatever the URL's
// host is: a name that resolves to it (localhost) or the address itself.
func TestSendRefusesForbiddenAddressAtDial(t *testing.T) {
	var hits atomic.Int32
	srv := receiver(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	cfg := local()
	cfg.AllowPrivate = false
	refusing := newSender(t, cfg)
	for _, url := range []string{srv.URL, "http://localhost:" + strconv.Itoa(port) + "/hooks"} {
		res := refusing.Send(context.Background(), attempt(url, webhook.NewSecret()))
		if res.OK() || res.Status != 0 || !strings.HasPrefix(res.Error, "address not allowed: ") || !strings.Contains(res.Error, "loopback") {
			t.Errorf("%s: %+v; want refused, loopback", url, res)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the receiver got %d requests, want 0", n)
	}
	allowing := newSender(t, local())
	for _, url := range []string{srv.URL, "http://localhost:" + strconv.Itoa(port) + "/hooks"} {
		if res := allowing.Send(context.Background(), attempt(url, webhook.NewSecret())); !res.OK() {
			t.Errorf("%s with AllowPrivate: %+v", url, res)
		}
	}
}

func TestSendRefusesBadAttempts(t *testing.T) {
	var hits atomic.Int32
	srv := receiver(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	https := webhook.DefaultConfig()
	https.AllowPrivate = true
	for _, tc := range []struct {
		name string
		cfg  webhook.Config
		a    webhook.Attempt
		want string
	}{
		{"http without AllowInsecure", https, attempt(srv.URL, webhook.NewSecret()), "invalid URL: must use https"},
		{"no secret", local(), attempt(srv.URL), "no signing secret"},
		{"zero secret", local(), attempt(srv.URL, webhook.Secret{}), "no signing secret"},
		{"no event id", local(), webhook.Attempt{URL: srv.URL, Body: []byte(body), Secrets: []webhook.Secret{webhook.NewSecret()}}, "no event id"},
	} {
		if res := newSender(t, tc.cfg).Send(context.Background(), tc.a); res.OK() || res.Error != tc.want {
			t.Errorf("%s: %+v; want error %q", tc.name, res, tc.want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the receiver got %d requests, want 0", n)
	}
}

// Errors name the cause and never the URL, whose path may hold a token.
func TestSendErrorsHideTheURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	s := newSender(t, local())
	res := s.Send(context.Background(), attempt("http://"+addr+"/hooks/tok_s3cret", webhook.NewSecret()))
	if res.Error != "connection refused" || res.Status != 0 {
		t.Errorf("Send to a closed port = %+v; want connection refused", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := s.Send(ctx, attempt("http://"+addr+"/hooks/tok_s3cret", webhook.NewSecret())); res.Error != "canceled" {
		t.Errorf("Send with a canceled context = %+v; want canceled", res)
	}
}
