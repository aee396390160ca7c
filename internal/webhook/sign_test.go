package webhook_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/seatlock/seatlock/internal/webhook"
)

// The specification's test vector, as its reference libraries check it
// (libraries/go/webhook_test.go, TestWebhookSign, at v0.0.1).
func TestSignSpecificationVector(t *testing.T) {
	secret, err := webhook.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := webhook.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), secret)
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
}

// message is a signed message as a receiver gets it.
type message struct {
	body   []byte
	header http.Header
}

func signed(id string, at time.Time, body string, secrets ...webhook.Secret) message {
	h := http.Header{}
	h.Set(webhook.HeaderID, id)
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(webhook.HeaderSignature, webhook.Sign(id, at, []byte(body), secrets...))
	return message{[]byte(body), h}
}

// verify checks m as a receiver holding secret would, with the Standard
// Webhooks reference library: an implementation independent of ours.
func verify(t *testing.T, secret webhook.Secret, m message) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret.Reveal())
	if err != nil {
		t.Fatalf("reference library refuses the secret: %v", err)
	}
	return wh.Verify(m.body, m.header)
}

const body = `{"type":"reservation.created","timestamp":"2026-10-01T12:00:00Z","data":{"id":7}}`

func TestSignVerifiedByReferenceLibrary(t *testing.T) {
	secret := webhook.NewSecret()
	m := signed("evt_1", time.Now(), body, secret)
	if err := verify(t, secret, m); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if sig := m.header.Get(webhook.HeaderSignature); !strings.HasPrefix(sig, "v1,") || strings.Contains(sig, " ") {
		t.Errorf("signature header %q: want one v1 signature", sig)
	}
}

// During a rotation the header carries both signatures: a receiver that
// knows either secret accepts the message, one that knows neither does not.
func TestSignRotationCarriesBothSignatures(t *testing.T) {
	previous, current := webhook.NewSecret(), webhook.NewSecret()
	m := signed("evt_2", time.Now(), body, current, previous)
	if parts := strings.Split(m.header.Get(webhook.HeaderSignature), " "); len(parts) != 2 ||
		!strings.HasPrefix(parts[0], "v1,") || !strings.HasPrefix(parts[1], "v1,") || parts[0] == parts[1] {
		t.Fatalf("signature header %q: want two different v1 signatures", m.header.Get(webhook.HeaderSignature))
	}
	for name, s := range map[string]webhook.Secret{"current": current, "previous": previous} {
		if err := verify(t, s, m); err != nil {
			t.Errorf("a receiver with the %s secret: %v", name, err)
		}
	}
	if err := verify(t, webhook.NewSecret(), m); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("a receiver with another secret: %v, want no matching signature", err)
	}
}

func TestSignRefusedWhenAnythingChanges(t *testing.T) {
	secret := webhook.NewSecret()
	now := time.Now()
	tampered := signed("evt_3", now, body, secret)
	tampered.body = []byte(strings.Replace(body, `"id":7`, `"id":8`, 1))
	otherID := signed("evt_3", now, body, secret)
	otherID.header.Set(webhook.HeaderID, "evt_4")
	otherTime := signed("evt_3", now, body, secret)
	otherTime.header.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix()+1, 10))
	for _, tc := range []struct {
		name   string
		secret webhook.Secret
		m      message
		want   error
	}{
		{"tampered body", secret, tampered, standardwebhooks.ErrNoMatchingSignature},
		{"another id", secret, otherID, standardwebhooks.ErrNoMatchingSignature},
		{"another timestamp", secret, otherTime, standardwebhooks.ErrNoMatchingSignature},
		{"wrong secret", webhook.NewSecret(), signed("evt_3", now, body, secret), standardwebhooks.ErrNoMatchingSignature},
		{"old timestamp", secret, signed("evt_3", now.Add(-10*time.Minute), body, secret), standardwebhooks.ErrMessageTooOld},
	} {
		if err := verify(t, tc.secret, tc.m); !errors.Is(err, tc.want) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestSignSkipsZeroSecrets(t *testing.T) {
	secret := webhook.NewSecret()
	at := time.Now()
	if got := webhook.Sign("evt", at, nil); got != "" {
		t.Errorf("Sign without secrets = %q, want \"\"", got)
	}
	if got, want := webhook.Sign("evt", at, nil, webhook.Secret{}, secret), webhook.Sign("evt", at, nil, secret); got != want {
		t.Errorf("Sign with a zero secret first = %q, want %q", got, want)
	}
}
