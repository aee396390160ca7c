package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// benchmarkName is the name of a scenario's runs in Go's benchmark format,
// which benchstat reads: hot-seat is BenchmarkHotSeat.
func benchmarkName(scenario string) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	for word := range strings.SplitSeq(scenario, "-") {
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// number is x as benchstat reads it: plain decimals, as short as exact.
func number(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// appendLine adds a line to the file at path (made if need be).
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// column is one column of a benchstat table: a label and the file of its
// runs.
type column struct{ label, file string }

// benchstat prints benchstat's table of the runs in columns, every later
// column against the first: each benchmark's median with its spread, and
// the change with its p-value, or "~" where p >= 0.05 (no significant
// difference).
func benchstat(ctx context.Context, root string, columns ...column) error {
	args := []string{"tool", "benchstat"}
	for _, c := range columns {
		args = append(args, c.label+"="+c.file)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("benchstat: %w", err)
	}
	return nil
}
