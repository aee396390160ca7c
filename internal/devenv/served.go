package devenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// DefaultAddr is where make run serves, and what make smoke, make hammer
// and make token try, when nothing else is named or served.
const DefaultAddr = "127.0.0.1:8080"

// served is DIR/served.env: the address make run or make cluster serves
// on, so that make smoke, make hammer, make token and DIR/tokens.env
// follow it. It stays shell assignments: the Makefile and a second
// terminal source these files.
type served struct {
	Addr string // HTTP_ADDR
	By   string // SERVED_BY: "make run" or "make cluster"
	PID  int    // SERVED_PID: the process that serves and will release it
}

func servedPath(dir string) string { return filepath.Join(dir, "served.env") }
func tokensPath(dir string) string { return filepath.Join(dir, "tokens.env") }

// readServed reads a served.env; ok is false when it is missing, or when
// its owner no longer runs (killed before it could release the address).
func readServed(path string) (s served, ok bool) {
	values, err := readEnvFile(path)
	if err != nil {
		return s, false
	}
	s.Addr, s.By = values["HTTP_ADDR"], values["SERVED_BY"]
	s.PID, _ = strconv.Atoi(values["SERVED_PID"])
	return s, running(s.PID)
}

// servedValue returns NAME in DIR/served.env, or "".
func servedValue(dir, name string) string {
	vars, err := readEnvFile(servedPath(dir))
	if err != nil {
		return ""
	}
	return vars[name]
}

// Claim records that pid (make run's or make cluster's process, who
// says which) serves on addr: DIR/served.env names it and DIR/tokens.env
// holds its URL and fresh tokens. What they said before, while its owner
// still serves, is kept as served.env.PID and tokens.env.PID until pid
// releases.
func Claim(dir, addr, who string, pid int) error {
	suffix := "." + strconv.Itoa(pid)
	if _, live := readServed(servedPath(dir)); live {
		for _, path := range []string{servedPath(dir), tokensPath(dir)} {
			if err := os.Rename(path, path+suffix); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	env, err := LoadEnv(dir)
	if err != nil {
		return err
	}
	if err := WriteTokens(tokensPath(dir), env.AuthSecret, "http://"+addr); err != nil {
		return err
	}
	text := fmt.Sprintf("HTTP_ADDR=%s\nSERVED_BY=%q\nSERVED_PID=%d\n", addr, who, pid)
	return writeAtomically(servedPath(dir), text, 0o644)
}

// Release says pid no longer serves: when DIR/served.env is still pid's,
// what it replaced comes back if its owner still serves, else served.env
// and tokens.env go.
func Release(dir string, pid int) {
	suffix := "." + strconv.Itoa(pid)
	if s, _ := readServed(servedPath(dir)); s.PID == pid {
		if _, live := readServed(servedPath(dir) + suffix); live && exists(tokensPath(dir)+suffix) {
			_ = os.Rename(tokensPath(dir)+suffix, tokensPath(dir))
			_ = os.Rename(servedPath(dir)+suffix, servedPath(dir))
		} else {
			_ = os.Remove(servedPath(dir))
			_ = os.Remove(tokensPath(dir))
		}
	}
	_ = os.Remove(servedPath(dir) + suffix)
	_ = os.Remove(tokensPath(dir) + suffix)
}

// ServedAddr is the address make smoke, make hammer and make token
// target: HTTP_ADDR when set, else the one a live make run or make
// cluster serves on, else DefaultAddr.
func ServedAddr(dir string) string {
	if addr := os.Getenv("HTTP_ADDR"); addr != "" {
		return addr
	}
	if s, live := readServed(servedPath(dir)); live && s.Addr != "" {
		return s.Addr
	}
	return DefaultAddr
}

// writeAtomically writes path through a temporary file, so that a reader
// sourcing it never sees half of it.
func writeAtomically(path, text string, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ReadTokens reads DIR/tokens.env: API and the DevelopmentTokens by name.
func ReadTokens(dir string) (map[string]string, error) { return readEnvFile(tokensPath(dir)) }
