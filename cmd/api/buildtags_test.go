package main

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var tagsFlag = regexp.MustCompile(`-tags=(\S+)`)

// buildTags returns the tags the -tags= flag on the first line of path
// containing marker gives.
func buildTags(t *testing.T, path, marker string) string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(text)) {
		if strings.Contains(line, marker) {
			if m := tagsFlag.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("%s: no line with %q and -tags=", path, marker)
	return ""
}

// One call of a method by a name known only at run time (reflect's
// MethodByName, or text/template's field lookup) makes the linker keep every
// exported method of every type in the binary, and the binary's pages count
// in the service's resident memory. The build tags take the two that come with
// our dependencies out; this fails when a dependency or our own code brings
// one back, and names it.
func TestBuildTagsKeepMethodsOut(t *testing.T) {
	tags := buildTags(t, "../../Makefile", "export GOFLAGS")
	if docker := buildTags(t, "../../Dockerfile", "go build"); docker != tags {
		t.Fatalf("the Dockerfile builds with -tags=%s, the Makefile with -tags=%s", docker, tags)
	}
	cmd := exec.Command("go", "build", "-tags="+tags, "-trimpath", "-ldflags=-dumpdep", "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	deps, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Each line is an edge, "from -> to", and a symbol's attributes follow
	// its name.
	var callers []string
	lines := bufio.NewScanner(deps)
	lines.Buffer(make([]byte, 64*1024), 1024*1024)
	for lines.Scan() {
		before, _, found := strings.Cut(lines.Text(), " <ReflectMethod>")
		if !found {
			continue
		}
		if i := strings.LastIndex(before, " -> "); i >= 0 {
			before = before[i+len(" -> "):]
		}
		if !slices.Contains(callers, before) {
			callers = append(callers, before)
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go build -tags=%s: %v", tags, err)
	}
	if len(callers) > 0 {
		t.Fatalf("with -tags=%s these call methods by a run-time name, so the linker keeps every exported method: %s",
			tags, strings.Join(callers, ", "))
	}
}
