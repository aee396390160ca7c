package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testReceiver starts receiver n armed with secret, closed at the test's
// end.
func testReceiver(tb testing.TB, n int, secret string) *receiver {
	tb.Helper()
	r, err := newReceiver(n, time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.close)
	if err := r.setSecret(secret); err != nil {
		tb.Fatal(err)
	}
	return r
}

// eventBody is a message's body: an event of type about object at.
func eventBody(eventType, object string, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"type": eventType, "timestamp": at.Format(time.RFC3339Nano),
		"data": map[string]any{"id": object, "status": "active"}})
	return b
}

// fakeMessage is one message as a sender posts it; sigs replaces the
// signature header when not empty.
type fakeMessage struct {
	id   string
	at   time.Time // the attempt's timestamp
	body []byte
	sigs string
}

// sendWebhook posts m to url as the service would, signed with key (0:
// no HTTP answer, as when the connection is refused).
func sendWebhook(tb testing.TB, client *http.Client, url string, key []byte, m fakeMessage) int {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(m.body))
	if err != nil {
		tb.Fatal(err)
	}
	ts := m.at.Unix()
	sigs := m.sigs
	if sigs == "" {
		sigs = signWebhook(key, m.id, ts, m.body)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerWebhookID, m.id)
	req.Header.Set(headerWebhookTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(headerWebhookSignature, sigs)
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	_ = res.Body.Close()
	return res.StatusCode
}

func TestReceiverVerifiesMessages(t *testing.T) {
	now := time.Now()
	key := mustKey(t, testWebhookSecret)
	other := mustKey(t, webhookSecretPrefix+base64.StdEncoding.EncodeToString([]byte("another key of thirty-two bytes!")))
	body := eventBody(eventReservationCreated, "r1", now)
	tests := []struct {
		name   string
		m      fakeMessage
		status int
		bad    string // the reason counted; "" for none
	}{
		{"signed with its secret", fakeMessage{id: "e1", at: now, body: body}, http.StatusNoContent, ""},
		{"signed with another secret", fakeMessage{id: "e2", at: now, body: body, sigs: signWebhook(other, "e2", now.Unix(), body)}, http.StatusBadRequest, "signature"},
		{"body tampered with", fakeMessage{id: "e3", at: now, body: eventBody(eventReservationCreated, "r2", now),
			sigs: signWebhook(key, "e3", now.Unix(), body)}, http.StatusBadRequest, "signature"},
		{"id tampered with", fakeMessage{id: "e4", at: now, body: body, sigs: signWebhook(key, "e5", now.Unix(), body)}, http.StatusBadRequest, "signature"},
		{"timestamp six minutes old", fakeMessage{id: "e6", at: now.Add(-6 * time.Minute), body: body}, http.StatusBadRequest, "timestamp"},
		{"timestamp six minutes ahead", fakeMessage{id: "e7", at: now.Add(6 * time.Minute), body: body}, http.StatusBadRequest, "timestamp"},
		{"timestamp four minutes old", fakeMessage{id: "e8", at: now.Add(-4 * time.Minute), body: body}, http.StatusNoContent, ""},
		{"two signatures, the new secret's second", fakeMessage{id: "e9", at: now, body: body,
			sigs: signWebhook(other, "e9", now.Unix(), body) + " " + signWebhook(key, "e9", now.Unix(), body)}, http.StatusNoContent, ""},
		{"two signatures, neither its secret's", fakeMessage{id: "e10", at: now, body: body,
			sigs: signWebhook(other, "e10", now.Unix(), body) + " v1,AAAA"}, http.StatusBadRequest, "signature"},
		{"not a v1 signature", fakeMessage{id: "e11", at: now, body: body, sigs: "v2," + signWebhook(key, "e11", now.Unix(), body)[3:]}, http.StatusBadRequest, "signature"},
		{"signed, but not an event", fakeMessage{id: "e12", at: now, body: []byte(`{"hello":1}`)}, http.StatusBadRequest, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := testReceiver(t, 1, testWebhookSecret)
			if got := sendWebhook(t, http.DefaultClient, r.url(), key, tt.m); got != tt.status {
				t.Errorf("answered %d, want %d", got, tt.status)
			}
			rr := r.summarize(nil)
			wantBad := map[string]int{}
			if tt.bad != "" {
				wantBad[tt.bad] = 1
			}
			if total(rr.Bad) != total(wantBad) || rr.Bad[tt.bad] != wantBad[tt.bad] || rr.Events != 1-total(wantBad) {
				t.Errorf("bad %v, %d events; want bad %v", rr.Bad, rr.Events, wantBad)
			}
		})
	}
}

