package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/auth"
)

// TestAPIHTTPFile runs api.http, the requests a developer sends from an
// editor and `make smoke` sends with httpyac, against a real instance: every
// request must pass its `??` assertions (status, problem code, members and
// headers), so the file cannot rot.
func TestAPIHTTPFile(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../../api.http")
	if err != nil {
		t.Fatal(err)
	}
	file, err := parseHTTPFile(string(text))
	if err != nil {
		t.Fatalf("api.http: %v", err)
	}
	if len(file.requests) < 40 {
		t.Fatalf("api.http has %d requests, want at least 40", len(file.requests))
	}
	if err := checkReferences(file, environment); err != nil {
		t.Fatalf("api.http: %v", err)
	}

	h := newHarness(t, 1)
	vars := maps.Clone(file.vars)
	for name, value := range map[string]string{
		"baseUrl":        h.bases[0],
		"adminToken":     h.token("admin", auth.RoleAdmin),
		"userToken":      h.token("alice", ""),
		"otherUserToken": h.token("bob", ""),
	} {
		// A file variable would override the environment httpyac is
		// given, so the environment's names must not be declared.
		if _, ok := vars[name]; ok {
			t.Fatalf("api.http declares @%s: it must come from the environment", name)
		}
		vars[name] = value
	}
	env := httpFileEnv{vars: vars, responses: map[string]map[string]any{}}

	for _, req := range file.requests {
		sent, err := env.substituteRequest(req)
		if err != nil {
			t.Fatalf("api.http line %d: %v", req.line, err)
		}
		got := sendHTTPFileRequest(t, h.client, sent)
		if req.name != "" {
			env.responses[req.name] = got.body
		}
		if err := req.expect.check(got); err != nil {
			t.Errorf("api.http line %d: %s %s: %v; body %s", req.line, sent.method, sent.url, err, got.raw)
		}
	}
}

// httpFile is a parsed .http file: its file variables (`@name = value`) and
// its requests in file order.
type httpFile struct {
	vars     map[string]string
	requests []httpFileRequest
}

type httpFileRequest struct {
	line        int    // of the request line, for messages
	name        string // from `# @name X`, or ""
	expect      expectation
	method, url string
	headers     [][2]string
	body        string
}

// expectation is a request's `??` assertions: its status, members of its
// JSON body (`code` for a problem) and headers.
type expectation struct {
	status  int
	members map[string]string
	headers map[string]string
}

// environment names the variables api.http takes from its environment.
var environment = []string{"baseUrl", "adminToken", "userToken", "otherUserToken"}

var (
	fileVarLine  = regexp.MustCompile(`^@([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$`)
	nameComment  = regexp.MustCompile(`^(?:#|//)\s*@name\s+(\S+)\s*$`)
	statusAssert = regexp.MustCompile(`^\?\?\s+status\s+==\s+([1-5][0-9][0-9])$`)
	memberAssert = regexp.MustCompile(`^\?\?\s+js\s+response\.parsedBody\.([A-Za-z]+)\s+==\s+(\S+)$`)
	headerAssert = regexp.MustCompile(`^\?\?\s+header\s+([A-Za-z-]+)\s+==\s+(\S+)$`)
	requestLine  = regexp.MustCompile(`^([A-Z]+)\s+(\S+)(?:\s+HTTP/[0-9.]+)?$`)
	variableRef  = regexp.MustCompile(`\{\{\s*([^{}\s]+)\s*\}\}`)
)

// parseHTTPFile reads the file block by block (blocks are separated by
// lines starting with ###). A block without a request line holds only
// variables and comments.
func parseHTTPFile(text string) (httpFile, error) {
	file := httpFile{vars: map[string]string{}}
	for _, b := range splitBlocks(text) {
		req, err := parseBlock(b, file.vars)
		if err != nil {
			return httpFile{}, err
		}
		if req != nil {
			file.requests = append(file.requests, *req)
		}
	}
	return file, nil
}

// block is the text between two ### separators; first is the line number
// of its first line.
type block struct {
	first int
	lines []string
}

func splitBlocks(text string) []block {
	var blocks []block
	cur := block{first: 1}
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "###") {
			blocks = append(blocks, cur)
			cur = block{first: i + 2}
			continue
		}
		cur.lines = append(cur.lines, line)
	}
	return append(blocks, cur)
}

