package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// maxWebhookBody bounds what a receiver reads of one message: an event is
// a hold or a reservation, a few hundred bytes.
const maxWebhookBody = 1 << 20

// receiver is one local endpoint the service delivers webhooks to. It
// checks every message (verifyWebhook), answers 400 to a bad one and
// counts it, and records each event by id: when it first came, how many
// times, and in which order each object's events came. An outage
// (refuse, fail, restore) makes it unreachable, then failing, as a
// customer's endpoint is on a bad day.
type receiver struct {
	n   int // 1-based, as the report names it
	srv *http.Server
	now func() time.Time

	mu    sync.Mutex
	key   []byte // nil until registered: messages are then answered 503
	ln    net.Listener
	addr  string
	state receiverState
	conns map[net.Conn]struct{}
	// events are the messages accepted, by event id; order lists each
	// object's event ids in the order they first came; arrived is when
	// each (object, type) first came.
	events  map[string]*arrival
	order   map[string][]string
	arrived map[change]time.Time
	// messages counts the accepted messages, duplicates included; bad the
	// refused ones by why; failed those answered 500 in an outage.
	messages int
	bad      map[string]int
	failed   int
}

// receiverState is where a receiver's outage stands.
type receiverState int

const (
	receiverUp       receiverState = iota
	receiverRefusing               // listener closed: connections refused
	receiverFailing                // every message answered 500
)

// arrival is one event as a receiver got it.
type arrival struct {
	Type      string
	Object    string
	Timestamp time.Time // the event's own "timestamp"
	First     time.Time // when its first message came
	Count     int       // messages with its id (more than one: duplicates)
}

// change is one committed change of one object, as the hammer and the
// receivers match them: the object's id and the event's type.
type change struct{ Object, Type string }

// webhookEvent is the body of a message: the part a receiver reads.
type webhookEvent struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      struct {
		ID jsonID `json:"id"`
	} `json:"data"`
}

// jsonID is an id the service may write as a string or as a number.
type jsonID string

func (id *jsonID) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*id = jsonID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*id = jsonID(n)
	return nil
}

// newReceiver starts receiver n on a random port of 127.0.0.1.
func newReceiver(n int, now func() time.Time) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver %d: %w", n, err)
	}
	r := &receiver{n: n, now: now, ln: ln, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{},
		events: map[string]*arrival{}, order: map[string][]string{}, arrived: map[change]time.Time{}, bad: map[string]int{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, ConnState: r.track}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// url is where the service is to deliver.
func (r *receiver) url() string { return fmt.Sprintf("http://%s/hooks/%d", r.addr, r.n) }

// setSecret arms the receiver with the secret its registration got.
func (r *receiver) setSecret(secret string) error {
	key, err := webhookKey(secret)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.key = key
	r.mu.Unlock()
	return nil
}

func (r *receiver) close() { _ = r.srv.Close() }

// track keeps the open connections, which refuse closes: a closed
// listener alone would leave the sender's keep-alive connections working.
func (r *receiver) track(c net.Conn, s http.ConnState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch s {
	case http.StateNew:
		r.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(r.conns, c)
	}
}

// ServeHTTP checks and records one message.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxWebhookBody))
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.state == receiverRefusing:
		panic(http.ErrAbortHandler) // a connection that outlived the listener: drop it
	case r.state == receiverFailing:
		r.failed++
		w.WriteHeader(http.StatusInternalServerError)
		return
	case r.key == nil:
		w.WriteHeader(http.StatusServiceUnavailable) // not registered yet: come again
		return
	case err != nil:
		r.refuse(w, "body unreadable")
		return
	}
	id, err := verifyWebhook(r.key, req.Header, body, r.now())
	switch {
	case errors.Is(err, errWebhookSignature):
		r.refuse(w, "signature")
		return
	case errors.Is(err, errWebhookTimestamp):
		r.refuse(w, "timestamp")
		return
	case err != nil:
		r.refuse(w, "headers")
		return
	}
	var ev webhookEvent
	if json.Unmarshal(body, &ev) != nil || ev.Type == "" || ev.Data.ID == "" {
		r.refuse(w, "body")
		return
	}
	r.record(id, ev)
	w.WriteHeader(http.StatusNoContent)
}

// refuse counts a bad message by why and answers it 400.
func (r *receiver) refuse(w http.ResponseWriter, why string) {
	r.bad[why]++
	w.WriteHeader(http.StatusBadRequest)
}

// record notes one accepted message of event id.
func (r *receiver) record(id string, ev webhookEvent) {
	r.messages++
	if a := r.events[id]; a != nil {
		a.Count++
		return
	}
	now := r.now()
	obj := string(ev.Data.ID)
	r.events[id] = &arrival{Type: ev.Type, Object: obj, Timestamp: ev.Timestamp, First: now, Count: 1}
	r.order[obj] = append(r.order[obj], id)
	c := change{Object: obj, Type: ev.Type}
	if _, ok := r.arrived[c]; !ok {
		r.arrived[c] = now
	}
}

// arrivedAt is when c first came, if it has.
func (r *receiver) arrivedAt(c change) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.arrived[c]
	return at, ok
}
