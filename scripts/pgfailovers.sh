#!/usr/bin/env bash
# `make pg-failovers N=20`: how the service rides out a PostgreSQL failover
# under load. On servers of its own (DIR), it starts `devenv cluster up` on a
# free port (as scripts/rolling.sh does), then N times (default 20): the
# hammer books fresh seats as 2,000 users through HAProxy for DURATION
# (default 30s) with a watcher on each schedule's live stream and
# -allow-unavailable, while, FAILOVER_AFTER seconds in (default 5),
# `devenv cluster pg-failover DIR` SIGKILLs the PostgreSQL leader, waits for
# the standby's promotion and brings the killed node back as standby,
# printing `promotedAfterMs=… rejoinedAfterMs=… leader=…`.
#
# A run passes when the hammer's verdict does: 503 unavailable answers
# are allowed while the database fails over, but no other 5xx, no
# transport error, every booking answered 200 read back by its id
# afterwards (none lost), no seat booked twice, every booking's event on
# the stream, and bookings again before the run ends; and when the
# failover command succeeded. Each run prints a row (its promotion time,
# longestGapMs: the longest stretch without a booking, about how long
# booking stopped, and the counts behind the verdict), written as a JSON
# line to DIR/pgfailovers.jsonl too; then the median and worst
# longestGapMs and the totals. Exit status 1 if any run failed. Everything
# it started is stopped and its servers' data deleted, pass or fail; the
# hammer's reports and the logs stay in DIR.
#
# PG_FAILOVER_CMD replaces the failover command (a bash command line, DIR
# as $1; it must print the line above on stdout, within FAILOVER_TIMEOUT
# seconds, default 120): to try the script where devenv cluster has no
# pg-failover, say
#   PG_FAILOVER_CMD='sleep 8; echo promotedAfterMs=7650 rejoinedAfterMs=6100 leader=pg2'
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
dir=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
runs=${N:-20}
duration=${DURATION:-30s}
after=${FAILOVER_AFTER:-5}
# shellcheck disable=SC2016
failover_cmd=${PG_FAILOVER_CMD:-'go run ./cmd/devenv cluster pg-failover "$1"'}

log() { printf 'pg-failovers: %s\n' "$*" >&2; }

case $runs in '' | *[!0-9]* | 0) log "N must be a positive number, not '$runs'"; exit 2 ;; esac
go build -o bin/api ./cmd/api
go build -o bin/hammer ./cmd/hammer
# shellcheck source=scripts/owncluster.sh
. "$here/owncluster.sh"
own_cluster "$dir"

# ready SECONDS: waits up to SECONDS for HAProxy to answer /readyz 200.
ready() {
	local i
	for i in $(seq 1 $(($1 * 5))); do
		curl -fsS -o /dev/null --max-time 1 "http://$addr/readyz" 2>/dev/null && return 0
		kill -0 "$up" 2>/dev/null || { cat "$dir/cluster-up.log" >&2; log "make cluster ended"; exit 1; }
		[ "$i" -eq $(($1 * 5)) ] || sleep 0.2
	done
	return 1
}
log "the cluster serves on $addr; $runs runs of $duration, the failover $after s in (DIR $dir)"

jsonl=$dir/pgfailovers.jsonl
: >"$jsonl"
row() { printf '%3s  %15s  %12s  %6s  %10s  %9s  %8s  %4s  %11s  %14s  %s\n' "$@"; }
row run promotedAfterMs longestGapMs 503s 'other 5xx' transport bookings lost 'seats twice' 'events missing' verdict

