package tracing

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Attributes and names of the lock spans.
const (
	AttrLockKey     = attribute.Key("seatlock.lock.key")
	AttrLockKeys    = attribute.Key("seatlock.lock.keys")
	AttrLockFence   = attribute.Key("seatlock.lock.fence")
	AttrLockFences  = attribute.Key("seatlock.lock.fences")
	AttrLockOutcome = attribute.Key("seatlock.lock.outcome")
	// AttrLockWaitedMS is how long an Acquire allowed to wait (Prefer:
	// wait) took, in milliseconds; 0 for a fail-fast Acquire.
	AttrLockWaitedMS  = attribute.Key("seatlock.lock.waited_ms")
	AttrLockMaxWaitMS = attribute.Key("seatlock.lock.max_wait_ms")
	AttrLockTTLMS     = attribute.Key("seatlock.lock.ttl_ms")

	SpanAcquire = "lock.acquire"
	SpanSeal    = "lock.seal"
	SpanRelease = "lock.release"
)

// tracedLocker is a lock client with a span for each acquisition and each
// end of a lease it granted (seal or release). Calls outside a recorded
// trace make no span and get the lease itself.
type tracedLocker struct {
	inner  reservation.SeatLocker
	tracer trace.Tracer
}

func (l *tracedLocker) Acquire(ctx context.Context, key string, opts lock.Options) (lock.Lease, error) {
	if !recording(ctx) {
		return l.inner.Acquire(ctx, key, opts)
	}
	ctx, span := l.tracer.Start(ctx, SpanAcquire)
	defer span.End()
	start := time.Now()
	lease, err := l.inner.Acquire(ctx, key, opts)
	attrs := acquired(span, opts, time.Since(start), err, AttrLockKey.String(key))
	if err != nil {
		setAttributes(span, attrs...)
		return nil, err
	}
	setAttributes(span, append(attrs, AttrLockFence.Int64(lease.Fence()))...)
	return wrapLease(lease, l.tracer), nil
}

func (l *tracedLocker) AcquireAll(ctx context.Context, keys []string, opts lock.Options) (lock.MultiLease, error) {
	if !recording(ctx) {
		return l.inner.AcquireAll(ctx, keys, opts)
	}
	ctx, span := l.tracer.Start(ctx, SpanAcquire)
	defer span.End()
	start := time.Now()
	lease, err := l.inner.AcquireAll(ctx, keys, opts)
	attrs := acquired(span, opts, time.Since(start), err, AttrLockKeys.StringSlice(keys))
	if err != nil {
		setAttributes(span, attrs...)
		return nil, err
	}
	setAttributes(span, append(attrs, AttrLockFences.Int64Slice(lease.Fences()))...)
	return &tracedMultiLease{MultiLease: lease, tracer: l.tracer}, nil
}

// acquired is an Acquire's attributes: key, TTL, wait allowed, outcome
// (as the lock metrics name it) and time waited. Held and sealed are
// answers, not failures: only an error marks the span.
func acquired(span trace.Span, opts lock.Options, took time.Duration, err error, key attribute.KeyValue) []attribute.KeyValue {
	var waited time.Duration
	if opts.Wait > 0 {
		waited = took
	}
	outcome := lock.OutcomeAcquired
	switch {
	case err == nil:
	case errors.Is(err, lock.ErrSealed):
		outcome = lock.OutcomeSealed
	case errors.Is(err, lock.ErrHeld):
		outcome = lock.OutcomeHeld
	default:
		outcome = lock.OutcomeError
		recordError(span, err)
		span.SetStatus(codes.Error, "lock acquisition failed")
	}
	return []attribute.KeyValue{key, AttrLockTTLMS.Int64(opts.TTL.Milliseconds()), AttrLockMaxWaitMS.Int64(opts.Wait.Milliseconds()),
		AttrLockOutcome.String(string(outcome)), AttrLockWaitedMS.Float64(float64(waited.Microseconds()) / 1000)}
}

// wrapLease keeps the capability of lease (lock.Sealer), which the use
// cases discover by type assertion.
func wrapLease(lease lock.Lease, tracer trace.Tracer) lock.Lease {
	base := tracedLease{Lease: lease, tracer: tracer}
	if sealer, ok := lease.(lock.Sealer); ok {
		return &tracedSealingLease{tracedLease: base, sealer: sealer}
	}
	return &base
}

type tracedLease struct {
	lock.Lease
	tracer trace.Tracer
}

func (l *tracedLease) Release(ctx context.Context) error {
	return l.end(ctx, SpanRelease, l.Lease.Release)
}

// end makes the span called name around do, which ends the lease (seals
// or releases it).
func (l *tracedLease) end(ctx context.Context, name string, do func(context.Context) error) error {
	ctx, span := l.tracer.Start(ctx, name)
	defer span.End()
	return endLease(span, do(ctx), AttrLockKey.String(l.Key()), AttrLockFence.Int64(l.Fence()))
}

type tracedSealingLease struct {
	tracedLease
	sealer lock.Sealer
}

func (l *tracedSealingLease) Seal(ctx context.Context, ttl time.Duration) error {
	return l.end(ctx, SpanSeal, func(ctx context.Context) error { return l.sealer.Seal(ctx, ttl) })
}

func (l *tracedSealingLease) SealWithNote(ctx context.Context, ttl time.Duration, note string) error {
	return l.end(ctx, SpanSeal, func(ctx context.Context) error { return l.sealer.SealWithNote(ctx, ttl, note) })
}

type tracedMultiLease struct {
	lock.MultiLease
	tracer trace.Tracer
}

func (l *tracedMultiLease) Release(ctx context.Context) error {
	ctx, span := l.tracer.Start(ctx, SpanRelease)
	defer span.End()
	return endLease(span, l.MultiLease.Release(ctx), AttrLockKeys.StringSlice(l.Keys()), AttrLockFences.Int64Slice(l.Fences()))
}

// endLease records how a lease ended: "done", "not_held" (it had expired
// or been taken: the work outlived its TTL) or "error".
func endLease(span trace.Span, err error, attrs ...attribute.KeyValue) error {
	outcome := "done"
	switch {
	case err == nil:
	case errors.Is(err, lock.ErrNotHeld):
		outcome = "not_held"
	default:
		outcome = "error"
		recordError(span, err)
		span.SetStatus(codes.Error, "ending the lease failed")
	}
	setAttributes(span, append(attrs, AttrLockOutcome.String(outcome))...)
	return err
}
