package app_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// statementCounter is a TCP proxy in front of PostgreSQL that counts the
// statements its clients run, read off the wire protocol: each simple
// Query ('Q') and each Bind ('B') of the extended protocol, which pgx sends
// once for every execution of a statement, prepared or not. An instance
// whose DATABASE_URL points at it cannot run a statement it does not see,
// whatever its pool does: the count is PostgreSQL's view, not the app's.
type statementCounter struct {
	ln     net.Listener
	target string
	n      atomic.Int64

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// countedDatabaseURL returns rawURL pointing at a statementCounter in
// front of its server, without TLS (so the protocol can be read).
func countedDatabaseURL(t *testing.T, rawURL string) (string, *statementCounter) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &statementCounter{ln: ln, target: u.Host}
	c.wg.Add(1)
	go c.accept()
	t.Cleanup(c.close)
	u.Host = ln.Addr().String()
	return withParam(t, u.String(), "sslmode", "disable"), c
}

// statements is how many statements went through so far.
func (c *statementCounter) statements() int64 { return c.n.Load() }

func (c *statementCounter) accept() {
	defer c.wg.Done()
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", c.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, client, server)
		c.mu.Unlock()
		c.wg.Add(2)
		go func() {
			defer c.wg.Done()
			_, _ = io.Copy(client, server)
			_ = client.Close()
		}()
		go func() {
			defer c.wg.Done()
			_ = c.relay(server, client)
			_ = server.Close()
		}()
	}
}

// Protocol codes of the untyped messages a client may send before its
// startup message; the server answers each with one byte.
const (
	sslRequestCode    = 80877103
	gssencRequestCode = 80877104
)

// relay copies the client's messages to the server, counting statements.
func (c *statementCounter) relay(server io.Writer, client io.Reader) error {
	// Untyped messages first: requests for encryption (refused, as
	// sslmode=disable asks for none), then the startup message.
	for {
		msg, err := readMessage(client, 0)
		if err != nil {
			return err
		}
		if _, err := server.Write(msg); err != nil {
			return err
		}
		code := binary.BigEndian.Uint32(msg[4:8])
		if code != sslRequestCode && code != gssencRequestCode {
			break
		}
	}
	for {
		head := make([]byte, 1)
		if _, err := io.ReadFull(client, head); err != nil {
			return err
		}
		msg, err := readMessage(client, head[0])
		if err != nil {
			return err
		}
		if head[0] == 'Q' || head[0] == 'B' {
			c.n.Add(1)
		}
		if _, err := server.Write(msg); err != nil {
			return err
		}
	}
}

// readMessage reads one message's length and body; a typed one (kind not
// zero) is returned with its type byte in front.
func readMessage(r io.Reader, kind byte) ([]byte, error) {
	var length [4]byte
	if _, err := io.ReadFull(r, length[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(length[:])
	if n < 4 || n > 1<<30 || (kind == 0 && n < 8) {
		return nil, errors.New("statement counter: malformed message")
	}
	var msg []byte
	if kind != 0 {
		msg = append(msg, kind)
	}
	msg = append(msg, length[:]...)
	body := make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return append(msg, body...), nil
}

func (c *statementCounter) close() {
	_ = c.ln.Close()
	c.mu.Lock()
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}
