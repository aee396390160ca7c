// Command testsummary reads `go test -json` on standard input and writes
// what a person wants from a long run: one line per package, the output of
// every test that failed (and of a package that failed outside its tests),
// and a closing count of tests. Its exit status is 1 when anything failed.
//
//	go test -json ./... | go run ./tools/testsummary [-counts FILE]
//
// With -counts it also writes "passed failed skipped" to FILE, for a
// caller that adds other counts to the closing line.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail lines
	Test       string
	Output     string
	Elapsed    float64
}

type counts struct{ passed, failed, skipped int }

func main() {
	countsFile := flag.String("counts", "", `write "passed failed skipped" to this file`)
	flag.Parse()
	c, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if *countsFile != "" {
		if err := os.WriteFile(*countsFile, fmt.Appendf(nil, "%d %d %d\n", c.passed, c.failed, c.skipped), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
	}
	if c.failed > 0 {
		os.Exit(1)
	}
}

// summarize reads events from in and writes the summary to out.
func summarize(in io.Reader, out io.Writer) (counts, error) {
	var c counts
	// output holds each running test's lines (and each package's, under
	// the empty test name) until it is known whether they failed.
	output := make(map[string]*strings.Builder)
	key := func(e event) string { return e.Package + "\x00" + e.Test }
	failedTests := make(map[string]int) // by package

	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go vet's or the linker's own text): pass it on.
			_, _ = fmt.Fprintf(out, "%s\n", line)
			continue
		}
		switch e.Action {
		case "build-output":
			_, _ = fmt.Fprint(out, e.Output)
		case "output":
			b := output[key(e)]
			if b == nil {
				b = new(strings.Builder)
				output[key(e)] = b
			}
			b.WriteString(e.Output)
		case "pass", "fail", "skip":
			b := output[key(e)]
			delete(output, key(e))
			if e.Test == "" {
				_, _ = fmt.Fprint(out, packageLine(e, b))
				if e.Action == "fail" && failedTests[e.Package] == 0 {
					// A build failure, a panic or a timeout outside any
					// test's own verdict: a failure all the same.
					c.failed++
				}
				continue
			}
			switch e.Action {
			case "pass":
				c.passed++
			case "skip":
				c.skipped++
			case "fail":
				c.failed++
				failedTests[e.Package]++
				if b != nil {
					_, _ = fmt.Fprint(out, b.String())
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	_, _ = fmt.Fprintf(out, "tests: %d passed, %d failed, %d skipped\n", c.passed, c.failed, c.skipped)
	return c, nil
}

// packageLine is a package's closing line; a package that failed also
// shows its own output (a panic, a TestMain error, a timeout), which no
// test's failure has shown.
func packageLine(e event, b *strings.Builder) string {
	if e.Action == "fail" {
		text := ""
		if b != nil {
			text = b.String()
		}
		return fmt.Sprintf("%sFAIL\t%s\t%.3fs\n", text, e.Package, e.Elapsed)
	}
	if e.Action == "skip" {
		return fmt.Sprintf("?   \t%s\t[no test files]\n", e.Package)
	}
	return fmt.Sprintf("ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
}
