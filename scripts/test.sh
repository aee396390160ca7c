#!/usr/bin/env bash
# The test suite proper, run by `make test` inside scripts/devenv.sh's
# throwaway servers (TEST_REDIS_URL, TEST_DATABASE_URL).
set -euo pipefail
unformatted=$(gofmt -l $(find . -name '*.go' -not -path './.data/*' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
bash "$(dirname "$0")/devenv.sh" browser
# The OpenAPI document, linted by a pinned Redocly CLI (redocly.yaml).
bash "$(dirname "$0")/node.sh" npx --yes @redocly/cli@2.11.1 lint --format=summary api/openapi.json
# One line per package, the output of what failed, and the count of tests
# (scripts/testsummary reads go test's JSON events).
counts=$(mktemp)
fuzzlog=$(mktemp)
trap 'rm -f "$counts" "$fuzzlog"' EXIT
go build -o /dev/null ./scripts/testsummary
go test -race -count=1 -json "$@" ./... | go run ./scripts/testsummary -counts "$counts"
# A short run of every fuzz target past its seed corpus (the seeds ran
# above, as tests); `make fuzz` runs them for longer. A count, not a
# duration: Go 1.26's fuzz coordinator can fail a duration-bound run that
# found nothing with "context deadline exceeded" when its time runs out on
# a busy machine (golang/go#75804, fixed in Go 1.27); a count has no
# deadline to race.
FUZZTIME=${TEST_FUZZTIME:-5000x} bash "$(dirname "$0")/fuzz.sh" | tee "$fuzzlog"
read -r passed failed skipped <"$counts"
targets=$(grep -c '^fuzz: Fuzz' "$fuzzlog")
echo "make test: $passed tests and $targets fuzz targets"
echo "total: $((passed + targets)) passed, $failed failed, $skipped skipped"
