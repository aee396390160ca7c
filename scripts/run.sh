#!/usr/bin/env bash
# `make run`: local Redis and PostgreSQL under DIR (kept between runs; `make
# stop` stops them), then the API in the foreground on HTTP_ADDR
# (127.0.0.1:8080). Migrations are applied by the API at start-up.
# The tokens it prints are also written to DIR/tokens.env, with the API's
# URL, as shell assignments a second terminal can source; the address is
# recorded in DIR/served.env (scripts/served.sh), which `make smoke`, `make
# hammer` and `make token` follow. Both go (or name again what served
# before, a `make cluster` still running) when the API ends. The API's pid
# is in DIR/api/<this script's pid>.pid, for `make stop` (a `make run &`
# ignores Ctrl-C). On a terminal the request log is text a person reads
# (LOG_FORMAT=text), else JSON lines. If the API fails to start, the
# servers this run started are stopped.
set -euo pipefail
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
running_before=0
[ -f "$dir/redis/redis.pid" ] && kill -0 "$(cat "$dir/redis/redis.pid")" 2>/dev/null && running_before=1
go -C "$here/.." run ./cmd/devenv start "$dir"
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
# Once `make cluster` has given the Redis Sentinels, the service finds the
# master through them, as the cluster's instances do: after a failover the
# Redis of REDIS_URL is a read-only replica.
if [ -f "$dir/sentinel/env" ] && [ -f "$dir/sentinel/1/sentinel.pid" ] &&
	kill -0 "$(cat "$dir/sentinel/1/sentinel.pid")" 2>/dev/null; then
	# shellcheck disable=SC1091
	. "$dir/sentinel/env"
	REDIS_URL=$SENTINEL_URL
fi
export HTTP_ADDR=${HTTP_ADDR:-127.0.0.1:8080}
if [ -t 1 ]; then
	export LOG_FORMAT=${LOG_FORMAT:-text}
fi
mkdir -p "$dir/api"
cleanup() {
	rm -f "$dir/api/$$.pid"
	bash "$here/served.sh" release "$dir" $$
}
trap cleanup EXIT
bash "$here/served.sh" claim "$dir" "$HTTP_ADDR" "make run" $$
# shellcheck disable=SC1091
. "$dir/tokens.env"
cat <<MSG
Redis      $REDIS_URL
PostgreSQL 127.0.0.1:$PG_PORT (database seatlock; data in ${PG_DIR:-$dir/pg}; credentials in $dir/env)
API        $API   (Ctrl-C stops it; 'make stop' stops it, Redis and PostgreSQL; 'make clean' deletes the data too)

Tokens (24h), also in $dir/tokens.env for a second terminal:
  . $dir/tokens.env    # sets API, ADMIN, ALICE and BOB
  make token USER=carol [ROLE=admin]   # mints another
  make smoke; make hammer              # follow $API while it serves

Admin token:
$ADMIN

User token for "alice":
$ALICE

MSG
status=0
# In the foreground (Ctrl-C reaches it), its pid recorded first.
sh -c 'echo $$ >"$0"; exec bin/api serve' "$dir/api/$$.pid" || status=$?
# Ctrl-C ends the API cleanly (status 0); a failure to start (the address
# in use, a bad setting) leaves no servers behind that this run started.
if [ "$status" -ne 0 ] && [ "$running_before" -eq 0 ]; then
	cleanup
	go -C "$here/.." run ./cmd/devenv stop "$dir"
fi
exit "$status"