// A message without the headers, or before the secret is known.
func TestReceiverRefusesUnsignedAndWaitsForItsSecret(t *testing.T) {
	r, err := newReceiver(1, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	key := mustKey(t, testWebhookSecret)
	m := fakeMessage{id: "e1", at: time.Now(), body: eventBody(eventHoldCreated, "h1", time.Now())}
	if got := sendWebhook(t, http.DefaultClient, r.url(), key, m); got != http.StatusServiceUnavailable {
		t.Errorf("before its secret: %d, want 503 (come again)", got)
	}
	if err := r.setSecret(testWebhookSecret); err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(r.url(), "application/json", bytes.NewReader(m.body))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if rr := r.summarize(nil); res.StatusCode != http.StatusBadRequest || rr.Bad["headers"] != 1 {
		t.Errorf("unsigned: %d, bad %v; want 400, one bad header", res.StatusCode, rr.Bad)
	}
}

// Duplicates, an object's events out of order (by type and by timestamp),
// a change that never came, and an event the hammer did not commit.
func TestReceiverCountsWhatCame(t *testing.T) {
	r := testReceiver(t, 1, testWebhookSecret)
	key := mustKey(t, testWebhookSecret)
	t0 := time.Now().Add(-time.Second)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	l := newLedger()
	for _, c := range []change{{"r1", eventReservationCreated}, {"r1", eventReservationCancelled}, {"h1", eventHoldCreated},
		{"h1", eventHoldConfirmed}, {"h2", eventHoldCreated}, {"h2", eventHoldReleased}, {"r2", eventReservationCreated}} {
		l.commit(c.Object, c.Type, t0)
	}
	send := []fakeMessage{
		{id: "e2", body: eventBody(eventReservationCancelled, "r1", at(2))},
		{id: "e1", body: eventBody(eventReservationCreated, "r1", at(1))}, // after its cancellation
		{id: "e3", body: eventBody(eventHoldCreated, "h1", at(3))},
		{id: "e3", body: eventBody(eventHoldCreated, "h1", at(3))}, // a duplicate
		{id: "e4", body: eventBody(eventHoldConfirmed, "h1", at(4))},
		{id: "e3", body: eventBody(eventHoldCreated, "h1", at(3))}, // a late duplicate is no new event
		{id: "e6", body: eventBody(eventHoldCreated, "h2", at(6))},
		{id: "e5", body: eventBody(eventHoldReleased, "h2", at(5))}, // the right stage, an older timestamp
		{id: "e7", body: eventBody(eventHoldExpired, "h9", at(7))},  // not the hammer's
	}
	for _, m := range send {
		m.at = time.Now()
		if got := sendWebhook(t, http.DefaultClient, r.url(), key, m); got != http.StatusNoContent {
			t.Fatalf("%s answered %d", m.id, got)
		}
	}
	rr := r.summarize(l.snapshot())
	if rr.Events != 7 || rr.Messages != 9 || rr.Duplicates != 2 || rr.Others != 1 {
		t.Errorf("events %d, messages %d, duplicates %d, others %d; want 7, 9, 2, 1", rr.Events, rr.Messages, rr.Duplicates, rr.Others)
	}
	if rr.Lost != 1 || len(rr.LostExamples) != 1 || rr.LostExamples[0] != "reservation.created of r2" {
		t.Errorf("lost %d %q, want the creation of r2", rr.Lost, rr.LostExamples)
	}
	if rr.OutOfOrder != 2 || rr.ObjectsOutOfOrder != 2 {
		t.Errorf("%d out of order in %d objects, want 2 in 2 (r1 and h2)", rr.OutOfOrder, rr.ObjectsOutOfOrder)
	}
	if rr.Latency.P99 <= 0 || rr.AfterAnswer.P50 < duration(time.Second) {
		t.Errorf("latency %v, after the answer %v; want positive, a second or more after the answer", rr.Latency, rr.AfterAnswer)
	}
	var out bytes.Buffer
	rep := &webhooksReport{Committed: 7, Receivers: []receiverReport{rr}}
	writeWebhooksText(func(format string, a ...any) { _, _ = fmt.Fprintf(&out, format+"\n", a...) }, rep)
	t.Logf("report:\n%s", out.String())
	if want := "lost 1 (target 0); out of order 2 in 2 objects"; !strings.Contains(out.String(), want) {
		t.Errorf("text report lacks %q", want)
	}
	if v := judgeOnly(rep); v.Pass || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "webhook receiver 1: 1 of 7 committed changes never arrived") {
		t.Errorf("verdict %+v, want a failure: a lost change", v)
	}
}

