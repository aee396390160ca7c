#!/usr/bin/env bash
# `make smoke`: runs api.http unattended in a real client (httpyac) against
# the service. It uses the service that answers on HTTP_ADDR (the Makefile
# passes the address `make run` or `make cluster` serves on, see
# scripts/served.sh; else 127.0.0.1:8080); when none answers there it says
# so and starts one on a free port on `make run`'s servers (under DIR), and
# stops what it started afterwards. Fresh admin,
# alice and bob tokens go into http-client.private.env.json (git-ignored)
# as the environment "smoke".
set -euo pipefail
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
httpyac=httpyac@6.16.7

log() { printf 'smoke: %s\n' "$*" >&2; }

go build -o bin/api ./cmd/api
addr=${HTTP_ADDR:-127.0.0.1:8080}
cleanup=()
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT

servers_running() { [ -f "$dir/redis/redis.pid" ] && kill -0 "$(cat "$dir/redis/redis.pid")" 2>/dev/null; }

if [ -f "$dir/env" ] && curl -fsS -o /dev/null "http://$addr/readyz" 2>/dev/null; then
	log "using the service on $addr"
else
	servers_running || cleanup+=("go run ./cmd/devenv stop '$dir'")
	go run ./cmd/devenv start "$dir"
	addr=127.0.0.1:$(go run ./cmd/devenv port)
	(set -a; . "$dir/env"; set +a; HTTP_ADDR=$addr exec bin/api serve) >"$dir/smoke-api.log" 2>&1 &
	pid=$!
	cleanup=("kill $pid; wait $pid 2>/dev/null || true" "${cleanup[@]}")
	for _ in $(seq 1 100); do
		curl -fsS -o /dev/null "http://$addr/readyz" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || { cat "$dir/smoke-api.log" >&2; log "the service did not start"; exit 1; }
		sleep 0.1
	done
	log "no service answers on ${HTTP_ADDR:-127.0.0.1:8080}: testing a service started for this run on $addr instead (log: $dir/smoke-api.log)"
fi

set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
cat >http-client.private.env.json <<JSON
{
  "smoke": {
    "baseUrl": "http://$addr",
    "adminToken": "$(bin/api token --user admin --role admin --ttl 1h)",
    "userToken": "$(bin/api token --user alice --ttl 1h)",
    "otherUserToken": "$(bin/api token --user bob --ttl 1h)"
  }
}
JSON
bash "$here/node.sh" npx --yes "$httpyac" send api.http --all --env smoke --output short
