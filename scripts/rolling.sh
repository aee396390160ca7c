#!/usr/bin/env bash
# `make rolling-restart`: proves that the cluster serves what `make run`
# serves and that a rolling restart of it fails no request and loses no
# seat event. On servers of its own (DIR), it starts `devenv cluster up` on a
# free port (three instances reaching Redis through its Sentinels and
# PostgreSQL's Patroni pair, behind HAProxy); runs `make smoke` (api.http in
# httpyac) through HAProxy; drives the page in Chromium through HAProxy
# while the instances restart (tools/pagecheck: bookings made meanwhile must
# all show on the page); then RUNS times (default 3): the hammer books fresh
# seats as 2,000 users through HAProxy for DURATION (default 25s) with a
# watcher on each schedule's live stream (also through HAProxy; reopened
# with Last-Event-ID when an instance ends it), while `devenv cluster roll`
# restarts the three instances one by one. A run passes when the hammer's
# verdict does: no 5xx, no transport error, one reservation per seat and
# every booking's event on the stream. Then FAILOVERS times (default 1) the
# same hammer while the Sentinels promote the replica (`devenv cluster
# failover`), to the same verdict; then PG_SWITCHOVERS times (default 1)
# while Patroni hands PostgreSQL's lead to the synchronous standby
# (`devenv cluster pg-switchover`), to the same verdict; then PG_FAILOVERS
# times (default 1) while the leading PostgreSQL node is SIGKILLed, the
# standby promoted and the killed node restarted (`devenv cluster
# pg-failover`), with the hammer's -allow-unavailable: 503 unavailable
# answers while no node leads do not fail it, anything else as before. A
# PostgreSQL failover run lasts at least 20 s (PG_FAILOVER_DURATION;
# DURATION when longer), so that the hammer books again after the
# promotion (some 8 s after the kill). It prints each run's figures (a
# PostgreSQL failover's longest time without a successful booking too),
# and stops everything it started and deletes its servers' data (the
# PostgreSQL clusters wherever they live: under the postgres user's home
# for a DIR that user cannot enter), pass or fail; the logs stay in DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
dir=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
runs=${RUNS:-3}
failovers=${FAILOVERS:-1}
pg_switchovers=${PG_SWITCHOVERS:-1}
pg_failovers=${PG_FAILOVERS:-1}
duration=${DURATION:-25s}

# seconds DURATION: a duration of whole seconds (25s) or minutes (1m) in
# seconds, or nothing for any other form.
seconds() {
	if [[ $1 =~ ^([0-9]+)s$ ]]; then
		echo "${BASH_REMATCH[1]}"
	elif [[ $1 =~ ^([0-9]+)m$ ]]; then
		echo $((BASH_REMATCH[1] * 60))
	fi
}
pg_failover_duration=${PG_FAILOVER_DURATION:-$duration}
if [ -z "${PG_FAILOVER_DURATION:-}" ] && s=$(seconds "$duration") && [ -n "$s" ] && [ "$s" -lt 20 ]; then
	pg_failover_duration=20s
fi

log() { printf 'rolling: %s\n' "$*" >&2; }

go build -o bin/api ./cmd/api
go build -o bin/hammer ./cmd/hammer
go build -o bin/pagecheck ./tools/pagecheck
go run ./cmd/devenv browser
# shellcheck source=scripts/owncluster.sh
. "$here/owncluster.sh"
own_cluster "$dir"

HTTP_ADDR=$addr bash "$here/smoke.sh" "$dir" >"$dir/smoke.log" 2>&1 ||
	{ tail -n 40 "$dir/smoke.log" >&2; log "make smoke failed through HAProxy (see $dir/smoke.log)"; exit 1; }
log "through HAProxy: make smoke $(tail -n 1 "$dir/smoke.log")"

# The page, through HAProxy, while the instances restart: its stream is
# ended by each instance that goes and reopened by the browser.
# shellcheck disable=SC1091
. "$dir/tokens.env"
bin/pagecheck -json -url "http://$addr" -admin-token "$ADMIN" -user-token "$ALICE" -duration 12s \
	>"$dir/page.json" 2>"$dir/page.err" &
page=$!
sleep 2
go run ./cmd/devenv cluster roll "$dir" 2>>"$dir/roll.log"
status=0
wait "$page" || status=$?
jq -r '"the page through HAProxy, 3 instances restarted: \(.bookings) bookings made meanwhile, \(.retries) retried; the seat map showed the last \(.mapSeconds) s after it was answered, the page \(.agreeSeconds) s after; its stream opened \(.stream.opens) times, \(.stream.snapshots) snapshot; \(if .pass then "PASS" else "FAIL: " + .reason end)"' \
	"$dir/page.json" >&2 || true
