package main

import (
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// setting is the environment variable name, or def when it is unset or empty.
func setting(name, def string) string { return cmp.Or(os.Getenv(name), def) }

// words is the setting name split on white space (def when unset).
func words(name, def string) []string { return strings.Fields(setting(name, def)) }

// count is the setting name as a positive whole number (def when unset).
func count(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive whole number", name, v)
	}
	return n, nil
}

// on is whether the setting name is 1.
func on(name string) bool { return os.Getenv(name) == "1" }
