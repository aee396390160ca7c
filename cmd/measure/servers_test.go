package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "env")
	text := "# make run's servers\nREDIS_URL=redis://127.0.0.1:25172/0\nPG_DIR='/data/run/pg'\nAUTH_SECRET=\"a=b\"\n\nexport PG_PORT=28988\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := readEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	want := env{"REDIS_URL": "redis://127.0.0.1:25172/0", "PG_DIR": "/data/run/pg", "AUTH_SECRET": "a=b", "PG_PORT": "28988"}
	if len(e) != len(want) {
		t.Errorf("readEnv = %v, want %v", e, want)
	}
	for k, v := range want {
		if e[k] != v {
			t.Errorf("%s = %q, want %q", k, e[k], v)
		}
	}
}

func TestRedisDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"redis://127.0.0.1:6379/0":       "redis://127.0.0.1:6379/4",
		"redis://:secret@127.0.0.1:6379": "redis://:secret@127.0.0.1:6379/4",
	} {
		if got := redisDatabase(in, 4); got != want {
			t.Errorf("redisDatabase(%q, 4) = %q, want %q", in, got, want)
		}
	}
}
