package tracing

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// The attributes of a server span are OpenTelemetry's HTTP server
// conventions, as otelhttp (which made these spans before) sets them, so
// that dashboards and queries written against those spans still hold.

// appendRequestAttributes appends a sampled request's: server address
// and port (the Host header's; the port only when not the scheme's
// default), method (_OTHER and the original for an unknown one), scheme,
// peer address and port, user agent, client address (the first of
// X-Forwarded-For, else the peer), path and protocol.
func appendRequestAttributes(attrs []attribute.KeyValue, r *http.Request) []attribute.KeyValue {
	https := r.TLS != nil
	host, port := splitHostPort(r.Host)
	attrs = append(attrs, semconv.ServerAddress(host))
	attrs = appendMethodAttributes(attrs, r.Method)
	if https {
		attrs = append(attrs, semconv.URLScheme("https"))
	} else {
		attrs = append(attrs, semconv.URLScheme("http"))
	}
	schemeDefault := https && port == 443 || !https && port == 80
	if port > 0 && !schemeDefault {
		attrs = append(attrs, semconv.ServerPort(port))
	}
	peer, peerPort := splitHostPort(r.RemoteAddr)
	if peer != "" {
		attrs = append(attrs, semconv.NetworkPeerAddress(peer))
		if peerPort > 0 {
			attrs = append(attrs, semconv.NetworkPeerPort(peerPort))
		}
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	client, _, _ := strings.Cut(r.Header.Get("X-Forwarded-For"), ",")
	if client == "" {
		client = peer
	}
	if client != "" {
		attrs = append(attrs, semconv.ClientAddress(client))
	}
	if r.URL != nil && r.URL.Path != "" {
		attrs = append(attrs, semconv.URLPath(r.URL.Path))
	}
	name, version, _ := strings.Cut(r.Proto, "/")
	if name != "" && name != "HTTP" {
		attrs = append(attrs, semconv.NetworkProtocolName(strings.ToLower(name)))
	}
	if version != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(version))
	}
	return attrs
}

func appendMethodAttributes(attrs []attribute.KeyValue, method string) []attribute.KeyValue {
	if method == "" {
		return append(attrs, semconv.HTTPRequestMethodOther)
	}
	if known(method) {
		return append(attrs, semconv.HTTPRequestMethodKey.String(method))
	}
	if upper := strings.ToUpper(method); known(upper) {
		return append(attrs, semconv.HTTPRequestMethodKey.String(upper), semconv.HTTPRequestMethodOriginal(method))
	}
	return append(attrs, semconv.HTTPRequestMethodOther, semconv.HTTPRequestMethodOriginal(method))
}

func known(method string) bool {
	switch method {
	case http.MethodConnect, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodOptions,
		http.MethodPatch, http.MethodPost, http.MethodPut, http.MethodTrace:
		return true
	}
	return false
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port"; port
// is -1 when absent or not a port.
func splitHostPort(hostport string) (host string, port int) {
	if !strings.Contains(hostport, ":") {
		return hostport, -1
	}
	if strings.HasPrefix(hostport, "[") && !strings.Contains(hostport[strings.LastIndexByte(hostport, ']')+1:], ":") {
		return strings.Trim(hostport, "[]"), -1
	}
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return host, -1
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return host, -1
	}
	return host, int(n)
}

// appendResponseAttributes appends the sizes of the request's body (as
// read by the handler) and of the answer's, when not zero, and the status.
func appendResponseAttributes(attrs []attribute.KeyValue, read, written int64, status int) []attribute.KeyValue {
	if read > 0 {
		attrs = append(attrs, semconv.HTTPRequestBodySize(int(read)))
	}
	if written > 0 {
		attrs = append(attrs, semconv.HTTPResponseBodySize(int(written)))
	}
	if status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
	}
	return attrs
}

// serverStatus marks a server span failed on a 5xx (a 4xx is the
// caller's fault, not the server's) or a status that is not one.
func serverStatus(code int) (codes.Code, string) {
	switch {
	case code < 100 || code >= 600:
		return codes.Error, fmt.Sprintf("Invalid HTTP status code %d", code)
	case code >= 500:
		return codes.Error, ""
	}
	return codes.Unset, ""
}
