package devenv

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"
)

// Failover asks DIR's Sentinels to promote the replica (SENTINEL
// FAILOVER), and waits up to 30 s until they name the new master.
func Failover(dir string, say io.Writer) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	s, err := LoadSentinels(dir)
	if err != nil {
		return err
	}
	first := hostPort(s.Ports[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before, err := MasterAddr(ctx, first)
	if err != nil {
		return fmt.Errorf("the Sentinels do not answer (%v): make cluster first", err)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: first, MaxRetries: -1})
	defer func() { _ = sc.Close() }()
	if err := sc.Failover(ctx, SentinelMaster).Err(); err != nil {
		return fmt.Errorf("sentinel failover %s: %w", SentinelMaster, err)
	}
	var after string
	if awaitTrue(ctx, 200*time.Millisecond, func() (bool, error) {
		a, err := MasterAddr(ctx, first)
		after = a
		return err == nil && a != before, err
	}) != nil {
		return fmt.Errorf("the master is still %s 30 s after the failover was asked for", before)
	}
	logf(say, "cluster", "the Sentinels promoted %s (the master was %s)", after, before)
	return nil
}
