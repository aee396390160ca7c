// Package redisconn opens a go-redis client for a standalone Redis server, a
// Redis Cluster or a master watched by Redis Sentinel from one URL, so that
// configuration (REDIS_URL) alone chooses between them.
//
// go-redis parses every URL (redis.ParseURL, redis.ParseClusterURL,
// redis.ParseFailoverURL), query options included. This package picks the
// parser, rewrites its two shorthands (redis+cluster://, redis+sentinel://)
// into go-redis's own forms, and adds what those parsers leave out: the
// service's defaults (timeouts bound by the context, retries, RESP2, and
// connection buffer sizes, which go-redis's query options cannot set),
// refusals of what a lock cannot use, and error messages without the
// password.
//
// go-redis's forms:
//
//	redis://[user:password@]host[:port][/db][?option=value&...]
//	rediss://...                                    the same over TLS
//	unix://[user:password@]/path/to/redis.sock[?db=N&...]
//
// are one standalone server (the port defaults to 6379, the database to
// 0); with one or more addr parameters ("redis://h1:7000?addr=h2:7001") a
// Redis Cluster, never a one-seed cluster without them; with master_name
// ("redis://[user:password@]s1:26379/0?master_name=m&addr=s2:26379") a
// master watched by Redis Sentinel, where the user info is the Sentinels'
// and the username and password parameters the servers'.
//
// The shorthands:
//
//	redis+cluster://[user:password@]host1:port1[,host2:port2,...][?option=value&...]
//	rediss+cluster://...                            the same over TLS
//
// is a Redis Cluster. The listed nodes are only seeds: the client discovers
// the others from them, but listing every master lets it start while one
// seed is down. A port left out defaults to 6379; IPv6 hosts are written in
// brackets ("[::1]:7000"). A cluster has no databases, so the path of any
// cluster URL must be empty, "/" or "/0".
//
//	redis+sentinel://[user:password@]host1:port1[,host2:port2,...]/master-name[/db][?option=value&...]
//	rediss+sentinel://...                           the same over TLS
//
// is a master and its replicas watched by Redis Sentinel: the hosts are
// Sentinels (a port left out defaults to 26379), master-name is the name
// they monitor the master under (sentinel monitor <master-name> ...;
// percent-encode '/', '?', '#' and '%' in it), db the database (default
// 0). The user name and password are the Redis servers' (master and
// replicas); the Sentinels are asked without credentials. Either Sentinel
// form makes go-redis's failover client: it asks the Sentinels for the
// master's address, follows it through a failover by itself (Sentinel's
// +switch-master announcement, and a new question at every reconnection)
// and never sends a command to a replica.
//
// Query options are go-redis's (dial_timeout, read_timeout, pool_size,
// client_name, pipeline_read_buffer_size, ...; for clusters also
// max_redirects, read_only, route_by_latency, route_randomly). Unknown
// options are errors. A Sentinel client refuses the options that would
// read from replicas (route_by_latency, route_randomly, replica_only,
// use_disconnected_replicas): a lock is the master's.
//
// The clients speak RESP2 unless the URL says protocol=3: the service uses
// no RESP3 feature, and on RESP3 go-redis looks for push notifications
// before every reply, a cost of its own on every call of the hot path.
//
// The user name and password must be percent-encoded where they contain
// '/', '?', '#', '@' or '%'. Error messages never contain the password.
package redisconn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults applied to both kinds of client unless the URL sets them
// (dial_timeout, read_timeout, write_timeout).
const (
	DialTimeout  = 2 * time.Second
	ReadTimeout  = time.Second
	WriteTimeout = time.Second
	// MaxRetries is how many times go-redis re-sends a command after a
	// transport error (a reset or closed connection) before failing, unless
	// the URL sets max_retries (-1 turns retries off). Retrying is safe for
	// the lock port: every lock script is idempotent per owner token, so a
	// re-sent acquire whose first run succeeded gets the same lock and
	// fence back, and a re-sent extension sets the same TTL. A re-sent
	// release whose first run deleted the key answers "not held"; the key is
	// free either way. Timeouts are not retried: a context deadline ends
	// the call. It applies to standalone clients; a cluster client retries
	// the same way through its redirects (go-redis' MaxRedirects, 3 unless
	// the URL sets max_redirects) and keeps per-node retries off.
	MaxRetries = 3
	// Protocol is the RESP version spoken unless the URL sets protocol.
	Protocol = 2
)

