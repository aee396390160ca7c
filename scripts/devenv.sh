#!/usr/bin/env bash
# Local Redis and PostgreSQL as plain processes, for `make run` and `make
# cluster`, and the OS packages `make test` needs (its test binaries start
# servers of their own: internal/lock/lockenv).
#
#   devenv.sh install                  install redis-server, redis-sentinel, PostgreSQL, Patroni and etcd from the OS packages if missing
#   devenv.sh browser                  install Chromium from the OS packages if missing (the browser test)
#   devenv.sh haproxy                  install HAProxy from the OS packages if missing (make cluster)
#   devenv.sh start DIR [RPORT PPORT]  start (or reuse) servers with their data under DIR; writes DIR/env
#   devenv.sh sentinel DIR             give DIR's Redis a replica and three Sentinels (make cluster); writes DIR/sentinel/env
#   devenv.sh stop DIR                 stop what runs for DIR: make run's API, make cluster's
#                                      instances and HAProxy, the Sentinels, Redis, PostgreSQL
#   devenv.sh purge DIR                stop DIR's servers and delete their data (the PostgreSQL
#                                      cluster wherever it lives, Redis's, DIR/env); other files stay
#   devenv.sh remove DIR               purge DIR, then delete DIR
#   devenv.sh orphans                  delete the clusters under the postgres user's home (see
#                                      pg_home) whose origin directory is gone and that are not running
#   devenv.sh port                     print a free port (below the ephemeral range, see free_port)
#
# DIR/env holds REDIS_URL, DATABASE_URL and AUTH_SECRET as shell assignments,
# and PG_DIR, where the PostgreSQL cluster lives.
# PostgreSQL refuses to run as root, so as root the cluster runs as the
# `postgres` system user that the OS package creates. That user must reach
# the cluster's directory: DIR/pg when it can, else a directory of its own
# under the postgres user's home (a clone in root's mode-700 home, or under
# `mktemp -d`); PG_DIR names it, and `make run` prints it.
# A start that fails stops the servers it started.
# `sentinel` makes DIR's Redis the primary of master `seatlock`, monitored
# by three redis-sentinel processes with a replica to promote; it writes
# SENTINEL_URL=redis+sentinel://h:p,h:p,h:p/seatlock/0 to DIR/sentinel/env,
# and `stop` stops them too.
# `stop` finds what runs by pid files: DIR/api/*.pid (make run's API),
# DIR/cluster/up.pid (make cluster's script, sent SIGTERM: it stops its
# instances and HAProxy), DIR/cluster/api-N.pid and haproxy.pid (in case
# that script is gone), the Sentinels', Redis's and PostgreSQL's.
set -euo pipefail

log() { printf 'devenv: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
		die "need root or sudo to run: $*"
	fi
}

pg_bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

