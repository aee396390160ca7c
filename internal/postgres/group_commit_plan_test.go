package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
)

// The group write looks each seat's reservation up seat by seat, whatever
// the statistics say: on a new database (never analyzed) and on one
// analyzed while its tables were empty, the plan a prepared statement
// keeps must not hash, materialise or bitmap-scan the whole of
// reservations once per group, a cost that grows with every booking made.
func TestGroupWritePlanLooksSeatsUpOneByOne(t *testing.T) {
	t.Parallel()
	for _, analyzed := range []bool{false, true} {
		_, pool := newStore(t)
		plan := seatLookupPlan(t, pool, analyzed)
		if strings.Contains(plan, "Bitmap Heap Scan on reservations") {
			t.Errorf("analyzed=%v: the seats' look-up bitmap-scans reservations:\n%s", analyzed, plan)
		}
		if !readSeatBySeat(plan, " on reservations") {
			t.Errorf("analyzed=%v: reservations not looked up seat by seat (each scan under a Limit):\n%s", analyzed, plan)
		}
		if !analyzed && !strings.Contains(plan, "Index Scan using reservations_active_seat_key on reservations") {
			t.Errorf("new database: reservations not read by the active-seat index:\n%s", plan)
		}
	}
}

// readSeatBySeat reports whether plan reads table (" on <table>") and
// every node that does sits right under a Limit: a look-up per seat, never
// a hash, materialisation or sort of the table's rows.
func readSeatBySeat(plan, table string) bool {
	lines := strings.Split(plan, "\n")
	found := false
	for i, line := range lines {
		if !strings.Contains(line, table) {
			continue
		}
		found = true
		if i == 0 || !strings.HasSuffix(strings.TrimSpace(lines[i-1]), "Limit") {
			return false
		}
	}
	return found
}

// The group write reads schedules once per group, not once per seat: a
// schedules table of a few hundred rows, analyzed, is one a plan may scan
// whole rather than through its index, and a scan per seat made a
// fresh-seat group write take twice as long (a new database's second
// minute, when autovacuum had analyzed schedules at that size).
func TestGroupWriteReadsSchedulesOncePerGroup(t *testing.T) {
	t.Parallel()
	for _, analyzed := range []bool{false, true} {
		_, pool := newStore(t)
		if _, err := pool.Exec(testContext(t), `INSERT INTO schedules (title, starts_at, seat_count)
			SELECT 'schedule ' || i, now() + interval '1 day', 2000 FROM generate_series(1, 300) i`); err != nil {
			t.Fatal(err)
		}
		whole := groupWritePlan(t, pool, analyzed)
		if n := strings.Count(whole, " on schedules "); n != 1 {
			t.Errorf("analyzed=%v: schedules read by %d nodes, want 1:\n%s", analyzed, n, whole)
		}
		if seats := seatPart(t, whole); strings.Contains(seats, " on schedules") {
			t.Errorf("analyzed=%v: schedules read seat by seat:\n%s", analyzed, seats)
		}
	}
}

// seatLookupPlan is the part of the group write's generic plan that finds
// the seats (its "seat" CTE), on pool's database, ANALYZEd first if asked.
func seatLookupPlan(t *testing.T, pool *pgxpool.Pool, analyze bool) string {
	t.Helper()
	return seatPart(t, groupWritePlan(t, pool, analyze))
}

// seatPart is the "seat" CTE of a group write's plan.
func seatPart(t *testing.T, plan string) string {
	t.Helper()
	start, end := strings.Index(plan, "CTE seat\n"), strings.Index(plan, "CTE claimed\n")
	if start < 0 || end < start {
		t.Fatalf("no seat CTE in the plan:\n%s", plan)
	}
	return plan[start:end]
}

// groupWritePlan is the group write's generic plan on pool's database,
// ANALYZEd first if asked.
func groupWritePlan(t *testing.T, pool *pgxpool.Pool, analyze bool) string {
	t.Helper()
	setup := []string{`PREPARE book AS ` + postgres.BookSeats}
	if analyze {
		setup = append([]string{`ANALYZE`}, setup...)
	}
	return genericPlan(t, pool, setup,
		`EXPLAIN (COSTS OFF) EXECUTE book('{1,1}', '{1,2}', '{alice,bob}', '{1,1}', '{NULL,NULL}', true)`)
}