// Buffer sizes of every client's connections, unless an Option or the
// URL (pipeline_read_buffer_size, pipeline_write_buffer_size) says
// otherwise. go-redis gives each connection 32 KiB each way, and each
// connection of its pipeline pool 128 KiB each way: some 3 MB an instance,
// most of the heap's live megabytes, for commands and replies of a few
// hundred bytes. Memory at rest is the smaller part: the garbage collector
// lets the heap grow to twice what is live, so every live megabyte is two
// of the process's peak.
const (
	// BufferSize is a connection's read and write buffer: a lock script
	// call and its reply are under 300 bytes, and a larger reply (a seat
	// image of a stadium) only takes more reads.
	BufferSize = 8 << 10
	// PipelineBufferSize is a pipeline connection's read and write buffer:
	// the largest batch of lock calls (redisbatch.MaxBatch, 128 calls of
	// under 250 bytes) is written at once.
	PipelineBufferSize = 32 << 10
)

// Open returns a *redis.Client for a standalone URL, a *redis.ClusterClient
// for a cluster URL, or a *redis.Client of go-redis's failover kind
// (redis.NewFailoverClient) for a Sentinel URL (see the package
// documentation). The client has
// ContextTimeoutEnabled, so that context deadlines bound every call, and the
// timeouts above. Open does not connect: the first command does. Close the
// client when done.
func Open(rawURL string, options ...Option) (redis.UniversalClient, error) {
	var o openOptions
	for _, opt := range options {
		opt(&o)
	}
	p, err := parse(rawURL, o)
	switch {
	case err != nil:
		return nil, err
	case p.failover != nil:
		return redis.NewFailoverClient(p.failover), nil
	case p.cluster != nil:
		return redis.NewClusterClient(p.cluster), nil
	}
	return redis.NewClient(p.standalone), nil
}

// Option tunes Open.
type Option func(*openOptions)

type openOptions struct{ minPool, bufferSize int }

// WithMinPoolSize makes the client's pool (per node, for a cluster) hold
// at least n connections, whatever go-redis's default (10 per CPU) or the
// URL's pool_size say: for a client whose callers each hold a connection
// for a long time, as the live seat map's blocking stream reads do.
// Connections are still opened only when needed.
func WithMinPoolSize(n int) Option { return func(o *openOptions) { o.minPool = n } }

// WithBufferSize gives each of the client's connections a read and a
// write buffer of n bytes instead of BufferSize (its pipeline connections
// keep PipelineBufferSize): smaller for a client with many connections
// that wait in blocking reads and carry small replies.
func WithBufferSize(n int) Option { return func(o *openOptions) { o.bufferSize = n } }

// size sets the buffer sizes of a client's options: its connections' by
// the Option or BufferSize, its pipeline connections' by the URL or
// PipelineBufferSize.
func (o openOptions) size(read, write, pipelineRead, pipelineWrite *int) {
	*read = orDefaultInt(o.bufferSize, BufferSize)
	*write = *read
	*pipelineRead = orDefaultInt(*pipelineRead, PipelineBufferSize)
	*pipelineWrite = orDefaultInt(*pipelineWrite, PipelineBufferSize)
}

// poolSize is the pool size to set: the configured one (0: go-redis's
// default, 10 per CPU), raised to the minimum asked for.
func (o openOptions) poolSize(configured int) int {
	if o.minPool <= 0 {
		return configured
	}
	return max(orDefaultInt(configured, 10*runtime.GOMAXPROCS(0)), o.minPool)
}

// Check reports whether Open would accept rawURL, without making a client.
// Its error, like Open's, never contains the password.
func Check(rawURL string) error {
	_, err := parse(rawURL, openOptions{})
	return err
}

// Kind is the Redis deployment a URL names.
type Kind int

// Kinds of deployment.
const (
	Standalone Kind = iota // redis://, rediss://, unix://
	Cluster                // redis+cluster://, rediss+cluster://, or go-redis's addr form
	Sentinel               // redis+sentinel://, rediss+sentinel://, or go-redis's master_name form
)

// KindOf reports which deployment rawURL names, once Check would accept
// it; its error is Check's (with Standalone).
func KindOf(rawURL string) (Kind, error) {
	p, err := parse(rawURL, openOptions{})
	if err != nil {
		return Standalone, err
	}
	return p.kind, nil
}

// FailoverOptions returns the options Open gives go-redis's failover
// client for a Sentinel URL (an error for any other kind of URL).
func FailoverOptions(rawURL string) (*redis.FailoverOptions, error) {
	p, err := parse(rawURL, openOptions{})
	if err != nil {
		return nil, err
	}
	if p.failover == nil {
		return nil, p.url.errorf("not a Sentinel URL")
	}
	return p.failover, nil
}

