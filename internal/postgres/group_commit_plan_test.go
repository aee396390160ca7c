package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
)

// The group write looks each seat's schedule and reservation up seat by
// seat, whatever the statistics say: on a new database (never analyzed)
// and on one analyzed while its tables were empty, the plan a prepared
// statement keeps must not hash, materialise or bitmap-scan the whole of
// reservations once per group, a cost that grows with every booking made.
func TestGroupWritePlanLooksSeatsUpOneByOne(t *testing.T) {
	t.Parallel()
	for _, analyzed := range []bool{false, true} {
		_, pool := newStore(t)
		plan := seatLookupPlan(t, pool, analyzed)
		for _, whole := range []string{"Hash", "Materialize", "Bitmap Heap Scan on reservations"} {
			if strings.Contains(plan, whole) {
				t.Errorf("analyzed=%v: the seats' look-up has %q:\n%s", analyzed, whole, plan)
			}
		}
		if !strings.Contains(plan, "Limit\n") || !strings.Contains(plan, "on reservations") {
			t.Errorf("analyzed=%v: reservations not looked up seat by seat:\n%s", analyzed, plan)
		}
		if !analyzed && !strings.Contains(plan, "Index Scan using reservations_active_seat_key on reservations") {
			t.Errorf("new database: reservations not read by the active-seat index:\n%s", plan)
		}
	}
}

// seatLookupPlan is the part of the group write's generic plan that finds
// the seats (its "seat" CTE), on pool's database, ANALYZEd first if asked.
func seatLookupPlan(t *testing.T, pool *pgxpool.Pool, analyze bool) string {
	t.Helper()
	ctx := testContext(t)
	pooled, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Out of the pool: its settings and prepared statement go with it.
	conn := pooled.Hijack()
	defer func() { _ = conn.Close(context.Background()) }()
	statements := []string{`SET plan_cache_mode = force_generic_plan`, `PREPARE book AS ` + postgres.BookSeats}
	if analyze {
		statements = append([]string{`ANALYZE`}, statements...)
	}
	for _, sql := range statements {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%.40s: %v", sql, err)
		}
	}
	rows, err := conn.Query(ctx, `EXPLAIN (COSTS OFF) EXECUTE book('{1,1}', '{1,2}', '{alice,bob}', '{1,1}', '{NULL,NULL}')`)
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
	text := plan.String()
	start, end := strings.Index(text, "CTE seat\n"), strings.Index(text, "CTE claimed\n")
	if start < 0 || end < start {
		t.Fatalf("no seat CTE in the plan:\n%s", text)
	}
	return text[start:end]
}
