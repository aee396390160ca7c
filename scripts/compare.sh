#!/usr/bin/env bash
# `make compare`: the service against the shared baseline, on the same
# Redis, PostgreSQL and hammer, in one run. Starts the dev servers (as
# `make run`), serves the baseline of BASELINE_DIR (default
# ../shared/baseline) in its three modes (naive: the naive flow; static:
# a fixed 409, the hot seat's ceiling; insertonly: one INSERT and commit
# per booking, the fresh seats' naive ceiling), the service, and the service with
# FAST_PATH=false side by side, then hammers each in turn as USERS distinct
# users (a real crowd: per-user costs show), ROUNDS times (interleaved, each
# round in another order, so a busy moment of the machine does not land on
# one of them only, nor one always right after another), and prints
# benchstat's medians and verdicts over the rounds (req/s, p99 and the
# share of 409 seat_locked answers: the change and its p-value, "~" where
# p >= 0.05, no significant difference) of the service against the naive
# flow and the limits, and the service instance's peak resident memory
# over all its runs.
#
# Every run is made with each of CLIENTS (default "fasthttp nethttp": the
# hammer's cheap client, and Go's net/http, what most callers use).
#
#   ROUNDS=10 DURATION=5s CONNECTIONS=64 USERS=2000 bash scripts/compare.sh
# SCENARIOS (default "hot-seat fresh-seats contended") picks some of them;
# fresh-new is fresh seats from a new database on: the service, the naive
# flow and insert-only each serve it from a database made empty for the
# run (service-new, naive-new, insertonly-new), and each round books
# 8,000 seats (FRESH_NEW_BOOKINGS) in 2,000-seat schedules made for it, so
# the tables grow from nothing as the rounds go, as a new deployment's do.
# BEFORE=<git revision> also serves the service as built from that revision
# (service-before), interleaved with the rest, and prints after / before:
# how a change moved the figures, measured in one run.
# TRACED=1 also serves the service with OpenTelemetry tracing on, exporting
# over OTLP/HTTP to a span-counting sink (tools/otlpsink): every request
# sampled (service-traced) and one trace in a hundred
# (service-traced-sampled), and prints on / off.
# VARIANT="NAME=VALUE ..." also serves the service with those settings
# (service-variant, e.g. VARIANT="BATCH_LANES=1"), interleaved with the
# rest in every scenario but fresh-new, and prints variant / service: what
# a setting would change, measured in one run.
# PGHA=1 runs everything on make cluster's PostgreSQL pair instead (a
# leader and its synchronous standby under Patroni: devenv patroni,
# started if need be): what synchronous replication costs each contender.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
run_dir=${RUN_DIR:-$root/.data/run}
baseline_dir=${BASELINE_DIR:-$root/../shared/baseline}
rounds=${ROUNDS:-10}
users=${USERS:-2000}
duration=${DURATION:-5s}
conns=${CONNECTIONS:-64}
# shellcheck disable=SC2206
clients=(${CLIENTS:-fasthttp nethttp})
work=$root/.data/compare

log() { printf 'compare: %s\n' "$*" >&2; }
# shellcheck source=scripts/measuring.sh
. "$here/measuring.sh"
command -v jq >/dev/null || {
	log "installing jq"
	if [ "$(id -u)" -eq 0 ]; then apt-get install -y -qq jq >/dev/null; else sudo apt-get install -y -qq jq >/dev/null; fi
}