// parsed is a URL's options as go-redis parsed them, the package's
// defaults and o applied: one of standalone, cluster and failover is set.
type parsed struct {
	url        *redisURL
	kind       Kind
	standalone *redis.Options
	cluster    *redis.ClusterOptions
	failover   *redis.FailoverOptions
}

func parse(rawURL string, o openOptions) (*parsed, error) {
	u, err := split(rawURL)
	if err != nil {
		return nil, err
	}
	p := &parsed{url: u, kind: u.kind}
	switch u.kind {
	case Standalone:
		if p.standalone, err = redis.ParseURL(u.scheme + "://" + u.userinfo + u.hosts + u.rest); err != nil {
			return nil, u.goRedisError(err)
		}
		s := p.standalone
		s.PoolSize = o.poolSize(s.PoolSize)
		o.size(&s.ReadBufferSize, &s.WriteBufferSize, &s.PipelineReadBufferSize, &s.PipelineWriteBufferSize)
		bound(&s.ContextTimeoutEnabled, &s.DialTimeout, &s.ReadTimeout, &s.WriteTimeout)
		s.MaxRetries = orDefaultInt(s.MaxRetries, MaxRetries)
		s.Protocol = orDefaultInt(s.Protocol, Protocol)
	case Cluster:
		if p.cluster, err = u.clusterOptions(); err != nil {
			return nil, err
		}
		c := p.cluster
		c.PoolSize = o.poolSize(c.PoolSize)
		o.size(&c.ReadBufferSize, &c.WriteBufferSize, &c.PipelineReadBufferSize, &c.PipelineWriteBufferSize)
		bound(&c.ContextTimeoutEnabled, &c.DialTimeout, &c.ReadTimeout, &c.WriteTimeout)
		c.Protocol = orDefaultInt(c.Protocol, Protocol)
		// Node retries stay off (go-redis' cluster default): the cluster
		// client retries itself, up to MaxRedirects times, and node retries
		// would multiply those.
	case Sentinel:
		if p.failover, err = u.failoverOptions(); err != nil {
			return nil, err
		}
		f := p.failover
		if f.MasterName == "" {
			return nil, u.errorf("no Sentinel master name")
		}
		if f.RouteByLatency || f.RouteRandomly || f.ReplicaOnly || f.UseDisconnectedReplicas {
			return nil, u.errorf("route_by_latency, route_randomly, replica_only and use_disconnected_replicas read from replicas: locks need the master")
		}
		f.PoolSize = o.poolSize(f.PoolSize)
		o.size(&f.ReadBufferSize, &f.WriteBufferSize, &f.PipelineReadBufferSize, &f.PipelineWriteBufferSize)
		bound(&f.ContextTimeoutEnabled, &f.DialTimeout, &f.ReadTimeout, &f.WriteTimeout)
		f.MaxRetries = orDefaultInt(f.MaxRetries, MaxRetries)
		f.Protocol = orDefaultInt(f.Protocol, Protocol)
	}
	return p, nil
}

// bound makes every call of a client bounded: the context's deadline
// applies to socket I/O, and timeouts the URL left unset get the package
// defaults.
func bound(contextTimeout *bool, dial, read, write *time.Duration) {
	*contextTimeout = true
	*dial = orDefault(*dial, DialTimeout)
	*read = orDefault(*read, ReadTimeout)
	*write = orDefault(*write, WriteTimeout)
}

