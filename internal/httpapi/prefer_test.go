package httpapi

import (
	"net/http"
	"testing"
	"time"
)

func TestPreferredWait(t *testing.T) {
	tests := []struct {
		headers []string
		want    time.Duration
		found   bool
	}{
		{nil, 0, false},
		{[]string{"wait=2"}, 2 * time.Second, true},
		{[]string{"respond-async, WAIT = 5"}, 5 * time.Second, true},
		{[]string{"return=minimal", "wait=3"}, 3 * time.Second, true},
		{[]string{`wait="4"`}, 4 * time.Second, true},
		{[]string{"wait=0"}, 0, true},
		{[]string{"wait=-1"}, 0, false},
		{[]string{"wait=soon"}, 0, false},
		{[]string{"wait"}, 0, false},
		{[]string{"handling=lenient"}, 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.headers {
			h.Add("Prefer", v)
		}
		got, found := preferredWait(h)
		if got != tt.want || found != tt.found {
			t.Errorf("Prefer %q: got %v, %v; want %v, %v", tt.headers, got, found, tt.want, tt.found)
		}
	}
}