install_packages() {
	local want=()
	command -v redis-server >/dev/null || want+=(redis-server)
	command -v redis-cli >/dev/null || want+=(redis-tools)
	# The Sentinel failover test starts redis-sentinel processes of its own.
	command -v redis-sentinel >/dev/null || want+=(redis-sentinel)
	pg_bindir >/dev/null || want+=(postgresql)
	# PostgreSQL's failover (make cluster, and the tests' own pairs): a
	# primary and a synchronous standby under Patroni, with etcd.
	command -v patroni >/dev/null || want+=(patroni)
	command -v etcd >/dev/null || want+=(etcd-server)
	[ ${#want[@]} -eq 0 ] && return 0
	log "installing ${want[*]} from the OS packages"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
	pg_bindir >/dev/null || die "PostgreSQL binaries not found after install"
	# The packages may start system-wide servers; ours run on their own ports,
	# so those are left alone.
}

# install_browser installs Debian's Chromium for the page's browser test
# when it is missing (the test fails, never skips, without it).
install_browser() {
	command -v chromium >/dev/null && return 0
	log "installing chromium from the OS packages"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
	command -v chromium >/dev/null || die "chromium not found after install"
}

# install_haproxy installs Debian's HAProxy for `make cluster` and its
# rolling-restart check when it is missing (they fail, never skip, without it).
install_haproxy() {
	command -v haproxy >/dev/null && return 0
	log "installing haproxy from the OS packages"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >/dev/null
	command -v haproxy >/dev/null || die "haproxy not found after install"
	# The package may start a system-wide HAProxy; ours runs on its own
	# address, so that one is left alone.
}

# free_port prints a port nothing listens on, from 23000-29999: below the
# kernel's usual ephemeral range (32768 and up), where an outgoing
# connection could take the port between this check and the server's bind.
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((23000 + RANDOM % 7000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	die "no free port found"
}

# as_pg runs a PostgreSQL binary as the unprivileged owner of the cluster,
# from / (the caller's directory may be one the postgres user cannot enter).
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# pg_home DIR prints where DIR's PostgreSQL cluster lives: DIR/pg, unless
# the cluster runs as the postgres user (we are root) and that user cannot
# enter DIR (a parent directory is not searchable by others); then a
# directory of its own under the postgres user's home, named after a hash
# of DIR, with an `origin` file naming DIR.
pg_home() {
	local dir=$1 home
	if [ "$(id -u)" -ne 0 ] || (cd / && runuser -u postgres -- test -x "$dir") 2>/dev/null; then
		echo "$dir/pg"
		return 0
	fi
	home=$(getent passwd postgres | cut -d: -f6)
	[ -n "$home" ] && [ -d "$home" ] || die "the postgres user has no home directory to keep the cluster of $dir in"
	echo "$home/seatlock/$(printf '%s' "$dir" | sha256sum | cut -c1-16)"
}

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

wait_redis() {
	local port=$1 logfile=$2
	for _ in $(seq 1 100); do
		redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	# The log says why (say, the port was taken).
	tail -n 5 "$logfile" >&2 || true
	die "redis on port $port did not answer"
}

start_redis() {
	local dir=$1 port=$2
	mkdir -p "$dir/redis"
	if [ -f "$dir/redis/redis.pid" ] && kill -0 "$(cat "$dir/redis/redis.pid")" 2>/dev/null; then
		return 0
	fi
	STARTED_REDIS=1
	# No persistence: locks are leases that must not outlive their TTL anyway.
	redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
		--daemonize yes --dir "$dir/redis" --pidfile "$dir/redis/redis.pid" \
		--logfile "$dir/redis/redis.log" >/dev/null
	wait_redis "$port" "$dir/redis/redis.log"
}

# stop_pidfiles PIDFILE...: SIGTERM to each running process a pid file
# names, then waits up to 5 s for each to exit; STOPPED lists their pids.
stop_pidfiles() {
	local pidfile pid
	STOPPED=()
	for pidfile in "$@"; do
		[ -f "$pidfile" ] || continue
		pid=$(cat "$pidfile")
		running "$pid" && kill "$pid" 2>/dev/null && STOPPED+=("$pid")
	done
	for pid in "${STOPPED[@]}"; do
		for _ in $(seq 1 50); do
			running "$pid" || break
			sleep 0.1
		done
	done
}

# running PID: the process exists and is not a zombie (a daemonized server's
# parent is init, which may reap it late).
running() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $state != Z* ]]
}

start_postgres() {
	local dir=$1 port=$2 password=$3 pg=$4
	local bin data="$pg/data"
	bin=$(pg_bindir) || die "PostgreSQL not installed"
	mkdir -p "$pg"
	[ "$pg" = "$dir/pg" ] || printf '%s\n' "$dir" >"$pg/origin"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$pg"
		as_pg test -w "$pg" || die "the postgres user cannot write $pg"
	fi
	if [ ! -f "$data/PG_VERSION" ]; then
		local pwfile="$pg/.pw"
		printf '%s\n' "$password" >"$pwfile"
		[ "$(id -u)" -eq 0 ] && chown postgres: "$pwfile"
		as_pg "$bin/initdb" -D "$data" -U seatlock --pwfile="$pwfile" --auth=scram-sha-256 \
			-E UTF8 --locale=C.UTF-8 >"$pg/initdb.log" 2>&1 || { cat "$pg/initdb.log" >&2; die "initdb failed"; }
		rm -f "$pwfile"
	fi
	if as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		return 0
	fi
	local opts="-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$pg -c max_connections=300"
	STARTED_PG=1
	as_pg "$bin/pg_ctl" -D "$data" -l "$pg/server.log" -o "$opts" -w -t 60 start >/dev/null ||
		{ tail -n 20 "$pg/server.log" >&2; die "PostgreSQL did not start"; }
	PGPASSWORD=$password "$bin/psql" -h 127.0.0.1 -p "$port" -U seatlock -d postgres -qAt \
		-c "SELECT 1 FROM pg_database WHERE datname = 'seatlock'" | grep -q 1 ||
		PGPASSWORD=$password "$bin/createdb" -h 127.0.0.1 -p "$port" -U seatlock seatlock
}

# pg_dir_of DIR prints where DIR's cluster lives, as DIR/env recorded it.
pg_dir_of() {
	local pg
	pg=$(sed -n 's/^PG_DIR=//p' "$1/env" 2>/dev/null || true)
	echo "${pg:-$1/pg}"
}

