#!/usr/bin/env bash
# Three API instances behind HAProxy, beside `make run`'s Redis (with a
# replica and three Sentinels), on a PostgreSQL pair under Patroni (a
# leader and its synchronous standby, one etcd).
#
#   cluster.sh up DIR        `make cluster`: the servers (as make run), the
#                            Sentinels (devenv.sh sentinel), the PostgreSQL
#                            pair (devenv.sh patroni), three instances on
#                            free ports reaching Redis through the
#                            Sentinels (SENTINEL_URL) and PostgreSQL through
#                            DIR/pgha/env's DATABASE_URL (both nodes,
#                            target_session_attrs=read-write), and HAProxy
#                            on HTTP_ADDR (127.0.0.1:8080), health-checked
#                            through /readyz; in the foreground until Ctrl-C
#                            or SIGTERM, which stop the instances and
#                            HAProxy (`make stop` sends the SIGTERM, then
#                            stops the servers, the Sentinels, the Patroni
#                            nodes and etcd). make run's PostgreSQL runs
#                            beside, unused by the instances.
#   cluster.sh roll DIR      a rolling restart of a running cluster: each
#                            instance in turn gets SIGTERM, drains, is
#                            started again and is ready before the next one
#                            goes
#   cluster.sh failover DIR  asks the Sentinels to promote the replica, and
#                            waits until they name the new master
#   cluster.sh pg-switchover DIR
#                            a planned switchover of the PostgreSQL pair
#                            (patronictl switchover): waits until the
#                            standby leads and the old leader is back as its
#                            synchronous standby
#   cluster.sh pg-failover DIR
#                            SIGKILLs the leading node (its Patroni, its
#                            PostgreSQL and every process of theirs: a
#                            machine dying), waits until the standby leads,
#                            then starts the killed node's Patroni again and
#                            waits until it is the synchronous standby
#
# pg-switchover and pg-failover log what they did on stderr and end with
# one line on stdout: promotedAfterMs (from the switchover's request, or
# the kill, until the other node's REST API answers /primary with 200),
# rejoinedAfterMs (from then, or from the killed node's restart, until it
# streams as the synchronous standby) and leader (the node that leads now),
# e.g. `promotedAfterMs=7650 rejoinedAfterMs=6100 leader=pg2`.
#
# Each instance runs with SHUTDOWN_DELAY (default 2s): on SIGTERM it keeps
# serving while /readyz answers 503, HAProxy (a check every 500 ms, down at
# the first failure) takes it out of rotation, and only then does its port
# close; so a rolling restart fails no request. The cluster's state (ports,
# pids, logs, haproxy.cfg; up.pid, this script's pid, for `make stop`) is
# under DIR/cluster. While HAProxy serves, DIR/served.env and
# DIR/tokens.env name its address (scripts/served.sh); when it stops they
# name `make run`'s again if that still serves, else they go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
cmd=$1 dir=$2
state=$dir/cluster
instances=3

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

ready() { curl -fsS -o /dev/null --max-time 1 "http://$1/readyz" 2>/dev/null; }

# start_instance N: starts instance N on its port, in the background.
start_instance() {
	local n=$1 port
	port=$(cat "$state/api-$n.port")
	(
		set -a
		# shellcheck disable=SC1091
		. "$dir/env"
		. "$dir/sentinel/env"
		set +a
		pg_url=$(. "$dir/pgha/env" && echo "$DATABASE_URL")
		# HAProxy reaches the instances from 127.0.0.1 and names the client
		# in X-Forwarded-For: the per-address limit counts each client.
		REDIS_URL=$SENTINEL_URL DATABASE_URL=$pg_url HTTP_ADDR=127.0.0.1:$port SHUTDOWN_DELAY=${SHUTDOWN_DELAY:-2s} LOG_FORMAT=json \
			TRUSTED_PROXIES=${TRUSTED_PROXIES:-127.0.0.1} exec bin/api serve
	) >>"$state/api-$n.log" 2>&1 &
	echo $! >"$state/api-$n.pid"
	for _ in $(seq 1 150); do
		ready "127.0.0.1:$port" && return 0
		kill -0 "$(cat "$state/api-$n.pid")" 2>/dev/null || die "instance $n ended at start; see $state/api-$n.log"
		sleep 0.2
	done
	die "instance $n not ready within 30 s; see $state/api-$n.log"
}

# stop_instances N...: SIGTERM to each, then waits for them to drain and
# exit.
stop_instances() {
	local n pid pids=()
	for n in "$@"; do
		pid=$(cat "$state/api-$n.pid" 2>/dev/null) || continue
		kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 1 600); do
			kill -0 "$pid" 2>/dev/null || continue 2
			sleep 0.1
		done
		die "instance pid $pid still running 60 s after SIGTERM"
	done
}

