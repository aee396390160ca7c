package postgres_test

import (
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
	// The foreign key check's own statement (ri_triggers.c).
	plan := genericPlan(t, pool, []string{`ANALYZE schedules`,
		`PREPARE fk_check(bigint) AS SELECT 1 FROM ONLY public.schedules x WHERE id OPERATOR(pg_catalog.=) $1 FOR KEY SHARE OF x`},
		`EXPLAIN (COSTS OFF) EXECUTE fk_check(7)`)
	if !strings.Contains(plan, "Index Scan using schedules_pkey") {
		t.Errorf("the foreign key check of 120 analyzed schedules does not read the primary key:\n%s", plan)
	}
}
