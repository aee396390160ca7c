package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	// maxAnswerBytes is how much of an answer's body is read (and
	// discarded); a receiver that sends more gets its connection closed.
	maxAnswerBytes = 64 << 10
	// maxErrorLen bounds Result.Error, in bytes.
	maxErrorLen = 200
	userAgent   = "seatlock-webhooks/1"
)

// Attempt is one try at delivering one message to one endpoint.
type Attempt struct {
	// URL is the endpoint's, as CheckURL accepted it.
	URL string
	// EventID is the webhook-id: the event's, the same for every
	// endpoint and every retry, so that receivers drop duplicates.
	EventID string
	// Body is the message (Body builds one), the same on every retry.
	Body []byte
	// Secrets sign the message: the endpoint's secret, and during a
	// rotation the previous one too.
	Secrets []Secret
	// At is the attempt's time, the webhook-timestamp; zero: now.
	At time.Time
}

// Result is the outcome of an Attempt, for the delivery's record.
type Result struct {
	// Status is the receiver's HTTP status, 0 if it gave none.
	Status int
	// Error is why the attempt failed, "" if it succeeded: short, and
	// safe to show the endpoint's owner (no secret, no URL).
	Error string
	// Duration is how long the attempt took.
	Duration time.Duration
}

// OK reports whether the receiver took the message: any 2xx status.
func (r Result) OK() bool { return r.Error == "" && r.Status >= 200 && r.Status < 300 }

// Gone reports a 410 Gone: the receiver asks for the endpoint to be
// disabled, and it is not tried again.
func (r Result) Gone() bool { return r.Status == http.StatusGone }

// Sender makes delivery attempts over one shared pool of connections. It
// follows no redirect, and unless Config.AllowPrivate it refuses to connect
// to a forbidden address (see CheckURL) on every connection, whatever the
// host name resolved to when the endpoint was made. It is safe for
// concurrent use.
type Sender struct {
	client        *http.Client
	allowInsecure bool
}

// NewSender returns a Sender with cfg's Timeout, AllowInsecure and
// AllowPrivate.
func NewSender(cfg Config) *Sender {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		dialer.Control = refuseForbidden
	}
	transport := &http.Transport{
		// No proxy, even if HTTPS_PROXY is set: a proxy would dial the
		// receiver itself, past the address check.
		Proxy:             nil,
		DialContext:       dialer.DialContext,
		ForceAttemptHTTP2: true,
		// Thousands of deliveries a second may go to a few receivers:
		// keep enough connections to each of them alive to reuse.
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    128,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    timeout,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		MaxResponseHeaderBytes: 64 << 10,
		// The answer is discarded: no reason to inflate it.
		DisableCompression: true,
	}
	return &Sender{
		client: &http.Client{
			Transport: transport,
			Timeout:   timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse // a 3xx is the answer, and a failure
			},
		},
		allowInsecure: cfg.AllowInsecure,
	}
}

// refuseForbidden is the dialer's Control: it sees the address actually
// dialled, after resolution, so a name that resolves to a public address
// when the endpoint is made and to 127.0.0.1 later (DNS rebinding) is
// still refused.
func refuseForbidden(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &URLError{Err: ErrURLNotAllowed, Reason: "not an IP address"}
	}
	return checkAddr(ap.Addr())
}

// Send makes one attempt: a POST of a.Body with the Standard Webhooks
// headers, within the Sender's timeout. It reads at most 64 KiB of the
// answer and discards it. Every failure, including a ctx that ends, is in
// the Result; the caller that cancels ctx knows not to count the attempt.
func (s *Sender) Send(ctx context.Context, a Attempt) Result {
	u, err := ParseURL(a.URL, s.allowInsecure)
	switch {
	case err != nil:
		var ue *URLError
		errors.As(err, &ue)
		return Result{Error: "invalid URL: " + ue.Reason}
	case a.EventID == "":
		return Result{Error: "no event id"}
	}
	at := a.At
	if at.IsZero() {
		at = time.Now()
	}
	signature := Sign(a.EventID, at, a.Body, a.Secrets...)
	if signature == "" {
		return Result{Error: "no signing secret"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(a.Body))
	if err != nil {
		return Result{Error: "cannot build the request"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(HeaderID, a.EventID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(HeaderSignature, signature)
	// Marks the POST as safe to send again on a fresh connection when a
	// kept-alive one turns out closed, without sending the header:
	// receivers drop duplicates by webhook-id, as the specification asks.
	req.Header["Idempotency-Key"] = nil

	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return Result{Error: describe(err, time.Since(start)), Duration: time.Since(start)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBytes))
	_ = resp.Body.Close()
	r := Result{Status: resp.StatusCode, Duration: time.Since(start)}
	switch {
	case r.Status >= 200 && r.Status < 300:
	case r.Status >= 300 && r.Status < 400:
		r.Error = "redirect not followed: HTTP " + statusText(r.Status)
	default:
		r.Error = "HTTP " + statusText(r.Status)
	}
	return r
}

// Close closes the idle connections; the Sender may still be used.
func (s *Sender) Close() { s.client.CloseIdleConnections() }

func statusText(code int) string {
	if text := http.StatusText(code); text != "" {
		return strconv.Itoa(code) + " " + text
	}
	return strconv.Itoa(code)
}

// describe turns a failed exchange into words for the endpoint's owner:
// the common causes by name, others by the error's text without the URL
// (*url.Error quotes it, and it may hold a token), cut to maxErrorLen.
func describe(err error, took time.Duration) string {
	var ue *URLError
	var dnsErr *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &ue):
		return "address not allowed: " + ue.Reason
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out after " + took.Round(100*time.Millisecond).String()
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "host not found"
	case errors.As(err, &dnsErr):
		return "DNS lookup failed: " + dnsErr.Err
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	return truncate(fmt.Sprint(err), maxErrorLen)
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
