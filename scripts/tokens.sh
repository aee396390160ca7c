#!/usr/bin/env bash
# tokens.sh DIR URL: mints 24-hour development tokens with DIR/env's
# AUTH_SECRET (an admin, alice and bob) and writes them with the API's URL
# to DIR/tokens.env as shell assignments (API, ADMIN, ALICE, BOB), readable
# by the owner only.
set -euo pipefail
dir=$1 url=$2
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
mint() { bin/api token --user "$1" ${2:+--role "$2"} --ttl 24h; }
umask 077
cat >"$dir/tokens.env.tmp" <<EOF
API=$url
ADMIN=$(mint admin admin)
ALICE=$(mint alice)
BOB=$(mint bob)
EOF
mv "$dir/tokens.env.tmp" "$dir/tokens.env"