# The name under which the Sentinels of `devenv.sh sentinel` know DIR's
# Redis (the master of SENTINEL_URL).
SENTINEL_MASTER=seatlock

# sentinel_fields PORT: `sentinel master` of the Sentinel on PORT as
# name=value lines (redis-cli prints a reply's names and values on
# alternate lines when its output is not a terminal).
sentinel_fields() {
	redis-cli -h 127.0.0.1 -p "$1" sentinel master "$SENTINEL_MASTER" 2>/dev/null |
		awk 'NR % 2 == 1 {name = $0} NR % 2 == 0 {print name "=" $0}'
}

# cmd_sentinel DIR: a replica of DIR's Redis and three Sentinels watching
# it, each on a port chosen once and kept in DIR/sentinel/env; those
# already running are kept (after a failover they know where the master
# is now).
cmd_sentinel() {
	local dir=$1 home=$1/sentinel port n
	[ -f "$dir/env" ] || die "no servers under $dir: devenv.sh start $dir first"
	# shellcheck disable=SC1091
	. "$dir/env"
	mkdir -p "$home"
	if [ ! -f "$home/env" ]; then
		local replica ports=()
		replica=$(free_port)
		for _ in 1 2 3; do ports+=("$(free_port)"); done
		{
			echo "SENTINEL_MASTER=$SENTINEL_MASTER"
			echo "REPLICA_PORT=$replica"
			echo "SENTINEL_PORTS=\"${ports[*]}\""
			echo "SENTINEL_URL=redis+sentinel://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}/$SENTINEL_MASTER/0"
		} >"$home/env"
	fi
	# shellcheck disable=SC1091
	. "$home/env"
	mkdir -p "$home/replica"
	[ -f "$home/replica/redis.pid" ] && running "$(cat "$home/replica/redis.pid")" ||
		redis-server --bind 127.0.0.1 --port "$REPLICA_PORT" \
		--replicaof 127.0.0.1 "$REDIS_PORT" --save '' --appendonly no --daemonize yes \
		--dir "$home/replica" --pidfile "$home/replica/redis.pid" --logfile "$home/replica/redis.log" >/dev/null
	wait_redis "$REPLICA_PORT" "$home/replica/redis.log"
	n=0
	for port in $SENTINEL_PORTS; do
		n=$((n + 1))
		mkdir -p "$home/$n"
		[ -f "$home/$n/sentinel.pid" ] && running "$(cat "$home/$n/sentinel.pid")" && continue
		# A fresh file at each start (Sentinel rewrites its own as it learns):
		# DIR's Redis keeps no data across a stop, and starts as the master.
		cat >"$home/$n/sentinel.conf" <<CONF
port $port
bind 127.0.0.1
daemonize yes
pidfile $home/$n/sentinel.pid
logfile $home/$n/sentinel.log
dir $home/$n
sentinel resolve-hostnames no
sentinel monitor $SENTINEL_MASTER 127.0.0.1 $REDIS_PORT 2
sentinel down-after-milliseconds $SENTINEL_MASTER 1000
sentinel failover-timeout $SENTINEL_MASTER 5000
sentinel parallel-syncs $SENTINEL_MASTER 1
CONF
		redis-sentinel "$home/$n/sentinel.conf" >/dev/null
	done
	# Ready when every Sentinel knows the master, its replica and the two
	# other Sentinels: then any two of them can promote the replica.
	local fields
	for port in $SENTINEL_PORTS; do
		for _ in $(seq 1 150); do
			fields=$(sentinel_fields "$port")
			grep -qx 'num-slaves=1' <<<"$fields" && grep -qx 'num-other-sentinels=2' <<<"$fields" && continue 2
			sleep 0.2
		done
		tail -n 5 "$home"/*/sentinel.log >&2 || true
		die "the Sentinel on port $port does not know the replica and the two other Sentinels after 30 s"
	done
}

# stop_sentinel DIR stops DIR's Sentinels and replica, and waits for them
# to exit (a `make cluster` right after reuses their ports).
stop_sentinel() { stop_pidfiles "$1"/sentinel/*/sentinel.pid "$1"/sentinel/replica/redis.pid; }

# What the current start has started, so that a failed start stops it
# (on_exit) and leaves nothing running behind an error.
STARTED_REDIS=0
STARTED_PG=0
STARTING_DIR=

