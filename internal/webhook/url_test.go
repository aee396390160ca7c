package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/webhook"
)

func TestParseURLAccepts(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", webhook.MaxURLLen-len("https://example.com/"))
	for _, tc := range []struct {
		raw      string
		insecure bool
	}{
		{"https://example.com/hooks", false},
		{"https://example.com:8443/hooks?tenant=7#ignored", false},
		{"HTTPS://EXAMPLE.COM/", false},
		{"https://[2606:4700::1111]/", false},
		{"http://example.com/hooks", true},
		{"https://example.com/hooks", true},
		{long, false},
		{"https://example.com/" + strings.Repeat("é", webhook.MaxURLLen-len("https://example.com/")), false}, // characters, not bytes
	} {
		if _, err := webhook.ParseURL(tc.raw, tc.insecure); err != nil {
			t.Errorf("ParseURL(%.40q, insecure %v): %v", tc.raw, tc.insecure, err)
		}
	}
}

// Every form the API answers 422 for, each with a reason that never
// quotes the URL.
func TestParseURLRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		insecure  bool
		reason    string
	}{
		{"empty", "", false, "not an absolute URL"},
		{"relative path", "/hooks", false, "not an absolute URL"},
		{"no scheme", "example.com/hooks", false, "not an absolute URL"},
		{"http", "http://example.com/hooks", false, "must use https"},
		{"ftp", "ftp://example.com/hooks", true, "must use https"},
		{"javascript", "javascript:alert(1)", true, "must use https"},
		{"no host", "https:///hooks", false, "has no host"},
		{"port alone", "https://:443/hooks", false, "has no host"},
		{"opaque", "https:example.com", false, "has no host"},
		{"credentials", "https://user:s3cret@example.com/hooks", false, "must not carry a user name or password"},
		{"space in host", "https://exa mple.com/", false, "not a URL"},
		{"control character", "https://example.com/\x7f", false, "not a URL"},
		{"port too big", "https://example.com:65536/", false, "has an invalid port"},
		{"port zero", "https://example.com:0/", false, "has an invalid port"},
		{"port not a number", "https://example.com:https/", false, "not a URL"},
		{"too long", "https://example.com/" + strings.Repeat("a", webhook.MaxURLLen), false, "longer than 2000 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := webhook.ParseURL(tc.raw, tc.insecure)
			var ue *webhook.URLError
			if !errors.Is(err, webhook.ErrInvalidURL) || !errors.As(err, &ue) || ue.Reason != tc.reason {
				t.Fatalf("ParseURL = %v; want ErrInvalidURL, %q", err, tc.reason)
			}
			if strings.Contains(err.Error(), "example") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error quotes the URL: %v", err)
			}
		})
	}
}

// fakeResolver answers from a table, as a DNS server would.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "missing.test":
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	case "flaky.test":
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
	}
	var addrs []netip.Addr
	for _, a := range f[host] {
		addrs = append(addrs, netip.MustParseAddr(a))
	}
	return addrs, nil
}

