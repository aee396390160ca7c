package main

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// testWebhookSecret is a registration's secret as the service gives it.
var testWebhookSecret = webhookSecretPrefix + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// mustKey is secret's HMAC key.
func mustKey(tb testing.TB, secret string) []byte {
	tb.Helper()
	key, err := webhookKey(secret)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// The receivers' own signature code agrees with the Standard Webhooks
// reference library both ways: what one signs, the other accepts.
func TestSignatureMatchesStandardWebhooks(t *testing.T) {
	lib, err := standardwebhooks.NewWebhook(testWebhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	key := mustKey(t, testWebhookSecret)
	now := time.Now()
	body := []byte(`{"type":"hold.confirmed","timestamp":"2026-01-02T03:04:05.678Z","data":{"id":"h1","status":"confirmed"}}`)
	headers := func(sig string) http.Header {
		h := http.Header{}
		h.Set(headerWebhookID, "msg_1")
		h.Set(headerWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
		h.Set(headerWebhookSignature, sig)
		return h
	}

	ours := signWebhook(key, "msg_1", now.Unix(), body)
	if err := lib.Verify(body, headers(ours)); err != nil {
		t.Errorf("the library refuses our signature %s: %v", ours, err)
	}
	theirs, err := lib.Sign("msg_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	if theirs != ours {
		t.Errorf("the library signs %s, we %s", theirs, ours)
	}
	if id, err := verifyWebhook(key, headers("v1,bogus "+theirs), body, now); err != nil || id != "msg_1" {
		t.Errorf("we refuse the library's signature among two: %q, %v", id, err)
	}
	tampered := append([]byte(nil), body...)
	tampered[len(tampered)-2] ^= 1
	if err := lib.Verify(tampered, headers(ours)); err == nil {
		t.Error("the library accepts a tampered body: the cross-check checks nothing")
	}
}
