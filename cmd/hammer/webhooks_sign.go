package main

// The Standard Webhooks signature, as the receivers check it. It is a
// dozen lines of HMAC: written here rather than imported so the hammer
// checks the service against the specification, not against the library
// the service may use (webhooks_sign_test.go cross-checks the two).

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers.
const (
	headerWebhookID        = "webhook-id"
	headerWebhookTimestamp = "webhook-timestamp"
	headerWebhookSignature = "webhook-signature"
)

// webhookSecretPrefix starts every secret the service gives out; the
// rest is the key, base64.
const webhookSecretPrefix = "whsec_"

// webhookTolerance is how far a message's timestamp may be from the
// receiver's clock, either way: the specification's replay window.
const webhookTolerance = 5 * time.Minute

// Why a message is refused; each is counted apart in the report.
var (
	errWebhookHeaders   = errors.New("webhooks: missing or malformed headers")
	errWebhookSignature = errors.New("webhooks: no matching signature")
	errWebhookTimestamp = errors.New("webhooks: timestamp outside the tolerance")
)

// webhookKey decodes a secret ("whsec_" and base64) into its HMAC key.
func webhookKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, webhookSecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("webhooks: secret is not %s and base64", webhookSecretPrefix)
	}
	return key, nil
}

// signWebhook is the "v1,…" signature of one attempt: base64 of
// HMAC-SHA256 under key over "{id}.{timestamp}.{body}".
func signWebhook(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	_, _ = fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	_, _ = mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// verifyWebhook checks a message's headers and body against key at now:
// one of the space-separated signatures (two while a secret rotates) must
// match, and the timestamp lie within webhookTolerance. It returns the
// event id, or errWebhookHeaders, errWebhookSignature or
// errWebhookTimestamp.
func verifyWebhook(key []byte, h http.Header, body []byte, now time.Time) (string, error) {
	id, ts, sigs := h.Get(headerWebhookID), h.Get(headerWebhookTimestamp), h.Get(headerWebhookSignature)
	timestamp, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || sigs == "" || err != nil {
		return "", errWebhookHeaders
	}
	want := []byte(signWebhook(key, id, timestamp, body))
	matched := false
	for sig := range strings.FieldsSeq(sigs) {
		matched = matched || hmac.Equal([]byte(sig), want)
	}
	if !matched {
		return "", errWebhookSignature
	}
	if at := time.Unix(timestamp, 0); at.Before(now.Add(-webhookTolerance)) || at.After(now.Add(webhookTolerance)) {
		return "", errWebhookTimestamp
	}
	return id, nil
}
