package logbuf_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/logbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is a bytes.Buffer safe for the flusher and the test at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines reach the output within the interval, whole and in order, from
// many goroutines; Close writes the rest.
func TestLinesArriveWholeWithinTheInterval(t *testing.T) {
	out := &syncBuffer{}
	w := logbuf.New(out, 20*time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(w, "line %d %d\n", g, i)
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
	fmt.Fprintln(w, "last")
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
