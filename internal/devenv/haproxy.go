package devenv

import (
	"fmt"
	"strings"
)

// HAProxyConfig is the configuration of the HAProxy before the instances
// (host:port each) on addr, answering errorfile's response when no
// instance can take a request. Each instance is checked through /readyz
// every 500 ms: an instance answers 503 for SHUTDOWN_DELAY before it
// closes, so it is out of rotation before it goes, and a rolling restart
// fails no request.
func HAProxyConfig(addr, errorfile string, instances []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    maxconn 8000
    log stdout format raw local0 warning

defaults
    mode http
    log global
    timeout connect 2s
    timeout client 70s
    timeout server 70s
    # Live seat-map streams stay open for as long as their clients watch,
    # and each event goes out at once: without http-no-delay HAProxy holds
    # small writes back for about 200 ms, every event of a stream late.
    timeout tunnel 1h
    option http-no-delay
    # A connection an instance refused (it is starting or just stopped) is
    # tried again on another: the request never reached the first.
    retries 3
    option redispatch
    retry-on conn-failure
    # The client's address, for the instances' per-address limit
    # (TRUSTED_PROXIES).
    option forwardfor
    # When no instance at all can take a request, HAProxy answers itself:
    # the service's problem, 503 unavailable with Retry-After, not an HTML
    # page.
    errorfile 503 %s

frontend api
    bind %s
    default_backend instances

backend instances
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    # Down at the first failed check (an instance answers 503 for
    # SHUTDOWN_DELAY before it closes), up after two good ones. A check
    # may take 2 s: an instance slow under an on-sale's load is not taken
    # out (with every instance out, only the unchecked backups are left).
    timeout check 2s
    default-server inter 500ms fall 1 rise 2
`, errorfile, addr)
	for i, a := range instances {
		fmt.Fprintf(&b, "    server api%d %s check\n", i+1, a)
	}
	// The same instances again, unchecked, as backups: while PostgreSQL
	// has no leader, every instance's /readyz fails, yet each one holds a
	// request until the new primary answers (up to 10 s, see
	// docs/operations.md) rather than fail it. With every checked server
	// down, HAProxy sends the requests to these (an instance that is
	// really gone refuses the connection and the request is
	// redispatched).
	b.WriteString("    option allbackups\n")
	for i, a := range instances {
		fmt.Fprintf(&b, "    server api%d-spare %s backup\n", i+1, a)
	}
	return b.String()
}

// UnavailableResponse is what HAProxy answers when no instance is in
// rotation: the response the service gives a request whose dependency is
// away, 503 unavailable with Retry-After.
func UnavailableResponse() string {
	const body = `{"type":"urn:seatlock:problem:unavailable","title":"Service unavailable","status":503,` +
		`"detail":"No instance is ready to serve (a dependency cannot be reached); retry later.","code":"unavailable"}`
	return strings.Join([]string{"HTTP/1.1 503 Service Unavailable", "Content-Type: application/problem+json",
		"Retry-After: 2", "Cache-Control: no-store", fmt.Sprintf("Content-Length: %d", len(body)), "", body}, "\r\n")
}
