#!/usr/bin/env bash
# The lock port lifted out: copies internal/lock into a new module of its
# own, as a team adopting it would, rewrites the import path, lets `go mod
# tidy` find the few modules it needs, and runs its vet and its tests (the
# contract suite against memory, Redis, Redis Cluster and PostgreSQL) on
# the servers its own test environment (lockenv) starts, or on those named
# by TEST_REDIS_URL, TEST_REDIS_CLUSTER_URL and TEST_DATABASE_URL. A file
# of the port that imports anything else of this service fails here, and
# so does a copy without the port's README.md.
#
#	scripts/copyout.sh [-json]   (-json: go test's JSON events on stdout)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
json=
if [ "${1:-}" = -json ]; then
	json=-json
fi
service_path=$(cd "$root" && go list -m)/internal/lock
module=example.com/lockport
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$root/internal/lock" "$work/lockport"
# The port travels with its manual.
if [ ! -f "$work/lockport/README.md" ]; then
	echo "copy-out: the copy has no README.md: internal/lock/README.md must travel with the port" >&2
	exit 1
fi
cd "$work/lockport"
find . -name '*.go' -exec sed -i "s#\"$service_path#\"$module#g" {} +
if left=$(grep -rn --include='*.go' "\"$(dirname "$service_path")/" .); then
	printf 'copy-out: the lock port still imports the service:\n%s\n' "$left" >&2
	exit 1
fi
go_version=$(cd "$root" && go mod edit -json | sed -n 's/^\t"Go": "\(.*\)",$/\1/p')
printf 'module %s\n\ngo %s\n' "$module" "$go_version" >go.mod
# The service's go.sum already vouches for every version the port can
# need; tidy picks the same versions the service builds with.
cp "$root/go.sum" go.sum
go mod edit $(cd "$root" && go list -m -f '{{if not .Main}}-require={{.Path}}@{{.Version}}{{end}}' all)
go mod tidy >&2
echo "copy-out: $module requires $(go list -m -f '{{if not .Main}}{{if not .Indirect}}{{.Path}}{{end}}{{end}}' all | xargs)" >&2
go vet ./... >&2
go test -count=1 $json ./...