# unavailable_response: what HAProxy answers when no instance is in
# rotation, as the service answers a request whose dependency is away.
unavailable_response() {
	local body='{"type":"urn:seatlock:problem:unavailable","title":"Service unavailable","status":503,"detail":"No instance is ready to serve (a dependency cannot be reached); retry later.","code":"unavailable"}'
	printf '%s\r\n' 'HTTP/1.1 503 Service Unavailable' 'Content-Type: application/problem+json' 'Retry-After: 2' \
		'Cache-Control: no-store' "Content-Length: ${#body}" ''
	printf '%s' "$body"
}

haproxy_config() {
	local addr=$1
	cat <<CFG
global
    maxconn 8000
    log stdout format raw local0 warning

defaults
    mode http
    log global
    timeout connect 2s
    timeout client 70s
    timeout server 70s
    # Live seat-map streams stay open for as long as their clients watch,
    # and each event goes out at once: without http-no-delay HAProxy holds
    # small writes back for about 200 ms, every event of a stream late.
    timeout tunnel 1h
    option http-no-delay
    # A connection an instance refused (it is starting or just stopped) is
    # tried again on another: the request never reached the first.
    retries 3
    option redispatch
    retry-on conn-failure
    # The client's address, for the instances' per-address limit
    # (TRUSTED_PROXIES).
    option forwardfor
    # When no instance at all can take a request, HAProxy answers itself:
    # the service's problem, 503 unavailable with Retry-After, not an HTML
    # page.
    errorfile 503 $state/503.http

frontend api
    bind $addr
    default_backend instances

backend instances
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    # Down at the first failed check (an instance answers 503 for
    # SHUTDOWN_DELAY before it closes), up after two good ones. A check
    # may take 2 s: an instance slow under an on-sale's load is not taken
    # out (with every instance out, only the unchecked backups are left).
    timeout check 2s
    default-server inter 500ms fall 1 rise 2
CFG
	for n in $(seq 1 "$instances"); do
		echo "    server api$n 127.0.0.1:$(cat "$state/api-$n.port") check"
	done
	# The same instances again, unchecked, as backups: while PostgreSQL
	# has no leader, every instance's /readyz fails, yet each one holds a
	# request until the new primary answers (up to 10 s, see
	# docs/operations.md) rather than fail it. With every checked server
	# down, HAProxy sends the requests to these (an instance that is really
	# gone refuses the connection and the request is redispatched).
	echo "    option allbackups"
	for n in $(seq 1 "$instances"); do
		echo "    server api$n-spare 127.0.0.1:$(cat "$state/api-$n.port") backup"
	done
}

down() {
	bash "$here/served.sh" release "$dir" $$ || true
	# shellcheck disable=SC2046
	stop_instances $(seq 1 "$instances") || true
	rm -f "$state"/api-*.pid
	if [ -f "$state/haproxy.pid" ]; then
		kill "$(cat "$state/haproxy.pid")" 2>/dev/null || true
		rm -f "$state/haproxy.pid"
	fi
	rm -f "$state/up.pid"
}