go run ./cmd/devenv start "$run_dir"
set -a
# shellcheck disable=SC1091
. "$run_dir/env"
set +a
if [ "${PGHA:-0}" = 1 ]; then
	go run ./cmd/devenv patroni "$run_dir"
	DATABASE_URL=$(. "$run_dir/pgha/env" && echo "$DATABASE_URL")
	# A Redis database of its own: the pair numbers its schedules from 1
	# too, and the seals of the single server's booked seats would say
	# this run's seats are taken.
	REDIS_URL=${REDIS_URL%/*}/2
	export DATABASE_URL REDIS_URL
	log "on the PostgreSQL pair (synchronous standby): ${DATABASE_URL#*@}"
fi
mkdir -p "$work" bin
go build -o bin/api ./cmd/api
go build -o bin/hammer ./cmd/hammer
[ -f "$baseline_dir/main.go" ] || {
	log "no shared baseline in $baseline_dir: name its directory in BASELINE_DIR"
	exit 1
}
(cd "$baseline_dir" && GOFLAGS=-mod=mod go build -o "$work/baseline" .)
before=${BEFORE:-}
if [ -n "$before" ]; then
	build_before "$before" "$work"
fi
traced=${TRACED:-0}
if [ "$traced" = 1 ]; then
	go build -o bin/otlpsink ./tools/otlpsink
fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
declare -A port_of pid_of
serve() { # name port command...
	local name=$1 port=$2
	shift 2
	port_of[$name]=$port
	env HTTP_ADDR="127.0.0.1:$port" "$@" >"$work/$name.log" 2>&1 &
	pids+=($!)
	pid_of[$name]=$!
	for _ in $(seq 1 100); do
		curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null && return 0
		sleep 0.1
	done
	log "$name did not become ready; see $work/$name.log"
	exit 1
}
# Every target books on a database made anew for the run (and the
# service on a Redis database emptied for it, see fresh_redis). On the
# long-lived database of make run, grown by every earlier run, the service
# booked fresh seats 0.87 times as fast as the same code on a new one.
# Each instance of the service has databases of its own (own).
# shellcheck disable=SC2046
serve service 18080 $(own compare_service 2) bin/api serve
# shellcheck disable=SC2046
serve service-no-fast-path 18081 $(own compare_service_no_fast_path 4) FAST_PATH=false bin/api serve
# A database of its own, made anew: the build before may know fewer
# migrations than the one being measured has applied, or than the build
# before of an earlier run applied to it. And a Redis database of its own
# (fresh_redis).
if [ -n "$before" ]; then
	serve service-before 18082 DATABASE_URL="$(fresh_database service_before)" \
		REDIS_URL="$(fresh_redis 1)" "$work/api-before" serve
fi
# shellcheck disable=SC2206
variant=(${VARIANT:-})
# shellcheck disable=SC2046
[ ${#variant[@]} -gt 0 ] && serve service-variant 18086 $(own compare_service_variant 5) "${variant[@]}" bin/api serve
if [ "$traced" = 1 ]; then
	bin/otlpsink -addr 127.0.0.1:18099 >"$work/otlpsink.log" 2>&1 &
	pids+=($!)
	otlp=(OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:18099)
	# shellcheck disable=SC2046
	serve service-traced 18083 $(own compare_service_traced 6) "${otlp[@]}" bin/api serve
	# shellcheck disable=SC2046
	serve service-traced-sampled 18084 $(own compare_service_sampled 7) "${otlp[@]}" OTEL_TRACES_SAMPLER=parentbased_traceidratio \
		OTEL_TRACES_SAMPLER_ARG=0.01 bin/api serve
fi
serve naive 18090 DATABASE_URL="$(fresh_database baseline_naive)" "$work/baseline"
serve static 18091 BASELINE_MODE=static "$work/baseline"
serve insertonly 18092 BASELINE_MODE=insertonly DATABASE_URL="$(fresh_database baseline_insert)" "$work/baseline"
# shellcheck disable=SC2206
scenarios=(${SCENARIOS:-hot-seat fresh-seats contended})
if [[ " ${scenarios[*]} " == *" fresh-new "* ]]; then
	serve service-new 18085 DATABASE_URL="$(fresh_database compare_service_new)" REDIS_URL="$(fresh_redis 3)" bin/api serve
	serve naive-new 18093 DATABASE_URL="$(fresh_database baseline_naive_new)" "$work/baseline"
	serve insertonly-new 18094 BASELINE_MODE=insertonly DATABASE_URL="$(fresh_database baseline_insert_new)" "$work/baseline"
fi

# hammer CLIENT TARGET SCENARIO ARGS...: prints one run as benchstat's
# units: "THROUGHPUT req/s P99 p99-ms SHARE locked-%".
hammer() {
	local client=$1 target=$2 scenario=$3
	shift 3
	local verify=false # only the service has a seat map
	case $target in service*) verify=true ;; esac
	# The static limits book nothing: their hot seat is any seat, refused at once.
	case $target in *static) set -- "$@" -schedule 1 -seat 1 ;; esac
	local out
	if ! out=$(bin/hammer -json -client "$client" -scenario "$scenario" -c "$conns" -users "$users" \
		-url "http://127.0.0.1:${port_of[$target]}" -verify="$verify" "$@"); then
		log "$scenario on $target ($client) failed its verdict:"
		echo "$out" | jq -c '.verdict' >&2
		exit 1
	fi
	echo "$out" | jq -r '"\(.throughputPerSec) req/s \(.latencyMs."p99") p99-ms \((.responses["409 seat_locked"] // 0) * 100 / .sent) locked-%"'
}

fresh_new_bookings=${FRESH_NEW_BOOKINGS:-8000}
args_of() {
	case $1 in
	contended) echo "-seats 200 -per-seat 20" ;;
	fresh-new) echo "-scenario fresh-seats -n $fresh_new_bookings" ;;
	*) echo "-duration $duration" ;;
	esac
}
targets_of() {
	local extra=
	[ -n "$before" ] && extra=" service-before"
	[ "$traced" = 1 ] && extra+=" service-traced service-traced-sampled"
	[ ${#variant[@]} -gt 0 ] && extra+=" service-variant"
	case $1 in
	hot-seat)
		echo "naive static service service-no-fast-path$extra"
		;;
	fresh-seats)
		echo "naive insertonly service$extra"
		;;
	fresh-new) echo "naive-new insertonly-new service-new" ;;
	*)
		echo "naive service$extra"
		;;
	esac
}
# A warm-up run each: a few seconds at most, and few bookings on the new
# databases.
warmup_args_of() {
	case $1 in
	contended) echo "-seats 50 -per-seat 4" ;;
	fresh-new) echo "-scenario fresh-seats -n 500" ;;
	*) echo "-duration 1s" ;;
	esac
}
# Each run of a target goes to $work/bench/TARGET.txt (benchmark_name).
rm -rf "$work/bench" && mkdir -p "$work/bench"
log "warming up"
for s in "${scenarios[@]}"; do
	for t in $(targets_of "$s"); do
		# shellcheck disable=SC2046
		hammer "${clients[0]}" "$t" "$s" $(warmup_args_of "$s") >/dev/null
	done
done
# A contended run is short (4000 requests), so each round makes three.
runs_of() { [ "$1" = contended ] && echo 3 || echo 1; }
for r in $(seq 1 "$rounds"); do
	for c in "${clients[@]}"; do
		for s in "${scenarios[@]}"; do
			# shellcheck disable=SC2046
			for t in $(rotated "$r" $(targets_of "$s")); do
				for _ in $(seq 1 "$(runs_of "$s")"); do
					# shellcheck disable=SC2046
					line=$(hammer "$c" "$t" "$s" $(args_of "$s"))
					log "round $r $c $s $t: $line"
					echo "$(benchmark_name "$s")/$c 1 $line" >>"$work/bench/$t.txt"
				done
			done
		done
	done
done

printf '\n%s connections, %s users, %s per run (contended: 200 seats x 20, three runs a round; fresh-new: %s bookings), %s rounds\n' \
	"$conns" "$users" "$duration" "$fresh_new_bookings" "$rounds"
# stat LABEL=TARGET...: benchstat over the rounds, every later target's
# runs against the first's, each scenario and client a row: the medians
# with their spread, and the change with its p-value, or "~" where p >=
# 0.05 (no significant difference).
stat() {
	local args=() pair
	for pair in "$@"; do args+=("${pair%%=*}=$work/bench/${pair#*=}.txt"); done
	echo
	go tool benchstat "${args[@]}"
}
printf '\nbenchstat: the runs of the %s rounds, the service against the naive flow and the limits' "$rounds"
[ -n "$before" ] && printf ', after against before (%s)' "$before"
[[ " ${scenarios[*]} " == *" hot-seat "* ]] && printf ', the fast path on against off'
[ ${#variant[@]} -gt 0 ] && printf ', the variant against the service'
[ "$traced" = 1 ] && printf ', tracing against none'
printf '\n'
stat naive=naive service=service
[[ " ${scenarios[*]} " == *" hot-seat "* ]] && stat static=static service=service
[[ " ${scenarios[*]} " == *" fresh-seats "* ]] && stat insertonly=insertonly service=service
[[ " ${scenarios[*]} " == *" fresh-new "* ]] && stat naive=naive-new service=service-new insertonly=insertonly-new
[ -n "$before" ] && stat before=service-before after=service
[[ " ${scenarios[*]} " == *" hot-seat "* ]] && stat fast-path-off=service-no-fast-path fast-path-on=service
[ ${#variant[@]} -gt 0 ] && stat service=service variant=service-variant
[ "$traced" = 1 ] && stat off=service every-request=service-traced 1%=service-traced-sampled
# The instances' peak memory over every run they served (the kernel's
# high-water mark of their resident set, executable pages included).
peak_rss() { sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/${pid_of[$1]}/status" 2>/dev/null; }
printf '\nPeak RSS (VmHWM) of the service: %s' "$(peak_rss service)"
[ -z "$before" ] || printf '; as built from %s: %s' "$before" "$(peak_rss service-before)"
printf '.\n'
if [ "$traced" = 1 ]; then
	printf '\nThe traced services exported %s spans to the sink.\n' "$(curl -fsS http://127.0.0.1:18099/spans)"
fi
# The targets' logs hold every request's access line (gigabytes over a
# run): kept only when a run fails.
rm -f "$work"/*.log
