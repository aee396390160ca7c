package lock

import (
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// The background release of an attempt of unknown outcome lasts until a
// grant would have expired: from the request, or from the latest instant
// the backend says the store can still grant it, whichever is later.
func TestForgetUntil(t *testing.T) {
	requested := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	const ttl = 2 * time.Second
	plain := errors.New("timeout")
	for _, tc := range []struct {
		name string
		err  error
		want time.Time
	}{
		{"no bound", plain, requested.Add(ttl)},
		{"bound after the request", &backend.UncertainError{Err: plain, By: requested.Add(5 * time.Second)}, requested.Add(7 * time.Second)},
		{"bound before the request", &backend.UncertainError{Err: plain, By: requested.Add(-time.Second)}, requested.Add(ttl)},
	} {
		if got := forgetUntil(tc.err, requested, ttl); !got.Equal(tc.want) {
			t.Errorf("%s: forgetUntil = %v, want %v", tc.name, got, tc.want)
		}
	}
}
