package redislock

// PendingCalls is how many calls of b wait for a batch.
func PendingCalls(b *Backend) int { return b.pipeline.Pending() }
