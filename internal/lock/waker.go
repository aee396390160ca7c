package lock

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
