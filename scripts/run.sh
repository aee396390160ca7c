#!/usr/bin/env bash
# `make run`: local Redis and PostgreSQL under DIR (kept between runs; `make
# stop` stops them), then the API in the foreground on HTTP_ADDR
# (127.0.0.1:8080). Migrations are applied by the API at start-up.
set -euo pipefail
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/devenv.sh" start "$dir"
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
export HTTP_ADDR=${HTTP_ADDR:-127.0.0.1:8080}
admin=$(bin/api token --user admin --role admin --ttl 24h)
user=$(bin/api token --user alice --ttl 24h)
cat <<MSG
Redis      $REDIS_URL
PostgreSQL 127.0.0.1:$PG_PORT (database seatlock; credentials in $dir/env)
API        http://$HTTP_ADDR   (Ctrl-C stops it; 'make stop' stops Redis and PostgreSQL)

Admin token (24h):
$admin

User token for "alice" (24h):
$user

MSG
exec bin/api serve
