package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// genericPlan runs setup on a connection taken out of pool, with
// plan_cache_mode forcing generic plans (the ones prepared statements
// keep), then explain (an EXPLAIN (COSTS OFF) EXECUTE of a statement setup
// prepared), and returns its plan's text. The connection is closed after:
// its settings and prepared statements go with it.
func genericPlan(t *testing.T, pool *pgxpool.Pool, setup []string, explain string) string {
	t.Helper()
	ctx := testContext(t)
	pooled, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pooled.Hijack()
	defer func() { _ = conn.Close(context.Background()) }()
	for _, sql := range append([]string{`SET plan_cache_mode = force_generic_plan`}, setup...) {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%.40s: %v", sql, err)
		}
	}
	rows, err := conn.Query(ctx, explain)
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}
