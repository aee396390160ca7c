package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/webhook"
)

// hookReceiver is an integrator's endpoint: it keeps every message it
// takes, with its headers, and answers 204 (or fail's status while fail
// says so). before, when set, runs first, as each message arrives: it may
// hold the message up.
type hookReceiver struct {
	mu     sync.Mutex
	got    []hookMessage
	fail   func() int
	before func()
	srv    *httptest.Server
}

type hookMessage struct {
	header http.Header
	body   []byte
	Type   string          `json:"type"`
	Data   json.RawMessage `json:"data"`
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		before := r.before
		r.mu.Unlock()
		if before != nil {
			before()
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.fail != nil {
			if status := r.fail(); status != 0 {
				w.WriteHeader(status)
				return
			}
		}
		m := hookMessage{header: req.Header.Clone(), body: body}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("message %q: %v", body, err)
		}
		r.got = append(r.got, m)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// await waits up to 20 s for n messages and returns them.
func (r *hookReceiver) await(t *testing.T, n int) []hookMessage {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := append([]hookMessage(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("%d messages, want %d", len(got), n)
			}
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// withLocalWebhooks lets the instances deliver to this machine over plain
// http, as development does.
func withLocalWebhooks(cfg *config.Config) {
	cfg.WebhookAllowInsecure, cfg.WebhookAllowPrivate = true, true
}

// verifies reports whether secret's signature is among m's, checked by
// the Standard Webhooks reference library.
func verifies(t *testing.T, secret string, m hookMessage) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(m.body, m.header) == nil
}

// Through the whole service: a booking reaches the endpoint as a signed
// reservation.created; after a rotation every message carries both
// secrets' signatures, each verified by the reference library.
func TestWebhooksAreDeliveredAndSignedAcrossARotation(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, withLocalWebhooks)
	r := newHookReceiver(t)
	created := h.createWebhook(webhookBody(r.srv.URL))
	endpoint, first := str(created.body, "id"), str(created.body, "secret")
	schedule := h.createSchedule(10)

	booked := h.reserve(0, "alice", schedule, 1)
	if booked.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", booked.status, booked.raw)
	}
	msgs := r.await(t, 1)
	if msgs[0].Type != webhook.ReservationCreated || !strings.Contains(string(msgs[0].Data), str(booked.body, "id")) {
		t.Errorf("message = %s %s, want reservation.created of %s", msgs[0].Type, msgs[0].Data, str(booked.body, "id"))
	}
	if !verifies(t, first, msgs[0]) {
		t.Errorf("the first message does not verify with the endpoint's secret: %v", msgs[0].header)
	}
	if n := len(strings.Fields(msgs[0].header.Get(webhook.HeaderSignature))); n != 1 {
		t.Errorf("%d signatures before a rotation, want 1", n)
	}

	rotated := h.webhookCall(http.MethodPost, "/webhooks/"+endpoint+"/secret", "")
	if rotated.status != http.StatusOK {
		t.Fatalf("rotate: %d %s", rotated.status, rotated.raw)
	}
	second := str(rotated.body, "secret")
	// The worker reads the endpoints once a second: a booking made
	// after that is signed with both.
	time.Sleep(2 * time.Second)
	if resp := h.reserve(0, "bob", schedule, 2); resp.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", resp.status, resp.raw)
	}
	msgs = r.await(t, 2)
	if n := len(strings.Fields(msgs[1].header.Get(webhook.HeaderSignature))); n != 2 {
		t.Errorf("%d signatures after a rotation, want 2: %q", n, msgs[1].header.Get(webhook.HeaderSignature))
	}
	if !verifies(t, first, msgs[1]) || !verifies(t, second, msgs[1]) {
		t.Errorf("a message after the rotation does not verify with both secrets")
	}

	deadline := time.Now().Add(20 * time.Second)
	for {
		list := h.webhookCall(http.MethodGet, "/webhooks/"+endpoint+"/deliveries?status=succeeded", "")
		got := len(items(t, list.body, "deliveries"))
		if list.status == http.StatusOK && got == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("succeeded deliveries listed after 20 s: %d %d, want 200 with 2", list.status, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An endpoint that refuses a message gets it again, and the log shows
// the attempts.
func TestWebhookRetriedThroughTheService(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, func(cfg *config.Config) {
		withLocalWebhooks(cfg)
		cfg.WebhookRetrySchedule = webhook.Schedule{300 * time.Millisecond}
	})
	r := newHookReceiver(t)
	refusals := 1
	r.fail = func() int {
		if refusals > 0 {
			refusals--
			return http.StatusServiceUnavailable
		}
		return 0
	}
	endpoint := str(h.createWebhook(webhookBody(r.srv.URL)).body, "id")
	schedule := h.createSchedule(10)
	if resp := h.reserve(0, "alice", schedule, 1); resp.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", resp.status, resp.raw)
	}
	r.await(t, 1)
	// The log is written once the attempt's round ends, just after the
	// receiver has the message.
	deadline := time.Now().Add(20 * time.Second)
	for {
		list := h.webhookCall(http.MethodGet, "/webhooks/"+endpoint+"/deliveries", "")
		ds := items(t, list.body, "deliveries")
		if len(ds) == 1 && ds[0]["status"] == webhook.StatusSucceeded {
			if ds[0]["attempts"] != float64(2) || ds[0]["lastStatusCode"] != float64(204) {
				t.Errorf("delivery = %v, want succeeded after 2 attempts, last 204", ds[0])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries after 20 s = %v, want one succeeded", ds)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
