package devenv

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name the Sentinels know the Redis primary by: the
// master of SENTINEL_URL (redis+sentinel://h:p,h:p,h:p/seatlock/0).
const SentinelMaster = "seatlock"

// SentinelConf is one redis-sentinel's configuration: it listens on Port,
// keeps its state in Dir and watches the primary on 127.0.0.1:MasterPort
// as SentinelMaster, with a quorum of 2 (of three Sentinels), the primary
// down after 1 s without an answer.
type SentinelConf struct {
	Port       int
	Dir        string
	MasterPort int
	// Daemonize makes it a daemon recording its pid in Dir/sentinel.pid
	// and logging to Dir/sentinel.log (make cluster's Sentinels, which
	// outlive it); else it stays in the foreground, logging to its
	// output (a test's).
	Daemonize bool
}

// Text is the sentinel.conf. Sentinel rewrites its file as it learns: the
// file must be its own and writable, and a fresh one is written at each
// start (the primary, which keeps no data across a stop, starts as the
// master again).
func (c SentinelConf) Text() string {
	daemon := "daemonize no\n"
	if c.Daemonize {
		daemon = fmt.Sprintf("daemonize yes\npidfile %s\nlogfile %s\n",
			filepath.Join(c.Dir, "sentinel.pid"), filepath.Join(c.Dir, "sentinel.log"))
	}
	return fmt.Sprintf(`port %d
bind 127.0.0.1
%sdir %s
sentinel resolve-hostnames no
sentinel monitor %[4]s 127.0.0.1 %[5]d 2
sentinel down-after-milliseconds %[4]s 1000
sentinel failover-timeout %[4]s 5000
sentinel parallel-syncs %[4]s 1
`, c.Port, daemon, c.Dir, SentinelMaster, c.MasterPort)
}

// SentinelReady reports whether the Sentinel on addr knows the master,
// its one replica (linked to it) and the two other Sentinels: then any
// two of the three can promote the replica.
func SentinelReady(ctx context.Context, addr string) (bool, error) {
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer func() { _ = sc.Close() }()
	replicas, err := sc.Replicas(ctx, SentinelMaster).Result()
	if err != nil {
		return false, err
	}
	others, err := sc.Sentinels(ctx, SentinelMaster).Result()
	if err != nil {
		return false, err
	}
	linked := 0
	for _, r := range replicas {
		if r["flags"] == "slave" && r["master-link-status"] == "ok" {
			linked++
		}
	}
	return linked == 1 && len(others) == 2, nil
}

// MasterAddr asks the Sentinel on addr where the master is now
// (host:port).
func MasterAddr(ctx context.Context, addr string) (string, error) {
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer func() { _ = sc.Close() }()
	hp, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
	if err != nil {
		return "", err
	}
	if len(hp) != 2 {
		return "", fmt.Errorf("the Sentinel on %s answered %q for the master's address", addr, hp)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}
