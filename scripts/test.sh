#!/usr/bin/env bash
# The test suite proper, run by `make test` once cmd/devenv has installed
# Redis, PostgreSQL and the rest: each package's test binary starts the
# servers its tests use and stops them at its end (lockenv.Run in its
# TestMain), unless TEST_REDIS_URL, TEST_REDIS_CLUSTER_URL and
# TEST_DATABASE_URL name servers to use instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# step WHAT COMMAND...: runs COMMAND, then says on stderr how long WHAT
# took: CI's 15 minutes are tight, and these lines say where they go.
step() {
	local TIMEFORMAT="make test: $1 took %0R s"
	shift
	time "$@"
}

lint() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go'))
	if [ -n "$unformatted" ]; then
		echo "gofmt would change: $unformatted" >&2
		return 1
	fi
	# golangci-lint, pinned in a modfile of its own
	# (tools/golangci-lint/go.mod) so its dependencies stay out of the
	# service's; .golangci.yml says which linters, with no exclusions. Its
	# govet runs every analyzer go vet does, so go vet is not run again.
	go tool -modfile=tools/golangci-lint/go.mod golangci-lint run ./...
	# The OpenAPI document, linted by a pinned Redocly CLI (redocly.yaml).
	bash scripts/node.sh npx --yes @redocly/cli@2.11.1 lint --format=summary api/openapi.json
}

# One line per package, the output of what failed, and the count of tests
# (gotestsum, a go.mod tool, reading go test's JSON events). Four tests of
# a package at a time, not go test's one per CPU: most of internal/app's
# tests wait (failovers, expiries, timeouts), and with two at a time that
# package alone took 219 s of the suite's 308 (164 s of 234 with four).
# -vet=off: the lint above ran every analyzer go vet has, on the tests too.
tests() {
	go run ./cmd/devenv browser
	go tool gotestsum --format pkgname -- -race -vet=off -count=1 -parallel 4 "$@" ./...
}

# The lock port copied into a module of its own (example.com/lockport)
# passes its tests there: nothing in internal/lock needs the rest of the
# service. Beside it, a short run of every fuzz target past its seed
# corpus (the seeds ran above, as tests; `make fuzz` runs them for
# longer), which it does not depend on: CI's 15 minutes are tight, and the
# lock port's timing tests are made to pass with both cores busy. A count,
# not a duration: Go 1.26's fuzz coordinator can fail a duration-bound run
# that found nothing with "context deadline exceeded" when its time runs
# out on a busy machine (golang/go#75804, fixed in Go 1.27); a count has
# no deadline to race.
copied_out_and_fuzzed() {
	local fuzzlog copylog fuzzing fuzzed=0
	fuzzlog=$(mktemp)
	copylog=$(mktemp)
	FUZZTIME=${TEST_FUZZTIME:-2000x} bash scripts/fuzz.sh >"$fuzzlog" 2>&1 &
	fuzzing=$!
	# The copy's own lines on stderr (what it requires) are kept apart and
	# printed after: gotestsum would count a raw command's stderr as errors.
	if ! go tool gotestsum --format pkgname --raw-command -- bash -c 'bash scripts/copyout.sh -json 2>"$1"' copyout "$copylog"; then
		cat "$copylog" >&2
		kill "$fuzzing" 2>/dev/null || true
		return 1
	fi
	cat "$copylog" >&2
	wait "$fuzzing" || fuzzed=$?
	cat "$fuzzlog"
	rm -f "$fuzzlog" "$copylog"
	if [ "$fuzzed" -ne 0 ]; then
		echo "fuzz: failed (exit $fuzzed)" >&2
		return 1
	fi
}

# Three instances behind HAProxy, restarted one by one under a 2,000-user
# hammer: no request may fail, no seat event may be lost (`make
# rolling-restart` runs it three times, longer); then a Sentinel failover
# under the same hammer. The PostgreSQL switchover and failover are left
# to `make rolling-restart` here: TestFaultPostgresSwitchover and
# TestFaultPostgresFailover (and its twin with LOCK_BACKEND=postgres)
# prove them above, and the suite must stay within CI's 15 minutes. It
# runs on servers of its own and deletes their data (the PostgreSQL
# cluster wherever it lives) pass or fail.
rolling() {
	RUNS=1 DURATION=10s PG_SWITCHOVERS=0 PG_FAILOVERS=0 go run ./cmd/drill rolling "$PWD/.data/rolling-test"
	go run ./cmd/devenv remove "$PWD/.data/rolling-test"
}

step "formatting, vet, golangci-lint and the OpenAPI lint" lint
# The clients generated from the document: the committed Go client is
# current, and the TypeScript types compile.
step "the generated Go client and TypeScript types" bash scripts/clients.sh
step "go test -race ./..." tests "$@"
step "the lock port copied out, beside the fuzz targets" copied_out_and_fuzzed
step "the rolling restart and the Sentinel failover" rolling
echo "make test: passed"
