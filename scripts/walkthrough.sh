#!/usr/bin/env bash
# `make walkthrough`: a newcomer's first steps, unattended.
#  1. clones the repository (its committed HEAD) into a new mode-700
#     directory (mktemp -d: like root's home, a place the postgres user
#     cannot enter) and starts `make run` there on a free port;
#  2. pastes every ```sh block of the README past the two commands into
#     bash, from the clone's directory: each block must end well, and each
#     `curl` must answer the status its comment starts with ("# 409 ...");
#  3. runs `make smoke` against that service;
#  4. starts a second clone's `make run` on the same (taken) address: it
#     must fail and leave none of the servers it started running;
#  5. stops the service and `make stop`s, and checks that no server it
#     started still listens; the clones and their data are deleted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

log() { printf 'walkthrough: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/seatlock-walkthrough.XXXXXX")
chmod 700 "$work"
clone=$work/seatlock
second=$work/second
run_pid=

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
env_value() { sed -n "s/^$2=//p" "$1/.data/run/env" 2>/dev/null; }

# servers_down CLONE: neither the Redis nor the PostgreSQL of CLONE's
# `make run` still listens.
servers_down() {
	local port
	for port in "$(env_value "$1" REDIS_PORT)" "$(env_value "$1" PG_PORT)"; do
		[ -z "$port" ] || ! listening "$port" || { log "port $port of $1 still listens"; return 1; }
	done
}

cleanup() {
	local c pg
	if [ -n "$run_pid" ]; then
		kill -TERM -- "-$run_pid" 2>/dev/null || true
		wait "$run_pid" 2>/dev/null || true
	fi
	for c in "$clone" "$second"; do
		[ -f "$c/.data/run/env" ] || continue
		(cd "$c" && make -s stop >/dev/null 2>&1) || true
		pg=$(env_value "$c" PG_DIR)
		case $pg in "$c"/*) ;; ?*) rm -rf "$pg" ;; esac
	done
	rm -rf "$work"
}
trap cleanup EXIT

git clone -q "$repo" "$clone"
port=$(bash "$here/devenv.sh" port)
addr=127.0.0.1:$port
log "make run in $clone (mode $(stat -c %a "$work")), serving on $addr"
(cd "$clone" && HTTP_ADDR=$addr exec setsid make run) >"$work/run.log" 2>&1 &
run_pid=$!
for _ in $(seq 1 600); do
	curl -fsS -o /dev/null "http://$addr/readyz" 2>/dev/null && break
	kill -0 "$run_pid" 2>/dev/null || { cat "$work/run.log" >&2; die "make run ended before it served"; }
	sleep 0.2
done
curl -fsS -o /dev/null "http://$addr/readyz" || { cat "$work/run.log" >&2; die "make run did not serve within 2 minutes"; }
grep -q "tokens.env" "$work/run.log" || die "make run's banner does not name the tokens file"

# The README's sh blocks, one file each; the two commands' own block (it
# runs make run and make test) is what this script runs around them.
mkdir "$work/blocks"
awk -v dir="$work/blocks" '
	/^```sh$/ { n++; inside = 1; next }
	/^```/ { inside = 0; next }
	inside { print > (dir "/" sprintf("%02d", n) ".sh") }
' "$clone/README.md"
ran=0
for block in "$work"/blocks/*.sh; do
	if grep -qE '^make (run|test)\b' "$block"; then
		continue
	fi
	statuses=$work/statuses
	: >"$statuses"
	# Every curl also writes its status to the log, in the order they end.
	if ! (cd "$clone" && HTTP_ADDR=$addr STATUS_LOG=$statuses bash -e -c '
		curl() { command curl -w "%{stderr}%{http_code}\n" "$@" 2>>"$STATUS_LOG"; }
		. "$1"
		wait' walkthrough "$block") >"$block.out" 2>&1; then
		cat "$block" "$block.out" >&2
		die "README block $(basename "$block") failed"
	fi
	# (a block without curl, such as the hammer's, expects no status)
	want=$({ grep -oE '#[[:space:]]+[0-9]{3}([^0-9]|$)' "$block" || true; } | { grep -oE '[0-9]{3}' || true; } | tr '\n' ' ')
	got=$(tr '\n' ' ' <"$statuses")
	if [ "$want" != "$got" ]; then
		cat "$block" "$block.out" >&2
		die "README block $(basename "$block"): statuses [$got], its comments say [$want]"
	fi
	log "README block $(basename "$block"): $(wc -l <"$block") lines, statuses [${got% }] as its comments say"
	ran=$((ran + 1))
done
[ "$ran" -ge 4 ] || die "only $ran README blocks ran; the quick start, checkout, live map and hammer blocks should"

(cd "$clone" && HTTP_ADDR=$addr make -s smoke) >"$work/smoke.log" 2>&1 || { cat "$work/smoke.log" >&2; die "make smoke failed"; }
log "make smoke: $(grep -E 'requests processed' "$work/smoke.log")"

# A start that fails stops what it started: the address is taken.
git clone -q "$repo" "$second"
if (cd "$second" && HTTP_ADDR=$addr make run) >"$work/second.log" 2>&1; then
	die "make run on a taken address did not fail"
fi
servers_down "$second" || { cat "$work/second.log" >&2; die "a failed make run left its servers running"; }
log "make run on a taken address failed and stopped the servers it started"

# What Ctrl-C does, to the API alone: it drains and exits 0, and so does
# make run.
pkill -TERM -s "$run_pid" -f 'bin/api serve'
wait "$run_pid" || { tail -n 5 "$work/run.log" >&2; die "make run did not end cleanly when its API was stopped"; }
run_pid=
(cd "$clone" && make -s stop)
servers_down "$clone" || die "make stop left a server running"
log "passed: make run, $ran README blocks, make smoke, a failed start, make stop"
