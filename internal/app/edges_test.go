package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/reservation"
)

// The seat map is gzipped only where Accept-Encoding accepts gzip (RFC
// 9110 12.5.3): "*" does not stand for a coding listed by name, and a
// weight counts wherever it is among an entry's parameters. A client
// that refuses identity as well as gzip is answered 406.
func TestSeatMapEncodingIsNegotiated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(50)
	path := fmt.Sprintf("/schedules/%d/seats", schedule)
	for _, tt := range []struct {
		acceptEncoding string
		want           string // Content-Encoding
	}{
		{"gzip;q=0, *", ""},
		{"*, gzip;q=0", ""},
		{"gzip;foo=1;q=0", ""},
		{"GZIP;Q=0, *", ""},
		{"gzip;q=0.5, identity", ""},
		{"gzip;q=abc", ""},
		{"gzip", "gzip"},
		{"*", "gzip"},
		{"gzip, *;q=0", "gzip"},
		{"br;q=1, gzip;q=0.5", "gzip"},
	} {
		for _, form := range []string{"", "?form=compact"} {
			req, err := http.NewRequest(http.MethodGet, h.bases[0]+path+form, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Set by hand, so the client passes the body on as it came.
			req.Header.Set("Accept-Encoding", tt.acceptEncoding)
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			got := resp.Header.Get("Content-Encoding")
			if resp.StatusCode != http.StatusOK || got != tt.want {
				t.Errorf("GET %s%s with Accept-Encoding %q: %d, Content-Encoding %q; want 200, %q", path, form, tt.acceptEncoding, resp.StatusCode, got, tt.want)
			}
			if vary := resp.Header.Get("Vary"); vary != "Accept-Encoding" {
				t.Errorf("Accept-Encoding %q: Vary %q", tt.acceptEncoding, vary)
			}
		}
	}
	for _, refused := range []string{"identity;q=0", "*;q=0", "gzip;q=0, identity;q=0"} {
		resp := h.do(request{method: http.MethodGet, path: path, header: map[string]string{"Accept-Encoding": refused}})
		expectProblem(t, resp, http.StatusNotAcceptable, "not_acceptable")
		if vary := resp.header.Get("Vary"); vary != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary %q", refused, vary)
		}
	}
}

// maxScheduleBody is the documented limit of a POST /schedules body.
const maxScheduleBody = 32 << 20

