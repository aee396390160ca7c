#!/usr/bin/env bash
# clients.sh [write]: the clients generated from api/openapi.json. Without
# an argument (make test) it checks them: the Go client oapi-codegen (the
# go.mod tool, pinned) makes must be internal/apiclient/client_gen_test.go as
# committed, and must make no warning; the TypeScript types the pinned
# openapi-typescript makes (into api/typescript/gen/, not committed) must
# compile under tsc --strict with api/typescript/check.ts. A change to the
# document that breaks either generator fails here. `make apiclient` (write)
# regenerates the committed Go client instead of comparing it.
set -euo pipefail
cd "$(dirname "$0")/.."
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
# Built first, so that what the go command says while it fetches the
# tool's modules on a new machine is not taken for the tool's warnings.
go build -o "$gen/oapi-codegen" github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen
if ! "$gen/oapi-codegen" -generate types,client -package apiclient -o "$gen/client_gen_test.go" api/openapi.json 2>"$gen/warnings" ||
	[ -s "$gen/warnings" ]; then
	echo "oapi-codegen failed or warned on api/openapi.json:" >&2
	cat "$gen/warnings" >&2
	exit 1
fi
if [ "${1:-}" = write ]; then
	cp "$gen/client_gen_test.go" internal/apiclient/client_gen_test.go
elif ! cmp -s "$gen/client_gen_test.go" internal/apiclient/client_gen_test.go; then
	echo "internal/apiclient/client_gen_test.go is not what api/openapi.json generates: run make apiclient and commit it" >&2
	exit 1
fi
# --default-non-nullable=false: a member with a default (a hold's adjacent)
# stays optional in what a client sends.
rm -rf api/typescript/gen
bash scripts/node.sh npx --yes openapi-typescript@7.13.0 api/openapi.json --default-non-nullable=false -o api/typescript/gen/openapi.ts
cd api/typescript
bash ../../scripts/node.sh npx --yes -p typescript@7.0.2 tsc --strict --noEmit --target es2022 --module nodenext --lib es2022,dom check.ts
