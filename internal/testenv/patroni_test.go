package testenv_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
)

// What the failover tests build on: a commit acknowledged by the primary
// is on the standby that Patroni promotes when the primary's machine dies,
// the URL's target_session_attrs finds the new primary, and the killed node
// comes back as the synchronous standby.
func TestPatroniPromotesTheSynchronousStandby(t *testing.T) {
	t.Parallel()
	s := testenv.StartPatroni(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exec := func(sql string, args ...any) error {
		conn, err := pgx.Connect(ctx, s.URL)
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close(ctx) }()
		_, err = conn.Exec(ctx, sql, args...)
		return err
	}
	if err := exec("CREATE TABLE acknowledged (n int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	const rows = 200
	for n := range rows {
		if err := exec("INSERT INTO acknowledged VALUES ($1)", n); err != nil {
			t.Fatal(err)
		}
	}
	old := s.Leader()
	if old != s.Nodes[0] {
		t.Fatalf("leader %v, want pg1", old)
	}
	killed := time.Now()
	old.Kill()
	// An instance starting now waits for the promotion (AwaitPrimary)
	// instead of failing its migrations.
	pool, err := postgres.Open(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.AwaitPrimary(ctx, pool, postgres.DefaultStartupWait); err != nil {
		t.Fatalf("AwaitPrimary after the primary's death: %v", err)
	}
	var standby bool
	var port int
	if err := pool.QueryRow(ctx, "SELECT pg_is_in_recovery(), inet_server_port()").Scan(&standby, &port); err != nil {
		t.Fatal(err)
	}
	if want := s.Nodes[1].Addr; standby || !strings.HasSuffix(want, ":"+strconv.Itoa(port)) {
		t.Errorf("AwaitPrimary returned on port %d (standby: %v), want the promoted %s", port, standby, want)
	}
	if err := postgres.Migrate(pool); err != nil {
		t.Errorf("migrate on the promoted standby: %v", err)
	}
	t.Logf("pg2 promoted and reached %v after pg1 was killed", time.Since(killed).Round(time.Millisecond))

	var count int
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM acknowledged").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != rows {
		t.Errorf("the promoted standby has %d of the %d acknowledged rows", count, rows)
	}
	if err := exec("INSERT INTO acknowledged VALUES ($1)", rows); err != nil {
		t.Errorf("write on the promoted standby: %v", err)
	}

	old.Start()
	s.AwaitSyncStandby(ctx, old)
	s.Switchover(ctx, old)
	if err := exec("INSERT INTO acknowledged VALUES ($1)", rows+1); err != nil {
		t.Errorf("write after the switchover back to pg1: %v", err)
	}
}