// worstCaseSchedule is the longest body that describes a schedule within
// every documented limit, written without white space between tokens:
// MaxSections sections of MaxRows rows (the most rows the seat limit
// allows, one seat or more each), every name, label, category and the
// title as long as allowed, startsAt to the nanosecond, the seat counts
// with as many digits as the seat limit leaves room for, and every
// character of every string, member names included, as a \u escape
// (12 bytes for a character outside the Basic Multilingual Plane).
func worstCaseSchedule() (body []byte, seats int) {
	var b strings.Builder
	str := func(s string) {
		b.WriteByte('"')
		for _, r := range s {
			if r > 0xFFFF {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
		b.WriteByte('"')
	}
	member := func(name string) { str(name); b.WriteByte(':') }
	// Letters and decimal digits outside the BMP (mathematical bold).
	const letter, digit = '𝐒', '𝟎'
	text := func(n int, number, width int) string {
		s := []rune(strings.Repeat(string(letter), n-width))
		for i := width - 1; i >= 0; i-- {
			s = append(s, digit+rune(number/pow10(i)%10))
		}
		return string(s)
	}
	rows := reservation.MaxSections * reservation.MaxRows
	// Rows of 10 seats have a digit more than rows of one: as many as the
	// seat limit allows, once every row has its one seat.
	tens := (reservation.MaxSeatCount - rows) / 9
	b.WriteByte('{')
	member("title")
	str(strings.Repeat("🎭", reservation.MaxTitleRunes))
	b.WriteByte(',')
	member("startsAt")
	str("9999-12-31T23:59:59.999999999+23:59")
	b.WriteByte(',')
	member("layout")
	b.WriteByte('{')
	member("sections")
	b.WriteByte('[')
	category := strings.Repeat("𝐂", reservation.MaxCategoryRunes)
	row := 0
	for s := range reservation.MaxSections {
		if s > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		member("name")
		str(text(reservation.MaxSectionNameRunes, s, 3))
		b.WriteByte(',')
		member("category")
		str(category)
		b.WriteByte(',')
		member("rows")
		b.WriteByte('[')
		for r := range reservation.MaxRows {
			if r > 0 {
				b.WriteByte(',')
			}
			n := 1
			if row < tens {
				n = 10
			}
			row++
			seats += n
			b.WriteByte('{')
			member("label")
			str(text(reservation.MaxRowLabelRunes, r, 2))
			b.WriteByte(',')
			member("seats")
			b.WriteString(strconv.Itoa(n))
			b.WriteByte(',')
			member("category")
			str(category)
			b.WriteByte('}')
		}
		b.WriteString("]}")
	}
	b.WriteString("]}}")
	return []byte(b.String()), seats
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

// Every layout within the documented limits can be sent: the longest
// schedule body there is, padded with white space to the limit of a
// POST /schedules body, is created; a byte more is 413, whether told by
// Content-Length or found reading a chunked body. Every other body keeps
// the 64 KiB limit.
func TestTheLargestScheduleFitsItsBodyLimit(t *testing.T) {
	t.Parallel()
	// What is tested is what may be sent, not how fast 50,000 rows are
	// stored: on a machine busy with the other tests, under -race, that
	// takes longer than the production bound on a request's work
	// (LOCK_MAX_WAIT and a margin), so the instance is given a minute.
	h := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.LockMaxWait = time.Minute })
	admin := h.token("admin", auth.RoleAdmin)
	body, seats := worstCaseSchedule()
	if len(body) > maxScheduleBody {
		t.Fatalf("the longest schedule is %d bytes, over the limit of %d", len(body), maxScheduleBody)
	}
	t.Logf("the longest schedule: %d bytes, %d seats (limit %d bytes)", len(body), seats, maxScheduleBody)
	// The responses are checked here, not by the OpenAPI validator: a
	// schedule of 50,000 rows is more than it checks in good time.
	client := &http.Client{Timeout: 2 * time.Minute}
	post := func(body io.Reader, length int64) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, h.bases[0]+"/schedules", body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length // -1: chunked
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, answer
	}
	padded := append(body, bytes.Repeat([]byte{' '}, maxScheduleBody-len(body))...)
	status, answer := post(bytes.NewReader(padded), int64(len(padded)))
	if status != http.StatusCreated {
		t.Fatalf("the longest schedule, %d bytes: %d %.500s", len(padded), status, answer)
	}
	var created struct {
		SeatCount int `json:"seatCount"`
		Layout    struct {
			Sections []struct {
				Rows []json.RawMessage `json:"rows"`
			} `json:"sections"`
		} `json:"layout"`
	}
	if err := json.Unmarshal(answer, &created); err != nil {
		t.Fatal(err)
	}
	if created.SeatCount != seats || len(created.Layout.Sections) != reservation.MaxSections || len(created.Layout.Sections[0].Rows) != reservation.MaxRows {
		t.Errorf("created %d seats in %d sections, want %d in %d", created.SeatCount, len(created.Layout.Sections), seats, reservation.MaxSections)
	}

	over := append(padded, ' ')
	for _, length := range []int64{int64(len(over)), -1} {
		status, answer := post(bytes.NewReader(over), length)
		var problem struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(answer, &problem)
		if status != http.StatusRequestEntityTooLarge || problem.Code != "payload_too_large" || !strings.Contains(problem.Detail, "32 MiB") {
			t.Errorf("%d bytes (Content-Length %d): %d %s, want 413 payload_too_large saying 32 MiB", len(over), length, status, answer)
		}
	}

	// Every other body: 64 KiB.
	hold := `{"scheduleId":1,"seatIds":[1],"pad":"` + strings.Repeat("x", 64<<10) + `"}`
	resp := h.do(request{method: http.MethodPost, path: "/holds", token: h.token("alice", ""), contentType: "application/json", body: hold})
	expectProblem(t, resp, http.StatusRequestEntityTooLarge, "payload_too_large")
	if detail, _ := resp.body["detail"].(string); !strings.Contains(detail, "64 KiB") {
		t.Errorf("a hold's 413 says %q, want 64 KiB", detail)
	}
}

// A header block over the server's limit is answered, like every error,
// as a problem: 431 header_too_large, not net/http's plain text. Sent
// over a TCP connection of its own, as the probe sent it, since the
// answer comes before any handler runs.
func TestOversizedHeaderIsAProblem(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	path := fmt.Sprintf("/schedules/%d/seats", schedule)
	for _, tt := range []struct {
		name   string
		header string
	}{
		{"a 2 MiB If-None-Match", "If-None-Match: \"" + strings.Repeat("e", 2<<20) + "\"\r\n"},
		{"many headers", strings.Repeat("X-Pad: "+strings.Repeat("p", 100)+"\r\n", 400)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(h.bases[0], "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			// The server answers before the header block ends: write it
			// while the answer is read.
			go func() {
				_, _ = io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: seatlock\r\n"+tt.header+"\r\n")
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			var problem struct {
				Type, Title, Detail, Code, RequestID string
				Status                               int
			}
			if err := json.Unmarshal(body, &problem); err != nil {
				t.Fatalf("%d %s %q: %v", resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
			}
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" ||
				problem.Code != "header_too_large" || problem.Status != http.StatusRequestHeaderFieldsTooLarge ||
				problem.Type != "urn:seatlock:problem:header_too_large" || problem.Title == "" || problem.Detail == "" {
				t.Fatalf("%d %s %s, want 431 application/problem+json header_too_large", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if problem.RequestID == "" || resp.Header.Get("X-Request-Id") != problem.RequestID {
				t.Errorf("requestId %q, X-Request-Id %q", problem.RequestID, resp.Header.Get("X-Request-Id"))
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-store" || !resp.Close {
				t.Errorf("headers %v, close %v: want nosniff, no-store and the connection closed", resp.Header, resp.Close)
			}
			req, _ := http.NewRequest(http.MethodGet, h.bases[0]+path, nil)
			if problem := checkContract(req, resp, body); problem != "" {
				t.Errorf("OpenAPI contract: %s", problem)
			}
		})
	}
	// A header block within the limit is served as before.
	resp := h.do(request{method: http.MethodGet, path: path, header: map[string]string{"If-None-Match": `"` + strings.Repeat("e", 16<<10) + `"`}})
	if resp.status != http.StatusOK {
		t.Errorf("a 16 KiB If-None-Match: %d", resp.status)
	}
}