[ "$status" -eq 0 ] || { cat "$dir/page.err" >&2; log "the page failed through HAProxy (see $dir/page.json)"; exit 1; }

# under CHANGE RUN: a hammer run of DURATION through HAProxy, with CHANGE
# (roll, failover, pg-switchover or pg-failover) 3 s in; prints its figures
# and fails on its verdict.
under() {
	local change=$1 r=$2 out=$dir/$1-$2.json began took hammer status=0 result during
	local flags=(-duration "$duration")
	[ "$change" != pg-failover ] || flags=(-duration "$pg_failover_duration" -allow-unavailable)
	bin/hammer -json -scenario fresh-seats -c 64 -users 2000 "${flags[@]}" -watch \
		-url "http://$addr" >"$out" 2>"$dir/$change-$r.err" &
	hammer=$!
	sleep 3
	began=$SECONDS
	# pg-switchover and pg-failover print one line of figures on stdout.
	result=$(go run ./cmd/devenv cluster "$change" "$dir" 2>>"$dir/$change.log") || {
		tail -n 5 "$dir/$change.log" >&2
		log "devenv cluster $change failed (see $dir/$change.log)"
		wait "$hammer" || true
		return 1
	}
	took=$((SECONDS - began))
	wait "$hammer" || status=$?
	local promoted rejoined leader
	promoted=$(sed -n 's/.*promotedAfterMs=\([0-9]*\).*/\1/p' <<<"$result")
	rejoined=$(sed -n 's/.*rejoinedAfterMs=\([0-9]*\).*/\1/p' <<<"$result")
	leader=$(sed -n 's/.*leader=\([a-z0-9]*\).*/\1/p' <<<"$result")
	case $change in
	roll) during="3 instances restarted in $took s" ;;
	failover) during="the Sentinels failed over in $took s" ;;
	pg-switchover) during="PostgreSQL switched over to $leader (leading $promoted ms after the request; the old leader its synchronous standby $rejoined ms later)" ;;
	pg-failover) during="the PostgreSQL leader was SIGKILLed ($leader leading $promoted ms after the kill; the killed node, restarted, its synchronous standby $rejoined ms later)" ;;
	esac
	if [ ! -s "$out" ]; then
		log "$change $r: the hammer ended without a report while $during"
	else
		jq -r --arg what "$change $r" --arg during "$during" --arg gap "$([ "$change" != pg-failover ] || echo 1)" '
			"\($what): \(.sent) requests in \(.wallMs | floor) ms (\(.throughputPerSec | floor) req/s) while \($during); " +
			"5xx \([.responses | to_entries[] | select(.key | test("^5")) | .value] | add // 0)" +
			(if $gap == "1" then " (503 unavailable \(.responses["503 unavailable"] // 0)), longest gap without a booking \(.longestGapMs // "?") ms" else "" end) + ", " +
			"transport errors \(.responses["transport error"] // 0), " +
			"events \(.watch.matched) of \(.watch.booked) bookings, missing \(.watch.missing // [] | length), streams reopened \(.watch.resumed // 0), " +
			"event p99 \(.watch.delayMs.p99 // "?") ms; p99 \(.latencyMs.p99) ms; verdict \(if .verdict.pass then "PASS" else "FAIL: " + (.verdict.reasons | join("; ")) end)"' "$out"
	fi
	[ "$status" -eq 0 ] || { cat "$dir/$change-$r.err" >&2; return 1; }
}

# each CHANGE COUNT: COUNT runs of `under CHANGE`, all of them; fails if
# one failed.
each() {
	local r ok=0
	for r in $(seq 1 "$2"); do
		under "$1" "$r" || ok=1
	done
	return "$ok"
}

each roll "$runs" || { log "a rolling restart failed requests or lost events (see $dir)"; exit 1; }
log "passed: $runs rolling restarts under load, no request failed, no event lost"
each failover "$failovers" || { log "a Sentinel failover failed requests or lost events (see $dir)"; exit 1; }
[ "$failovers" -eq 0 ] || log "passed: $failovers Sentinel failovers under load, no request failed, no event lost"
# Both PostgreSQL checks run, whichever fails.
failed=0
if ! each pg-switchover "$pg_switchovers"; then
	failed=1
	log "a PostgreSQL switchover failed requests or lost events (see $dir)"
elif [ "$pg_switchovers" -ne 0 ]; then
	log "passed: $pg_switchovers PostgreSQL switchovers under load, no request failed, no event lost"
fi
if ! each pg-failover "$pg_failovers"; then
	failed=1
	log "a PostgreSQL failover failed requests beyond 503 unavailable, or lost events (see $dir)"
elif [ "$pg_failovers" -ne 0 ]; then
	log "passed: $pg_failovers PostgreSQL failovers under load (the leader SIGKILLed), nothing but 503 unavailable while no node led, no event lost"
fi
exit "$failed"
