#!/usr/bin/env bash
# `make walkthrough`: a newcomer's first steps, unattended.
#  1. clones the repository (its committed HEAD) into a new mode-700
#     directory (mktemp -d: like root's home, a place the postgres user
#     cannot enter) and starts `make run` there on a free port;
#  2. pastes every ```sh block of README.md, then of docs/api.md,
#     docs/operations.md, docs/performance.md, docs/architecture.md and any
#     other docs/*.md (in name order), into bash, from the clone's
#     directory: each block must end well, and each `curl` must answer the
#     status its comment starts with ("# 409 ..."). Every curl of a block
#     shows its status to whoever pastes it, with its own -w (' %{http_code}\n'
#     after its body, or '%{stderr}%{http_code}\n' when its output is kept
#     or piped); a curl without -w fails the block. Skipped blocks: a block
#     that runs `make run` or `make test` (the two commands: this script
#     runs around them), and a block whose first line starts with
#     "# not in the walkthrough:" followed by the reason (say, it needs
#     `make cluster`);
#  3. runs `make smoke`, `make token` and a short `make hammer` without
#     HTTP_ADDR: each must find that service on its port, not 8080;
#  4. starts a second clone's `make run` on the same (taken) address: it
#     must fail and leave none of the servers it started running;
#  5. stops the service and `make stop`s, and checks that no server it
#     started still listens; then starts `make run` again in the
#     background and checks that `make stop` alone stops it all, API
#     included; the clones and their data are deleted.
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

# start_run LOG: the clone's `make run` on addr, in the background and in
# a session of its own (run_pid), once it serves.
start_run() {
	(cd "$clone" && HTTP_ADDR=$addr exec setsid make run) >"$1" 2>&1 &
	run_pid=$!
	for _ in $(seq 1 600); do
		curl -fsS -o /dev/null "http://$addr/readyz" 2>/dev/null && return 0
		kill -0 "$run_pid" 2>/dev/null || { cat "$1" >&2; die "make run ended before it served"; }
		sleep 0.2
	done
	cat "$1" >&2
	die "make run did not serve within 2 minutes"
}

git clone -q "$repo" "$clone"
port=$(go -C "$here/.." run ./cmd/devenv port)
addr=127.0.0.1:$port
log "make run in $clone (mode $(stat -c %a "$work")), serving on $addr"
start_run "$work/run.log"
grep -q "tokens.env" "$work/run.log" || die "make run's banner does not name the tokens file"

