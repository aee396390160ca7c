package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxURLLen is the longest endpoint URL accepted, in characters.
const MaxURLLen = 2000

var (
	// ErrInvalidURL reports an endpoint URL of the wrong form (not an
	// absolute http(s) URL with a host, too long, a bad port, a user
	// name or password, http:// without Config.AllowInsecure), or, from
	// CheckURL, with a host name that does not exist.
	ErrInvalidURL = errors.New("webhook: invalid URL")
	// ErrURLNotAllowed reports an endpoint URL whose host is, or resolves
	// to, an address deliveries may not reach (loopback, private,
	// link-local, …) without Config.AllowPrivate: the API answers it with
	// the code webhook_url_not_allowed.
	ErrURLNotAllowed = errors.New("webhook: URL not allowed")
)

// URLError is why an endpoint URL was refused. Err is ErrInvalidURL or
// ErrURLNotAllowed (errors.Is sees it); Reason says what is wrong in words
// fit for the client that sent the URL, and never quotes the URL, whose
// path or query may hold a token.
type URLError struct {
	Err    error
	Reason string
}

func (e *URLError) Error() string { return e.Err.Error() + ": " + e.Reason }

// Unwrap returns ErrInvalidURL or ErrURLNotAllowed.
func (e *URLError) Unwrap() error { return e.Err }

func invalidURL(reason string) error { return &URLError{Err: ErrInvalidURL, Reason: reason} }

// ParseURL checks the form of an endpoint URL, without the network: an
// absolute http or https URL with a host, a port of 1 to 65535 if any, no
// user name or password, at most MaxURLLen characters; https unless
// allowInsecure. Its errors are *URLError wrapping ErrInvalidURL.
func ParseURL(raw string, allowInsecure bool) (*url.URL, error) {
	if utf8.RuneCountInString(raw) > MaxURLLen {
		return nil, invalidURL(fmt.Sprintf("longer than %d characters", MaxURLLen))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, invalidURL("not a URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowInsecure:
	case u.Scheme == "http":
		return nil, invalidURL("must use https")
	case u.Scheme == "":
		return nil, invalidURL("not an absolute URL")
	default:
		return nil, invalidURL("must use https")
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, invalidURL("has no host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return nil, invalidURL("has an invalid port")
		}
	}
	if u.User != nil {
		// Credentials would sit in the database and in every log line
		// that names the URL; a receiver authenticates us by signature.
		return nil, invalidURL("must not carry a user name or password")
	}
	return u, nil
}

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL checks an endpoint URL as the API should before it accepts
// one: its form (ParseURL, ErrInvalidURL) and, unless cfg.AllowPrivate,
// every address its host is or resolves to (ErrURLNotAllowed when any is
// forbidden; a name that does not exist is ErrInvalidURL). r resolves
// (net.DefaultResolver when nil). Other errors, such as a DNS server that
// does not answer, are not *URLError: the URL may be fine. The Sender
// checks the address again on each connection, since a name may resolve
// elsewhere later.
func CheckURL(ctx context.Context, raw string, cfg Config, r Resolver) (*url.URL, error) {
	u, err := ParseURL(raw, cfg.AllowInsecure)
	if err != nil || cfg.AllowPrivate {
		return u, err
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if err := checkAddr(a); err != nil {
			return nil, err
		}
		return u, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", strings.TrimSuffix(host, "."))
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return nil, invalidURL("host not found")
	case err != nil:
		return nil, fmt.Errorf("webhook: resolve endpoint host: %w", err)
	case len(addrs) == 0:
		return nil, invalidURL("host not found")
	}
	for _, a := range addrs {
		if err := checkAddr(a); err != nil {
			return nil, err
		}
	}
	return u, nil
}
