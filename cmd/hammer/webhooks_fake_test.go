package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeWebhooks is the service's webhooks as issue 55's contract has them,
// in front of the fake API: registrations (POST, DELETE, deliveries), and
// for each reservation the fake answers 200 a signed reservation.created
// to every registration, retried every retryEvery until answered 2xx.
type fakeWebhooks struct {
	// drop, when set, says which endpoints never get a message.
	drop func(url string) bool

	mu      sync.Mutex
	hooks   map[string]fakeHook // by id
	ids     int
	events  int
	deleted int
	wg      sync.WaitGroup
	stop    chan struct{}
}

type fakeHook struct {
	url string
	key []byte
}

// fakeRetryEvery is how soon the fake sends a message again.
const fakeRetryEvery = 20 * time.Millisecond

// serve starts the fake API behind the webhooks and returns its URL; at
// the test's end the deliveries still trying stop.
func (fw *fakeWebhooks) serve(tb testing.TB, api http.Handler) string {
	tb.Helper()
	fw.hooks, fw.stop = map[string]fakeHook{}, make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks", fw.create)
	mux.HandleFunc("DELETE /webhooks/{id}", fw.remove)
	mux.HandleFunc("GET /webhooks", fw.list)
	mux.HandleFunc("GET /webhooks/{id}/deliveries", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONBody(w, http.StatusOK, map[string]any{"deliveries": []any{}, "next": ""})
	})
	mux.HandleFunc("POST /reservations", func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		res := rec.Result()
		var out struct {
			ID string `json:"id"`
		}
		if res.StatusCode == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &out) == nil {
			fw.publish(eventReservationCreated, out.ID)
		}
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(rec.Body.Bytes())
	})
	mux.Handle("/", api)
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	tb.Cleanup(func() { close(fw.stop); fw.wg.Wait() })
	return srv.URL
}

func (fw *fakeWebhooks) create(w http.ResponseWriter, r *http.Request) {
	var in webhookIn
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") || json.NewDecoder(r.Body).Decode(&in) != nil || in.URL == "" {
		writeProblem(w, http.StatusBadRequest, "invalid")
		return
	}
	fw.mu.Lock()
	fw.ids++
	id := "wh_" + strconv.Itoa(fw.ids)
	raw := bytes.Repeat([]byte{byte(fw.ids)}, 32)
	fw.hooks[id] = fakeHook{url: in.URL, key: raw}
	fw.mu.Unlock()
	writeJSONBody(w, http.StatusCreated, map[string]any{"id": id, "url": in.URL, "events": in.Events, "description": in.Description,
		"enabled": true, "secret": webhookSecretPrefix + base64.StdEncoding.EncodeToString(raw), "createdAt": time.Now().Format(time.RFC3339)})
}

// list answers every registration on one page, all enabled.
func (fw *fakeWebhooks) list(w http.ResponseWriter, _ *http.Request) {
	fw.mu.Lock()
	hooks := make([]map[string]any, 0, len(fw.hooks))
	for id, h := range fw.hooks {
		hooks = append(hooks, map[string]any{"id": id, "url": h.url, "enabled": true})
	}
	fw.mu.Unlock()
	writeJSONBody(w, http.StatusOK, map[string]any{"webhooks": hooks, "next": nil})
}

func (fw *fakeWebhooks) remove(w http.ResponseWriter, r *http.Request) {
	fw.mu.Lock()
	_, ok := fw.hooks[r.PathValue("id")]
	delete(fw.hooks, r.PathValue("id"))
	if ok {
		fw.deleted++
	}
	fw.mu.Unlock()
	if !ok {
		writeProblem(w, http.StatusNotFound, "not_found")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// publish sends one event to every registration.
func (fw *fakeWebhooks) publish(eventType, object string) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.events++
	id := fmt.Sprintf("evt_%d", fw.events)
	body := eventBody(eventType, object, time.Now())
	for _, h := range fw.hooks {
		if fw.drop != nil && fw.drop(h.url) {
			continue
		}
		fw.wg.Go(func() { fw.deliver(h, id, body) })
	}
}

// deliver posts one message until it is answered 2xx, a new timestamp
// and signature each attempt, as a sender does.
func (fw *fakeWebhooks) deliver(h fakeHook, id string, body []byte) {
	client := &http.Client{Timeout: time.Second}
	for {
		ts := time.Now().Unix()
		req, _ := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(headerWebhookID, id)
		req.Header.Set(headerWebhookTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(headerWebhookSignature, signWebhook(h.key, id, ts, body))
		if res, err := client.Do(req); err == nil {
			_ = res.Body.Close()
			if res.StatusCode < 300 {
				return
			}
		}
		select {
		case <-fw.stop:
			return
		case <-time.After(fakeRetryEvery):
		}
	}
}

// deletedCount is how many registrations were deleted.
func (fw *fakeWebhooks) deletedCount() int {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.deleted
}
