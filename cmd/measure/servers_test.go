package main

import (
	"testing"
)

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
