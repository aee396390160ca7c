#!/usr/bin/env bash
# The test suite proper, run by `make test` once cmd/devenv has installed
# Redis, PostgreSQL and the rest: each package's test binary starts the
# servers its tests use and stops them at its end (lockenv.Run in its
# TestMain), unless TEST_REDIS_URL, TEST_REDIS_CLUSTER_URL and
# TEST_DATABASE_URL name servers to use instead.
set -euo pipefail
# took PHASE: how long PHASE took, on stderr: CI's 15 minutes are tight,
# and these lines say where they go.
phase_start=$SECONDS
took() {
	echo "make test: $1 took $((SECONDS - phase_start)) s" >&2
	phase_start=$SECONDS
}
unformatted=$(gofmt -l $(find . -name '*.go' -not -path './.data/*' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
# golangci-lint, pinned in a modfile of its own (tools/golangci-lint/go.mod)
# so its dependencies stay out of the service's; .golangci.yml says which
# linters, with no exclusions.
go tool -modfile=tools/golangci-lint/go.mod golangci-lint run ./...
go run ./cmd/devenv browser
# The OpenAPI document, linted by a pinned Redocly CLI (redocly.yaml).
bash "$(dirname "$0")/node.sh" npx --yes @redocly/cli@2.11.1 lint --format=summary api/openapi.json
took "formatting, vet, golangci-lint, the browser and the OpenAPI lint"
# The clients generated from the document: the committed Go client is
# current, and the TypeScript types compile (scripts/clients.sh).
bash "$(dirname "$0")/clients.sh"
took "the generated Go client and TypeScript types"
# One line per package, the output of what failed, and the count of tests:
# gotestsum (a go.mod tool) reads go test's JSON events; its post-run
# command is given the counts (TESTS_TOTAL, TESTS_FAILED, TESTS_SKIPPED),
# kept in FILE for the closing line. summarize FILE [--raw-command] -- ARGS
summarize() {
	local file=$1
	shift
	go tool gotestsum --format pkgname --post-run-command "sh -c 'env >\"\$1\"' sh $file" "$@"
}
# tests FILE: "passed failed skipped" from a summarize FILE.
tests() {
	local total failed skipped
	total=$(sed -n 's/^TESTS_TOTAL=//p' "$1")
	failed=$(sed -n 's/^TESTS_FAILED=//p' "$1")
	skipped=$(sed -n 's/^TESTS_SKIPPED=//p' "$1")
	echo "$((total - failed - skipped)) $failed $skipped"
}
counts=$(mktemp)
copycounts=$(mktemp)
copylog=$(mktemp)
fuzzlog=$(mktemp)
trap 'rm -f "$counts" "$copycounts" "$copylog" "$fuzzlog"' EXIT
# Four tests of a package at a time, not go test's one per CPU: most of
# internal/app's tests wait (failovers, expiries, timeouts), and with two
# at a time that package alone took 219 s of the suite's 308 (164 s of
# 234 with four).
summarize "$counts" -- -race -count=1 -parallel 4 "$@" ./...
took "go test -race ./..."
# A short run of every fuzz target past its seed corpus (the seeds ran
# above, as tests); `make fuzz` runs them for longer. A count, not a
# duration: Go 1.26's fuzz coordinator can fail a duration-bound run that
# found nothing with "context deadline exceeded" when its time runs out on
# a busy machine (golang/go#75804, fixed in Go 1.27); a count has no
# deadline to race. It runs beside the next step, which it does not
# depend on: CI's 15 minutes are tight, and the lock port's timing tests
# are made to pass with both cores busy.
FUZZTIME=${TEST_FUZZTIME:-2000x} bash "$(dirname "$0")/fuzz.sh" >"$fuzzlog" 2>&1 &
fuzzing=$!
trap 'kill "$fuzzing" 2>/dev/null || true; rm -f "$counts" "$copycounts" "$copylog" "$fuzzlog"' EXIT
# The lock port copied into a module of its own (example.com/lockport)
# passes its tests there: nothing in internal/lock needs the rest of the
# service.
# Its own lines on stderr (what the copy requires) are kept apart and
# printed after: gotestsum would count a raw command's stderr as errors.
if ! summarize "$copycounts" --raw-command -- bash -c 'bash "$1" -json 2>"$2"' copyout "$(dirname "$0")/copyout.sh" "$copylog"; then
	cat "$copylog" >&2
	exit 1
fi
cat "$copylog" >&2
fuzzed=0
wait "$fuzzing" || fuzzed=$?
cat "$fuzzlog"
if [ "$fuzzed" -ne 0 ]; then
	echo "fuzz: failed (exit $fuzzed)" >&2
	exit 1
fi
took "the lock port copied out, beside the fuzz targets"
# Three instances behind HAProxy, restarted one by one under a 2,000-user
# hammer: no request may fail, no seat event may be lost (`make
# rolling-restart` runs it three times, longer); then a Sentinel failover
# under the same hammer. The PostgreSQL switchover and failover are left
# to `make rolling-restart` here: TestFaultPostgresSwitchover and
# TestFaultPostgresFailover (and its twin with LOCK_BACKEND=postgres)
# prove them above, and the suite must stay within CI's 15 minutes. It
# installs HAProxy when missing and runs on servers of its own.
# It deletes its servers' data (the PostgreSQL cluster wherever it lives)
# pass or fail; passed, its logs go too.
RUNS=1 DURATION=10s PG_SWITCHOVERS=0 PG_FAILOVERS=0 bash "$(dirname "$0")/rolling.sh" "$PWD/.data/rolling-test"
go run ./cmd/devenv remove "$PWD/.data/rolling-test"
took "the rolling restart and the Sentinel failover"
read -r passed failed skipped < <(tests "$counts")
read -r copied copyfailed copyskipped < <(tests "$copycounts")
targets=$(grep -c '^fuzz: Fuzz' "$fuzzlog")
echo "make test: $passed tests, $copied tests of the lock port copied out, and $targets fuzz targets"
passed=$((passed + copied))
failed=$((failed + copyfailed))
skipped=$((skipped + copyskipped))
echo "total: $((passed + targets)) passed, $failed failed, $skipped skipped"
