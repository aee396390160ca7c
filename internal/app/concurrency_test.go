package app_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/seatlock/seatlock/internal/config"
)

// Many clients hammer one seat through two API instances that share Redis
// and PostgreSQL: exactly one booking wins, everybody else hears 409, and
// one row exists.
func TestOneSeatManyClientsTwoInstances(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{config.BackendRedis, config.BackendPostgres} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			oneSeatManyClients(t, newHarnessOn(t, 2, backend))
		})
	}
}

func oneSeatManyClients(t *testing.T, h *harness) {
	schedule := h.createSchedule(1)
	const clients = 200
	tokens := make([]string, clients)
	for i := range tokens {
		tokens[i] = h.token(fmt.Sprintf("user-%d", i), "")
	}
	body := fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)

	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results = make([]response, clients)
	)
	for i := range clients {
		wg.Go(func() {
			<-start
			results[i] = h.do(request{method: http.MethodPost, path: "/reservations", token: tokens[i],
				contentType: "application/json", body: body, base: i % 2})
		})
	}
	close(start)
	wg.Wait()

	counts := map[string]int{}
	for _, r := range results {
		counts[fmt.Sprintf("%d %s", r.status, r.code())]++
	}
	if counts["200 "] != 1 || counts["200 "]+counts["409 seat_locked"]+counts["409 seat_taken"] != clients {
		t.Fatalf("outcomes = %v; want exactly one 200 and the rest 409", counts)
	}
	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Fatalf("rows = %d, want 1", n)
	}
	t.Logf("outcomes: %v", counts)
}