up() {
	bash "$here/devenv.sh" haproxy
	bash "$here/devenv.sh" start "$dir"
	bash "$here/devenv.sh" sentinel "$dir"
	bash "$here/devenv.sh" patroni "$dir"
	mkdir -p "$state" bin
	go build -o bin/api ./cmd/api
	local addr=${HTTP_ADDR:-127.0.0.1:8080}
	ready "$addr" && die "something already serves on $addr; set HTTP_ADDR"
	trap down EXIT
	# (A `make cluster &` started by a shell without job control ignores
	# SIGINT, which no trap can change: `make stop` sends SIGTERM.)
	trap 'exit 0' INT TERM
	echo $$ >"$state/up.pid"
	for n in $(seq 1 "$instances"); do
		bash "$here/devenv.sh" port >"$state/api-$n.port"
		: >"$state/api-$n.log"
		start_instance "$n"
	done
	unavailable_response >"$state/503.http"
	haproxy_config "$addr" >"$state/haproxy.cfg"
	haproxy -c -q -f "$state/haproxy.cfg" || die "haproxy refused $state/haproxy.cfg"
	haproxy -f "$state/haproxy.cfg" >"$state/haproxy.log" 2>&1 &
	echo $! >"$state/haproxy.pid"
	for _ in $(seq 1 50); do
		ready "$addr" && break
		sleep 0.2
	done
	ready "$addr" || die "HAProxy does not answer on $addr; see $state/haproxy.log"
	bash "$here/served.sh" claim "$dir" "$addr" "make cluster" $$
	# shellcheck disable=SC1091
	. "$dir/sentinel/env"
	pgha_load
	local leader standby
	leader=$(pgha_leader)
	standby=$(pgha_other "$leader")
	cat <<MSG
API        http://$addr   (HAProxy: $instances instances, health-checked through /readyz)
instances  $(for n in $(seq 1 "$instances"); do printf '127.0.0.1:%s ' "$(cat "$state/api-$n.port")"; done)
Redis      $SENTINEL_URL   (master $(master_addr), one replica)
PostgreSQL $(pgha_addr "$leader") ($leader, leader) and $(pgha_addr "$standby") ($standby, synchronous standby), under Patroni
           (REST $PATRONI_URLS; etcd $ETCD_URL; credentials in $dir/pgha/env)
logs       $state/api-N.log, $state/haproxy.log, $dir/sentinel/N/sentinel.log, $dir/pgha/{pg1,pg2,etcd}.log
tokens     . $dir/tokens.env   (API, ADMIN, ALICE, BOB)
try        make smoke; make hammer ARGS='-scenario fresh-seats -watch'; the page: http://$addr/
           during a failover: make hammer ARGS='-scenario fresh-seats -allow-unavailable' (503s expected)
rolling    bash scripts/cluster.sh roll $dir            (restarts the instances one by one)
failover   bash scripts/cluster.sh failover $dir        (the Sentinels promote the replica)
pg         bash scripts/cluster.sh pg-switchover $dir   (Patroni hands the lead to the standby)
           bash scripts/cluster.sh pg-failover $dir     (kills the leading node; the standby takes over)
           patronictl -c ${PATRONI_CONFIGS%% *} list
Ctrl-C stops the instances and HAProxy; 'make stop' stops them too, and Redis, its Sentinels, PostgreSQL, the Patroni nodes and etcd.
MSG
	while :; do
		sleep 1 &
		wait $! || true
	done
}

roll() {
	[ -f "$state/haproxy.pid" ] || die "no cluster runs under $dir: make cluster first"
	for n in $(seq 1 "$instances"); do
		local began=$SECONDS
		stop_instances "$n"
		start_instance "$n"
		log "instance $n restarted and ready in $((SECONDS - began)) s"
		# HAProxy puts it back after two good checks.
		sleep 1.5
	done
}

# master_addr: where the Sentinels say the master is (host:port).
master_addr() {
	local port
	port=${SENTINEL_PORTS%% *}
	redis-cli -h 127.0.0.1 -p "$port" sentinel get-master-addr-by-name "$SENTINEL_MASTER" 2>/dev/null | paste -sd:
}

failover() {
	[ -f "$dir/sentinel/env" ] || die "no Sentinels under $dir: make cluster first"
	# shellcheck disable=SC1091
	. "$dir/sentinel/env"
	local before after
	before=$(master_addr)
	[ -n "$before" ] || die "the Sentinels do not answer: make cluster first"
	redis-cli -h 127.0.0.1 -p "${SENTINEL_PORTS%% *}" sentinel failover "$SENTINEL_MASTER" >/dev/null
	for _ in $(seq 1 150); do
		after=$(master_addr)
		if [ -n "$after" ] && [ "$after" != "$before" ]; then
			log "the Sentinels promoted $after (the master was $before)"
			return 0
		fi
		sleep 0.2
	done
	die "the master is still $before 30 s after the failover was asked for"
}

# pgha_load: DIR/pgha/env (devenv.sh patroni), and the nodes' names
# (from their configurations), configurations and REST APIs, in order.
pgha_load() {
	[ -f "$dir/pgha/env" ] || die "no PostgreSQL pair under $dir: make cluster first"
	# shellcheck disable=SC1091
	. "$dir/pgha/env"
	read -r -a confs <<<"$PATRONI_CONFIGS"
	read -r -a urls <<<"$PATRONI_URLS"
	nodes=()
	local c
	for c in "${confs[@]}"; do nodes+=("$(basename "$c" .yml)"); done
}

# pgha_url NODE: NODE's REST API.
pgha_url() {
	local i
	for i in "${!nodes[@]}"; do [ "${nodes[$i]}" != "$1" ] || echo "${urls[$i]}"; done
}

# pgha_addr NODE: NODE's PostgreSQL, host:port.
pgha_addr() {
	local v="PGHA_${1^^}_PORT"
	echo "127.0.0.1:${!v}"
}

# pgha_other NODE: the other node of the pair.
pgha_other() {
	local n
	for n in "${nodes[@]}"; do [ "$n" = "$1" ] || echo "$n"; done
}

http_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$1" 2>/dev/null || true; }

# pgha_leader: the node whose REST API answers /primary with 200, or
# nothing.
pgha_leader() {
	local n
	for n in "${nodes[@]}"; do
		[ "$(http_status "$(pgha_url "$n")/primary")" != 200 ] || { echo "$n"; return 0; }
	done
}

