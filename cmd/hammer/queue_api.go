package main

// The waiting room's endpoints, as -scenario on-sale uses them: the admin
// puts, reads and deletes a schedule's queue; a buyer joins it, follows
// their ticket, and leaves.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Headers of the waiting room.
const (
	admissionHeader  = "Admission"
	retryAfterHeader = "Retry-After"
)

// The states of a ticket (the service's waitroom.State).
const (
	statePrequeue = "prequeue"
	stateWaiting  = "waiting"
	stateAdmitted = "admitted"
	stateExpired  = "expired"
	stateLeft     = "left"
)

// codeAdmissionRequired is the waiting room's refusal of a hold without
// Admission.
const codeAdmissionRequired = "admission_required"

// queueIn is PUT /schedules/{id}/queue's body.
type queueIn struct {
	OpensAt        string `json:"opensAt"`
	AdmitPerSecond int    `json:"admitPerSecond"`
	MaxActive      *int   `json:"maxActive,omitempty"`
}

// queueCounts are a queue's tickets by state, as GET
// /schedules/{id}/queue answers them.
type queueCounts struct {
	Prequeue int64 `json:"prequeue"`
	Waiting  int64 `json:"waiting"`
	Active   int64 `json:"active"`
	Admitted int64 `json:"admitted"`
}

// ticketOut is a ticket as the service answers it.
type ticketOut struct {
	Ticket               string    `json:"ticket"`
	ScheduleID           int64     `json:"scheduleId"`
	State                string    `json:"state"`
	Position             *int      `json:"position"`
	EstimatedWaitSeconds *float64  `json:"estimatedWaitSeconds"`
	OpensAt              time.Time `json:"opensAt"`
	Admission            string    `json:"admission"`
}

// queueCall is one buyer's request of the waiting room (join, poll,
// leave) or of the sale (confirm): its outcome, when it went out, and the
// ticket when the answer is one.
type queueCall struct {
	outcome
	SentAt time.Time
	Ticket ticketOut
	// Seats is a confirmation's count of reservations; Reservations
	// their ids.
	Seats        int
	Reservations []string
}

// putQueue gives the schedule a queue opening at opensAt, admitting rate
// buyers a second (at most maxActive at once, when positive).
func (a *api) putQueue(ctx context.Context, target, adminToken string, schedule int64, opensAt time.Time, rate, maxActive int) error {
	in := queueIn{OpensAt: opensAt.UTC().Format(time.RFC3339Nano), AdmitPerSecond: rate}
	if maxActive > 0 {
		in.MaxActive = &maxActive
	}
	var out struct {
		ScheduleID int64 `json:"scheduleId"`
	}
	if err := a.call(ctx, "put queue", http.MethodPut, queueURL(target, schedule), adminToken, in, &out, http.StatusOK); err != nil {
		return err
	}
	if out.ScheduleID != schedule {
		return fmt.Errorf("put queue: answer is for schedule %d, want %d", out.ScheduleID, schedule)
	}
	return nil
}

// queueCountsOf reads the schedule's queue's counts (admin).
func (a *api) queueCountsOf(ctx context.Context, target, adminToken string, schedule int64) (queueCounts, error) {
	var out struct {
		Counts *queueCounts `json:"counts"`
	}
	if err := a.call(ctx, "get queue", http.MethodGet, queueURL(target, schedule), adminToken, nil, &out, http.StatusOK); err != nil {
		return queueCounts{}, err
	}
	if out.Counts == nil {
		return queueCounts{}, fmt.Errorf("get queue: answer has no counts")
	}
	return *out.Counts, nil
}

// deleteQueue opens the schedule's sale to everyone again (admin).
func (a *api) deleteQueue(ctx context.Context, target, adminToken string, schedule int64) error {
	return a.call(ctx, "delete queue", http.MethodDelete, queueURL(target, schedule), adminToken, nil, nil, http.StatusNoContent)
}

func queueURL(target string, schedule int64) string {
	return target + "/schedules/" + strconv.FormatInt(schedule, 10) + "/queue"
}

// join sends POST /schedules/{id}/queue as u: 201 with a new ticket, 200
// with the one u has.
func (a *api) join(ctx context.Context, target string, u user, schedule int64) queueCall {
	return a.queueRequest(ctx, http.MethodPost, queueURL(target, schedule), u, true)
}

// ticket sends GET /queue/{ticket} as u.
func (a *api) ticket(ctx context.Context, target string, u user, ticket string) queueCall {
	return a.queueRequest(ctx, http.MethodGet, target+"/queue/"+ticket, u, true)
}

// leave sends DELETE /queue/{ticket} as u: 204.
func (a *api) leave(ctx context.Context, target string, u user, ticket string) queueCall {
	return a.queueRequest(ctx, http.MethodDelete, target+"/queue/"+ticket, u, false)
}

// confirm sends POST /holds/{id}/confirm as u (no Admission: one's own
// hold needs none); a 200's Seats are its reservations.
func (a *api) confirm(ctx context.Context, target string, u user, hold string) queueCall {
	return a.queueRequest(ctx, http.MethodPost, target+"/holds/"+hold+"/confirm", u, false)
}

// queueRequest sends one request as u and reads its answer: Retry-After,
// the problem's code, and with ticketBody a 2xx's ticket (confirm's 200
// is read for its reservations).
func (a *api) queueRequest(ctx context.Context, method, url string, u user, ticketBody bool) queueCall {
	c := queueCall{outcome: outcome{Sent: true}, SentAt: time.Now()}
	res, err := a.do(ctx, request{method: method, url: url, token: u.token, read: readRetryAfter})
	if !c.answered(ctx, res, err) {
		return c
	}
	c.RetryAfter = retryAfterOf(res.Header[0])
	switch {
	case res.Status >= 300:
		c.Code = problemCode(res.Body)
	case ticketBody:
		if err := json.Unmarshal(res.Body, &c.Ticket); err != nil || c.Ticket.Ticket == "" || c.Ticket.State == "" {
			c.Code = "unexpected body"
		}
	case res.Status == http.StatusOK:
		var out struct {
			Reservations []struct {
				ID string `json:"id"`
			} `json:"reservations"`
		}
		if err := json.Unmarshal(res.Body, &out); err != nil {
			c.Code = "unexpected body"
		}
		c.Seats = len(out.Reservations)
		for _, r := range out.Reservations {
			c.Reservations = append(c.Reservations, r.ID)
		}
	}
	return c
}
