package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/waitroom"
)

// watchingRoom is a waiting room whose every ticket waits, followed
// until the test ends; nothing else of it is used here.
type watchingRoom struct{}

func (r watchingRoom) Put(context.Context, int64, waitroom.Settings) (waitroom.Settings, error) {
	return waitroom.Settings{}, errors.New("not used")
}
func (r watchingRoom) Queue(context.Context, int64) (waitroom.Settings, waitroom.Counts, error) {
	return waitroom.Settings{}, waitroom.Counts{}, errors.New("not used")
}
func (r watchingRoom) Delete(context.Context, int64) error { return errors.New("not used") }
func (r watchingRoom) Join(context.Context, int64, string) (waitroom.Ticket, bool, error) {
	return waitroom.Ticket{}, false, errors.New("not used")
}
func (r watchingRoom) Ticket(context.Context, string, string) (waitroom.Ticket, error) {
	return waitroom.Ticket{}, errors.New("not used")
}
func (r watchingRoom) Leave(context.Context, string, string) error { return errors.New("not used") }
func (r watchingRoom) Check(context.Context, int64, string, string) (bool, error) {
	return false, nil
}
func (r watchingRoom) Watch(context.Context, string, string) (*waitroom.Watch, waitroom.Ticket, error) {
	return &waitroom.Watch{C: make(chan waitroom.Ticket)}, waitroom.Ticket{ID: "7-x", ScheduleID: 7, State: waitroom.Waiting, Position: 3}, nil
}
func (r watchingRoom) Unwatch(*waitroom.Watch) {}

// TestQueueStreamsAreCapped: past MaxQueueStreams open ticket streams,
// the next is refused 503 too_many_streams, telling the buyer to poll; one
// closing makes room.
func TestQueueStreamsAreCapped(t *testing.T) {
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	token, err := auth.Mint(secret, "alice", "", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	shutdown := make(chan struct{})
	srv := httptest.NewServer(httpapi.NewHandler(httpapi.Options{Bookings: fakeBookings{}, Verifier: verifier,
		Room: watchingRoom{}, MaxQueueStreams: 2, Shutdown: shutdown}))
	defer srv.Close()
	defer close(shutdown)
	open := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/queue/7-x/events", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first, second := open(), open()
	defer func() { _ = second.Body.Close() }()
	for _, resp := range []*http.Response{first, second} {
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
	}
	third := open()
	_ = third.Body.Close()
	if third.StatusCode != http.StatusServiceUnavailable || third.Header.Get("Retry-After") != "1" {
		t.Fatalf("third stream: %d %v", third.StatusCode, third.Header)
	}
	_ = first.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := open()
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room after a stream closed: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
