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
)

// maxBody caps what we read of any response; the API's bodies are tiny and a
// misbehaving server must not make the hammer buffer without bound.
const maxBody = 1 << 20

// newHTTPClient returns one client for the whole run. Its idle pool holds a
// connection per worker and target, so the timed phase reuses connections
// instead of measuring TCP handshakes.
func newHTTPClient(workers, targets int) (*http.Client, *http.Transport) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = workers * targets
	tr.MaxIdleConnsPerHost = workers
	return &http.Client{Transport: tr}, tr
}

// problem is the part of an RFC 9457 body the hammer looks at.
type problem struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// apiError is a non-success answer during setup or verification.
type apiError struct {
	Op      string
	Status  int
	Problem problem
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d", e.Op, e.Status)
	if e.Problem.Code != "" {
		msg += " " + e.Problem.Code
	}
	if e.Problem.Detail != "" {
		msg += ": " + e.Problem.Detail
	}
	return msg
}

// call sends one request with its own deadline and decodes a JSON answer
// into out when the status is want.
func call(ctx context.Context, hc *http.Client, timeout time.Duration, op, method, url, token string, in, out any, want int) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("%s: read body: %w", op, err)
	}
	if resp.StatusCode != want {
		e := &apiError{Op: op, Status: resp.StatusCode}
		_ = json.Unmarshal(data, &e.Problem) // a non-problem body still yields the status
		return e
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: decode body: %w", op, err)
	}
	return nil
}

type scheduleIn struct {
	Title     string `json:"title"`
	StartsAt  string `json:"startsAt"`
	SeatCount int    `json:"seatCount"`
}

type scheduleOut struct {
	ID        int64 `json:"id"`
	SeatCount int   `json:"seatCount"`
}

// createSchedule creates a schedule a day ahead with seats seats and returns
// its id.
func createSchedule(ctx context.Context, hc *http.Client, timeout time.Duration, target, adminToken, title string, seats int) (int64, error) {
	in := scheduleIn{Title: title, StartsAt: time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), SeatCount: seats}
	var out scheduleOut
	if err := call(ctx, hc, timeout, "create schedule", http.MethodPost, target+"/schedules", adminToken, in, &out, http.StatusCreated); err != nil {
		return 0, err
	}
	if out.ID <= 0 || out.SeatCount != seats {
		return 0, fmt.Errorf("create schedule: answer has id %d and seatCount %d, want a positive id and %d", out.ID, out.SeatCount, seats)
	}
	return out.ID, nil
}

type seatMapOut struct {
	ScheduleID int64 `json:"scheduleId"`
	Seats      []struct {
		SeatID int    `json:"seatId"`
		Status string `json:"status"`
	} `json:"seats"`
}

// fetchSeatMap returns the status of every seat of a schedule by seat id.
func fetchSeatMap(ctx context.Context, hc *http.Client, timeout time.Duration, target string, scheduleID int64) (map[int]string, error) {
	var out seatMapOut
	url := target + "/schedules/" + strconv.FormatInt(scheduleID, 10) + "/seats"
	if err := call(ctx, hc, timeout, "get seat map", http.MethodGet, url, "", nil, &out, http.StatusOK); err != nil {
		return nil, err
	}
	if out.ScheduleID != scheduleID {
		return nil, fmt.Errorf("get seat map: answer is for schedule %d, want %d", out.ScheduleID, scheduleID)
	}
	statuses := make(map[int]string, len(out.Seats))
	for _, s := range out.Seats {
		statuses[s.SeatID] = s.Status
	}
	return statuses, nil
}
