package apiclient

// This package holds only tests: the Go client oapi-codegen generates from
// api/openapi.json (client_gen_test.go, kept current by scripts/clients.sh
// in make test), and a scenario that books through it against a real
// instance. A team generates its own client the same way; none of the
// service's code imports this one.

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/testenv/instances"
)

func TestMain(m *testing.M) { lockenv.Run(m) }

// serve starts one instance of the service for the test (testenv) and
// returns its base URL.
func serve(t *testing.T) string {
	t.Helper()
	return instances.Serve(t, instances.Config(t), 1)[0]
}

// clientAs is the generated client for user with role, on base.
func clientAs(t *testing.T, base, user, role string) *ClientWithResponses {
	t.Helper()
	token, err := auth.Mint([]byte(instances.Secret), user, role, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClientWithResponses(base, WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A new user's path through the generated Go client, with its types only:
// no JSON is read by hand. The problems are one Problem type whose code is
// a string enum and whose status is an int, and the seat map's two forms
// are told apart by their discriminator, form.
func TestGeneratedClientBooksEndToEnd(t *testing.T) {
	t.Parallel()
	base := serve(t)
	ctx := context.Background()
	admin, alice, bob := clientAs(t, base, "admin", auth.RoleAdmin), clientAs(t, base, "alice", ""), clientAs(t, base, "bob", "")

	seats := 6
	created, err := admin.CreateScheduleWithResponse(ctx, nil, CreateScheduleRequest{
		Title: "generated client", StartsAt: time.Now().Add(24 * time.Hour).UTC(), SeatCount: &seats})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create a schedule: %v %s", err, body(created))
	}
	schedule := created.JSON201.Id

	booked, err := alice.ReserveSeatWithResponse(ctx, nil, ReserveRequest{ScheduleId: schedule, SeatId: 1})
	if err != nil || booked.JSON200 == nil {
		t.Fatalf("book seat 1: %v %s", err, body(booked))
	}

	taken, err := bob.ReserveSeatWithResponse(ctx, nil, ReserveRequest{ScheduleId: schedule, SeatId: 1})
	if err != nil || taken.ApplicationproblemJSON409 == nil {
		t.Fatalf("book a taken seat: %v %s", err, body(taken))
	}
	problem := *taken.ApplicationproblemJSON409
	status := problem.Status
	switch problem.Code {
	case ProblemCodeSeatTaken:
	default:
		t.Fatalf("book a taken seat: code %q, want seat_taken", problem.Code)
	}
	if status != http.StatusConflict || !problem.Code.Valid() {
		t.Fatalf("seat_taken: status %d, code valid %v", status, problem.Code.Valid())
	}

	two := 2
	held, err := bob.CreateHoldWithResponse(ctx, nil, HoldRequest{ScheduleId: schedule, Quantity: &two})
	if err != nil || held.JSON201 == nil {
		t.Fatalf("hold the best two: %v %s", err, body(held))
	}
	confirmed, err := bob.ConfirmHoldWithResponse(ctx, held.JSON201.Id, nil, ConfirmHoldJSONRequestBody{})
	if err != nil || confirmed.JSON200 == nil || len(confirmed.JSON200.Reservations) != 2 {
		t.Fatalf("confirm: %v %s", err, body(confirmed))
	}
	bobs := map[SeatId]bool{}
	for _, r := range confirmed.JSON200.Reservations {
		bobs[r.SeatId] = true
	}

	compact := GetSeatMapParamsFormCompact
	seatMap, err := bob.GetSeatMapWithResponse(ctx, schedule, &GetSeatMapParams{Form: &compact})
	if err != nil || seatMap.JSON200 == nil {
		t.Fatalf("compact seat map: %v %s", err, body(seatMap))
	}
	form, err := seatMap.JSON200.ValueByDiscriminator()
	if err != nil {
		t.Fatalf("compact seat map: %v", err)
	}
	m, ok := form.(CompactSeatMap)
	if !ok {
		t.Fatalf("compact seat map read as %T", form)
	}
	reserved := 0
	for _, s := range m.Sections {
		for _, r := range s.Rows {
			for i, code := range r.Status {
				seat := r.FirstSeatId + SeatId(i)
				want := 'a'
				if seat == 1 || bobs[seat] {
					want = 'r'
				}
				if code != want {
					t.Errorf("compact map: seat %d is %c, want %c", seat, code, want)
				}
				if code == 'r' {
					reserved++
				}
			}
		}
	}
	if reserved != 3 {
		t.Errorf("compact map: %d seats reserved, want 3: %+v", reserved, m)
	}
	// The full form is the other member of the union.
	full, err := bob.GetSeatMapWithResponse(ctx, schedule, nil)
	if err != nil || full.JSON200 == nil {
		t.Fatalf("full seat map: %v %s", err, body(full))
	}
	if v, err := full.JSON200.ValueByDiscriminator(); err != nil {
		t.Fatalf("full seat map: %v", err)
	} else if fm, ok := v.(SeatMap); !ok || len(fm.Seats) != seats {
		t.Fatalf("full seat map read as %T %+v", v, v)
	}

	// A queue in front of the sale: without an admission a booking is
	// refused, typed; joined and admitted, it books.
	queued, err := admin.PutQueueWithResponse(ctx, schedule, nil, QueueSettings{
		OpensAt: time.Now().Add(-time.Second).UTC(), AdmitPerSecond: 50})
	if err != nil || queued.JSON200 == nil {
		t.Fatalf("put a queue: %v %s", err, body(queued))
	}
	refused, err := alice.ReserveSeatWithResponse(ctx, nil, ReserveRequest{ScheduleId: schedule, SeatId: 6})
	if err != nil || refused.ApplicationproblemJSON403 == nil || refused.ApplicationproblemJSON403.Code != ProblemCodeAdmissionRequired {
		t.Fatalf("book without an admission: %v %s", err, body(refused))
	}
	joined, err := alice.JoinQueueWithResponse(ctx, schedule, nil, JoinQueueJSONRequestBody{})
	if err != nil || joined.JSON201 == nil {
		t.Fatalf("join: %v %s", err, body(joined))
	}
	var admission string
	for deadline := time.Now().Add(20 * time.Second); admission == ""; {
		ticket, err := alice.GetTicketWithResponse(ctx, joined.JSON201.Ticket, nil)
		if err != nil || ticket.JSON200 == nil {
			t.Fatalf("ticket: %v %s", err, body(ticket))
		}
		if ticket.JSON200.State == QueueStateAdmitted && ticket.JSON200.Admission != nil {
			admission = *ticket.JSON200.Admission
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not admitted: %+v", *ticket.JSON200)
		}
		time.Sleep(200 * time.Millisecond)
	}
	admitted, err := alice.ReserveSeatWithResponse(ctx, &ReserveSeatParams{Admission: &admission},
		ReserveRequest{ScheduleId: schedule, SeatId: 6})
	if err != nil || admitted.JSON200 == nil {
		t.Fatalf("book admitted: %v %s", err, body(admitted))
	}

	cancelled, err := alice.CancelReservationWithResponse(ctx, admitted.JSON200.Id, nil, CancelReservationJSONRequestBody{})
	if err != nil || cancelled.StatusCode() != http.StatusNoContent {
		t.Fatalf("cancel: %v %s", err, body(cancelled))
	}
	read, err := alice.GetReservationWithResponse(ctx, admitted.JSON200.Id, nil)
	if err != nil || read.JSON200 == nil || read.JSON200.Status != ReservationStatusCancelled || read.JSON200.CancelledAt == nil {
		t.Fatalf("the cancelled reservation: %v %s", err, body(read))
	}
}

// body is a generated response's status and body, for a failure's
// message: every response type has both, and is nil when its call failed.
func body(r interface{ StatusCode() int }) string {
	v := reflect.ValueOf(r)
	if v.IsNil() {
		return "(no response)"
	}
	return fmt.Sprintf("%d %s", r.StatusCode(), v.Elem().FieldByName("Body").Bytes())
}
