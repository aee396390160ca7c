package webhook

import (
	"fmt"
	"net/netip"
)

// forbidden lists the address blocks a delivery may not reach unless
// Config.AllowPrivate: the service's own host and networks, which an
// endpoint's URL must not turn into a way in (SSRF). An IPv4-mapped IPv6
// address (::ffff:127.0.0.1) is checked as its IPv4.
var forbidden = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"}, // "this network"; 0.0.0.0 reaches the local host
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"}, // cloud metadata services live here
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // and 255.255.255.255, broadcast
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// nat64 is the well-known NAT64 prefix: its addresses carry an IPv4
// address in their last 32 bits, which a local NAT64 gateway would dial.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// checkAddr returns nil for an address a delivery may reach, else a
// *URLError wrapping ErrURLNotAllowed that names the address's class.
func checkAddr(a netip.Addr) error {
	if !a.IsValid() {
		return &URLError{Err: ErrURLNotAllowed, Reason: "not an IP address"}
	}
	if class := classOf(a); class != "" {
		return &URLError{Err: ErrURLNotAllowed, Reason: fmt.Sprintf("%s: %s address", a, class)}
	}
	return nil
}

// classOf names the forbidden class of a, or returns "" for an address
// a delivery may reach.
func classOf(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if nat64.Contains(a) {
		b := a.As16()
		if class := classOf(netip.AddrFrom4([4]byte(b[12:]))); class != "" {
			return "NAT64 form of a " + class
		}
		return ""
	}
	for _, f := range forbidden {
		if f.prefix.Contains(a) {
			return f.class
		}
	}
	return ""
}
