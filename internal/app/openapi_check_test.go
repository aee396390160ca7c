package app_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	validationerrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/seatlock/seatlock/api"
)

// The OpenAPI document, parsed once for every test of the package.
var (
	openAPIOnce      sync.Once
	openAPIValidator validator.Validator
	openAPIErr       error
	// openAPIMu serialises validations: the validator's caches are not
	// documented as safe for concurrent use.
	openAPIMu sync.Mutex
)

func documentValidator() (validator.Validator, error) {
	openAPIOnce.Do(func() {
		checked, err := narrowProblems(api.OpenAPI)
		if err != nil {
			openAPIErr = err
			return
		}
		doc, err := libopenapi.NewDocument(checked)
		if err != nil {
			openAPIErr = fmt.Errorf("parse api/openapi.json: %w", err)
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			openAPIErr = fmt.Errorf("build a validator of api/openapi.json: %v", errs)
			return
		}
		if ok, errs := v.ValidateDocument(); !ok {
			openAPIErr = fmt.Errorf("api/openapi.json is not a valid OpenAPI document: %v", errs)
			return
		}
		openAPIValidator = v
	})
	return openAPIValidator, openAPIErr
}

// narrowProblems returns the document with each problem response's
// narrowing made a schema the validator applies. The document refers every
// error response to the one Problem schema, so that generated clients get
// one Problem type (a per-response allOf gave each response a struct of
// its own, with status and code untyped), and names the status and the
// codes a response may answer in the vendor extensions x-status and
// x-codes of its application/problem+json. Here those become the allOf
// they stand for, so an answer with a code its response does not list
// still fails a test.
func narrowProblems(document []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(document, &doc); err != nil {
		return nil, fmt.Errorf("parse api/openapi.json: %w", err)
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			if media, ok := v["application/problem+json"].(map[string]any); ok {
				codes, hasCodes := media["x-codes"]
				status, hasStatus := media["x-status"]
				if hasCodes != hasStatus {
					return fmt.Errorf("a problem response has one of x-status and x-codes without the other: %v", media)
				}
				if hasCodes {
					media["schema"] = map[string]any{"allOf": []any{media["schema"], map[string]any{
						"properties": map[string]any{"status": map[string]any{"const": status}, "code": map[string]any{"enum": codes}},
					}}}
				}
			}
			for _, e := range v {
				if err := walk(e); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range v {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// contractTransport checks every response the harness receives against
// the OpenAPI document, so the document cannot drift from what the
// service answers.
type contractTransport struct {
	t    testing.TB
	next http.RoundTripper
}

func (c contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A stream does not end: its status and headers are checked by
		// the stream tests, its events by eventStream.
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	checked := body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		// The document describes the body, not its encoding.
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			c.t.Errorf("%s %s: Content-Encoding gzip, not gzip: %v", req.Method, req.URL.Path, err)
			return resp, nil
		}
		if checked, err = io.ReadAll(zr); err != nil {
			c.t.Errorf("%s %s: a broken gzip body: %v", req.Method, req.URL.Path, err)
			return resp, nil
		}
	}
	if problem := checkContract(req, resp, checked); problem != "" {
		c.t.Errorf("OpenAPI contract: %s %s answered %d %s: %s", req.Method, req.URL.Path, resp.StatusCode, truncate(body), problem)
	}
	return resp, nil
}

// checkContract validates one exchange; "" when it matches the document.
func checkContract(req *http.Request, resp *http.Response, body []byte) string {
	v, err := documentValidator()
	if err != nil {
		return err.Error()
	}
	check := *resp
	check.Body = io.NopCloser(bytes.NewReader(body))
	openAPIMu.Lock()
	ok, errs := v.ValidateHttpResponse(req, &check)
	openAPIMu.Unlock()
	if ok {
		return ""
	}
	// A path the API does not have is answered by the router alone, with
	// a problem the document describes as the default response.
	if unknownRoute(resp, body) && pathNotDocumented(errs) {
		return ""
	}
	var msgs []string
	for _, e := range errs {
		msg := e.Message
		if e.Reason != "" {
			msg += " (" + e.Reason + ")"
		}
		for _, s := range e.SchemaValidationErrors {
			msg += "; " + s.FieldPath + ": " + s.Reason
		}
		msgs = append(msgs, msg)
	}
	return strings.Join(msgs, " | ")
}

func unknownRoute(resp *http.Response, body []byte) bool {
	return (resp.StatusCode == http.StatusNotFound && bytes.Contains(body, []byte(`"code":"not_found"`))) ||
		(resp.StatusCode == http.StatusMethodNotAllowed && bytes.Contains(body, []byte(`"code":"method_not_allowed"`)))
}

func pathNotDocumented(errs []*validationerrors.ValidationError) bool {
	for _, e := range errs {
		if !e.IsPathMissingError() && !e.IsOperationMissingError() {
			return false
		}
	}
	return true
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// The contract check must be able to fail: answers that break the
// document are caught.
func TestContractCheckCatchesDrift(t *testing.T) {
	t.Parallel()
	fake := func(method, path string, status int, contentType, body string) string {
		req, err := http.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType},
			"X-Request-Id": {"test-1"}, "Cache-Control": {"no-store"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}
		return checkContract(req, resp, []byte(body))
	}
	good := `{"id":"0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10","scheduleId":1,"seatId":2,"userId":"alice",` +
		`"createdAt":"2026-11-23T10:00:00Z","status":"active"}`
	if problem := fake(http.MethodGet, "/reservations/0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10", 200, "application/json", good); problem != "" {
		t.Fatalf("a valid reservation was refused: %s", problem)
	}
	for name, body := range map[string]string{
		"missing member": `{"id":"0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10","scheduleId":1,"userId":"alice","createdAt":"2026-11-23T10:00:00Z","status":"active"}`,
		"wrong type":     strings.Replace(good, `"seatId":2`, `"seatId":"2"`, 1),
		"unknown status": strings.Replace(good, `"active"`, `"pending"`, 1),
	} {
		if fake(http.MethodGet, "/reservations/0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10", 200, "application/json", body) == "" {
			t.Errorf("%s: a reservation that breaks the document passed", name)
		}
	}
	if problem := fake(http.MethodGet, "/reservations/0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10", 200, "application/json",
		strings.Replace(good, `"active"`, `"cancelled","cancelledAt":"2026-11-23T11:00:00Z"`, 1)); problem != "" {
		t.Errorf("a valid cancelled reservation was refused: %s", problem)
	}
	if fake(http.MethodGet, "/reservations/0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10", 200, "application/json", strings.Replace(good, `"active"`, `"cancelled"`, 1)) == "" {
		t.Error("a cancelled reservation without cancelledAt passed")
	}
	// Each problem response lists the codes it may answer (x-codes) and
	// its status (x-status): another code, or another status in the body,
	// fails, though Problem itself allows both.
	problem := func(status int, code string) string {
		return fmt.Sprintf(`{"type":"urn:seatlock:problem:%s","title":"t","status":%d,"detail":"d","code":"%s"}`, code, status, code)
	}
	release := "/holds/0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10"
	if p := fake(http.MethodDelete, release, 409, "application/problem+json", problem(409, "hold_confirmed")); p != "" {
		t.Errorf("a documented conflict was refused: %s", p)
	}
	if fake(http.MethodDelete, release, 409, "application/problem+json", problem(409, "seat_taken")) == "" {
		t.Error("a conflict with a code its response does not list passed")
	}
	if fake(http.MethodDelete, release, 409, "application/problem+json", problem(400, "hold_confirmed")) == "" {
		t.Error("a conflict whose body says status 400 passed")
	}
	if fake(http.MethodGet, "/holds/0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10", 200, "application/json", `{"seats":[]}`) == "" {
		t.Error("a hold without its members passed")
	}
	if fake(http.MethodGet, "/nowhere", 200, "application/json", `{}`) == "" {
		t.Error("a 200 on an undocumented path passed")
	}
}
