package main

import (
	"errors"
	"os/exec"
	"testing"
)

const hammerJSON = `{
  "sent": 4000,
  "throughputPerSec": 1234.5,
  "responses": {"200": 200, "409 seat_locked": 1000},
  "latencyMs": {"p50": 1.5, "p99": 12.25},
  "verdict": {
    "pass": false,
    "reasons": ["seat 1/2 won twice"]
  }
}`

func TestReadReport(t *testing.T) {
	r, err := readReport([]byte(hammerJSON), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sent != 4000 || r.Throughput != 1234.5 || r.Responses["409 seat_locked"] != 1000 || r.Latency.P99 != 12.25 {
		t.Errorf("report = %+v", r)
	}
	failed := exec.Command("false").Run()
	_, err = readReport([]byte(hammerJSON), failed)
	if want := `{"pass":false,"reasons":["seat 1/2 won twice"]}`; verdictOf(err) != want {
		t.Errorf("verdict = %q, want %q", verdictOf(err), want)
	}
	// No report at all (a bad flag): the exit, not a verdict.
	_, err = readReport(nil, failed)
	var v *verdictError
	if err == nil || errors.As(err, &v) {
		t.Errorf("no report: %v", err)
	}
}