# start DIR [REDIS_PORT PG_PORT]: ports and secrets are chosen once and
# kept in DIR/env, so a second `make run` reuses the same servers and data.
cmd_start() {
	local dir=$1 rport=${2:-} pport=${3:-}
	install_packages
	mkdir -p "$dir"
	chmod 755 "$dir"
	if [ ! -f "$dir/env" ]; then
		rport=${rport:-$(free_port)}
		pport=${pport:-$(free_port)}
		local password secret pg
		password=$(random_hex 16)
		secret=$(random_hex 32)
		pg=$(pg_home "$dir")
		umask 077
		cat >"$dir/env" <<EOF
REDIS_PORT=$rport
PG_PORT=$pport
PG_PASSWORD=$password
PG_DIR=$pg
REDIS_URL=redis://127.0.0.1:$rport/0
DATABASE_URL=postgres://seatlock:$password@127.0.0.1:$pport/seatlock?sslmode=disable
AUTH_SECRET=$secret
EOF
		umask 022
	fi
	# shellcheck disable=SC1091
	. "$dir/env"
	STARTING_DIR=$dir
	start_redis "$dir" "$REDIS_PORT"
	start_postgres "$dir" "$PG_PORT" "$PG_PASSWORD" "$(pg_dir_of "$dir")"
	STARTING_DIR=
}

# stop_failed_start stops what a start that did not finish had started.
stop_failed_start() {
	local dir=$STARTING_DIR bin pg
	[ -n "$dir" ] || return 0
	if [ "$STARTED_REDIS" = 1 ] && [ -f "$dir/redis/redis.pid" ]; then
		kill "$(cat "$dir/redis/redis.pid")" 2>/dev/null && log "stopped the Redis this start had started"
	fi
	pg=$(pg_dir_of "$dir")
	if [ "$STARTED_PG" = 1 ] && bin=$(pg_bindir) && [ -f "$pg/data/PG_VERSION" ]; then
		as_pg "$bin/pg_ctl" -D "$pg/data" -m fast -w stop >/dev/null 2>&1 &&
			log "stopped the PostgreSQL this start had started"
	fi
	return 0
}

# wait_gone PID SECONDS: waits up to SECONDS for PID to exit.
wait_gone() {
	local pid=$1 n
	for ((n = 0; n < $2 * 10; n++)); do
		running "$pid" || return 0
		sleep 0.1
	done
	return 1
}

# served_value DIR NAME: NAME in DIR/served.env (scripts/served.sh), or
# nothing.
served_value() { sed -n "s/^$2=//p" "$1/served.env" 2>/dev/null || true; }

