package ratelimit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/ratelimit"
)

// stalledSyncs makes the limiter's syncs (its pipelines) hang, once
// stalled, as on a Redis that stopped answering, until their context ends;
// it reports why each ended.
type stalledSyncs struct {
	stalled atomic.Bool
	began   chan struct{}
	ended   chan error
}

func (s *stalledSyncs) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (s *stalledSyncs) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (s *stalledSyncs) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !s.stalled.Load() {
			return next(ctx, cmds)
		}
		select {
		case s.began <- struct{}{}:
		default:
		}
		<-ctx.Done()
		select {
		case s.ended <- ctx.Err():
		default:
		}
		return ctx.Err()
	}
}

// Close ends a sync in flight instead of waiting out its timeout: an
// instance told to stop while Redis does not answer must not wait for it.
func TestCloseEndsASyncInFlight(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	hook := &stalledSyncs{began: make(chan struct{}, 1), ended: make(chan error, 1)}
	client.AddHook(hook)
	l := ratelimit.New(client, uniqueName("close"), 10)
	hook.stalled.Store(true)
	// The periodic sync comes within SyncInterval and hangs until its
	// timeout, SyncInterval; Close comes while it does.
	select {
	case <-hook.began:
	case <-time.After(10 * time.Second):
		t.Fatal("no periodic sync began")
	}
	_ = l.Close()
	select {
	case err := <-hook.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the sync in flight ended with %v, want it cancelled by Close", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled sync did not end")
	}
}
