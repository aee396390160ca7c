#!/usr/bin/env bash
# `make soak`: a real crowd for about three minutes against one API instance
# on `make run`'s Redis and PostgreSQL (started if needed), default
# configuration: ROUNDS (3) rounds of fresh seats, hot seat and a contended
# run, USERS (2000) distinct users, 64 connections. Every hammer verdict
# must pass; the report gives the API's peak and idle RSS, goroutines and
# open files before and after, and the bookings made.
#
#   ROUNDS=3 USERS=2000 SLICE=20s bash scripts/soak.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
rounds=${ROUNDS:-3}
users=${USERS:-2000}
slice=${SLICE:-20s}
addr=${SOAK_ADDR:-127.0.0.1:18280}
metrics=${SOAK_METRICS_ADDR:-127.0.0.1:18281}
log() { printf 'soak: %s\n' "$*" >&2; }

# shellcheck source=scripts/measuring.sh
. "$here/measuring.sh"
on_run_servers
mkdir -p .data/soak
HTTP_ADDR=$addr METRICS_ADDR=$metrics bin/api serve >.data/soak/api.log 2>&1 &
api=$!
trap 'kill $api 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
	curl -fsS -o /dev/null "http://$addr/readyz" 2>/dev/null && break
	sleep 0.1
done

# gauge NAME: a metric of the instance.
gauge() { curl -fsS "http://$metrics/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
status() { awk -v k="$1:" '$1 == k {printf "%.1f MiB", $2 / 1024}' "/proc/$api/status"; }
before="goroutines $(gauge go_goroutines), open files $(gauge process_open_fds), RSS $(status VmRSS)"
log "before: $before"

bookings=0
hammer() { # SCENARIO ARGS...
	local out
	if ! out=$(bin/hammer -json -scenario "$1" -c 64 -users "$users" -url "http://$addr" "${@:2}"); then
		log "$1 failed its verdict: $(echo "$out" | jq -c .verdict)"
		exit 1
	fi
	local won
	won=$(echo "$out" | jq '.responses["200"] // 0')
	bookings=$((bookings + won))
	log "$1: $(echo "$out" | jq -r '"\(.sent) requests, \(.throughputPerSec | floor) req/s, p99 \(.latencyMs.p99) ms"'), RSS $(status VmRSS)"
}
start=$(date +%s)
for r in $(seq 1 "$rounds"); do
	log "round $r"
	hammer fresh-seats -duration "$slice"
	hammer hot-seat -duration "$slice"
	hammer contended -seats 2000 -per-seat 20
done
sleep 2
echo "soak: $rounds rounds in $(($(date +%s) - start)) s, $users users, $bookings bookings, every verdict PASS"
echo "soak: before: $before"
echo "soak: after:  goroutines $(gauge go_goroutines), open files $(gauge process_open_fds), RSS $(status VmRSS) (idle)"
echo "soak: peak RSS $(status VmHWM)"
