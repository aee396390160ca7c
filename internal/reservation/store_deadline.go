package reservation

import (
	"context"
	"time"
)

// DefaultWriteTimeout bounds each write made under seat locks (a booking, a
// hold, its confirmation or release, a cancellation) unless
// Config.WriteTimeout says otherwise. It takes milliseconds; one that has
// not answered in DefaultWriteTimeout finds PostgreSQL silent, and the
// client hears so (503, after the outcome look-up for a booking) in
// seconds, not at the end of a request budget sized for the longest wait
// for a lock.
const DefaultWriteTimeout = 2 * time.Second

// storeWrite is ctx bounded by the service's write timeout.
func (s *Service) storeWrite(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.writeTimeout)
}