# The sh blocks of the documents, in this order, one file each, named
# after their document.
docs=(README.md docs/api.md docs/operations.md docs/performance.md docs/architecture.md)
for doc in "$clone"/docs/*.md; do
	case " ${docs[*]} " in *" ${doc#"$clone"/} "*) ;; *) docs+=("${doc#"$clone"/}") ;; esac
done
mkdir "$work/blocks"
n=0
for doc in "${docs[@]}"; do
	[ -f "$clone/$doc" ] || continue
	n=$((n + 1))
	awk -v dir="$work/blocks" -v prefix="$(printf '%02d' "$n")-$(basename "$doc" .md)" '
		/^```sh$/ { b++; inside = 1; next }
		/^```/ { inside = 0; next }
		inside { print > (dir "/" prefix "-" sprintf("%02d", b) ".sh") }
	' "$clone/$doc"
done
# The status mark: the wrapper below adds it to the end of each curl's own
# -w format, so curl (which keeps only the last -w) prints the block's
# format for the reader and then the mark, on stderr, for this script.
mark=walkthrough-status
ran=0
for block in "$work"/blocks/*.sh; do
	name=$(basename "$block" .sh)
	if grep -qE '^make (run|test)\b' "$block"; then
		log "block $name: skipped (the two commands)"
		continue
	fi
	if head -n 1 "$block" | grep -q '^# not in the walkthrough:'; then
		log "block $name: skipped ($(head -n 1 "$block" | sed 's/^# not in the walkthrough: *//'))"
		continue
	fi
	statuses=$work/statuses
	: >"$statuses"
	# Every curl appends its status, after the mark, to the log, in the
	# order they end; its other stderr (and a block's stderr -w) go there
	# too, and only the marked lines count.
	if ! (cd "$clone" && HTTP_ADDR=$addr STATUS_LOG=$statuses MARK=$mark bash -e -c '
		curl() {
			local args=() found=
			while [ $# -gt 0 ]; do
				case $1 in
				-w | --write-out)
					[ $# -ge 2 ] || { echo "walkthrough: $1 without a format" >&2; return 2; }
					args+=("$1" "$2%{stderr}$MARK %{http_code}\n"); found=1; shift 2 ;;
				*) args+=("$1"); shift ;;
				esac
			done
			[ -n "$found" ] || { echo "walkthrough: a curl without -w does not show its status: curl ${args[*]}" >&2; return 2; }
			command curl "${args[@]}" 2>>"$STATUS_LOG"
		}
		. "$1"
		wait' walkthrough "$block") >"$block.out" 2>&1; then
		cat "$block" "$block.out" "$statuses" >&2
		die "block $name failed"
	fi
	# (a block without curl, such as the hammer's, expects no status)
	want=$({ grep -oE '#[[:space:]]+[0-9]{3}([^0-9]|$)' "$block" || true; } | { grep -oE '[0-9]{3}' || true; } | tr '\n' ' ')
	got=$({ grep -E "^$mark [0-9]{3}$" "$statuses" || true; } | sed "s/^$mark //" | tr '\n' ' ')
	if [ "$want" != "$got" ]; then
		cat "$block" "$block.out" >&2
		die "block $name: statuses [$got], its comments say [$want]"
	fi
	log "block $name: $(wc -l <"$block") lines, statuses [${got% }] as its comments say"
	ran=$((ran + 1))
done
[ "$ran" -ge 5 ] || die "only $ran blocks ran; the README's quick start and docs' checkout, venue, live map and hammer blocks should"

# make run serves on a port of its own, not 8080: smoke, token and hammer
# must find it without being told (make run records its address).
(cd "$clone" && env -u HTTP_ADDR make -s smoke) >"$work/smoke.log" 2>&1 || { cat "$work/smoke.log" >&2; die "make smoke failed"; }
grep -q "using the service on $addr" "$work/smoke.log" || { cat "$work/smoke.log" >&2; die "make smoke did not test make run's service on $addr"; }
log "make smoke, on make run's $addr: $(grep -E 'requests processed' "$work/smoke.log")"
(cd "$clone" && env -u HTTP_ADDR make -s token USER=carol) >"$work/token.log" 2>&1 || { cat "$work/token.log" >&2; die "make token failed"; }
grep -q "for the service on http://$addr" "$work/token.log" || { cat "$work/token.log" >&2; die "make token did not name make run's $addr"; }
(cd "$clone" && env -u HTTP_ADDR make -s hammer ARGS='-duration 2s -users 50') >"$work/hammer.log" 2>&1 || { cat "$work/hammer.log" >&2; die "make hammer against make run's $addr failed"; }
log "make token and make hammer followed make run to $addr"

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

# make stop also stops a make run left in the background, its API first
# (a background job ignores Ctrl-C; make stop finds it by its pid file).
start_run "$work/run2.log"
(cd "$clone" && make -s stop)
for _ in $(seq 1 100); do
	kill -0 "$run_pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$run_pid" 2>/dev/null && die "make stop left the background make run running"
wait "$run_pid" 2>/dev/null || true
run_pid=
! listening "$port" || die "make stop left the API listening on $addr"
servers_down "$clone" || die "make stop left a server running"
log "passed: make run, $ran documentation blocks, make smoke, make token and make hammer on its address, a failed start, make stop (of a make run in the foreground and of one in the background)"
