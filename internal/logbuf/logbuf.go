// Package logbuf batches log lines: one write to the output every flush
// interval instead of one per line. Under load the service writes a line per
// request, and a write system call per line costs more than the line.
package logbuf

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// DefaultInterval is how long a line may wait in the buffer.
const DefaultInterval = 100 * time.Millisecond

// bufferSize is the batch size; a full buffer is written at once.
const bufferSize = 64 << 10

// Writer is an io.Writer that buffers and writes to its output every
// interval, and when the buffer fills. Lines written in the last interval
// before a crash may be lost; Close writes what is buffered.
type Writer struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// New returns a Writer on out flushing every interval (DefaultInterval if
// not above zero). Close it.
func New(out io.Writer, interval time.Duration) *Writer {
	if interval <= 0 {
		interval = DefaultInterval
	}
	w := &Writer{buf: bufio.NewWriterSize(out, bufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go w.flushEvery(interval)
	return w
}

// Write buffers p.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *Writer) flushEvery(interval time.Duration) {
	defer close(w.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
			_ = w.Flush()
		}
	}
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Flush()
}

// Close stops the periodic flush and writes what is buffered.
func (w *Writer) Close() error {
	close(w.stop)
	<-w.done
	return w.Flush()
}