# pgha_sync_standby NODE LEADER: Patroni names NODE the synchronous
# standby (/sync answers 200) and LEADER's pg_stat_replication shows it
# streaming with sync_state sync.
pgha_sync_standby() {
	[ "$(http_status "$(pgha_url "$1")/sync")" = 200 ] &&
		curl -s --max-time 1 "$(pgha_url "$2")/patroni" 2>/dev/null |
		jq -e --arg n "$1" '.replication // [] | any(.application_name == $n and .state == "streaming" and .sync_state == "sync")' >/dev/null 2>&1
}

now_ms() { date +%s%3N; }

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 50 ms until it
# succeeds; dies after SECONDS saying WHAT did not happen.
wait_for() {
	local seconds=$1 what=$2 deadline
	shift 2
	deadline=$(($(now_ms) + seconds * 1000))
	until "$@"; do
		[ "$(now_ms)" -lt "$deadline" ] || die "$what: not after $seconds s"
		sleep 0.05
	done
}

# is_leader NODE: NODE's REST API answers /primary with 200.
is_leader() { [ "$(http_status "$(pgha_url "$1")/primary")" = 200 ]; }

# pgha_pair: sets old (the leader) and new (its synchronous standby), or
# dies: a switchover or failover needs both.
pgha_pair() {
	pgha_load
	old=$(pgha_leader)
	[ -n "$old" ] || die "no PostgreSQL node leads (make cluster first; patronictl -c ${confs[0]} list)"
	new=$(pgha_other "$old")
	wait_for 30 "$new as $old's synchronous standby" pgha_sync_standby "$new" "$old"
}

pg_switchover() {
	local old new began promoted rejoined
	pgha_pair
	log "PostgreSQL: switching over from $old to $new (patronictl switchover)"
	began=$(now_ms)
	patronictl -c "${confs[0]}" switchover --leader "$old" --candidate "$new" --force >&2 ||
		die "patronictl switchover failed"
	wait_for 60 "$new leading" is_leader "$new"
	promoted=$(now_ms)
	wait_for 60 "$old back as $new's synchronous standby" pgha_sync_standby "$old" "$new"
	rejoined=$(now_ms)
	log "PostgreSQL: $new leads $((promoted - began)) ms after the switchover was asked for; $old streams as its synchronous standby $((rejoined - promoted)) ms later"
	echo "promotedAfterMs=$((promoted - began)) rejoinedAfterMs=$((rejoined - promoted)) leader=$new"
}

# tree PID...: PID and every process below it.
tree() {
	local pid
	for pid in "$@"; do
		echo "$pid"
		# shellcheck disable=SC2046
		tree $(ps -o pid= --ppid "$pid" 2>/dev/null || true)
	done
}

pg_failover() {
	local old new patroni postmaster victims began promoted restarted rejoined
	pgha_pair
	patroni=$(cat "$dir/pgha/$old.pid" 2>/dev/null) && kill -0 "$patroni" 2>/dev/null ||
		die "$old's Patroni is not running (no pid in $dir/pgha/$old.pid)"
	postmaster=$(head -n 1 "$PGHA_DIR/$old/postmaster.pid" 2>/dev/null) && kill -0 "$postmaster" 2>/dev/null ||
		die "$old's PostgreSQL is not running (no pid in $PGHA_DIR/$old/postmaster.pid)"
	# Frozen first, so that none of them acts or forks while their tree is
	# read; then killed together.
	kill -STOP "$patroni" "$postmaster"
	mapfile -t victims < <(tree "$patroni" "$postmaster" | sort -un)
	began=$(now_ms)
	kill -KILL "${victims[@]}" 2>/dev/null || true
	log "PostgreSQL: SIGKILLed $old: its Patroni (pid $patroni), its postmaster (pid $postmaster) and ${#victims[@]} processes in all"
	wait_for 60 "$new leading after $old was killed" is_leader "$new"
	promoted=$(now_ms)
	log "PostgreSQL: $new leads $((promoted - began)) ms after the kill; starting $old's Patroni again"
	restarted=$(now_ms)
	bash "$here/devenv.sh" patroni "$dir" >&2
	wait_for 60 "$old back as $new's synchronous standby" pgha_sync_standby "$old" "$new"
	rejoined=$(now_ms)
	log "PostgreSQL: $old streams as $new's synchronous standby $((rejoined - restarted)) ms after its restart"
	echo "promotedAfterMs=$((promoted - began)) rejoinedAfterMs=$((rejoined - restarted)) leader=$new"
}

case $cmd in
up) up ;;
roll) roll ;;
failover) failover ;;
pg-switchover) pg_switchover ;;
pg-failover) pg_failover ;;
*) die "usage: cluster.sh up|roll|failover|pg-switchover|pg-failover DIR" ;;
esac
