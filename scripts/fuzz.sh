#!/usr/bin/env bash
# Runs every fuzz target of the module in turn, FUZZTIME each (default 1m;
# a count such as 1000x works too, and is what make test uses: with Go 1.26
# a duration-bound run can end in a spurious "context deadline exceeded",
# golang/go#75804, with no failing input written):
# `go test -fuzz` takes one target per package run. Targets are found by
# name (func FuzzXxx in a _test.go file), so a new one is never left out.
# Prints each target's last progress line (its execs); a failure prints
# the whole run, and the input that failed lands in the package's
# testdata/fuzz/FuzzXxx/ to be committed as a seed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-1m}
targets=$(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' internal cmd | sed 's/func //' | sort)
if [ -z "$targets" ]; then
	echo "fuzz: no targets found" >&2
	exit 1
fi
while IFS=: read -r file name; do
	pkg=./$(dirname "$file")
	if ! out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
		printf '%s\n' "$out" >&2
		echo "fuzz: $name ($pkg) failed" >&2
		exit 1
	fi
	# The last progress line; on a slow machine a short run can end while
	# the corpus is still being replayed (gathering baseline coverage).
	last=$(printf '%s\n' "$out" | grep '^fuzz: elapsed' | tail -n 1 || true)
	echo "fuzz: $name ($pkg, $fuzztime): ${last#fuzz: }"
done <<<"$targets"
