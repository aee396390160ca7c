package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// maxBody caps what we read of any response: the full seat map of a
// venue of 100,000 seats is some 11 MB, the other bodies are tiny, and a
// misbehaving server must not make the hammer buffer without bound.
const maxBody = 64 << 20

// api is the one place that talks HTTP to the service: setup calls,
// reservations and seat-map reads all go through do. It uses fasthttp's
// client, which costs a fraction of net/http's per request: the hammer
// shares the machine with what it measures, and every cycle it spends is
// one the service under test does not get.
type api struct {
	client  *fasthttp.Client
	std     *http.Client // with -client nethttp, instead of client
	timeout time.Duration
	conns   *connSet
}

// The HTTP clients -client chooses from.
const (
	clientFast = "fasthttp"
	clientStd  = "nethttp"
)

// newAPI returns a client with up to one connection per worker and target,
// so the timed phase reuses connections instead of measuring TCP
// handshakes.
func newAPI(workers, targets int, timeout time.Duration, kind string) *api {
	conns := &connSet{open: map[net.Conn]struct{}{}}
	if kind == clientStd {
		dial := conns.dial(timeout)
		return &api{
			std: &http.Client{Timeout: timeout, Transport: &http.Transport{
				MaxConnsPerHost:     workers,
				MaxIdleConnsPerHost: workers,
				DialContext:         func(_ context.Context, _, addr string) (net.Conn, error) { return dial(addr) },
			}},
			timeout: timeout,
			conns:   conns,
		}
	}
	return &api{
		client: &fasthttp.Client{
			MaxConnsPerHost:          workers,
			MaxConnWaitTimeout:       timeout,
			ReadTimeout:              timeout,
			WriteTimeout:             timeout,
			MaxResponseBodySize:      maxBody,
			NoDefaultUserAgentHeader: true,
			Dial:                     conns.dial(timeout),
		},
		timeout: timeout,
		conns:   conns,
	}
}

func (a *api) close() {
	if a.std != nil {
		a.std.CloseIdleConnections()
	} else {
		a.client.CloseIdleConnections()
	}
	a.conns.closeAll()
}

// stopOnCancel closes every connection when ctx ends, so requests in flight
// fail at once instead of at their timeout. Call the returned func to stop
// watching.
func (a *api) stopOnCancel(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, a.conns.closeAll)
}

// connSet tracks the client's connections.
type connSet struct {
	mu   sync.Mutex
	open map[net.Conn]struct{}
	// spread, when set, has each connection to a loopback IPv4 address
	// come from a loopback address of its own (127.0.0.2, 127.0.0.3, ...):
	// next numbers them, sources counts the connections so made.
	spread  bool
	next    atomic.Int64
	sources atomic.Int64
}

// spreadSources has each connection to a loopback target come from a
// loopback address of its own, as clients on as many machines would:
// the service limits its public routes per client address (RATE_LIMIT_IP).
// Call it before the first request.
func (a *api) spreadSources() { a.conns.spread = true }

// sourceAddresses is how many source addresses spreadSources gave out.
func (a *api) sourceAddresses() int { return int(min(a.conns.sources.Load(), maxSources)) }

// maxSources is how many loopback source addresses spreadSources uses
// (127.0.0.2 to 127.0.255.251), before it takes them again.
const maxSources = 256 * 250

// source is the local address of the next connection to addr: nil but
// for a loopback IPv4 target when spreading.
func (s *connSet) source(addr string) *net.TCPAddr {
	if !s.spread {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	if err != nil || ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		return nil
	}
	n := (s.next.Add(1) - 1) % maxSources
	return &net.TCPAddr{IP: net.IPv4(127, 0, byte(n/250), byte(n%250+2))}
}

func (s *connSet) dial(timeout time.Duration) fasthttp.DialFunc {
	return func(addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: timeout}
		if src := s.source(addr); src != nil {
			d.LocalAddr = src
		}
		c, err := d.Dial("tcp", addr)
		switch {
		case err != nil && d.LocalAddr != nil:
			d.LocalAddr = nil // a system that will not bind it: from the usual address
			c, err = d.Dial("tcp", addr)
		case d.LocalAddr != nil:
			s.sources.Add(1)
		}
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.open[c] = struct{}{}
		s.mu.Unlock()
		return &trackedConn{Conn: c, set: s}, nil
	}
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.open {
		_ = c.Close()
		delete(s.open, c)
	}
}

type trackedConn struct {
	net.Conn
	set *connSet
}

func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.open, c.Conn)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// request is one HTTP request: body, when not nil, is sent as JSON;
// header holds extra request headers (name, value pairs: Accept-Encoding,
// If-None-Match, the waiting room's Admission), read names the response
// headers to return.
type request struct {
	method, url, token string
	body               []byte
	header, read       []string
	// sizeOnly keeps the body's size alone: the seat-map reads, by the
	// thousand a second, only count their bytes.
	sizeOnly bool
}

// response is a request's answer: Size is the body's length as it came
// over the wire (compressed, when the server compressed it: neither
// client decompresses a body whose Accept-Encoding the request set
// itself); Latency covers sending the request and reading the body.
type response struct {
	Status  int
	Size    int
	Body    []byte   // but with sizeOnly
	Header  []string // the values of request.read, in order
	Latency time.Duration
}

// do sends req, bounded by the client's timeouts and failing at once when
// ctx has ended.
func (a *api) do(ctx context.Context, req request) (response, error) {
	var res response
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if a.std != nil {
		return a.doStd(ctx, req)
	}
	freq, fresp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(freq)
	defer fasthttp.ReleaseResponse(fresp)
	freq.SetRequestURI(req.url)
	freq.Header.SetMethod(req.method)
	if req.body != nil {
		freq.Header.SetContentType("application/json")
		freq.SetBodyRaw(req.body)
	}
	if req.token != "" {
		freq.Header.Set("Authorization", "Bearer "+req.token)
	}
	for i := 0; i+1 < len(req.header); i += 2 {
		freq.Header.Set(req.header[i], req.header[i+1])
	}
	start := time.Now()
	err := a.client.Do(freq, fresp)
	res.Latency = time.Since(start)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return res, err
	}
	res.Status, res.Size = fresp.StatusCode(), len(fresp.Body())
	if !req.sizeOnly {
		res.Body = append([]byte(nil), fresp.Body()...)
	}
	for _, name := range req.read {
		res.Header = append(res.Header, string(fresp.Header.Peek(name)))
	}
	return res, nil
}

// doStd is do on net/http.
func (a *api) doStd(ctx context.Context, req request) (response, error) {
	var res response
	hreq, err := http.NewRequestWithContext(ctx, req.method, req.url, bytes.NewReader(req.body))
	if err != nil {
		return res, err
	}
	if req.body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if req.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+req.token)
	}
	for i := 0; i+1 < len(req.header); i += 2 {
		hreq.Header.Set(req.header[i], req.header[i+1])
	}
	start := time.Now()
	resp, err := a.std.Do(hreq)
	if err != nil {
		res.Latency = time.Since(start)
		return res, err
	}
	defer func() { _ = resp.Body.Close() }()
	body := io.LimitReader(resp.Body, maxBody)
	if req.sizeOnly {
		var n int64
		n, err = io.Copy(io.Discard, body)
		res.Size = int(n)
	} else {
		res.Body, err = io.ReadAll(body)
		res.Size = len(res.Body)
	}
	res.Latency = time.Since(start)
	if err != nil {
		return res, err
	}
	res.Status = resp.StatusCode
	for _, name := range req.read {
		res.Header = append(res.Header, resp.Header.Get(name))
	}
	return res, nil
}
