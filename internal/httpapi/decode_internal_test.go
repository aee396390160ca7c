package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

func TestDecodeBodyNamesWhatIsWrong(t *testing.T) {
	tests := []struct {
		name, body string
		detail     []string // each must appear in the detail
	}{
		{"empty", ``, []string{"empty"}},
		{"blank", "  \n", []string{"empty"}},
		{"null", `null`, []string{"not null"}},
		{"array", `[{"scheduleId":1,"seatId":1}]`, []string{"not an array"}},
		{"number", `7`, []string{"not a number"}},
		{"syntax", `{"scheduleId":1,,"seatId":1}`, []string{"byte offset 16"}},
		{"cut short", `{"scheduleId":1,`, []string{"byte offset 16"}},
		{"trailing object", `{"scheduleId":1,"seatId":1} {}`, []string{"byte offset 28"}},
		{"trailing garbage", `{"scheduleId":1,"seatId":1}x`, []string{"byte offset 27"}},
		{"duplicate", `{"scheduleId":1,"seatId":1,"seatId":2}`, []string{`"seatId"`, "more than once"}},
		{"case mismatch", `{"SCHEDULEID":1,"seatId":1}`, []string{`"SCHEDULEID"`, "case-sensitive", `"scheduleId"`}},
		{"escaped duplicate", `{"scheduleId":1,"seatId":1,"seat\u0049d":2}`, []string{`"seatId"`, "more than once"}},
		{"unknown", `{"scheduleId":1,"seatId":1,"userId":"bob"}`, []string{`"userId"`, "scheduleId, seatId"}},
		{"nested duplicate", `{"scheduleId":{"a":1,"a":2},"seatId":1}`, []string{`"a"`, "more than once"}},
		{"wrong type", `{"scheduleId":"1","seatId":1}`, []string{`"scheduleId"`, "an integer", "string"}},
		{"fraction", `{"scheduleId":1,"seatId":1.5}`, []string{`"seatId"`, "number 1.5"}},
		{"overflow", `{"scheduleId":99999999999999999999,"seatId":1}`, []string{`"scheduleId"`, "an integer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req reserveRequest
			err := decodeBody([]byte(tt.body), &req)
			if err == nil {
				t.Fatalf("decoded %s into %+v, want malformed_json", tt.body, req)
			}
			e, ok := err.(*problem.Error)
			if !ok || e.Status != http.StatusBadRequest || e.Code != "malformed_json" {
				t.Fatalf("got %v, want 400 malformed_json", err)
			}
			for _, want := range tt.detail {
				if !strings.Contains(e.Detail, want) {
					t.Errorf("detail %q does not say %q", e.Detail, want)
				}
			}
		})
	}
}

func TestDecodeBodyAcceptsTheDocumentedShape(t *testing.T) {
	var req holdRequest
	if err := decodeBody([]byte(" {\"scheduleId\": 3, \"seatIds\": [1, 2]}\n"), &req); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if *req.ScheduleID != 3 || len(req.SeatIDs) != 2 || req.SeatIDs[1] != 2 {
		t.Errorf("decoded %+v", req)
	}
}
