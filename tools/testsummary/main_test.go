package main

import (
	"strings"
	"testing"
)

func TestSummaryShowsFailuresAndCounts(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p/a","Test":"TestGood"}`,
		`{"Action":"output","Package":"p/a","Test":"TestGood","Output":"=== RUN   TestGood\n"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestGood","Elapsed":0.1}`,
		`{"Action":"output","Package":"p/a","Test":"TestBad","Output":"    a_test.go:9: got 1, want 2\n"}`,
		`{"Action":"fail","Package":"p/a","Test":"TestBad","Elapsed":0.2}`,
		`{"Action":"skip","Package":"p/a","Test":"TestLater"}`,
		`{"Action":"fail","Package":"p/a","Elapsed":0.5}`,
		`{"Action":"output","Package":"p/b","Output":"panic: boom\n"}`,
		`{"Action":"fail","Package":"p/b","Elapsed":1}`,
		`{"Action":"pass","Package":"p/c","Elapsed":2}`,
		`# p/d`,
	}, "\n")
	var out strings.Builder
	c, err := summarize(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if c != (counts{passed: 1, failed: 2, skipped: 1}) {
		t.Errorf("counts = %+v, want 1 passed, 2 failed (a test and a package), 1 skipped", c)
	}
	got := out.String()
	for _, want := range []string{"a_test.go:9: got 1, want 2", "FAIL\tp/a", "panic: boom\nFAIL\tp/b", "ok  \tp/c", "# p/d\n",
		"tests: 1 passed, 2 failed, 1 skipped\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN   TestGood") {
		t.Errorf("summary shows a passing test's output:\n%s", got)
	}
}