func isComment(line string) bool {
	return strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//")
}

// parseBlock reads the comments and variables before the request line, the
// request line, the headers up to the first blank line and the body after
// it. File variables go into vars. It returns nil for a block without a
// request.
func parseBlock(b block, vars map[string]string) (*httpFileRequest, error) {
	var req httpFileRequest
	i := 0
	for ; i < len(b.lines); i++ {
		line := strings.TrimSpace(b.lines[i])
		lineNo := b.first + i
		if m := fileVarLine.FindStringSubmatch(line); m != nil {
			vars[m[1]] = strings.TrimSpace(m[2])
			continue
		}
		if m := nameComment.FindStringSubmatch(line); m != nil {
			req.name = m[1]
			continue
		}
		if line == "" || isComment(line) {
			continue
		}
		m := requestLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: want a request line `METHOD URL`, got %q", lineNo, line)
		}
		req.line, req.method, req.url = lineNo, m[1], m[2]
		break
	}
	if req.method == "" {
		if req.name != "" {
			return nil, fmt.Errorf("line %d: # @name without a request", b.first)
		}
		return nil, nil
	}
	headers, rest, err := parseHeaders(b.lines[i+1:], req.line+1)
	if err != nil {
		return nil, err
	}
	req.headers = headers
	var body []string
	for _, line := range rest {
		if strings.HasPrefix(strings.TrimSpace(line), "??") {
			if err := req.expect.add(strings.TrimSpace(line)); err != nil {
				return nil, fmt.Errorf("line %d: %v", req.line, err)
			}
			continue
		}
		body = append(body, line)
	}
	if req.expect.status == 0 {
		return nil, fmt.Errorf("line %d: %s %s has no `?? status == <status>` assertion", req.line, req.method, req.url)
	}
	req.body = strings.TrimSpace(strings.Join(body, "\n"))
	return &req, nil
}

// add reads one `??` assertion; one this test does not understand is an
// error, so the file asserts nothing that only httpyac would check.
func (e *expectation) add(line string) error {
	if m := statusAssert.FindStringSubmatch(line); m != nil {
		if e.status != 0 {
			return fmt.Errorf("a second status assertion")
		}
		e.status, _ = strconv.Atoi(m[1])
		return nil
	}
	if m := memberAssert.FindStringSubmatch(line); m != nil {
		if e.members == nil {
			e.members = map[string]string{}
		}
		e.members[m[1]] = m[2]
		return nil
	}
	if m := headerAssert.FindStringSubmatch(line); m != nil {
		if e.headers == nil {
			e.headers = map[string]string{}
		}
		e.headers[m[1]] = m[2]
		return nil
	}
	return fmt.Errorf("unknown assertion %q", line)
}

