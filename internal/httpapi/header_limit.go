package httpapi

import (
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// MaxHeaderBytes bounds a request's header block (http.Server's
// MaxHeaderBytes): a header larger than any client needs is refused before
// it is read on, with 431 header_too_large.
const MaxHeaderBytes = 32 << 10

var errHeaderTooLarge = &problem.Error{Status: http.StatusRequestHeaderFieldsTooLarge, Code: "header_too_large",
	Title:  "Request header fields too large",
	Detail: "The request's header fields must be at most 32 KiB in all."}

// plainHeaderTooLarge is what net/http writes, in one write to the
// connection, when a request's header block passes MaxHeaderBytes.
const plainHeaderTooLarge = "HTTP/1.1 431 Request Header Fields Too Large\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" +
	"431 Request Header Fields Too Large"

// ProblemListener returns ln, whose connections answer a header block over
// MaxHeaderBytes with a problem (431 header_too_large) instead of
// net/http's plain text.
//
// Why at the connection: net/http reads the header block before any
// handler exists, and past MaxHeaderBytes writes its own 431 straight to
// the connection and closes it; no middleware runs, and the server offers
// no hook for it. Raising MaxHeaderBytes and checking the size in a
// middleware would only move the edge (a larger block still gets the
// plain 431) while every connection could make the server hold that much
// more. So the limit stays where net/http enforces it, and the
// connection replaces that one answer, recognised by its exact bytes,
// with the problem: a request being served never writes those bytes (its
// answers carry a Date and the API's headers), and a net/http whose text
// changed would be caught by TestOversizedHeaderIsAProblem.
func ProblemListener(ln net.Listener) net.Listener {
	return &problemListener{Listener: ln, ids: newRequestIDs()}
}

type problemListener struct {
	net.Listener
	ids *requestIDs
}

func (l *problemListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &problemConn{Conn: c, ids: l.ids}, nil
}

// problemConn is a connection whose plain 431 is written as a problem.
type problemConn struct {
	net.Conn
	ids *requestIDs
}

func (c *problemConn) Write(p []byte) (int, error) {
	if len(p) != len(plainHeaderTooLarge) || string(p) != plainHeaderTooLarge {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(headerTooLarge(c.ids.id())); err != nil {
		return 0, err
	}
	return len(p), nil
}

// headerTooLarge is the whole answer to a header block too large: the
// problem with the headers every problem has, and the connection's end,
// as net/http ends it.
func headerTooLarge(requestID string) []byte {
	body := errHeaderTooLarge.JSON(requestID)
	b := make([]byte, 0, 256+len(body))
	b = append(b, "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/problem+json\r\n"...)
	b = append(b, "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Request-Id: "...)
	b = append(b, requestID...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nConnection: close\r\n\r\n"...)
	return append(b, body...)
}

// CloseWrite passes net/http's half-close on: after its 431 it closes the
// writing side and waits, so that the client reads the answer before the
// connection is reset.
func (c *problemConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the connection's own ReadFrom (sendfile or splice from a
// file or socket), which net/http uses when the connection has one.
func (c *problemConn) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(c.Conn, r)
}
