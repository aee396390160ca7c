package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
)

// Statistics taken while seat_changes held only dead rows say it is
// empty; on a WithIndexPlans pool the relay's read of the oldest changes
// reads them by id all the same, never the whole table.
func TestIndexPlansReadTheOutboxByIdWhateverItsStatistics(t *testing.T) {
	t.Parallel()
	migrated := testenv.Pool(t)
	ctx := testContext(t)
	for _, sql := range []string{
		`INSERT INTO seat_changes (schedule_id, seat_id, status) SELECT 1, g, 'reserved' FROM generate_series(1, 5000) g`,
		`DELETE FROM seat_changes`,
		`ANALYZE seat_changes`,
	} {
		if _, err := migrated.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	plan := func(pool *pgxpool.Pool) string {
		t.Helper()
		var lines []string
		rows, err := pool.Query(ctx, `EXPLAIN (COSTS OFF) SELECT id, schedule_id, seat_id, status, created_at FROM seat_changes ORDER BY id LIMIT 500`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, line)
		}
		return strings.Join(lines, "\n")
	}
	indexed, err := postgres.Open(ctx, migrated.Config().ConnString(), postgres.WithIndexPlans())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(indexed.Close)
	if p := plan(indexed); !strings.Contains(p, "Index Scan using seat_changes_pkey") || strings.Contains(p, "Seq Scan") {
		t.Errorf("WithIndexPlans pool's plan:\n%s\nwant an index scan of seat_changes_pkey", p)
	}
	// Its plans cost 10^10 wherever a sequential scan is left: JIT must
	// not take that for a big query to compile.
	var jit string
	if err := indexed.QueryRow(ctx, `SHOW jit`).Scan(&jit); err != nil {
		t.Fatal(err)
	}
	if jit != "off" {
		t.Errorf("WithIndexPlans pool: jit = %s, want off", jit)
	}
}
