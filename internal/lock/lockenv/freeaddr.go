package lockenv

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FreePort returns a port nothing listens on, for a server process to
// bind. It lies below the kernel's ephemeral range: a port that
// net.Listen(":0") picked and released is ephemeral, and under a busy test
// run the kernel may hand it to an outgoing connection before the server
// binds it ("address already in use"). Ports are never handed out twice in
// one process; across the binaries `go test ./...` runs at once, the
// random choice from ~10,000 ports keeps a collision within a bind's
// window unlikely, and the servers' starts try again on other ports when
// theirs was taken.
func FreePort() (int, error) {
	low := ephemeralLow()
	first := max(low-12000, 1024)
	for range 1000 {
		port := first + rand.IntN(low-first)
		if !handOut(port) {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		_ = ln.Close()
		return port, nil
	}
	return 0, errors.New("no free port below the ephemeral range")
}

// FreeAddr is FreePort's 127.0.0.1 address, for a server process a test
// starts; the test fails when there is none.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	port, err := FreePort()
	if err != nil {
		tb.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

func handOut(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports[port] {
		return false
	}
	handedOut.ports[port] = true
	return true
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if low, err := strconv.Atoi(f[0]); err == nil && low > 2048 {
				return low
			}
		}
	}
	return 32768
}
