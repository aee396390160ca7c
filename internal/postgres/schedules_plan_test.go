package postgres_test

import (
	"context"
	"strings"
	"testing"
)

// Every booking's reservation is checked against schedules by its foreign
// key, a look-up PostgreSQL plans like any query: with a schedules table
// of a hundred-odd rows, analyzed, packed pages made a scan of the whole
// table cheaper in its cost model than the primary key, and every booking
// read every schedule. The table is kept sparse (migration 0012), so the
// check reads the key from some 60 schedules on.
func TestForeignKeyChecksReadSchedulesByKey(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	_, pool := newStore(t)
	if _, err := pool.Exec(ctx, `INSERT INTO schedules (title, starts_at, seat_count)
		SELECT 'hammer 0123456789abcdef', now() + interval '1 day', 2000 FROM generate_series(1, 120)`); err != nil {
		t.Fatal(err)
	}
	pooled, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Out of the pool: its settings and prepared statement go with it.
	conn := pooled.Hijack()
	defer func() { _ = conn.Close(context.Background()) }()
	// The foreign key check's own statement (ri_triggers.c), as a generic
	// plan: the form it is cached in.
	for _, sql := range []string{`ANALYZE schedules`, `SET plan_cache_mode = force_generic_plan`,
		`PREPARE fk_check(bigint) AS SELECT 1 FROM ONLY public.schedules x WHERE id OPERATOR(pg_catalog.=) $1 FOR KEY SHARE OF x`} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%.40s: %v", sql, err)
		}
	}
	var plan strings.Builder
	rows, err := conn.Query(ctx, `EXPLAIN (COSTS OFF) EXECUTE fk_check(7)`)
	if err != nil {
		t.Fatal(err)
	}
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
	if !strings.Contains(plan.String(), "Index Scan using schedules_pkey") {
		t.Errorf("the foreign key check of 120 analyzed schedules does not read the primary key:\n%s", plan.String())
	}
}