# one R: a hammer run with a failover AFTER seconds in; prints its row and
# appends its JSON line.
one() {
	local r=$1 out=$dir/run-$1.json hammer status=0 line failed=0 failover_error=''
	bin/hammer -json -scenario fresh-seats -c 64 -users 2000 -duration "$duration" -watch -allow-unavailable \
		-url "http://$addr" >"$out" 2>"$dir/run-$r.err" &
	hammer=$!
	sleep "$after"
	if ! line=$(timeout "${FAILOVER_TIMEOUT:-120}" bash -c "$failover_cmd" pg-failover "$dir" 2>>"$dir/failover.log"); then
		failover_error="the failover command failed (see $dir/failover.log)"
	elif ! grep -Eq '(^| )promotedAfterMs=[0-9]+( |$)' <<<"$line"; then
		failover_error="the failover command printed no promotedAfterMs: '$line'"
	fi
	wait "$hammer" || status=$?
	[ -z "$failover_error" ] || log "run $r: $failover_error"
	# The run and the failover's line (key=value pairs, numbers as
	# numbers) as the head of the run's JSON line.
	local head
	head=$(tr ' ' '\n' <<<"$line" | jq -Rcn --argjson run "$r" '{run: $run, promotedAfterMs: null, rejoinedAfterMs: null, leader: null} +
		([inputs | select(test("^[A-Za-z]+=")) | capture("^(?<k>[^=]+)=(?<v>.*)$") | {(.k): (.v | tonumber? // .)}] | add // {})')
	if ! jq -e '.verdict' "$out" >/dev/null 2>&1; then
		log "run $r: the hammer gave no report (exit $status):"
		tail -n 5 "$dir/run-$r.err" >&2
		jq -c --arg error "the hammer gave no report (exit $status)" --arg failoverError "$failover_error" \
			'. + {pass: false, reasons: ([$error, $failoverError] | map(select(. != "")))}' <<<"$head" >>"$jsonl"
		row "$r" "$(jq -r '.promotedAfterMs // "?"' <<<"$head")" '?' '?' '?' '?' '?' '?' '?' '?' FAIL
		return 1
	fi
	jq -c --argjson head "$head" --arg failoverError "$failover_error" '$head + {
		longestGapMs: (.longestGapMs // 0 | floor),
		unavailable: (.unavailable // 0),
		other5xx: ([.responses | to_entries[] | select((.key | test("^5")) and .key != "503 unavailable") | .value] | add // 0),
		transportErrors: (.responses["transport error"] // 0),
		bookings: (.responses["200"] // 0),
		lost: (.acknowledged.lost // null), unchecked: (.acknowledged.unchecked // null),
		seatsTwice: (.seats.wonMoreThanOnce // 0),
		eventsMissing: (.watch.missing // [] | length),
		sent: .sent, wallMs: (.wallMs | floor),
		pass: (.verdict.pass and $failoverError == ""),
		reasons: ((.verdict.reasons // []) + (if $failoverError == "" then [] else [$failoverError] end))
	}' "$out" >>"$jsonl"
	local j
	j=$(tail -n 1 "$jsonl")
	# shellcheck disable=SC2046
	row $(jq -r '[.run, (.promotedAfterMs // "?"), .longestGapMs, .unavailable, .other5xx, .transportErrors, .bookings,
		(.lost // "?"), .seatsTwice, .eventsMissing, (if .pass then "PASS" else "FAIL" end)] | map(tostring) | join(" ")' <<<"$j")
	jq -e '.pass' <<<"$j" >/dev/null || failed=1
	[ "$failed" -eq 0 ] || jq -r '.reasons[] | "      - " + .' <<<"$j" >&2
	return "$failed"
}

failed=0
for r in $(seq 1 "$runs"); do
	# The cluster serves again (HAProxy's check, its database promoted)
	# before the next run's clock starts.
	ready 60 || { log "the cluster does not serve 60 s after run $((r - 1))"; exit 1; }
	one "$r" || failed=$((failed + 1))
done

jq -rs --arg runs "$runs" '
	def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def total(f): map(f // 0) | add;
	map(select(.longestGapMs != null)) as $judged |
	"longestGapMs: median \($judged | map(.longestGapMs) | median), worst \($judged | map(.longestGapMs) | max) over \($judged | length) runs; " +
	"promotedAfterMs: median \(map(.promotedAfterMs | numbers) | median), worst \(map(.promotedAfterMs | numbers) | max)\n" +
	"totals: \(total(.unavailable)) 503s, \(total(.other5xx)) other 5xx, \(total(.transportErrors)) transport errors, " +
	"\(total(.bookings)) bookings, \(total(.lost)) lost, \(total(.seatsTwice)) seats twice, \(total(.eventsMissing)) events missing; " +
	"\(map(select(.pass)) | length) of \($runs) runs passed"' "$jsonl"
if [ "$failed" -gt 0 ]; then
	log "$failed of $runs runs failed their verdict (reports in $dir/run-N.json, rows in $jsonl)"
	exit 1
fi
log "passed: $runs PostgreSQL failovers under load, no booking lost or answered other than 200, 409 or 503 unavailable"
