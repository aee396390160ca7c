package webhook_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/seatlock/seatlock/internal/webhook"
)

// BenchmarkDeliveryOnLoopback measures what one delivery costs when the
// receiver runs on the same machine, as the hammer's do: the CPU of both
// ends together, per message, reported as cpu-µs/op. "bare" is the floor
// any sender pays with net/http: a POST of the same body, kept alive, to
// a receiver that reads it and answers 204; "h2c" the same over HTTP/2
// without TLS. "signed" is Sender.Send to a receiver that checks the
// signature with the Standard Webhooks reference library.
// The two show how much of a delivery is the HTTP exchange itself.
func BenchmarkDeliveryOnLoopback(b *testing.B) {
	body, err := webhook.Body("reservation.created", time.Now(), map[string]any{
		"id": 123456, "scheduleId": 42, "seatId": 31337, "userId": "user-1999",
		"status": "confirmed", "createdAt": time.Now().UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		b.Fatal(err)
	}
	secret := webhook.NewSecret()
	receiver, err := standardwebhooks.NewWebhook(secret.Reveal())
	if err != nil {
		b.Fatal(err)
	}

	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	post := func(b *testing.B, client *http.Client, url string) func() {
		return func() {
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}

	b.Run("bare", func(b *testing.B) {
		srv := httptest.NewServer(drain)
		defer srv.Close()
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
		defer client.CloseIdleConnections()
		measureCPU(b, post(b, client, srv.URL))
	})

	// HTTP/2 without TLS: one connection, its frames written together
	// under load; not cheaper here.
	b.Run("h2c", func(b *testing.B) {
		srv := httptest.NewUnstartedServer(drain)
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		defer srv.Close()
		transport := &http.Transport{Protocols: new(http.Protocols)}
		transport.Protocols.SetUnencryptedHTTP2(true)
		client := &http.Client{Transport: transport}
		defer client.CloseIdleConnections()
		measureCPU(b, post(b, client, srv.URL))
	})

	b.Run("signed", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ := io.ReadAll(r.Body)
			if receiver.Verify(got, r.Header) != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer srv.Close()
		cfg := webhook.DefaultConfig()
		cfg.AllowInsecure, cfg.AllowPrivate = true, true
		sender := webhook.NewSender(cfg)
		defer sender.Close()
		measureCPU(b, func() {
			res := sender.Send(context.Background(), webhook.Attempt{
				URL: srv.URL, EventID: "evt_123456", Body: body, Secrets: []webhook.Secret{secret},
			})
			if !res.OK() {
				b.Errorf("not delivered: %d %s", res.Status, res.Error)
			}
		})
	})
}

// measureCPU runs deliver b.N times from 64 goroutines, as a dispatcher
// sends to a receiver, and reports the process's CPU (user and system,
// both ends of the exchange) per call.
func measureCPU(b *testing.B, deliver func()) {
	b.SetParallelism(32) // 64 senders on this project's 2-core machine
	before := cpuTime(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			deliver()
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(b.N), "cpu-µs/op")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
