#!/usr/bin/env bash
# `make pairs`: builds or settings of the service against one another, in
# paired, alternating rounds, judged by benchstat. Every instance runs side
# by side on `make run`'s Redis and PostgreSQL (started if needed), each on
# a PostgreSQL database and a Redis database of its own, made anew, as a
# deployment of its own would be. Every round hammers each instance once
# per scenario (DURATION, default 5s; USERS, default 2,000 distinct
# users; the default configuration, rate limits on), in an order rotated
# round by round, and records its throughput and its CPU per request (the
# instance's utime + stime from /proc over the requests sent: it moves
# less with the machine's noise than throughput does).
#
# INSTANCES is a list of NAME=REVISION[,VAR=VALUE...], the first the base
# the others are compared with; REVISION "." is the working tree, and the
# setting "traced" stands for tracing sampled at 1% exporting over OTLP to
# tools/otlpsink. Default: "before=HEAD after=.". ROUNDS (default 10),
# SCENARIOS (default "hot-seat fresh-seats"), CLIENT (default fasthttp).
# The runs are kept in .data/pairs/NAME.txt in Go's benchmark format; at
# the end benchstat compares every instance with the base: the median,
# its spread, and the change with its p-value, or "~" where p >= 0.05 (no
# significant difference).
#
#   INSTANCES="off=. sampled=.,traced" bash scripts/pairs.sh
#   INSTANCES="main=HEAD alone=HEAD,BATCH_LANES=0 mine=." ROUNDS=12 bash scripts/pairs.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
# shellcheck disable=SC2206
instances=(${INSTANCES:-before=HEAD after=.})
# shellcheck disable=SC2206
scenarios=(${SCENARIOS:-hot-seat fresh-seats})
rounds=${ROUNDS:-10}
client=${CLIENT:-fasthttp}
work=$root/.data/pairs
log() { printf 'pairs: %s\n' "$*" >&2; }

# shellcheck source=scripts/measuring.sh
. "$here/measuring.sh"
on_run_servers
mkdir -p "$work"
rm -f "$work"/*.txt
[ ${#instances[@]} -le 15 ] || {
	log "at most 15 instances: each has a Redis database of its own"
	exit 1
}

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
if [[ "${instances[*]}" == *traced* ]]; then
	go build -o bin/otlpsink ./tools/otlpsink
	bin/otlpsink -addr 127.0.0.1:18499 >"$work/sink.log" 2>&1 &
	pids+=($!)
fi
traced=(OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:18499
	OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.01)

# binary REVISION: the service as built from REVISION (built once).
declare -A built
binary() {
	if [ "$1" = . ]; then
		echo "$root/bin/api"
		return
	fi
	local commit
	commit=$(git rev-parse --short "$1^{commit}")
	if [ -z "${built[$commit]:-}" ]; then
		build_before "$commit" "$work" >&2
		mv "$work/api-before" "$work/api-$commit"
		built[$commit]=$work/api-$commit
	fi
	echo "${built[$commit]}"
}

names=()
declare -A port pid
n=0
for spec in "${instances[@]}"; do
	name=${spec%%=*}
	IFS=, read -r -a parts <<<"${spec#*=}"
	bin=$(binary "${parts[0]}")
	settings=()
	for s in "${parts[@]:1}"; do
		if [ "$s" = traced ]; then settings+=("${traced[@]}"); else settings+=("$s"); fi
	done
	n=$((n + 1))
	p=$((18500 + 2 * n))
	# shellcheck disable=SC2046
	env $(own "pairs_${name//[^a-z0-9]/_}" "$n") \
		"${settings[@]}" HTTP_ADDR=127.0.0.1:$p METRICS_ADDR=127.0.0.1:$((p + 1)) "$bin" serve >"$work/$name.log" 2>&1 &
	pids+=($!)
	names+=("$name")
	port[$name]=$p pid[$name]=$!
done
for name in "${names[@]}"; do
	for _ in $(seq 1 100); do
		curl -fsS -o /dev/null "http://127.0.0.1:${port[$name]}/readyz" 2>/dev/null && continue 2
		sleep 0.1
	done
	log "$name did not get ready (see $work/$name.log)"
	exit 1
done
log "${instances[*]}: ${scenarios[*]}, $client, $rounds rounds"

hammer() { # hammer NAME SCENARIO DURATION: prints the run's JSON report
	bin/hammer -scenario "$2" -users "${USERS:-2000}" -c 64 -duration "$3" -client "$client" \
		-verify=false -json -url "http://127.0.0.1:${port[$1]}"
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for scenario in "${scenarios[@]}"; do
	for name in "${names[@]}"; do hammer "$name" "$scenario" 2s >/dev/null; done
done
for round in $(seq 1 "$rounds"); do
	for scenario in "${scenarios[@]}"; do
		for name in $(rotated "$round" "${names[@]}"); do
			t0=$(ticks "${pid[$name]}")
			report=$(hammer "$name" "$scenario" "${DURATION:-5s}")
			t1=$(ticks "${pid[$name]}")
			rps=$(jq '.throughputPerSec | floor' <<<"$report")
			us=$(jq --argjson t "$((t1 - t0))" --argjson hz "$(getconf CLK_TCK)" \
				'$t / $hz * 1e6 / .sent | . * 10 | round / 10' <<<"$report")
			log "round $round, $scenario, $name: $rps req/s, $us µs CPU per request"
			echo "$(benchmark_name "$scenario") 1 $rps req/s $us cpu-us/req" >>"$work/$name.txt"
		done
	done
done
args=()
for name in "${names[@]}"; do args+=("$name=$work/$name.txt"); done
echo
go tool benchstat "${args[@]}"
# The instances' logs hold every request's access line (gigabytes over
# a run): kept only when a run fails.
for name in "${names[@]}"; do rm -f "$work/$name.log"; done
