package devenv

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
)

// setting is one KEY=VALUE line of an env file, in the order written.
type setting struct{ key, value string }

// readEnvFile reads a file of KEY=VALUE lines as a shell sourcing it would
// (shellWord); blank lines and comments are skipped.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	vars := map[string]string{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		key, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		vars[key] = shellWord(value)
	}
	return vars, lines.Err()
}

// writeEnvFile writes settings as lines a shell can source (`. FILE`),
// readable by its owner only: they hold passwords.
func writeEnvFile(path string, settings []setting) error {
	var b strings.Builder
	for _, s := range settings {
		fmt.Fprintf(&b, "%s=%s\n", s.key, shellQuote(s.value))
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// bare is what a shell reads as it is on the right of an assignment (which
// neither splits nor globs: a URL's ? stays).
var bare = regexp.MustCompile(`^[A-Za-z0-9_./:@,%+=?-]*$`)

// shellQuote returns v as a shell word: as it is when nothing in it is
// special to a shell, else in single quotes (a quote of its own as '\”).
func shellQuote(v string) string {
	if bare.MatchString(v) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// shellWord reads the word w as a shell would on the right of an
// assignment: its single-quoted parts as they are, its double-quoted parts
// without their quotes (the files hold nothing a shell would expand), a
// character after a backslash as it is.
func shellWord(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		switch c := w[i]; c {
		case '\'', '"':
			end := strings.IndexByte(w[i+1:], c)
			if end < 0 {
				end = len(w) - i - 1
			}
			b.WriteString(w[i+1 : i+1+end])
			i += end + 1
		case '\\':
			if i+1 < len(w) {
				i++
				b.WriteByte(w[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// envLines returns a file's settings as NAME=VALUE entries for a process's
// environment, as `set -a; . FILE` would export them.
func envLines(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, k+"="+vars[k])
	}
	return out
}
