package tracing

import (
	"context"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// recordedPgx hands the pool's calls to otelpgx only under a recording
// span. otelpgx does work on every call before it looks at the span
// (a start time in the context, its metrics to the global meter), which
// the statements of background work and of requests the sampler dropped
// would pay for nothing. An end is handed on when its start was: the
// context a start returns carries the span the end looks at.
type recordedPgx struct {
	inner *otelpgx.Tracer
}

var (
	_ pgx.QueryTracer       = recordedPgx{}
	_ pgx.BatchTracer       = recordedPgx{}
	_ pgx.CopyFromTracer    = recordedPgx{}
	_ pgx.PrepareTracer     = recordedPgx{}
	_ pgx.ConnectTracer     = recordedPgx{}
	_ pgxpool.AcquireTracer = recordedPgx{}
)

func (t recordedPgx) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !recording(ctx) {
		return ctx
	}
	return t.inner.TraceQueryStart(ctx, conn, data)
}

func (t recordedPgx) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if recording(ctx) {
		t.inner.TraceQueryEnd(ctx, conn, data)
	}
}

func (t recordedPgx) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if !recording(ctx) {
		return ctx
	}
	return t.inner.TraceBatchStart(ctx, conn, data)
}

func (t recordedPgx) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	if recording(ctx) {
		t.inner.TraceBatchQuery(ctx, conn, data)
	}
}

func (t recordedPgx) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	if recording(ctx) {
		t.inner.TraceBatchEnd(ctx, conn, data)
	}
}

func (t recordedPgx) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	if !recording(ctx) {
		return ctx
	}
	return t.inner.TraceCopyFromStart(ctx, conn, data)
}

func (t recordedPgx) TraceCopyFromEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromEndData) {
	if recording(ctx) {
		t.inner.TraceCopyFromEnd(ctx, conn, data)
	}
}

func (t recordedPgx) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	if !recording(ctx) {
		return ctx
	}
	return t.inner.TracePrepareStart(ctx, conn, data)
}

func (t recordedPgx) TracePrepareEnd(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareEndData) {
	if recording(ctx) {
		t.inner.TracePrepareEnd(ctx, conn, data)
	}
}

func (t recordedPgx) TraceConnectStart(ctx context.Context, data pgx.TraceConnectStartData) context.Context {
	if !recording(ctx) {
		return ctx
	}
	return t.inner.TraceConnectStart(ctx, data)
}

func (t recordedPgx) TraceConnectEnd(ctx context.Context, data pgx.TraceConnectEndData) {
	if recording(ctx) {
		t.inner.TraceConnectEnd(ctx, data)
	}
}

func (t recordedPgx) TraceAcquireStart(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireStartData) context.Context {
	if !recording(ctx) {
		return ctx
	}
	return t.inner.TraceAcquireStart(ctx, pool, data)
}

func (t recordedPgx) TraceAcquireEnd(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireEndData) {
	if recording(ctx) {
		t.inner.TraceAcquireEnd(ctx, pool, data)
	}
}
