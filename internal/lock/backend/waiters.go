package backend

import "sync"

// Waker is a ready-made Subscription for adapters: a wake-up channel on
// which several releases coalesce into one value, and an idempotent Close
// that runs the adapter's own unsubscribe.
type Waker struct {
	c       chan struct{}
	once    sync.Once
	onClose func(*Waker)
}

// NewWaker returns a Waker whose first Close calls onClose (if not nil).
func NewWaker(onClose func(*Waker)) *Waker {
	return &Waker{c: make(chan struct{}, 1), onClose: onClose}
}

// Released implements Subscription.
func (w *Waker) Released() <-chan struct{} { return w.c }

// Wake delivers one wake-up without blocking; one already pending absorbs it.
func (w *Waker) Wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// Close implements Subscription.
func (w *Waker) Close() {
	w.once.Do(func() {
		if w.onClose != nil {
			w.onClose(w)
		}
	})
}

// Waiters is the set of Wakers of every key an adapter delivers releases
// for: the one registry that the memory, Redis and PostgreSQL adapters share.
// It is safe for concurrent use; its zero value is ready to use.
type Waiters struct {
	mu    sync.Mutex
	byKey map[string]map[*Waker]struct{}
	// OnEmpty, if set before first use, is called after the last Waker of a
	// key closed, outside the set's lock (an adapter unsubscribes there).
	OnEmpty func(key string)
}

// Add registers a new Waker for key; its Close removes it. first reports
// whether key had no Waker before (an adapter subscribes then).
func (s *Waiters) Add(key string) (w *Waker, first bool) {
	w = NewWaker(func(w *Waker) { s.remove(key, w) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey == nil {
		s.byKey = map[string]map[*Waker]struct{}{}
	}
	set := s.byKey[key]
	if set == nil {
		set = map[*Waker]struct{}{}
		s.byKey[key] = set
	}
	set[w] = struct{}{}
	return w, len(set) == 1
}

func (s *Waiters) remove(key string, w *Waker) {
	s.mu.Lock()
	set := s.byKey[key]
	delete(set, w)
	empty := set != nil && len(set) == 0
	if empty {
		delete(s.byKey, key)
	}
	s.mu.Unlock()
	if empty && s.OnEmpty != nil {
		s.OnEmpty(key)
	}
}

// Wake wakes every Waker of key.
func (s *Waiters) Wake(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.byKey[key] {
		w.Wake()
	}
}

// WakeAll wakes every Waker of every key: after a gap in delivery (a
// reconnect), when releases may have been missed.
func (s *Waiters) WakeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range s.byKey {
		for w := range set {
			w.Wake()
		}
	}
}

// Len is how many Wakers key has.
func (s *Waiters) Len(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey[key])
}
