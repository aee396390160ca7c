#!/usr/bin/env bash
# `make sustain`: fresh seats at full speed for DURATION (default 5m) on a
# new database: one API instance, default configuration, USERS (2000)
# distinct users on 64 connections, on `make run`'s Redis and PostgreSQL
# (started if needed), with a database and a Redis database made empty for
# the run. Every 10 s it reports the window's bookings a second (the
# instance's seatlock_booking_outcomes_total) and the CPU time PostgreSQL
# spent per booking (every process of the server, from /proc: the
# postmaster's own, its live children's, and what its ended children, such
# as autovacuum workers, left in its cutime/cstime). Then the verdict:
#   - every window at least 0.85x the run's median window;
#   - PostgreSQL CPU per booking in the last minute at most 1.15x the first
#     minute's (with DURATION under two minutes: the last and first thirds).
# It exits 1 when a target is missed or the hammer's verdict fails.
# BEFORE=<git revision> serves the service as built from that revision
# instead: the same run for the build before a change.
#
#   DURATION=5m USERS=2000 bash scripts/sustain.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
duration=${DURATION:-5m}
users=${USERS:-2000}
window=10
addr=${SUSTAIN_ADDR:-127.0.0.1:18380}
metrics=${SUSTAIN_METRICS_ADDR:-127.0.0.1:18381}
work=$root/.data/sustain
log() { printf 'sustain: %s\n' "$*" >&2; }

# shellcheck source=scripts/measuring.sh
. "$here/measuring.sh"
on_run_servers
mkdir -p "$work"
api_bin=bin/api
if [ -n "${BEFORE:-}" ]; then
	build_before "$BEFORE" "$work"
	api_bin=$work/api-before
	log "serving the build of $BEFORE"
fi

sustain_db=$(fresh_database sustain)
redis_url=$(fresh_redis 4)
DATABASE_URL=$sustain_db REDIS_URL=$redis_url HTTP_ADDR=$addr METRICS_ADDR=$metrics \
	"$api_bin" serve >"$work/api.log" 2>&1 &
api=$!
hammer=
trap 'kill $api $hammer 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
	curl -fsS -o /dev/null "http://$addr/readyz" 2>/dev/null && break
	sleep 0.1
done

postmaster=$(head -1 "$PG_DIR/data/postmaster.pid")
tick=$(getconf CLK_TCK)
# pg_cpu: CPU seconds the PostgreSQL server has used so far, in ticks.
pg_cpu() {
	local total=0 pid
	# The postmaster: its own time (14, 15) and its reaped children's (16, 17).
	total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$postmaster/stat")
	for pid in $(pgrep -P "$postmaster"); do
		total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
	done
	echo "$total"
}
bookings() {
	curl -fsS "http://$metrics/metrics" | awk '$1 ~ /^seatlock_booking_outcomes_total/ {n += $2} END {printf "%d\n", n}'
}

# -verify=false: reading back the seat maps of the some 600 schedules five
# minutes book takes the hammer minutes (make compare and make soak verify
# theirs); the verdict on every answer stands.
bin/hammer -json -scenario fresh-seats -duration "$duration" -c 64 -users "$users" -url "http://$addr" \
	-verify=false >"$work/hammer.json" &
hammer=$!
log "fresh seats for $duration, $users users, on a new database; a line every ${window} s"
printf '| window | bookings/s | PostgreSQL CPU µs per booking |\n| ---: | ---: | ---: |\n'
: >"$work/windows"
b0=$(bookings) c0=$(pg_cpu) t0=$(date +%s.%N) w=0
# The windows of DURATION but its last, which the hammer's ramp-down may cut
# short; the hammer goes on to verify every schedule it booked, booking
# nothing, after that.
seconds=$(echo "$duration" | sed 's/h/*3600+/; s/m/*60+/; s/s//; s/+$//' | bc)
windows=$((seconds / window - 1))
while [ "$w" -lt "$windows" ] && sleep "$window" && kill -0 "$hammer" 2>/dev/null; do
	b1=$(bookings) c1=$(pg_cpu) t1=$(date +%s.%N)
	w=$((w + 1))
	awk -v w="$w" -v b="$((b1 - b0))" -v c="$((c1 - c0))" -v s="$(echo "$t1 - $t0" | bc -l)" -v tick="$tick" \
		'BEGIN {printf "%d %.1f %.1f\n", w, b / s, (b > 0 ? c / tick * 1e6 / b : 0)}' | tee -a "$work/windows" |
		awk '{printf "| %d | %.0f | %.1f |\n", $1, $2, $3}'
	b0=$b1 c0=$c1 t0=$t1
done
if ! wait "$hammer"; then
	log "the hammer's verdict failed: $(jq -c .verdict "$work/hammer.json")"
	exit 1
fi
hammer=

# The verdict over the full windows (the last, cut short by the hammer's
# end, is not among them).
median=$(awk '{print $2}' "$work/windows" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
awk -v window="$window" -v median="${median:-0}" '
	{ n++; tp[n] = $2; cpu[n] = $3 }
	END {
		if (n < 3) { print "sustain: too few windows for a verdict"; exit 1 }
		low = tp[1]; at = 1
		for (i = 2; i <= n; i++) if (tp[i] < low) { low = tp[i]; at = i }
		span = (n * window >= 120) ? 60 / window : int(n / 3)
		for (i = 1; i <= span; i++) { first += cpu[i]; last += cpu[n - span + i] }
		first /= span; last /= span
		ok = 1
		printf "sustain: %d windows; median %.0f bookings/s; lowest %.0f (window %d) = %.2fx the median (target >= 0.85)\n", n, median, low, at, low / median
		if (low < 0.85 * median) ok = 0
		printf "sustain: PostgreSQL CPU per booking: first %d s %.1f µs, last %d s %.1f µs = %.2fx (target <= 1.15)\n", span * window, first, span * window, last, last / first
		if (last > 1.15 * first) ok = 0
		print ok ? "sustain: PASS" : "sustain: FAIL"
		exit !ok
	}' "$work/windows"
