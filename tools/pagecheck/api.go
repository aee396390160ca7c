package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

// The retry policy for a request a rolling restart may break: a few
// attempts, a short backoff (or the service's Retry-After, capped), each
// attempt bounded.
const (
	maxAttempts    = 5
	firstBackoff   = 100 * time.Millisecond
	maxBackoff     = time.Second
	maxRetryAfter  = 2 * time.Second
	requestTimeout = 5 * time.Second
)

// api is a client of the service, counting the retries it needed.
type api struct {
	base        string
	client      *http.Client
	retries     int
	retryCauses map[string]int
	replayed    int
}

func newAPI(base string) *api {
	return &api{base: base, client: &http.Client{}, retryCauses: map[string]int{}}
}

// seat is one seat of the API's seat map.
type seat struct {
	ID     int    `json:"seatId"`
	Status string `json:"status"`
	Label  string `json:"label"`
	Row    string `json:"row"`
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// code is the problem code of an error answer, if it has one.
func (a answer) code() string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(a.body, &p)
	return p.Code
}

func (a answer) String() string {
	body := a.body
	if len(body) > 300 {
		body = body[:300]
	}
	return fmt.Sprintf("%d %s", a.status, bytes.TrimSpace(body))
}

// createSchedule creates a schedule of rows×seatsPerRow seats as the
// admin and returns its id and seat count.
func (c *api) createSchedule(ctx context.Context, adminToken string, rows int) (int64, int, error) {
	type row struct {
		Label string `json:"label"`
		Seats int    `json:"seats"`
	}
	body := map[string]any{
		"title":    "pagecheck " + time.Now().UTC().Format(time.RFC3339),
		"startsAt": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
	}
	var layout []row
	for i := range rows {
		layout = append(layout, row{Label: reservation.RowLabel(i), Seats: seatsPerRow})
	}
	body["layout"] = map[string]any{"rows": layout}
	// No Idempotency-Key here (the route takes none): a retry after a
	// lost answer may leave an unused schedule behind, which is harmless.
	ans, err := c.send(ctx, http.MethodPost, "/schedules", adminToken, body, "")
	if err != nil {
		return 0, 0, err
	}
	if ans.status != http.StatusCreated {
		return 0, 0, fmt.Errorf("answered %s", ans)
	}
	var created struct {
		ID        int64 `json:"id"`
		SeatCount int   `json:"seatCount"`
	}
	if err := json.Unmarshal(ans.body, &created); err != nil || created.ID == 0 {
		return 0, 0, fmt.Errorf("unreadable answer %s", ans)
	}
	return created.ID, created.SeatCount, nil
}

// reserve books one seat as the user, with one Idempotency-Key for all
// its attempts.
func (c *api) reserve(ctx context.Context, userToken string, schedule int64, seatID int) error {
	body := map[string]any{"scheduleId": schedule, "seatId": seatID}
	ans, err := c.send(ctx, http.MethodPost, "/reservations", userToken, body, newIdempotencyKey())
	if err != nil {
		return err
	}
	var r struct {
		SeatID int `json:"seatId"`
	}
	if ans.status != http.StatusOK || json.Unmarshal(ans.body, &r) != nil || r.SeatID != seatID {
		return fmt.Errorf("answered %s", ans)
	}
	return nil
}

// seatMap reads GET /schedules/{id}/seats, by seat id.
func (c *api) seatMap(ctx context.Context, schedule int64) (map[int]seat, error) {
	ans, err := c.send(ctx, http.MethodGet, fmt.Sprintf("/schedules/%d/seats", schedule), "", nil, "")
	if err != nil {
		return nil, err
	}
	var m struct {
		Seats []seat `json:"seats"`
	}
	if ans.status != http.StatusOK || json.Unmarshal(ans.body, &m) != nil || len(m.Seats) == 0 {
		return nil, fmt.Errorf("answered %s", ans)
	}
	out := make(map[int]seat, len(m.Seats))
	for _, s := range m.Seats {
		out[s.ID] = s
	}
	return out, nil
}

// send sends a request and retries what a restarting instance may cause:
// a transport error, a 5xx, a 429, or 409 idempotency_key_in_use (an
// earlier attempt with the key still runs, or its key is not released
// yet). Any other answer is returned as it is. Note that Go's transport
// itself resends a request with an Idempotency-Key once when a kept-alive
// connection turns out closed; those resends are not counted.
func (c *api) send(ctx context.Context, method, path, token string, body any, idempotencyKey string) (answer, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return answer{}, err
		}
	}
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		ans, err := c.once(ctx, method, path, token, payload, idempotencyKey)
		cause := retryCause(ans, err)
		if cause == "" {
			if attempt > 1 && ans.header.Get("Idempotent-Replayed") == "true" {
				c.replayed++
			}
			return ans, err
		}
		if attempt == maxAttempts || ctx.Err() != nil {
			if err != nil {
				return ans, fmt.Errorf("%d attempts, the last: %w", attempt, err)
			}
			return ans, fmt.Errorf("%d attempts, the last answered %s", attempt, ans)
		}
		c.retries++
		c.retryCauses[cause]++
		wait := backoff
		if s, err := strconv.Atoi(ans.header.Get("Retry-After")); err == nil && s > 0 {
			wait = min(time.Duration(s)*time.Second, maxRetryAfter)
		}
		backoff = min(2*backoff, maxBackoff)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ans, ctx.Err()
		}
	}
}

// retryCause names why an attempt is worth retrying, or "" when it is not.
func retryCause(ans answer, err error) string {
	switch {
	case err != nil:
		return "transport"
	case ans.status >= 500, ans.status == http.StatusTooManyRequests:
		return strconv.Itoa(ans.status)
	case ans.status == http.StatusConflict && ans.code() == "idempotency_key_in_use":
		return "409 idempotency_key_in_use"
	}
	return ""
}

// once sends one attempt, bounded by requestTimeout.
func (c *api) once(ctx context.Context, method, path, token string, payload []byte, idempotencyKey string) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(payload))
	if err != nil {
		return answer{}, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return answer{}, fmt.Errorf("reading the answer: %w", err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: body}, nil
}