// judgeOnly is the verdict of a report that has only webhooks.
func judgeOnly(wr *webhooksReport) verdict {
	r := &report{Scenario: scenarioContended, Responses: map[string]int{}, Webhooks: wr}
	return judge(r, nil)
}

// The outage: connections refused, then 500, then answered again; the
// backlog drain is measured from the return.
func TestReceiverOutage(t *testing.T) {
	r := testReceiver(t, 1, testWebhookSecret)
	key := mustKey(t, testWebhookSecret)
	// Keep-alive connections, as the service's: the outage must cut them.
	client := &http.Client{Timeout: 2 * time.Second}
	w := &webhooks{receivers: []*receiver{r}, ledger: newLedger(), cfg: webhookConfig{N: 1, Outage: time.Second, Drain: time.Second}}
	msg := func(id, object string) fakeMessage {
		return fakeMessage{id: id, at: time.Now(), body: eventBody(eventReservationCreated, object, time.Now())}
	}
	if got := sendWebhook(t, client, r.url(), key, msg("e0", "r0")); got != http.StatusNoContent {
		t.Fatalf("before the outage: %d", got)
	}
	w.ledger.commit("r0", eventReservationCreated, time.Now())
	w.loadStarted(t.Context())
	w.ledger.commit("r1", eventReservationCreated, time.Now())

	waitState(t, r, receiverRefusing)
	if got := sendWebhook(t, client, r.url(), key, msg("e1", "r1")); got != 0 {
		t.Errorf("while refusing: answered %d, want no answer", got)
	}
	waitState(t, r, receiverFailing)
	if got := sendWebhook(t, client, r.url(), key, msg("e1", "r1")); got != http.StatusInternalServerError {
		t.Errorf("while failing: answered %d, want 500", got)
	}
	w.outage.wait()
	time.Sleep(20 * time.Millisecond)
	if got := sendWebhook(t, client, r.url(), key, msg("e1", "r1")); got != http.StatusNoContent {
		t.Errorf("back: answered %d, want 204", got)
	}
	rep := w.summarize(w.ledger.snapshot(), 0)
	o, rr := rep.Receivers[0].Outage, rep.Receivers[0]
	if o == nil || o.NotDone != "" || !o.Complete || o.Backlog != 1 || o.Drain < duration(20*time.Millisecond) || o.Drain > duration(time.Second) {
		t.Fatalf("outage %+v, want complete, a backlog of 1 drained in 20ms..1s", o)
	}
	if rr.Answered500 != 1 || rr.Lost != 0 || rr.Events != 2 {
		t.Errorf("answered 500 %d, lost %d, events %d; want 1, 0, 2", rr.Answered500, rr.Lost, rr.Events)
	}
}

// waitState waits until r's outage is at st.
func waitState(tb testing.TB, r *receiver, st receiverState) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		r.mu.Lock()
		got := r.state
		r.mu.Unlock()
		if got == st {
			return
		}
		if !sleepUntil(ctx, time.Now().Add(5*time.Millisecond)) {
			tb.Fatalf("receiver never got to state %d (at %d)", st, got)
		}
	}
}

// An on-sale's ledger: every hold granted, and the confirmed one with
// the reservations it made; a refused hold owes nothing.
func TestLedgerCommitsASale(t *testing.T) {
	at := time.Now()
	granted := func(id string) holdOutcome {
		return holdOutcome{outcome: outcome{Sent: true, Status: 201, At: at}, Hold: id}
	}
	refused := holdOutcome{outcome: outcome{Sent: true, Status: 409, Code: codeNotEnough, At: at}}
	runs := []buyerRun{
		{Holds: []holdOutcome{refused, granted("h1")}, Confirmation: &queueCall{outcome: outcome{At: at}, Reservations: []string{"r1", "r2"}}},
		{Holds: []holdOutcome{granted("h2")}}, // its confirmation failed
		{Holds: []holdOutcome{refused}},
	}
	l := newLedger()
	l.commitSale(runs)
	got := l.snapshot()
	want := []change{{"h1", eventHoldCreated}, {"h1", eventHoldConfirmed}, {"r1", eventReservationCreated},
		{"r2", eventReservationCreated}, {"h2", eventHoldCreated}}
	for _, c := range want {
		if _, ok := got[c]; !ok {
			t.Errorf("ledger lacks %v", c)
		}
	}
	if len(got) != len(want) {
		t.Errorf("ledger %v, want %v", got, want)
	}
}
