package redislock

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
)

// notifier multiplexes the release channels of every waiter of a Backend
// over one Pub/Sub connection, so a thousand waiting requests cost one
// connection, not a thousand. A channel is subscribed while it has waiters.
type notifier struct {
	client Client

	mu       sync.Mutex
	pubsub   *redis.PubSub
	channels map[string]*channelState
	closed   bool
}

type channelState struct {
	confirmed chan struct{} // closed when Redis confirmed SUBSCRIBE
	waiters   map[*lock.Waker]struct{}
}

var errClosed = errors.New("redislock: backend closed")

func newNotifier(client Client) *notifier {
	return &notifier{client: client, channels: map[string]*channelState{}}
}

// subscribe registers a waiter on channel and returns once Redis confirmed
// the subscription.
func (n *notifier) subscribe(ctx context.Context, channel string) (*lock.Waker, error) {
	s := lock.NewWaker(func(w *lock.Waker) { n.unsubscribe(channel, w) })
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, errClosed
	}
	if n.pubsub == nil {
		n.pubsub = n.client.Subscribe(ctx)
		go n.dispatch(n.pubsub.ChannelWithSubscriptions())
	}
	state := n.channels[channel]
	if state == nil {
		state = &channelState{confirmed: make(chan struct{}), waiters: map[*lock.Waker]struct{}{}}
		n.channels[channel] = state
		// Subscribing under the lock keeps SUBSCRIBE and UNSUBSCRIBE of
		// one channel in the order the waiters came and went.
		if err := n.pubsub.Subscribe(ctx, channel); err != nil {
			delete(n.channels, channel)
			n.mu.Unlock()
			return nil, err
		}
	}
	state.waiters[s] = struct{}{}
	n.mu.Unlock()

	select {
	case <-state.confirmed:
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// dispatch fans messages out to the waiters of their channel.
func (n *notifier) dispatch(messages <-chan any) {
	for m := range messages {
		n.mu.Lock()
		switch m := m.(type) {
		case *redis.Subscription:
			if state := n.channels[m.Channel]; state != nil && m.Kind == "subscribe" {
				select {
				case <-state.confirmed:
				default:
					close(state.confirmed)
				}
			}
		case *redis.Message:
			if state := n.channels[m.Channel]; state != nil {
				for s := range state.waiters {
					s.Wake()
				}
			}
		}
		n.mu.Unlock()
	}
}

func (n *notifier) unsubscribe(channel string, w *lock.Waker) {
	n.mu.Lock()
	defer n.mu.Unlock()
	state := n.channels[channel]
	if state == nil {
		return
	}
	delete(state.waiters, w)
	if len(state.waiters) > 0 {
		return
	}
	delete(n.channels, channel)
	if n.pubsub != nil && !n.closed {
		// A failed UNSUBSCRIBE only leaves a silent channel subscribed
		// until the connection is replaced.
		_ = n.pubsub.Unsubscribe(context.Background(), channel)
	}
}

func (n *notifier) close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	if n.pubsub == nil {
		return nil
	}
	return n.pubsub.Close()
}
