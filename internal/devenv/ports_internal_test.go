package devenv

import (
	"net"
	"testing"
	"time"
)

// freePorts hands out distinct ports that can be bound.
func TestFreePortsAreDistinctAndFree(t *testing.T) {
	ports, err := freePorts(50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d handed out twice (%v)", p, ports)
		}
		seen[p] = true
	}
	ln, err := net.Listen("tcp", hostPort(ports[0]))
	if err != nil {
		t.Fatalf("bind a port freePorts gave: %v", err)
	}
	_ = ln.Close()
}

// The line a switchover or failover ends with, which the drills parse.
func TestPGChangeLine(t *testing.T) {
	c := PGChange{PromotedAfter: 7650 * time.Millisecond, RejoinedAfter: 6100*time.Millisecond + 700*time.Microsecond, Leader: "pg2"}
	if got, want := c.String(), "promotedAfterMs=7650 rejoinedAfterMs=6100 leader=pg2"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
