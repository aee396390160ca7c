package lockenv

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// Proxy is a TCP proxy in front of a real server, with Toxiproxy's fault
// injection: toxics that delay, drop or reset traffic in either direction,
// and Cut, which takes the server away altogether. It runs in the test's
// own process, so each test has its own.
type Proxy struct {
	tb    testing.TB
	proxy *toxiproxy.Proxy
}

// NewProxy listens on 127.0.0.1 (a free port) and forwards to target
// ("host:port"). It is stopped when the test ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(server, Name("proxy_"), "127.0.0.1:0", target)
	if err := p.Start(); err != nil {
		tb.Fatalf("start proxy to %s: %v", target, err)
	}
	tb.Cleanup(p.Stop)
	return &Proxy{tb: tb, proxy: p}
}

// Addr is the address clients dial instead of the target.
func (p *Proxy) Addr() string { return p.proxy.Listen }

// Cut drops all connections and stops accepting: clients see resets, then
// connection refused.
func (p *Proxy) Cut() { p.proxy.Stop() }

// Restore accepts connections again on the same address after Cut.
func (p *Proxy) Restore() {
	p.tb.Helper()
	if err := p.proxy.Start(); err != nil {
		p.tb.Fatalf("restart proxy: %v", err)
	}
}

// Retarget sends new connections to target ("host:port") from now on, on
// the same listening address, as a failover re-points a virtual IP or a
// Sentinel-discovered address: connections open to the old target are
// closed, and clients reconnect to the new one.
func (p *Proxy) Retarget(target string) {
	p.tb.Helper()
	if err := p.proxy.Update(&toxiproxy.Proxy{Listen: p.proxy.Listen, Upstream: target, Enabled: true}); err != nil {
		p.tb.Fatalf("retarget proxy to %s: %v", target, err)
	}
}

// Toxic is one fault: Type is a Toxiproxy toxic ("latency", "timeout",
// "reset_peer", "limit_data", "bandwidth", "slicer", "slow_close"), Stream
// is "downstream" (server to client, the default) or "upstream", Toxicity
// the share of connections it applies to (zero means all), Attributes the
// toxic's own settings (for example {"latency": 500} in milliseconds).
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream,omitempty"`
	Toxicity   float32        `json:"toxicity,omitempty"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// AddToxic starts a fault on every connection, open or new, until
// RemoveToxic.
func (p *Proxy) AddToxic(t Toxic) {
	p.tb.Helper()
	if t.Toxicity == 0 {
		t.Toxicity = 1
	}
	body, err := json.Marshal(t)
	if err != nil {
		p.tb.Fatal(err)
	}
	if _, err := p.proxy.Toxics.AddToxicJson(strings.NewReader(string(body))); err != nil {
		p.tb.Fatalf("add toxic %s: %v", t.Name, err)
	}
}

// RemoveToxic ends the fault named name.
func (p *Proxy) RemoveToxic(name string) {
	p.tb.Helper()
	if err := p.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
		p.tb.Fatalf("remove toxic %s: %v", name, err)
	}
}

// ProxyGoroutines are goleak options that pass over the goroutines
// Toxiproxy itself leaves behind when a proxy stops (a toxic stage blocked
// on a link whose other end has closed). They match only frames of
// Toxiproxy's links, never the code under test.
func ProxyGoroutines() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2/toxics.(*ToxicStub).Run"),
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).read"),
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).write"),
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).RemoveToxic.func1"),
	}
}