// parseHeaders reads `Name: value` lines up to the first blank line and
// returns them with the lines after it (the body).
func parseHeaders(lines []string, first int) ([][2]string, []string, error) {
	var headers [][2]string
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" {
			return headers, lines[i+1:], nil
		}
		if isComment(line) {
			continue
		}
		name, value, found := strings.Cut(line, ":")
		if !found || strings.TrimSpace(name) == "" {
			return nil, nil, fmt.Errorf("line %d: want a header `Name: value`, got %q", first+i, line)
		}
		headers = append(headers, [2]string{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	return headers, nil, nil
}

// checkReferences fails on a {{name}} that is neither a variable of the
// environment or the file nor `request.member` of a request named earlier
// in the file.
func checkReferences(file httpFile, environment []string) error {
	named := map[string]bool{}
	for _, req := range file.requests {
		for _, ref := range requestRefs(req) {
			if _, ok := file.vars[ref]; ok || slices.Contains(environment, ref) {
				continue
			}
			reqName, _, isResponse := strings.Cut(ref, ".")
			if !isResponse || !named[reqName] {
				return fmt.Errorf("line %d: unknown variable {{%s}}", req.line, ref)
			}
		}
		if req.name != "" {
			named[req.name] = true
		}
	}
	return nil
}

// requestRefs lists the variable names a request refers to.
func requestRefs(req httpFileRequest) []string {
	parts := []string{req.url, req.body}
	for _, hdr := range req.headers {
		parts = append(parts, hdr[0], hdr[1])
	}
	var refs []string
	for _, m := range variableRef.FindAllStringSubmatch(strings.Join(parts, "\n"), -1) {
		refs = append(refs, m[1])
	}
	return refs
}

// httpFileEnv resolves variables while the file runs: file variables and
// the JSON bodies of the named responses so far.
type httpFileEnv struct {
	vars      map[string]string
	responses map[string]map[string]any // decoded with UseNumber
}

func (e httpFileEnv) substituteRequest(req httpFileRequest) (httpFileRequest, error) {
	out := req
	out.headers = nil
	var err error
	if out.url, err = e.substitute(req.url); err != nil {
		return out, err
	}
	if out.body, err = e.substitute(req.body); err != nil {
		return out, err
	}
	for _, hdr := range req.headers {
		value, err := e.substitute(hdr[1])
		if err != nil {
			return out, err
		}
		out.headers = append(out.headers, [2]string{hdr[0], value})
	}
	return out, nil
}

// substitute replaces every {{name}} in s.
func (e httpFileEnv) substitute(s string) (string, error) {
	var firstErr error
	out := variableRef.ReplaceAllStringFunc(s, func(ref string) string {
		value, err := e.resolve(variableRef.FindStringSubmatch(ref)[1])
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return value
	})
	return out, firstErr
}

// resolve returns a variable or `X.field` (a dotted path) of the JSON body
// of the named response X, as httpyac does.
func (e httpFileEnv) resolve(name string) (string, error) {
	if value, ok := e.vars[name]; ok {
		return value, nil
	}
	reqName, path, isResponse := strings.Cut(name, ".")
	body, ran := e.responses[reqName]
	if !isResponse || !ran {
		return "", fmt.Errorf("unknown variable {{%s}}", name)
	}
	var v any = body
	for _, key := range strings.Split(path, ".") {
		obj, _ := v.(map[string]any)
		if v = obj[key]; v == nil {
			return "", fmt.Errorf("{{%s}}: the response of %s has no %q", name, reqName, path)
		}
	}
	return jsonScalar(v)
}

// jsonScalar renders a JSON value for substitution: numbers exactly as the
// server sent them (json.Number, so 7 stays 7, never 7e+00), strings
// unquoted.
func jsonScalar(v any) (string, error) {
	switch v := v.(type) {
	case json.Number:
		return v.String(), nil
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	default:
		return "", fmt.Errorf("cannot substitute a JSON %T", v)
	}
}

// httpFileResponse is an answer to one request of the file.
type httpFileResponse struct {
	status      int
	contentType string
	header      http.Header
	body        map[string]any // nil unless the body is a JSON object
	raw         string
}

func sendHTTPFileRequest(t *testing.T, client *http.Client, req httpFileRequest) httpFileResponse {
	t.Helper()
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	httpReq, err := http.NewRequestWithContext(t.Context(), req.method, req.url, body)
	if err != nil {
		t.Fatalf("line %d: %v", req.line, err)
	}
	for _, hdr := range req.headers {
		httpReq.Header.Add(hdr[0], hdr[1])
	}
	resp, err := client.Do(httpReq)
	if err != nil {
		t.Fatalf("line %d: %s %s: %v", req.line, req.method, req.url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := httpFileResponse{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), header: resp.Header, raw: string(raw)}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&out.body); err != nil {
		out.body = nil
	}
	return out
}

// check compares a response with the expectation; a problem code also
// requires an application/problem+json body.
func (e expectation) check(got httpFileResponse) error {
	if got.status != e.status {
		return fmt.Errorf("got status %d, want %d", got.status, e.status)
	}
	for member, want := range e.members {
		value, _ := got.body[member].(string)
		if value != want {
			return fmt.Errorf("%s = %q, want %q", member, value, want)
		}
	}
	for name, want := range e.headers {
		if value := got.header.Get(name); value != want {
			return fmt.Errorf("header %s = %q, want %q", name, value, want)
		}
	}
	if _, isProblem := e.members["code"]; !isProblem {
		return nil
	}
	if mediaType, _, _ := mime.ParseMediaType(got.contentType); mediaType != "application/problem+json" {
		return fmt.Errorf("Content-Type %q, want application/problem+json", got.contentType)
	}
	return nil
}
