package redislock

import (
	"context"
	"fmt"
	"testing"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// slot computes what the cluster computes, with and without hash tags.
func TestSlotMatchesTheCluster(t *testing.T) {
	client := lockenv.RedisCluster(t)
	keys := []string{"", "a", "{}", "{}x", "a{b}c", "{user1000}.following", "foo{}{bar}", "lock:{schedule:7}:seat:42"}
	for i := range 200 {
		keys = append(keys, fmt.Sprintf("lock:{schedule:%d}:seat:%d", i*7919, i), fmt.Sprintf("job-%d", i))
	}
	for _, k := range keys {
		want, err := client.ClusterKeySlot(context.Background(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := slot(k); int64(got) != want {
			t.Errorf("slot(%q) = %d, CLUSTER KEYSLOT says %d", k, got, want)
		}
	}
}
