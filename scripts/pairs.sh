#!/usr/bin/env bash
# Paired runs of tracing's cost: three instances side by side on `make
# run`'s Redis and PostgreSQL (started if needed), tracing off, sampled
# (OTEL_TRACES_SAMPLER=parentbased_traceidratio, _ARG=RATIO, default 0.01)
# as built from BEFORE (default HEAD), and sampled as built from the
# working tree, exporting to tools/otlpsink. ROUNDS (default 9) rounds of
# one DURATION (default 5s) hammer run each, the three in a rotated order
# every round; each run's throughput and the instance's CPU per request
# (its utime + stime from /proc, over the requests sent). At the end the
# medians over the rounds, of the numbers and of their ratios to tracing
# off's in the same round: a ratio of CPU per request moves less with
# the machine's noise than one of throughput.
#
#   BEFORE=<revision> SCENARIO=hot-seat ROUNDS=12 bash scripts/pairs.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
scenario=${SCENARIO:-hot-seat}
client=${CLIENT:-fasthttp}
work=$root/.data/pairs
log() { printf 'pairs: %s\n' "$*" >&2; }

# shellcheck source=scripts/measuring.sh
. "$here/measuring.sh"
on_run_servers
mkdir -p "$work"
go build -o bin/otlpsink ./tools/otlpsink
before=${BEFORE:-HEAD}
build_before "$before" "$work"

bin/otlpsink -addr 127.0.0.1:18499 >"$work/sink.log" 2>&1 &
pids=($!)
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
sampled=(OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:18499
	OTEL_TRACES_SAMPLER=parentbased_traceidratio "OTEL_TRACES_SAMPLER_ARG=${RATIO:-0.01}")
names=(off before after)
declare -A port pid
serve() { # serve NAME PORT BINARY [VAR=VALUE...]
	local name=$1 p=$2 bin=$3
	shift 3
	env "$@" HTTP_ADDR=127.0.0.1:$p METRICS_ADDR=127.0.0.1:$((p + 1)) "$bin" serve >"$work/$name.log" 2>&1 &
	pids+=($!)
	port[$name]=$p pid[$name]=$!
	for _ in $(seq 1 100); do
		curl -fsS -o /dev/null "http://127.0.0.1:$p/readyz" 2>/dev/null && return
		sleep 0.1
	done
	log "$name did not get ready (see $work/$name.log)"
	exit 1
}
serve off 18480 bin/api
serve before 18482 "$work/api-before" "${sampled[@]}"
serve after 18484 bin/api "${sampled[@]}"
log "tracing off, 1% as of $before, 1% as of the working tree: $scenario, $client, ${ROUNDS:-9} rounds"

hammer() { # hammer NAME DURATION: prints the run's JSON report
	bin/hammer -scenario "$scenario" -users "${USERS:-2000}" -c 64 -duration "$2" -client "$client" \
		-verify=false -json -url "http://127.0.0.1:${port[$1]}"
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for name in "${names[@]}"; do hammer "$name" 2s >/dev/null; done
: >"$work/runs"
for round in $(seq 1 "${ROUNDS:-9}"); do
	for name in $(rotated "$round" "${names[@]}"); do
		t0=$(ticks "${pid[$name]}")
		report=$(hammer "$name" "${DURATION:-5s}")
		t1=$(ticks "${pid[$name]}")
		rps=$(jq '.throughputPerSec | floor' <<<"$report")
		us=$(jq --argjson t "$((t1 - t0))" --argjson hz "$(getconf CLK_TCK)" '$t / $hz * 1e6 / .sent | . * 10 | round / 10' <<<"$report")
		echo "$round $name $rps $us" | tee -a "$work/runs"
	done
done
# The medians: of each instance's req/s and µs per request, and of its
# ratios to tracing off's in the same round.
awk '
	{ rps[$1, $2] = $3; us[$1, $2] = $4; rounds[$1] = 1 }
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		split("off before after", names, " ")
		printf "| instance | req/s | µs CPU per request | throughput / off | CPU per request / off |\n| --- | ---: | ---: | ---: | ---: |\n"
		for (k = 1; k <= 3; k++) {
			n = 0
			for (r in rounds) { n++; a[n] = rps[r, names[k]]; b[n] = us[r, names[k]]; c[n] = rps[r, names[k]] / rps[r, "off"]; d[n] = us[r, names[k]] / us[r, "off"] }
			printf "| %s | %d | %.1f | %.3f | %.3f |\n", names[k], median(a, n), median(b, n), median(c, n), median(d, n)
		}
	}' "$work/runs"
