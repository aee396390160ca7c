package lock

import (
	"sync"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// mergedSubscription wakes on a release of any of several keys.
type mergedSubscription struct {
	waker      *backend.Waker
	subs       []backend.Subscription
	done       chan struct{}
	forwarders sync.WaitGroup
	once       sync.Once
}

func (m *mergedSubscription) Released() <-chan struct{} { return m.waker.Released() }

func (m *mergedSubscription) Close() {
	m.once.Do(func() {
		close(m.done)
		m.forwarders.Wait()
		for _, s := range m.subs {
			s.Close()
		}
	})
}