var resolver = fakeResolver{
	"public.test":   {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	"loopback.test": {"127.0.0.1"},
	"mixed.test":    {"93.184.216.34", "10.0.0.7"}, // one forbidden address is enough
	"metadata.test": {"169.254.169.254"},
	"empty.test":    {},
}

// The SSRF table: one address of each class, literal in the URL, and the
// public addresses next to them that must still pass.
func TestCheckURLAddressClasses(t *testing.T) {
	forbidden := map[string]string{
		"127.0.0.1":                "loopback",
		"127.255.255.254":          "loopback",
		"[::1]":                    "loopback",
		"10.0.0.1":                 "private",
		"172.16.0.1":               "private",
		"172.31.255.255":           "private",
		"192.168.1.1":              "private",
		"[fc00::1]":                "private",
		"[fd12:3456::1]":           "private",
		"169.254.169.254":          "link-local",
		"[fe80::1]":                "link-local",
		"[fe80::1%25eth0]":         "link-local",
		"224.0.0.1":                "multicast",
		"239.255.255.250":          "multicast",
		"[ff02::1]":                "multicast",
		"0.0.0.0":                  "unspecified",
		"0.1.2.3":                  "unspecified",
		"[::]":                     "unspecified",
		"100.64.0.1":               "shared (CGNAT)",
		"100.127.255.255":          "shared (CGNAT)",
		"255.255.255.255":          "reserved",
		"[::ffff:127.0.0.1]":       "loopback",
		"[::ffff:10.0.0.1]":        "private",
		"[::ffff:169.254.169.254]": "link-local",
		"[::ffff:100.64.0.1]":      "shared (CGNAT)",
		"[64:ff9b::7f00:1]":        "NAT64 form of a loopback",
		"[64:ff9b:1::a00:1]":       "local NAT64",
	}
	for host, class := range forbidden {
		raw := "https://" + host + "/hooks"
		_, err := webhook.CheckURL(context.Background(), raw, webhook.Config{}, resolver)
		var ue *webhook.URLError
		if !errors.Is(err, webhook.ErrURLNotAllowed) || !errors.As(err, &ue) || !strings.Contains(ue.Reason, class+" address") {
			t.Errorf("%s: %v; want ErrURLNotAllowed, a %s address", raw, err, class)
		}
		if _, err := webhook.CheckURL(context.Background(), raw, webhook.Config{AllowPrivate: true}, resolver); err != nil {
			t.Errorf("%s with AllowPrivate: %v", raw, err)
		}
	}
	for _, host := range []string{"93.184.216.34", "8.8.8.8", "11.0.0.1", "172.32.0.1", "192.169.0.1", "100.128.0.1",
		"169.255.0.1", "[2606:4700::1111]", "[::ffff:8.8.8.8]", "[64:ff9b::808:808]", "public.test", "public.test."} {
		if _, err := webhook.CheckURL(context.Background(), "https://"+host+"/hooks", webhook.Config{}, resolver); err != nil {
			t.Errorf("%s: %v; want it allowed", host, err)
		}
	}
}

func TestCheckURLResolvesNames(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		host string
		want error
	}{
		{"loopback.test", webhook.ErrURLNotAllowed},
		{"mixed.test", webhook.ErrURLNotAllowed},
		{"metadata.test", webhook.ErrURLNotAllowed},
		{"missing.test", webhook.ErrInvalidURL},
		{"empty.test", webhook.ErrInvalidURL},
	} {
		if _, err := webhook.CheckURL(ctx, "https://"+tc.host+"/hooks", webhook.Config{}, resolver); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.host, err, tc.want)
		}
	}
	// A DNS server that fails says nothing about the URL: not a 422.
	_, err := webhook.CheckURL(ctx, "https://flaky.test/", webhook.Config{}, resolver)
	var ue *webhook.URLError
	if err == nil || errors.As(err, &ue) {
		t.Errorf("flaky.test: %v; want an error that is not a *URLError", err)
	}
	// With AllowPrivate no name is looked up at all; the form still counts.
	if _, err := webhook.CheckURL(ctx, "https://missing.test/", webhook.Config{AllowPrivate: true}, resolver); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	}
	if _, err := webhook.CheckURL(ctx, "http://public.test/", webhook.Config{AllowPrivate: true}, resolver); !errors.Is(err, webhook.ErrInvalidURL) {
		t.Errorf("http without AllowInsecure: %v", err)
	}
}

// localhost, through the system's resolver, is the loopback.
func TestCheckURLLocalhost(t *testing.T) {
	_, err := webhook.CheckURL(context.Background(), "https://localhost:8443/hooks", webhook.Config{}, nil)
	if !errors.Is(err, webhook.ErrURLNotAllowed) || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("localhost: %v; want ErrURLNotAllowed, loopback", err)
	}
}