func orDefaultInt(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// redisURL is a Redis URL cut where go-redis's parsers cannot be trusted
// with it: its scheme (the shorthands are not go-redis's), its list of
// hosts (net/url takes one host), and its user info (net/url's errors
// quote the whole URL, password included).
type redisURL struct {
	written string // the scheme as written, for error messages
	scheme  string // "redis", "rediss" or "unix", lower case
	kind    Kind
	// shorthand: redis+cluster:// or redis+sentinel://, rewritten into
	// go-redis's form before it parses them.
	shorthand bool
	// userinfo is "user:password@" as go-redis's parsers are given it,
	// re-encoded: net/url refuses some bytes in a password that the
	// service has always taken as written ('^', '|', a space, ...).
	userinfo string
	user     string // the user name as written, for error messages
	hasPass  bool
	hosts    string // the authority without user info: "h:p" or "h1:p1,h2:p2"
	rest     string // path, query and fragment, as written
}

func split(rawURL string) (*redisURL, error) {
	if rawURL == "" {
		return nil, errors.New("redisconn: empty Redis URL")
	}
	scheme, after, ok := strings.Cut(rawURL, "://")
	if !ok || !validScheme(scheme) {
		return nil, errors.New("redisconn: Redis URL has no scheme: want redis://, rediss://, unix://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://")
	}
	u := &redisURL{written: scheme, scheme: strings.ToLower(scheme)}
	for suffix, kind := range map[string]Kind{"+cluster": Cluster, "+sentinel": Sentinel} {
		if base, ok := strings.CutSuffix(u.scheme, suffix); ok {
			if base != "redis" && base != "rediss" {
				return nil, fmt.Errorf("redisconn: invalid Redis URL scheme %q: want redis%s or rediss%[2]s", scheme, suffix)
			}
			u.scheme, u.kind, u.shorthand = base, kind, true
		}
	}
	// RFC 3986: the authority ends at the first '/', '?' or '#'; its user
	// info ends at its last '@'.
	authority := after
	if end := strings.IndexAny(after, "/?#"); end >= 0 {
		authority, u.rest = after[:end], after[end:]
	}
	if strings.Contains(u.rest, "@") {
		// Most likely a password with an unencoded '/', '?' or '#': the
		// part after it would be echoed as path or option name in error
		// messages, so refuse before anything is echoed.
		return nil, errors.New("redisconn: malformed Redis URL: '@' after the host; percent-encode '/', '?', '#' and '@' in the user name and password")
	}
	u.hosts = authority
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		u.hosts = authority[at+1:]
		var password string
		u.user, password, u.hasPass = strings.Cut(authority[:at], ":")
		user, err1 := url.PathUnescape(u.user)
		password, err2 := url.PathUnescape(password)
		if err1 != nil || err2 != nil {
			return nil, u.errorf("invalid percent-encoding in the user name or password")
		}
		info := url.User(user)
		if u.hasPass {
			info = url.UserPassword(user, password)
		}
		u.userinfo = info.String() + "@"
	}
	if !u.shorthand && (u.scheme == "redis" || u.scheme == "rediss") {
		// go-redis's Sentinel form, redis://host:port?master_name=name&...,
		// and its cluster form, redis://host:port?addr=host:port&...
		if q, err := url.ParseQuery(u.query()); err == nil {
			switch {
			case q.Has("master_name"):
				u.kind = Sentinel
			case q.Has("addr"):
				u.kind = Cluster
			}
		}
	}
	return u, nil
}

