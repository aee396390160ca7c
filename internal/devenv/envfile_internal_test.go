package devenv

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// An env file reads back as written, and as a shell sourcing it reads it:
// the remaining scripts and `make hammer` do `. DIR/env`.
func TestEnvFileReadsAsAShellReadsIt(t *testing.T) {
	values := []setting{
		{"PLAIN", "redis://127.0.0.1:24544/0"},
		{"QUERY", "postgres://u:p@127.0.0.1:1,127.0.0.1:2/db?sslmode=disable&target_session_attrs=read-write"},
		{"SPACES", "/a b/pg1.yml /a b/pg2.yml"},
		{"QUOTE", "it's $HOME `x` \"y\""},
		{"EMPTY", ""},
	}
	path := filepath.Join(t.TempDir(), "env")
	if err := writeEnvFile(path, values); err != nil {
		t.Fatal(err)
	}
	read, err := readEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if read[v.key] != v.value {
			t.Errorf("read back %s=%q, want %q", v.key, read[v.key], v.value)
		}
		out, err := exec.Command("bash", "-c", `. "$1" && printf %s "${!2}"`, "bash", path, v.key).Output()
		if err != nil {
			t.Fatalf("bash sourcing %s: %v", path, err)
		}
		if string(out) != v.value {
			t.Errorf("bash reads %s=%q, want %q", v.key, out, v.value)
		}
	}
}

// What the shell wrote before, double quotes included, reads the same.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:               "plain",
		`"23440 24423 27548"`: "23440 24423 27548",
		`'a&b'`:               "a&b",
		`'it'\''s'`:           "it's",
		`a\ b`:                "a b",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%s) = %q, want %q", in, got, want)
		}
	}
}
