package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// hammerWithWebhooks runs a contended run of five seats against the fake
// API behind fw, with args added.
func hammerWithWebhooks(t *testing.T, fw *fakeWebhooks, outageAfter time.Duration, args ...string) *report {
	t.Helper()
	url := fw.serve(t, newFakeAPI(t).handler())
	cfg := mustConfig(t, []string{url}, append([]string{"-n", "100", "-c", "10", "-seats", "5"}, args...)...)
	cfg.Webhooks.OutageAfter = outageAfter
	r := mustHammer(t, t.Context(), cfg)
	textOf(t, r)
	return r
}

// Every booking reaches both receivers, and the registrations are gone
// after the run.
func TestHammerWebhooks(t *testing.T) {
	fw := &fakeWebhooks{}
	r := hammerWithWebhooks(t, fw, defaultOutageAfter, "-webhooks", "2", "-webhook-drain", "5s")
	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	wr := r.Webhooks
	if wr == nil || wr.Committed != 5 || len(wr.Receivers) != 2 {
		t.Fatalf("webhooks %+v, want 5 changes committed, 2 receivers", wr)
	}
	for _, rr := range wr.Receivers {
		if rr.Events != 5 || rr.Lost != 0 || rr.Others != 0 || total(rr.Bad) != 0 || rr.OutOfOrder != 0 || rr.Service == nil || rr.Service.Error != "" {
			t.Errorf("receiver %+v, want the 5 events, nothing lost, bad or out of order, the service's deliveries read", rr)
		}
	}
	if got := fw.deletedCount(); got != 2 {
		t.Errorf("%d registrations deleted, want 2", got)
	}
	if r.OtherWebhooks != nil {
		t.Errorf("other webhooks %+v, want none: the run's own receivers are not others", r.OtherWebhooks)
	}
}

// An endpoint someone registered before the run is named in the report:
// the service delivers to it on the machine measured.
func TestHammerNamesWebhooksRegisteredBefore(t *testing.T) {
	fw := &fakeWebhooks{}
	url := fw.serve(t, newFakeAPI(t).handler())
	// Someone else's registration, through the hammer's own call. Nobody
	// listens there: deliveries to it fail, as a dead receiver's do.
	someone := newAPI(1, 1, 5*time.Second, clientStd)
	t.Cleanup(someone.close)
	if _, err := someone.createWebhook(t.Context(), url, "someone-else", "http://127.0.0.1:9/hooks/left-behind", "left behind"); err != nil {
		t.Fatal(err)
	}
	cfg := mustConfig(t, []string{url}, "-n", "20", "-c", "4", "-seats", "5")
	r := mustHammer(t, t.Context(), cfg)
	if r.OtherWebhooks == nil || r.OtherWebhooks.Enabled != 1 || r.OtherWebhooks.More {
		t.Fatalf("other webhooks %+v, want 1", r.OtherWebhooks)
	}
	if text := textOf(t, r); !strings.Contains(text, "1 enabled before this run, not the hammer's") {
		t.Errorf("the text report does not name the endpoint:\n%s", text)
	}
}

// A service without webhooks (the baseline) answers 404: nothing to name.
func TestHammerWithoutWebhooksNamesNone(t *testing.T) {
	urls, _ := newFakeAPI(t).serve(t, 1)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-n", "20", "-c", "4", "-seats", "5"))
	if r.OtherWebhooks != nil {
		t.Errorf("other webhooks %+v, want none", r.OtherWebhooks)
	}
}

// A receiver the service never delivers to has lost every change: the
// verdict fails.
func TestHammerWebhooksLost(t *testing.T) {
	fw := &fakeWebhooks{drop: func(url string) bool { return strings.HasSuffix(url, "/hooks/2") }}
	r := hammerWithWebhooks(t, fw, defaultOutageAfter, "-webhooks", "2", "-webhook-drain", "200ms")
	assertFailsWith(t, r, "webhook receiver 2: 5 of 5 committed changes never arrived")
	if rr := r.Webhooks.Receivers[0]; rr.Lost != 0 {
		t.Errorf("receiver 1 lost %d, want 0", rr.Lost)
	}
}

// Receiver 1 down from the load's start: the fake retries through the
// refused connections and the 500s, and its backlog drains once it is
// back.
func TestHammerWebhookOutage(t *testing.T) {
	fw := &fakeWebhooks{}
	r := hammerWithWebhooks(t, fw, 0, "-webhooks", "2", "-webhook-outage", "600ms", "-webhook-drain", "5s")
	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	rr := r.Webhooks.Receivers[0]
	o := rr.Outage
	if o == nil || o.NotDone != "" || !o.Complete || o.Backlog == 0 || rr.Answered500 == 0 || rr.Lost != 0 {
		t.Fatalf("receiver 1 %+v, outage %+v: want a backlog drained, some 500s, nothing lost", rr, o)
	}
	if r.Webhooks.Receivers[1].Outage != nil {
		t.Error("receiver 2 has an outage too")
	}
}

func TestWebhookFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-webhook-outage", "1m"}, "-webhook-outage and -webhook-drain are for -webhooks N"},
		{[]string{"-webhooks", "101"}, "-webhooks must be 0..100"},
		{[]string{"-webhooks", "1", "-webhook-drain", "0s"}, "-webhook-drain must be positive"},
		{[]string{"-scenario", "best-available", "-webhooks", "1"}, "-webhooks is for -scenario hot-seat, fresh-seats, contended or on-sale"},
	} {
		_, err := parseConfig(tt.args, testEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.args, err, tt.want)
		}
	}
	cfg := mustConfig(t, []string{"http://127.0.0.1:1"}, "-scenario", "fresh-seats", "-webhooks", "3", "-webhook-outage", "1m")
	if w := cfg.Webhooks; w.N != 3 || w.Outage != time.Minute || w.Drain != defaultWebhookDrain || w.OutageAfter != defaultOutageAfter {
		t.Errorf("webhooks %+v", w)
	}
}
