package httpapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddressTrustsOnlyTheTrustedProxies(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"no proxy", "203.0.113.7:5000", nil, "203.0.113.7"},
		{"an untrusted peer's header is not read", "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"the trusted proxy names the client", "127.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a client's own entry before the proxy's is not reached", "127.0.0.1:5000", []string{"192.0.2.66, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted hops", "127.0.0.1:5000", []string{"198.51.100.1, 10.1.2.3"}, "198.51.100.1"},
		{"header lines read from the last", "127.0.0.1:5000", []string{"192.0.2.66", "198.51.100.1"}, "198.51.100.1"},
		{"only trusted hops: the first of them", "127.0.0.1:5000", []string{"10.0.0.9"}, "10.0.0.9"},
		{"a trusted proxy without the header", "127.0.0.1:5000", nil, "127.0.0.1"},
		{"garbage ends the walk at the last address", "127.0.0.1:5000", []string{"198.51.100.1, not-an-address"}, "127.0.0.1"},
		{"an entry with a port", "127.0.0.1:5000", []string{"198.51.100.1:4711"}, "198.51.100.1"},
		{"a bracketed IPv6 entry", "127.0.0.1:5000", []string{"[2001:db8::1]"}, "2001:db8::1"},
		{"an IPv4-mapped IPv6 entry", "127.0.0.1:5000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/schedules", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddress(r, trusted); got != tt.want {
				t.Errorf("clientAddress = %q, want %q", got, tt.want)
			}
		})
	}
	// No trusted proxies: the peer, whatever the header says.
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "198.51.100.1")
	if got := clientAddress(r, nil); got != "127.0.0.1" {
		t.Errorf("without trusted proxies: %q, want the peer", got)
	}
}