// validScheme reports whether s is an RFC 3986 scheme. Anything else before
// "://" (say "user:secret@host") must not be echoed in error messages.
func validScheme(s string) bool {
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// path is what follows the hosts up to the query or fragment.
func (u *redisURL) path() string {
	if end := strings.IndexAny(u.rest, "?#"); end >= 0 {
		return u.rest[:end]
	}
	return u.rest
}

// query is the raw query, without '?' and fragment.
func (u *redisURL) query() string {
	_, query, _ := strings.Cut(u.rest, "?")
	query, _, _ = strings.Cut(query, "#")
	return query
}

// redacted is the URL for error messages: the password, if any, is "xxxxx".
func (u *redisURL) redacted() string {
	userinfo := ""
	if u.userinfo != "" {
		userinfo = u.user
		if u.hasPass {
			userinfo += ":xxxxx"
		}
		userinfo += "@"
	}
	return u.written + "://" + userinfo + u.hosts + passwordOption.ReplaceAllString(u.rest, "${1}xxxxx")
}

// passwordOption matches the value of a query option that is a password
// (go-redis's Sentinel form takes the servers' password as one).
var passwordOption = regexp.MustCompile(`(?i)([?&][^=&#]*password=)[^&#]*`)

func (u *redisURL) errorf(format string, args ...any) error {
	return &URLError{URL: u.redacted(), Err: fmt.Errorf(format, args...)}
}

// goRedisError is a go-redis parser's error as a URLError. net/url's
// errors quote the URL they were given, password included: only their
// reason is kept.
func (u *redisURL) goRedisError(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	return u.errorf("%w", err)
}

// URLError is a Redis URL that Open or Check refused: the URL with its
// password masked, and what is wrong with it. Err alone names no host nor
// credentials, for messages that must not carry the URL (config).
type URLError struct {
	URL string // the URL as written, the password (if any) "xxxxx"
	Err error
}

func (e *URLError) Error() string { return "redisconn: Redis URL " + e.URL + ": " + e.Err.Error() }

func (e *URLError) Unwrap() error { return e.Err }

// clusterOptions parses a cluster URL with redis.ParseClusterURL, given in
// go-redis's form: the first node as the host, the others as addr
// parameters.
func (u *redisURL) clusterOptions() (*redis.ClusterOptions, error) {
	switch path := u.path(); path {
	case "", "/", "/0":
	default:
		return nil, u.errorf("a cluster has only database 0, got path %q", path)
	}
	q, err := url.ParseQuery(u.query())
	if err != nil {
		return nil, u.errorf("invalid query: %w", err)
	}
	addrs := q["addr"]
	if u.hosts != "" || len(addrs) == 0 {
		// The hosts first; go-redis would make an empty host localhost.
		hosts, err := u.addresses("6379", "cluster node")
		if err != nil {
			return nil, err
		}
		addrs = append(hosts, addrs...)
	}
	q["addr"] = addrs[1:]
	opts, err := redis.ParseClusterURL(u.scheme + "://" + u.userinfo + addrs[0] + "?" + q.Encode())
	if err != nil {
		return nil, u.goRedisError(err)
	}
	return opts, nil
}

// failoverOptions parses a Sentinel URL with redis.ParseFailoverURL: go-redis's
// form as written, the shorthand redis+sentinel://[user:password@]h1,h2/master[/db]?...
// given in go-redis's form (first Sentinel as the host, the others as
// addr parameters, the master as master_name, the user info the servers').
func (u *redisURL) failoverOptions() (*redis.FailoverOptions, error) {
	if !u.shorthand {
		opts, err := redis.ParseFailoverURL(u.scheme + "://" + u.userinfo + u.hosts + u.rest)
		if err != nil {
			return nil, u.goRedisError(err)
		}
		return opts, nil
	}
	addrs, err := u.addresses(SentinelPort, "Sentinel")
	if err != nil {
		return nil, err
	}
	segments := strings.Split(strings.TrimPrefix(u.path(), "/"), "/")
	master, err := url.PathUnescape(segments[0])
	switch {
	case err != nil:
		return nil, u.errorf("invalid percent-encoding in the Sentinel master name")
	case master == "":
		return nil, u.errorf("no Sentinel master name: want redis+sentinel://host:port,.../master-name[/db]")
	case len(segments) > 2:
		return nil, u.errorf("path has more than a master name and a database")
	}
	db := 0
	if len(segments) == 2 && segments[1] != "" {
		if db, err = strconv.Atoi(segments[1]); err != nil || db < 0 {
			return nil, u.errorf("invalid database number %q", segments[1])
		}
	}
	q, err := url.ParseQuery(u.query())
	if err != nil {
		return nil, u.errorf("invalid query: %w", err)
	}
	for _, name := range []string{"master_name", "addr", "db", "username", "password"} {
		if q.Has(name) {
			return nil, u.errorf("option %s is not for redis+sentinel: the Sentinels, master name, database and credentials go before the query", name)
		}
	}
	q.Set("master_name", master)
	q["addr"] = addrs[1:]
	opts, err := redis.ParseFailoverURL(u.scheme + "://" + u.userinfo + addrs[0] + "/" + strconv.Itoa(db) + "?" + q.Encode())
	if err != nil {
		return nil, u.goRedisError(err)
	}
	// go-redis reads the user info as the Sentinels'; the shorthand's are
	// the servers', and the Sentinels are asked without credentials.
	opts.Username, opts.Password = opts.SentinelUsername, opts.SentinelPassword
	opts.SentinelUsername, opts.SentinelPassword = "", ""
	return opts, nil
}

// SentinelPort is the port of a Sentinel address that leaves it out.
const SentinelPort = "26379"

// addresses checks each of the URL's comma-separated hosts and returns
// them, defaultPort added where the port is left out: go-redis takes one
// host, and each addr parameter with its port.
func (u *redisURL) addresses(defaultPort, what string) ([]string, error) {
	var addrs []string
	for _, h := range strings.Split(u.hosts, ",") {
		addr, err := hostPort(h, defaultPort, what)
		if err != nil {
			return nil, u.errorf("%w", err)
		}
		addrs = append(addrs, addr)
	}
	return addrs, nil
}

// hostPort checks one "host[:port]" of a cluster or Sentinel URL (what
// names which) and adds defaultPort when the port is missing.
func hostPort(h, defaultPort, what string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("empty %s address", what)
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: "host" or "[::1]".
		host, port = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), defaultPort
		if strings.ContainsAny(host, "[]") || (strings.Contains(host, ":") && !strings.HasPrefix(h, "[")) {
			return "", fmt.Errorf("invalid %s address %q", what, h)
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("invalid port in %s address %q", what, h)
	}
	if host == "" {
		return "", fmt.Errorf("no host in %s address %q", what, h)
	}
	return net.JoinHostPort(host, port), nil
}
