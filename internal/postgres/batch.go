package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// sendBatch sends batch's statements on tx in one round trip and reads
// their results in order, one reader a statement. PostgreSQL runs them one
// after the other, each as if sent alone; the first that fails ends the
// batch (the ones after it do not run) and the transaction, and its error
// is the one returned.
func sendBatch(ctx context.Context, tx pgx.Tx, batch *pgx.Batch, read ...func(pgx.BatchResults) error) error {
	results := tx.SendBatch(ctx, batch)
	for _, r := range read {
		if err := r(results); err != nil {
			_ = results.Close() // the same failure, or the batch's end
			return err
		}
	}
	return results.Close()
}
