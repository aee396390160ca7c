package problem

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// The encoded prefixes must write exactly what json.Marshal writes, for
// every problem declared once, for copies of them with members changed
// since, and for every kind of request id.
func TestStaticProblemsWriteWhatMarshalWrites(t *testing.T) {
	var problems []*Error
	for i := range errorTable {
		problems = append(problems, &errorTable[i].Error)
	}
	problems = append(problems, Internal, NotFound, Unavailable, UnreadableBody)
	available := 3
	changed := func(change func(*Error)) *Error {
		e := errorTable[0].Error
		change(&e)
		return &e
	}
	problems = append(problems,
		changed(func(e *Error) { e.RetryAfter = 7 * time.Second }),
		changed(func(e *Error) { e.Detail = "Another detail, with <html> & \"quotes\"." }),
		changed(func(e *Error) { e.Title = "Another title" }),
		changed(func(e *Error) { e.Code = "another_code" }),
		changed(func(e *Error) { e.Status = http.StatusTeapot }),
		changed(func(e *Error) { e.Available = &available }),
		changed(func(e *Error) { e.HoldID = "a-hold" }),
		changed(func(e *Error) { e.Queue = "/schedules/1/queue" }),
		changed(func(e *Error) { e.Fields = []FieldError{{Field: "seatId", Detail: "must be positive"}} }),
		changed(func(e *Error) { e.Seats = []SeatReason{{SeatID: 1, Reason: "taken"}} }),
		changed(func(e *Error) { e.Checks = map[string]string{"redis": "down"} }),
		Malformed("not static"),
	)
	ids := []string{"", "0123abcd-1z", "client.id_9-x", `quote"d`, "back\\slash", "<tag>", "a&b", "tab\there", "é"}
	for _, e := range problems {
		for _, id := range ids {
			want, err := json.Marshal(e.body(id))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			if got := e.appendJSON(nil, id); string(got) != string(want) {
				t.Errorf("%s with id %q:\n got %s\nwant %s", e.Code, id, got, want)
			}
		}
	}
	if errorTable[1].encoded == nil || Internal.encoded == nil {
		t.Fatal("the table's problems and the named ones are not encoded once")
	}
}

// Write answers a static problem with its body, its length and the
// request's id, twice in a row from the pooled buffer.
func TestWriteStaticProblem(t *testing.T) {
	for range 2 {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/reservations", nil)
		req = req.WithContext(WithScope(req.Context(), &Scope{ID: "req-1"}))
		Write(rec, req, NotFound)
		want := `{"type":"urn:seatlock:problem:not_found","title":"Not found","status":404,"detail":"No such resource.","code":"not_found","requestId":"req-1"}` + "\n"
		if rec.Code != http.StatusNotFound || rec.Body.String() != want {
			t.Fatalf("got %d %s, want 404 %s", rec.Code, rec.Body.String(), want)
		}
		if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(want)) {
			t.Fatalf("Content-Length %s for %d bytes", got, len(want))
		}
	}
}

func TestContentLength(t *testing.T) {
	for _, n := range []int{0, 1, 143, len(contentLengths) - 1, len(contentLengths), 1 << 20} {
		if got := contentLength(n); len(got) != 1 || got[0] != strconv.Itoa(n) {
			t.Errorf("contentLength(%d) = %v", n, got)
		}
	}
}
