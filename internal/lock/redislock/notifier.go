package redislock

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
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
	waiters   map[*subscription]struct{}
}

var errClosed = errors.New("redislock: backend closed")

func newNotifier(client Client) *notifier {
	return &notifier{client: client, channels: map[string]*channelState{}}
}

// subscribe registers a waiter on channel and returns once Redis confirmed
// the subscription.
func (n *notifier) subscribe(ctx context.Context, channel string) (*subscription, error) {
	s := &subscription{notifier: n, channel: channel, c: make(chan struct{}, 1)}
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
		state = &channelState{confirmed: make(chan struct{}), waiters: map[*subscription]struct{}{}}
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
					s.notify()
				}
			}
		}
		n.mu.Unlock()
	}
}

func (n *notifier) unsubscribe(s *subscription) {
	n.mu.Lock()
	defer n.mu.Unlock()
	state := n.channels[s.channel]
	if state == nil {
		return
	}
	delete(state.waiters, s)
	if len(state.waiters) > 0 {
		return
	}
	delete(n.channels, s.channel)
	if n.pubsub != nil && !n.closed {
		// A failed UNSUBSCRIBE only leaves a silent channel subscribed
		// until the connection is replaced.
		_ = n.pubsub.Unsubscribe(context.Background(), s.channel)
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

type subscription struct {
	notifier *notifier
	channel  string
	c        chan struct{}
	once     sync.Once
}

func (s *subscription) Released() <-chan struct{} { return s.c }

func (s *subscription) notify() {
	select {
	case s.c <- struct{}{}:
	default: // a wake-up is already pending
	}
}

func (s *subscription) Close() { s.once.Do(func() { s.notifier.unsubscribe(s) }) }
