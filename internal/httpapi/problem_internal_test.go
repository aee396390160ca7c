package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The hand-written problem body is byte for byte what encoding/json writes
// for the same problem.
func TestAppendProblemMatchesEncodingJSON(t *testing.T) {
	errs := []apiError{errNotReady, errInternal, errUnauthorized, errForbidden, errNotFound, errMethodNotAllowed,
		errTokenInvalid, errTokenExpired,
		errMalformed, errTooLarge, errMediaType,
		{status: 418, code: "odd", title: `quote " backslash \ <tag> & ctl` + "\x01", detail: "ünïcode"},
		{status: 400, code: "odd", title: "invalid \xff\xfe UTF-8", detail: "line\u2028and paragraph\u2029 separators"}}
	for _, row := range errorTable {
		errs = append(errs, row.apiError)
	}
	for _, e := range errs {
		for _, id := range []string{"", "abc-123"} {
			var want bytes.Buffer
			p := problem{Type: "urn:seatlock:problem:" + e.code, Title: e.title, Status: e.status,
				Detail: e.detail, Code: e.code, RequestID: id}
			if err := json.NewEncoder(&want).Encode(p); err != nil {
				t.Fatal(err)
			}
			if got := appendProblem(nil, e, id); !bytes.Equal(got, want.Bytes()) {
				t.Errorf("appendProblem(%s, %q):\n got  %s\n want %s", e.code, id, got, want.Bytes())
			}
		}
	}
}
