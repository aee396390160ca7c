package lockenv_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// The environment's own servers are stopped before goleak looks: nothing
// of theirs may be left behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(lockenv.Wrap(m)) }

func TestSharedServers(t *testing.T) {
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		if err := lockenv.Redis(t).Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		cluster := lockenv.RedisCluster(t)
		// Keys over every master's slots.
		for i := range 30 {
			key := lockenv.Name("key_") + strconv.Itoa(i)
			if err := cluster.Set(ctx, key, "v", time.Minute).Err(); err != nil {
				t.Fatalf("set %s: %v", key, err)
			}
		}
		// ForEachMaster calls fn on every master at once.
		var masters atomic.Int32
		if err := cluster.ForEachMaster(ctx, func(context.Context, *redis.Client) error {
			masters.Add(1)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n := masters.Load(); n != 3 {
			t.Errorf("%d masters, want 3", n)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		conn, err := pgx.Connect(ctx, lockenv.DatabaseURL(t))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close(ctx) }()
		var one int
		if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("SELECT 1: %d, %v", one, err)
		}
	})
}