# stop_apis DIR: what `make cluster` and `make run` started for DIR (their
# API processes, HAProxy), by pid file; adds to `stopped`.
stop_apis() {
	local dir=$1 pid owner addr
	if [ -f "$dir/cluster/up.pid" ]; then
		pid=$(cat "$dir/cluster/up.pid")
		if running "$pid" && kill -TERM "$pid" 2>/dev/null; then
			# It drains its instances (SHUTDOWN_DELAY each, at once) and
			# stops HAProxy.
			wait_gone "$pid" 70 || log "make cluster (pid $pid) still runs 70 s after SIGTERM"
			stopped+=("make cluster (pid $pid: its 3 instances and HAProxy)")
		fi
	fi
	# Left behind by a make cluster that was killed outright.
	stop_pidfiles "$dir"/cluster/api-*.pid "$dir"/cluster/haproxy.pid
	[ ${#STOPPED[@]} -eq 0 ] || stopped+=("make cluster's instances and HAProxy (pids ${STOPPED[*]})")
	rm -f "$dir"/cluster/api-*.pid "$dir"/cluster/haproxy.pid "$dir"/cluster/up.pid
	addr=$(served_value "$dir" HTTP_ADDR)
	stop_pidfiles "$dir"/api/*.pid
	[ ${#STOPPED[@]} -eq 0 ] || stopped+=("make run's API (pid ${STOPPED[*]}${addr:+, last served on $addr})")
	# make run releases its address as it ends (scripts/served.sh); an
	# owner that is gone without doing so leaves no address behind.
	owner=$(served_value "$dir" SERVED_PID)
	[ -z "$owner" ] || wait_gone "$owner" 5 || true
	owner=$(served_value "$dir" SERVED_PID)
	if [ -f "$dir/served.env" ] && { [ -z "$owner" ] || ! running "$owner"; }; then
		rm -f "$dir/served.env" "$dir/tokens.env"
	fi
	rm -f "$dir"/served.env.* "$dir"/tokens.env.[0-9]*
	for pid in "$dir"/api/*.pid; do
		[ -f "$pid" ] && ! running "$(cat "$pid")" && rm -f "$pid"
	done
	return 0
}

# cmd_stop DIR [say]: with "say", tells what it stopped (make stop).
cmd_stop() {
	local dir=$1 say=${2:-} bin pid pg stopped=()
	stop_apis "$dir"
	if [ -f "$dir/redis/redis.pid" ]; then
		pid=$(cat "$dir/redis/redis.pid")
		if running "$pid" && kill "$pid" 2>/dev/null; then
			stopped+=("Redis (pid $pid, port $(grep -o 'REDIS_URL=redis://[^/]*' "$dir/env" 2>/dev/null | sed 's/.*://'))")
		fi
	fi
	stop_sentinel "$dir"
	[ ${#STOPPED[@]} -eq 0 ] || stopped+=("the Sentinels and the replica (pids ${STOPPED[*]})")
	pg=$(pg_dir_of "$dir")
	if bin=$(pg_bindir) && [ -f "$pg/data/PG_VERSION" ]; then
		if as_pg "$bin/pg_ctl" -D "$pg/data" -m fast -w stop >/dev/null 2>&1; then
			stopped+=("PostgreSQL (port $(grep -o '^PG_PORT=[0-9]*' "$dir/env" 2>/dev/null | cut -d= -f2), data in $pg)")
		fi
	fi
	[ -n "$say" ] || return 0
	if [ ${#stopped[@]} -eq 0 ]; then
		log "nothing was running under $dir"
	else
		for s in "${stopped[@]}"; do log "stopped $s"; done
		if [ "$pg" = "$dir/pg" ]; then
			log "the data stays in $dir ('make clean' deletes it, for a fresh start)"
		else
			log "the data stays in $dir and $pg ('make clean' deletes both, for a fresh start)"
		fi
	fi
}

# cmd_purge DIR stops DIR's servers and deletes their data: the
# PostgreSQL cluster wherever it lives (PG_DIR, a directory under the
# postgres user's home for a DIR that user cannot enter), Redis's,
# Sentinels' and the Redis Cluster's directories, and DIR/env (the next
# start picks new ports and secrets). Logs and other files stay.
cmd_purge() {
	local dir=$1 pg
	[ -d "$dir" ] || return 0
	pg=$(pg_dir_of "$dir")
	cmd_stop "$dir"
	# Only a directory this script made: DIR/pg, or one under the postgres
	# user's home whose origin file names DIR.
	if [ "$pg" = "$dir/pg" ] || [ "$(cat "$pg/origin" 2>/dev/null)" = "$dir" ]; then
		rm -rf "$pg"
	elif [ -e "$pg" ]; then
		log "left $pg alone: its origin file does not name $dir"
	fi
	rm -rf "$dir/pg" "$dir/redis" "$dir/sentinel" "$dir/cluster"/[0-9]* "$dir/env"
}

# cmd_remove DIR purges DIR and deletes it.
cmd_remove() {
	cmd_purge "$1"
	rm -rf "$1"
}

# cmd_orphans deletes the clusters under the postgres user's home that
# pg_home made for a directory that no longer exists (a clone deleted
# after `make run`) and that are not running.
cmd_orphans() {
	local home pg origin bin
	home=$(getent passwd postgres 2>/dev/null | cut -d: -f6)
	[ -n "$home" ] && [ -d "$home/seatlock" ] || return 0
	bin=$(pg_bindir) || return 0
	for pg in "$home"/seatlock/*/; do
		pg=${pg%/}
		[ -f "$pg/origin" ] || continue
		origin=$(cat "$pg/origin")
		[ -n "$origin" ] && [ ! -e "$origin" ] || continue
		if [ -f "$pg/data/PG_VERSION" ] && as_pg "$bin/pg_ctl" -D "$pg/data" status >/dev/null 2>&1; then
			log "kept $pg: its origin $origin is gone but it still runs"
			continue
		fi
		rm -rf "$pg"
		log "deleted $pg ($(basename "$origin")'s cluster; $origin is gone)"
	done
}

# absolute DIR: DIR from the root (the servers change directory).
absolute() { mkdir -p "$1" && (cd "$1" && pwd); }

trap stop_failed_start EXIT

case "${1:-}" in
install) install_packages ;;
browser) install_browser ;;
haproxy) install_haproxy ;;
port) free_port ;;
start) shift; cmd_start "$(absolute "$1")" "${@:2}" ;;
sentinel) shift; cmd_sentinel "$(absolute "$1")" ;;
stop) shift; cmd_stop "$(absolute "$1")" say ;;
purge) shift; [ -d "$1" ] && cmd_purge "$(cd "$1" && pwd)" ;;
remove) shift; [ ! -d "$1" ] || cmd_remove "$(cd "$1" && pwd)" ;;
orphans) cmd_orphans ;;
*) sed -n '2,37p' "$0" >&2; exit 2 ;;
esac
