package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// report is the part of the hammer's JSON report (-json) the runs read.
type report struct {
	Sent       int            `json:"sent"`
	Throughput float64        `json:"throughputPerSec"`
	Responses  map[string]int `json:"responses"`
	Latency    struct {
		P99 float64 `json:"p99"` // in milliseconds
	} `json:"latencyMs"`
	Verdict json.RawMessage `json:"verdict"`
}

// verdictError is a hammer run that failed: its verdict, as one line of
// JSON, says why.
type verdictError struct{ verdict string }

func (e *verdictError) Error() string { return "the hammer's verdict failed: " + e.verdict }

// hammer runs bin/hammer with the servers' settings in its environment
// (AUTH_SECRET signs its tokens).
type hammer struct {
	bin string
	env []string
}

func newHammer(root string, servers env) hammer {
	return hammer{bin: filepath.Join(root, "bin", "hammer"), env: append(os.Environ(), servers.list()...)}
}

// command is the hammer with args, its progress on stderr.
func (h hammer) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env, cmd.Stderr = h.env, os.Stderr
	return cmd
}

// run runs the hammer with args (-json among them) and returns its report;
// when its verdict fails, the error is a *verdictError.
func (h hammer) run(ctx context.Context, args ...string) (report, error) {
	var out bytes.Buffer
	cmd := h.command(ctx, args...)
	cmd.Stdout = &out
	err := cmd.Run()
	return readReport(out.Bytes(), err)
}

// readReport reads the report the hammer printed (out) once it has ended
// with ranErr.
func readReport(out []byte, ranErr error) (report, error) {
	var r report
	decodeErr := json.Unmarshal(out, &r)
	var exit *exec.ExitError
	switch {
	case ranErr != nil && decodeErr == nil && errors.As(ranErr, &exit):
		return r, &verdictError{verdict: compactJSON(r.Verdict)}
	case ranErr != nil:
		return r, fmt.Errorf("hammer: %w", ranErr)
	case decodeErr != nil:
		return r, fmt.Errorf("hammer's report: %w", decodeErr)
	}
	return r, nil
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// verdictOf is the verdict of a failed run's error, or the error itself.
func verdictOf(err error) string {
	if v, ok := errors.AsType[*verdictError](err); ok {
		return v.verdict
	}
	return err.Error()
}
