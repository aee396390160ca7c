package devenv

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// PGChange is what a switchover or failover of the PostgreSQL pair took.
type PGChange struct {
	// PromotedAfter runs from the switchover's request, or the kill, until
	// the new leader answers /primary with 200.
	PromotedAfter time.Duration
	// RejoinedAfter runs from then (a switchover), or from the killed
	// node's restart (a failover), until the old leader streams as the
	// new one's synchronous standby.
	RejoinedAfter time.Duration
	Leader        string // the node that leads now
}

// String is the line the drills parse:
// promotedAfterMs=7650 rejoinedAfterMs=6100 leader=pg2.
func (c PGChange) String() string {
	return fmt.Sprintf("promotedAfterMs=%d rejoinedAfterMs=%d leader=%s", c.PromotedAfter.Milliseconds(), c.RejoinedAfter.Milliseconds(), c.Leader)
}

// pgPair loads DIR's pair and finds its leader and the other node, which
// must be the leader's synchronous standby (within 30 s): a switchover or
// failover needs both.
func pgPair(dir string) (p Pair, old, next PairNode, err error) {
	if p, err = LoadPair(dir); err != nil {
		return
	}
	l := p.Leader()
	if l == nil {
		return p, old, next, fmt.Errorf("no PostgreSQL node leads (make cluster first; patronictl -c %s list)", p.configPath(p.Nodes[0]))
	}
	old, next = *l, p.Other(*l)
	err = waitFor(30*time.Second, next.Name+" as "+old.Name+"'s synchronous standby", func() bool {
		return SyncStandby(next.REST(), next.Name, old.REST())
	})
	return
}

// PGSwitchover hands the lead of DIR's PostgreSQL pair to the standby
// (Patroni's switchover) and waits until it leads and the old leader
// streams as its synchronous standby; say is told what happens.
func PGSwitchover(dir string, say io.Writer) (PGChange, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return PGChange{}, err
	}
	_, old, next, err := pgPair(dir)
	if err != nil {
		return PGChange{}, err
	}
	logf(say, "cluster", "PostgreSQL: switching over from %s to %s (Patroni's switchover)", old.Name, next.Name)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := Switchover(ctx, old.REST(), old.Name, next.Name); err != nil {
		return PGChange{}, err
	}
	if err := waitFor(60*time.Second, next.Name+" leading", func() bool { return Leads(next.REST()) }); err != nil {
		return PGChange{}, err
	}
	promoted := time.Now()
	if err := waitFor(60*time.Second, old.Name+" back as "+next.Name+"'s synchronous standby", func() bool {
		return SyncStandby(old.REST(), old.Name, next.REST())
	}); err != nil {
		return PGChange{}, err
	}
	c := PGChange{PromotedAfter: promoted.Sub(began), RejoinedAfter: time.Since(promoted), Leader: next.Name}
	logf(say, "cluster", "PostgreSQL: %s leads %d ms after the switchover was asked for; %s streams as its synchronous standby %d ms later",
		next.Name, c.PromotedAfter.Milliseconds(), old.Name, c.RejoinedAfter.Milliseconds())
	return c, nil
}

// PGFailover kills the leading node of DIR's PostgreSQL pair as a machine
// dying would (its Patroni, its postmaster and every process of theirs,
// SIGKILL), waits until the standby leads, then starts the killed node's
// Patroni again (Patroni) and waits until it streams as the synchronous
// standby, so that it can be repeated at once; say is told what happens.
func PGFailover(dir string, say io.Writer) (PGChange, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return PGChange{}, err
	}
	p, old, next, err := pgPair(dir)
	if err != nil {
		return PGChange{}, err
	}
	patroni := p.runs(old.Name)
	if patroni == 0 {
		return PGChange{}, fmt.Errorf("%s's Patroni is not running (no pid in %s)", old.Name, p.pidPath(old.Name))
	}
	pidFile := filepath.Join(p.Data, old.Name, "postmaster.pid")
	postmaster := readPid(pidFile)
	if !running(postmaster) {
		return PGChange{}, fmt.Errorf("%s's PostgreSQL is not running (no pid in %s)", old.Name, pidFile)
	}
	began := time.Now()
	killed := KillTree(patroni, postmaster)
	logf(say, "cluster", "PostgreSQL: SIGKILLed %s: its Patroni (pid %d), its postmaster (pid %d) and %d processes in all", old.Name, patroni, postmaster, killed)
	if err := waitFor(60*time.Second, next.Name+" leading after "+old.Name+" was killed", func() bool { return Leads(next.REST()) }); err != nil {
		return PGChange{}, err
	}
	promoted := time.Now()
	logf(say, "cluster", "PostgreSQL: %s leads %d ms after the kill; starting %s's Patroni again", next.Name, promoted.Sub(began).Milliseconds(), old.Name)
	restarted := time.Now()
	if _, err := Patroni(dir, say); err != nil {
		return PGChange{}, err
	}
	if err := waitFor(60*time.Second, old.Name+" back as "+next.Name+"'s synchronous standby", func() bool {
		return SyncStandby(old.REST(), old.Name, next.REST())
	}); err != nil {
		return PGChange{}, err
	}
	c := PGChange{PromotedAfter: promoted.Sub(began), RejoinedAfter: time.Since(restarted), Leader: next.Name}
	logf(say, "cluster", "PostgreSQL: %s streams as %s's synchronous standby %d ms after its restart", old.Name, next.Name, c.RejoinedAfter.Milliseconds())
	return c, nil
}
