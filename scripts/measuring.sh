# shellcheck shell=bash
# What the measuring scripts (make soak, make sustain, make pairs, make
# compare) share, sourced by them from the repository's root.

# on_run_servers: `make run`'s Redis and PostgreSQL (started if needed),
# their settings (.data/run/env) exported, and the service and the hammer
# built into bin/.
on_run_servers() {
	go run ./cmd/devenv start "$PWD/.data/run"
	set -a
	# shellcheck disable=SC1091
	. "$PWD/.data/run/env"
	set +a
	mkdir -p bin
	go build -o bin/api ./cmd/api
	go build -o bin/hammer ./cmd/hammer
}

# build_before REVISION DIR: the service as built from REVISION, at
# DIR/api-before (its sources in DIR/before-src).
build_before() {
	rm -rf "$2/before-src" && mkdir -p "$2/before-src"
	git archive "$1" | tar -x -C "$2/before-src"
	(cd "$2/before-src" && go build -o "$2/api-before" ./cmd/api)
}

# fresh_database NAME: database NAME dropped and made anew; prints its URL.
fresh_database() {
	PGOPTIONS="-c client_min_messages=warning" psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -qc "CREATE DATABASE $1"
	echo "${DATABASE_URL/\/seatlock\?/\/$1?}"
}

# fresh_redis N: Redis database N emptied; prints its URL. An instance on
# a database made anew needs one: its schedules are numbered from 1 again,
# and the lock keys and seals of an earlier run's (or another instance's)
# schedule 1 would say its seats are held or taken.
fresh_redis() {
	redis-cli -u "${REDIS_URL%/*}/$1" flushdb >/dev/null
	echo "${REDIS_URL%/*}/$1"
}

# own NAME N: the settings of an instance with databases of its own, as a
# deployment of its own would have (PostgreSQL database NAME and Redis
# database N, both made anew): instances sharing a Redis database would
# also share the rate limits' registry, and each would admit half as much
# from memory.
own() {
	echo DATABASE_URL="$(fresh_database "$1")" REDIS_URL="$(fresh_redis "$2")"
}

# benchmark_name SCENARIO: hot-seat -> BenchmarkHotSeat, the name of a
# scenario's runs in Go's benchmark format, which benchstat reads.
benchmark_name() {
	local out= word words
	IFS=- read -r -a words <<<"$1"
	for word in "${words[@]}"; do out+=${word^}; done
	echo "Benchmark$out"
}

# rotated ROUND TARGETS... prints the targets starting from the
# (ROUND - 1)th: each round runs them in another order, so that no target
# always runs right after the same one (a traced instance still exporting,
# a contender still vacuuming).
rotated() {
	local round=$1
	shift
	local -a all=("$@")
	local i
	for i in $(seq 0 $(($# - 1))); do
		printf '%s\n' "${all[$(((i + round - 1) % $#))]}"
	done
}
