package logbuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/logbuf"
	"github.com/seatlock/seatlock/internal/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Lines reach the output within the interval, whole and in order, from
// many goroutines; Close writes the rest.
func TestLinesArriveWholeWithinTheInterval(t *testing.T) {
	out := &testenv.SyncBuffer{}
	w := logbuf.New(out, 20*time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				_, _ = fmt.Fprintf(w, "line %d %d\n", g, i)
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 800 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 800 lines written 5s later", strings.Count(out.String(), "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, _ = fmt.Fprintln(w, "last")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 801 || lines[800] != "last" {
		t.Fatalf("got %d lines ending %q, want 801 ending with last", len(lines), lines[len(lines)-1])
	}
	for _, l := range lines[:800] {
		var g, i int
		if _, err := fmt.Sscanf(l, "line %d %d", &g, &i); err != nil {
			t.Fatalf("torn line %q", l)
		}
	}
}
