package redislock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// Timings of the notifier.
const (
	// idleUnsubscribe is how long a channel stays subscribed after its last
	// waiter left. Keys that are contended now are contended again soon;
	// and a channel is only unsubscribed long after its SUBSCRIBE was
	// confirmed, so a late confirmation can never be taken for that of a
	// later SUBSCRIBE.
	idleUnsubscribe = 10 * time.Second
	// subscribeTimeout and unsubscribeTimeout bound the writes of SUBSCRIBE
	// and UNSUBSCRIBE, which run apart from any one waiter.
	subscribeTimeout   = 2 * time.Second
	unsubscribeTimeout = 2 * time.Second
)

// notifier multiplexes the release channels of every waiter of a Backend
// over one Pub/Sub connection, so a thousand waiting requests cost one
// connection, not a thousand.
//
// go-redis re-subscribes every channel after the connection drops, and a
// release published while it was down is lost. So every subscribe
// confirmation after the first (a re-subscription) wakes all waiters of its
// channel to look at the lock again.
//
// Its mutex guards only memory: SUBSCRIBE and UNSUBSCRIBE are written
// outside it (in order, one at a time, behind sending), so that delivering
// messages never waits for the network.
type notifier struct {
	client  Client
	waiters backend.Waiters // by channel
	sending chan struct{}   // one SUBSCRIBE/UNSUBSCRIBE write at a time

	mu       sync.Mutex
	pubsub   *redis.PubSub
	channels map[string]*channelState
	closed   bool
	idle     sync.WaitGroup // idle timers that may still unsubscribe
	writes   sync.WaitGroup // SUBSCRIBE writes in flight
}

// channelState is one subscribed channel.
type channelState struct {
	confirmed chan struct{} // closed at the first subscribe confirmation
	idle      *time.Timer   // set while the channel has no waiter
}

func (s *channelState) isConfirmed() bool {
	select {
	case <-s.confirmed:
		return true
	default:
		return false
	}
}

var errClosed = errors.New("redislock: backend closed")

func newNotifier(client Client) *notifier {
	n := &notifier{client: client, sending: make(chan struct{}, 1), channels: map[string]*channelState{}}
	n.waiters.OnEmpty = n.lastWaiterLeft
	return n
}

// subscribe registers a waiter on channel and returns once Redis confirmed
// the channel's subscription.
func (n *notifier) subscribe(ctx context.Context, channel string) (*backend.Waker, error) {
	w, _ := n.waiters.Add(channel)
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		w.Close()
		return nil, errClosed
	}
	if n.pubsub == nil {
		// No channel given: this opens nothing yet.
		n.pubsub = n.client.Subscribe(context.Background())
		go n.dispatch(n.pubsub.ChannelWithSubscriptions())
	}
	pubsub := n.pubsub
	state := n.channels[channel]
	isNew := state == nil
	if isNew {
		state = &channelState{confirmed: make(chan struct{})}
		n.channels[channel] = state
		n.writes.Add(1) // under mu: close waits for it
	} else if state.idle != nil && state.idle.Stop() {
		state.idle = nil
		n.idle.Done()
	}
	n.mu.Unlock()

	if isNew {
		// Written on behalf of every waiter of the channel, so not bound
		// to this one's context: a waiter that gives up must not leave the
		// channel unsubscribed for those that stay. go-redis records the
		// channel even when the write fails, and subscribes it again when
		// it reconnects.
		go func() {
			defer n.writes.Done()
			ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
			defer cancel()
			_ = n.send(ctx, func(ctx context.Context) error { return pubsub.Subscribe(ctx, channel) })
		}()
	}
	select {
	case <-state.confirmed:
		return w, nil
	case <-ctx.Done():
		w.Close()
		return nil, ctx.Err()
	}
}

// send writes one SUBSCRIBE or UNSUBSCRIBE, after those before it.
func (n *notifier) send(ctx context.Context, write func(context.Context) error) error {
	select {
	case n.sending <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-n.sending }()
	return write(ctx)
}

// dispatch hands messages and subscribe confirmations to the waiters.
func (n *notifier) dispatch(messages <-chan any) {
	for m := range messages {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			n.mu.Lock()
			state := n.channels[m.Channel]
			resubscribed := state != nil && state.isConfirmed()
			if state != nil && !resubscribed {
				close(state.confirmed)
			}
			n.mu.Unlock()
			// After a reconnect, releases may have been missed while no
			// connection listened. (The first confirmation needs no
			// wake-up: its waiters look at the lock once subscribed.)
			if resubscribed {
				n.waiters.Wake(m.Channel)
			}
		case *redis.Message:
			n.waiters.Wake(m.Channel)
		}
	}
}

// lastWaiterLeft keeps channel subscribed for idleUnsubscribe, then
// unsubscribes it unless a waiter came back.
func (n *notifier) lastWaiterLeft(channel string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	state := n.channels[channel]
	if n.closed || state == nil || state.idle != nil {
		return
	}
	n.idle.Add(1)
	state.idle = time.AfterFunc(idleUnsubscribe, func() { n.unsubscribeIdle(channel, state) })
}

func (n *notifier) unsubscribeIdle(channel string, state *channelState) {
	defer n.idle.Done()
	n.mu.Lock()
	if n.closed || n.channels[channel] != state || state.idle == nil || n.waiters.Len(channel) > 0 {
		n.mu.Unlock()
		return
	}
	state.idle = nil
	if !state.isConfirmed() {
		// Its confirmation is still on the way: unsubscribing now could let
		// it arrive after a new SUBSCRIBE of the channel and be taken for
		// that one's. Look again later.
		n.idle.Add(1)
		state.idle = time.AfterFunc(idleUnsubscribe, func() { n.unsubscribeIdle(channel, state) })
		n.mu.Unlock()
		return
	}
	delete(n.channels, channel)
	pubsub := n.pubsub
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	// A failed UNSUBSCRIBE only leaves a silent channel subscribed until
	// the connection is replaced.
	_ = n.send(ctx, func(ctx context.Context) error { return pubsub.Unsubscribe(ctx, channel) })
}

func (n *notifier) close() error {
	n.mu.Lock()
	n.closed = true
	for _, state := range n.channels {
		if state.idle != nil && state.idle.Stop() {
			state.idle = nil
			n.idle.Done()
		}
	}
	pubsub := n.pubsub
	n.mu.Unlock()
	n.idle.Wait()
	n.writes.Wait()
	if pubsub == nil {
		return nil
	}
	return pubsub.Close()
}
