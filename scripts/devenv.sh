#!/usr/bin/env bash
# Local Redis and PostgreSQL as plain processes, for `make run` and `make
# cluster`, and the OS packages `make test` needs (its test binaries start
# servers of their own: internal/lock/lockenv).
#
#   devenv.sh install                  install redis-server, redis-sentinel, PostgreSQL, Patroni, etcd
#                                      and jq from the OS packages if missing
#   devenv.sh browser                  install Chromium from the OS packages if missing (the browser test)
#   devenv.sh haproxy                  install HAProxy from the OS packages if missing (make cluster)
#   devenv.sh start DIR [RPORT PPORT]  start (or reuse) servers with their data under DIR; writes DIR/env
#   devenv.sh sentinel DIR             give DIR's Redis a replica and three Sentinels (make cluster); writes DIR/sentinel/env
#   devenv.sh patroni DIR              start (or reuse) a PostgreSQL pair under Patroni and one etcd
#                                      (make cluster); writes DIR/pgha/env
#   devenv.sh stop DIR                 stop what runs for DIR: make run's API, make cluster's
#                                      instances and HAProxy, the Sentinels, Redis, PostgreSQL,
#                                      the Patroni nodes and etcd
#   devenv.sh purge DIR                stop DIR's servers and delete their data (the PostgreSQL
#                                      clusters wherever they live, Redis's, etcd's, DIR/env); other files stay
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
# `patroni` starts one etcd and two Patroni nodes, pg1 and pg2, each a
# PostgreSQL (as the postgres user when root) in synchronous mode: pg1
# bootstraps and leads, pg2 is its synchronous standby. It waits until one
# node leads and the other streams as its Sync Standby, makes the service's
# role and database on the leader, and writes DIR/pgha/env: DATABASE_URL
# (both nodes, target_session_attrs=read-write), PATRONI_CONFIGS,
# PATRONI_URLS (their REST APIs) and ETCD_URL. The nodes' data lives where
# pg_home would put it, with "pgha" for "pg": DIR/pgha, or beside the
# directory under the postgres user's home (PGHA_DIR names it).
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
	# make cluster's PostgreSQL pair (devenv.sh patroni), and the tests'
	# Patroni clusters.
	command -v patroni >/dev/null || want+=(patroni)
	command -v etcd >/dev/null || want+=(etcd-server)
	command -v etcdctl >/dev/null || want+=(etcd-client)
	command -v jq >/dev/null || want+=(jq)
	[ ${#want[@]} -eq 0 ] && return 0
	log "installing ${want[*]} from the OS packages"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
	pg_bindir >/dev/null || die "PostgreSQL binaries not found after install"
	command -v patroni >/dev/null && command -v etcd >/dev/null || die "patroni or etcd not found after install"
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

# --- make cluster's PostgreSQL pair: two Patroni nodes and one etcd ---

# The Patroni nodes, in the order a fresh pair starts them (pg1
# bootstraps), and the scope (cluster name) they share in etcd.
PGHA_NODES="pg1 pg2"
PGHA_SCOPE=seatlock

# pgha_home DIR prints where DIR's Patroni nodes keep their data: DIR/pgha,
# or, when pg_home puts DIR's cluster under the postgres user's home,
# beside it (its name with -pgha).
pgha_home() {
	local pg
	pg=$(pg_home "$1")
	if [ "$pg" = "$1/pg" ]; then echo "$1/pgha"; else echo "$pg-pgha"; fi
}

# free_ports N prints N distinct free ports.
free_ports() {
	local p ports=()
	while [ ${#ports[@]} -lt "$1" ]; do
		p=$(free_port)
		[[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
	done
	echo "${ports[*]}"
}

# node_value NODE NAME: PGHA_<NODE>_<NAME> of DIR/pgha/env (sourced).
node_value() {
	local v="PGHA_${1^^}_$2"
	echo "${!v}"
}

# http_status URL: the HTTP status URL answers with (000 for none).
http_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$1" 2>/dev/null || true; }

# pgha_leader prints the node whose REST API answers /primary with 200
# (only the leader does), or nothing.
pgha_leader() {
	local node
	for node in $PGHA_NODES; do
		[ "$(http_status "$(node_value "$node" REST)/primary")" = 200 ] && { echo "$node"; return 0; }
	done
	return 0
}

# pgha_sync_standby NODE LEADER: NODE is LEADER's synchronous standby and
# streams from it: Patroni names it (/sync answers 200) and the leader's
# pg_stat_replication shows it streaming with sync_state sync.
pgha_sync_standby() {
	[ "$(http_status "$(node_value "$1" REST)/sync")" = 200 ] &&
		curl -s --max-time 1 "$(node_value "$2" REST)/patroni" 2>/dev/null |
		jq -e --arg n "$1" '.replication // [] | any(.application_name == $n and .state == "streaming" and .sync_state == "sync")' >/dev/null 2>&1
}

# patroni_config NODE: NODE's Patroni configuration.
patroni_config() {
	local node=$1 bin
	bin=$(pg_bindir) || die "PostgreSQL not installed"
	cat <<YML
scope: $PGHA_SCOPE
name: $node
restapi:
  listen: 127.0.0.1:$(node_value "$node" REST_PORT)
  connect_address: 127.0.0.1:$(node_value "$node" REST_PORT)
etcd3:
  hosts: 127.0.0.1:$PGHA_ETCD_PORT
bootstrap:
  dcs:
    # A leader that stops renewing its key in etcd loses it after ttl
    # seconds; then its synchronous standby takes it.
    ttl: 8
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 16777216
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: "on"
        max_connections: 300
        synchronous_commit: "on"
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth: scram-sha-256
postgresql:
  listen: 127.0.0.1:$(node_value "$node" PORT)
  connect_address: 127.0.0.1:$(node_value "$node" PORT)
  data_dir: $PGHA_DIR/$node
  bin_dir: $bin
  pgpass: $PGHA_DIR/pgpass-$node
  parameters:
    unix_socket_directories: ''
  pg_hba:
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
  authentication:
    superuser:
      username: postgres
      password: $PGHA_SUPERUSER_PASSWORD
    replication:
      username: replicator
      password: $PGHA_REPLICATION_PASSWORD
    rewind:
      username: rewinder
      password: $PGHA_REWIND_PASSWORD
YML
}

# start_etcd DIR: DIR's etcd, a single member, unless it runs.
start_etcd() {
	local home=$1/pgha
	[ -f "$home/etcd.pid" ] && running "$(cat "$home/etcd.pid")" && return 0
	STARTED_PGHA+=(etcd)
	# setsid: a Ctrl-C meant for make cluster does not reach it (make stop
	# stops it).
	(cd / && exec setsid etcd --name e1 --data-dir "$home/etcd" \
		--listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
		--listen-peer-urls "http://127.0.0.1:$PGHA_ETCD_PEER_PORT" \
		--initial-advertise-peer-urls "http://127.0.0.1:$PGHA_ETCD_PEER_PORT" \
		--initial-cluster "e1=http://127.0.0.1:$PGHA_ETCD_PEER_PORT" --initial-cluster-state new \
		--unsafe-no-fsync) >>"$home/etcd.log" 2>&1 </dev/null &
	echo $! >"$home/etcd.pid"
	for _ in $(seq 1 100); do
		curl -fsS --max-time 1 "$ETCD_URL/health" 2>/dev/null | grep -q '"health":"true"' && return 0
		running "$(cat "$home/etcd.pid")" || break
		sleep 0.1
	done
	tail -n 5 "$home/etcd.log" >&2 || true
	die "etcd on port $PGHA_ETCD_PORT did not answer (see $home/etcd.log)"
}

# start_patroni DIR NODE: NODE's Patroni, unless it runs; it starts its
# PostgreSQL. As root it runs as the postgres user through setpriv, which
# execs (runuser would stay as its parent), so the pid file names Patroni
# itself. Patroni reads its configuration from PATRONI_CONFIGURATION (the
# text of DIR/pgha/NODE.yml), so the postgres user, who may not reach
# DIR, needs no access to that file.
start_patroni() {
	local dir=$1 node=$2 home=$1/pgha conf
	[ -f "$home/$node.pid" ] && running "$(cat "$home/$node.pid")" && return 0
	conf=$(cat "$home/$node.yml")
	STARTED_PGHA+=("$node")
	if [ "$(id -u)" -eq 0 ]; then
		(cd / && PATRONI_CONFIGURATION=$conf HOME=$(getent passwd postgres | cut -d: -f6) \
			exec setsid setpriv --reuid=postgres --regid=postgres --init-groups patroni) \
			>>"$home/$node.log" 2>&1 </dev/null &
	else
		(cd / && PATRONI_CONFIGURATION=$conf exec setsid patroni) >>"$home/$node.log" 2>&1 </dev/null &
	fi
	echo $! >"$home/$node.pid"
}

# patroni_running DIR NODE: NODE's Patroni process runs.
patroni_running() { [ -f "$1/pgha/$2.pid" ] && running "$(cat "$1/pgha/$2.pid")"; }

# wait_pgha_leader DIR NODE SECONDS: waits until NODE leads.
wait_pgha_leader() {
	local dir=$1 node=$2 n
	for ((n = 0; n < $3 * 5; n++)); do
		[ "$(http_status "$(node_value "$node" REST)/primary")" = 200 ] && return 0
		patroni_running "$dir" "$node" || break
		sleep 0.2
	done
	tail -n 20 "$dir/pgha/$node.log" >&2 || true
	die "Patroni $node does not lead (see $dir/pgha/$node.log)"
}

# wait_pgha DIR SECONDS: waits until a node leads and every other one is
# its streaming synchronous standby, and prints the leader; dies when a
# Patroni process ends meanwhile.
wait_pgha() {
	local dir=$1 seconds=$2 leader node n
	for ((n = 0; n < seconds * 5; n++)); do
		for node in $PGHA_NODES; do
			patroni_running "$dir" "$node" || {
				tail -n 20 "$dir/pgha/$node.log" >&2 || true
				die "Patroni $node ended (see $dir/pgha/$node.log)"
			}
		done
		leader=$(pgha_leader)
		if [ -n "$leader" ]; then
			for node in $PGHA_NODES; do
				[ "$node" = "$leader" ] || pgha_sync_standby "$node" "$leader" || continue 2
			done
			echo "$leader"
			return 0
		fi
		sleep 0.2
	done
	tail -n 5 "$dir"/pgha/pg*.log >&2 || true
	die "no leader with a streaming synchronous standby after $seconds s (see $dir/pgha/*.log)"
}

# What the current `patroni` has started (etcd, nodes), so that a failed
# start stops it.
STARTED_PGHA=()
STARTING_PGHA=

# cmd_patroni DIR: etcd and the Patroni nodes under DIR/pgha, each on a
# port chosen once and kept in DIR/pgha/env with its secrets; what already
# runs is kept (after a failover pg2 may lead), what does not is started.
# A fresh pair starts pg1 first and waits for it to lead, so that pg1
# bootstraps and pg2 copies it.
cmd_patroni() {
	local dir=$1 home=$1/pgha node leader fresh=1 bin
	install_packages
	bin=$(pg_bindir) || die "PostgreSQL not installed"
	mkdir -p "$home"
	chmod 755 "$home"
	if [ ! -f "$home/env" ]; then
		local ports password
		read -r -a ports <<<"$(free_ports 6)"
		password=$(random_hex 16)
		umask 077
		cat >"$home/env" <<EOF
PGHA_DIR=$(pgha_home "$dir")
PGHA_ETCD_PORT=${ports[0]}
PGHA_ETCD_PEER_PORT=${ports[1]}
PGHA_PG1_PORT=${ports[2]}
PGHA_PG2_PORT=${ports[3]}
PGHA_PG1_REST_PORT=${ports[4]}
PGHA_PG2_REST_PORT=${ports[5]}
PGHA_PG1_REST=http://127.0.0.1:${ports[4]}
PGHA_PG2_REST=http://127.0.0.1:${ports[5]}
PGHA_PASSWORD=$password
PGHA_SUPERUSER_PASSWORD=$(random_hex 16)
PGHA_REPLICATION_PASSWORD=$(random_hex 16)
PGHA_REWIND_PASSWORD=$(random_hex 16)
DATABASE_URL='postgres://seatlock:$password@127.0.0.1:${ports[2]},127.0.0.1:${ports[3]}/seatlock?sslmode=disable&target_session_attrs=read-write'
PATRONI_CONFIGS="$home/pg1.yml $home/pg2.yml"
PATRONI_URLS="http://127.0.0.1:${ports[4]} http://127.0.0.1:${ports[5]}"
ETCD_URL=http://127.0.0.1:${ports[0]}
EOF
		umask 022
	fi
	# shellcheck disable=SC1091
	. "$home/env"
	STARTING_PGHA=$dir
	mkdir -p "$PGHA_DIR"
	[ "$PGHA_DIR" = "$home" ] || printf '%s\n' "$dir" >"$PGHA_DIR/origin"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$PGHA_DIR"
		as_pg test -w "$PGHA_DIR" || die "the postgres user cannot write $PGHA_DIR"
	fi
	umask 077
	for node in $PGHA_NODES; do
		patroni_config "$node" >"$home/$node.yml"
	done
	umask 022
	for node in $PGHA_NODES; do
		[ ! -f "$PGHA_DIR/$node/PG_VERSION" ] || fresh=0
	done
	start_etcd "$dir"
	for node in $PGHA_NODES; do
		start_patroni "$dir" "$node"
		if [ "$fresh" = 1 ]; then
			# pg1 initialises the cluster; the others copy it once it leads.
			wait_pgha_leader "$dir" "$node" 90
			fresh=0
		fi
	done
	leader=$(wait_pgha "$dir" 90)
	# The service's role and database, as devenv.sh start makes them for
	# make run (there the role owns the whole cluster; here it is an
	# ordinary role that owns its database and may create others, as make
	# compare does for its contenders).
	local psql=("$bin/psql" -X -qAt -h 127.0.0.1 -p "$(node_value "$leader" PORT)" -U postgres -d postgres)
	PGPASSWORD=$PGHA_SUPERUSER_PASSWORD "${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'seatlock'" | grep -q 1 ||
		PGPASSWORD=$PGHA_SUPERUSER_PASSWORD "${psql[@]}" -c "CREATE ROLE seatlock LOGIN CREATEDB PASSWORD '$PGHA_PASSWORD'"
	PGPASSWORD=$PGHA_SUPERUSER_PASSWORD "${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'seatlock'" | grep -q 1 ||
		PGPASSWORD=$PGHA_SUPERUSER_PASSWORD "${psql[@]}" -c "CREATE DATABASE seatlock OWNER seatlock"
	STARTING_PGHA=
}

# stop_pgha DIR: stops DIR's Patroni nodes, the standbys before the leader
# (so that no standby is promoted as the leader goes), each with SIGTERM:
# Patroni stops its PostgreSQL, then exits. A PostgreSQL whose Patroni is
# gone (killed) is stopped with pg_ctl. Then etcd. Adds to `stopped`.
stop_pgha() {
	local dir=$1 home=$1/pgha node pid leader order=() bin
	[ -f "$home/env" ] || return 0
	# shellcheck disable=SC1091
	. "$home/env"
	leader=$(pgha_leader)
	for node in $PGHA_NODES; do [ "$node" = "$leader" ] || order+=("$node"); done
	[ -z "$leader" ] || order+=("$leader")
	for node in "${order[@]}"; do
		if patroni_running "$dir" "$node"; then
			pid=$(cat "$home/$node.pid")
			kill -TERM "$pid" 2>/dev/null || true
			wait_gone "$pid" 60 || log "Patroni $node (pid $pid) still runs 60 s after SIGTERM"
			stopped+=("Patroni $node and its PostgreSQL (pid $pid, port $(node_value "$node" PORT))")
		fi
		if bin=$(pg_bindir) && [ -f "$PGHA_DIR/$node/PG_VERSION" ] &&
			as_pg "$bin/pg_ctl" -D "$PGHA_DIR/$node" status >/dev/null 2>&1; then
			as_pg "$bin/pg_ctl" -D "$PGHA_DIR/$node" -m fast -w stop >/dev/null 2>&1 &&
				stopped+=("$node's PostgreSQL, whose Patroni was gone (port $(node_value "$node" PORT))")
		fi
	done
	stop_pidfiles "$home/etcd.pid"
	[ ${#STOPPED[@]} -eq 0 ] || stopped+=("etcd (pid ${STOPPED[*]}, port $PGHA_ETCD_PORT)")
	return 0
}

# purge_pgha DIR deletes what stop_pgha's servers kept: their data
# (PGHA_DIR wherever it lives, when this script made it), etcd's, the
# configurations and DIR/pgha/env; the logs stay.
purge_pgha() {
	local dir=$1 home=$1/pgha data
	[ -d "$home" ] || return 0
	data=$(sed -n 's/^PGHA_DIR=//p' "$home/env" 2>/dev/null || true)
	if [ -n "$data" ] && [ "$data" != "$home" ]; then
		if [ "$(cat "$data/origin" 2>/dev/null)" = "$dir" ]; then
			rm -rf "$data"
		elif [ -e "$data" ]; then
			log "left $data alone: its origin file does not name $dir"
		fi
	fi
	find "$home" -mindepth 1 -maxdepth 1 ! -name '*.log' -exec rm -rf {} +
}

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
	stop_failed_pgha
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

# stop_failed_pgha stops what a `patroni` that did not finish had started
# (the Patroni nodes, with their PostgreSQL, then etcd), and only that:
# the nodes already running stay.
stop_failed_pgha() {
	local dir=$STARTING_PGHA what pid order=() etcd=0
	[ -n "$dir" ] || return 0
	# The nodes before etcd, which they need to stop cleanly.
	for what in "${STARTED_PGHA[@]}"; do
		if [ "$what" = etcd ]; then etcd=1; else order+=("$what"); fi
	done
	[ "$etcd" = 0 ] || order+=(etcd)
	for what in "${order[@]}"; do
		[ -f "$dir/pgha/$what.pid" ] && pid=$(cat "$dir/pgha/$what.pid") && running "$pid" || continue
		kill -TERM "$pid" 2>/dev/null || continue
		wait_gone "$pid" 60 || true
		log "stopped the $what this start had started"
	done
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
	local dir=$1 say=${2:-} bin pid pg pgha stopped=()
	stop_apis "$dir"
	if [ -f "$dir/redis/redis.pid" ]; then
		pid=$(cat "$dir/redis/redis.pid")
		if running "$pid" && kill "$pid" 2>/dev/null; then
			stopped+=("Redis (pid $pid, port $(grep -o 'REDIS_URL=redis://[^/]*' "$dir/env" 2>/dev/null | sed 's/.*://'))")
		fi
	fi
	stop_sentinel "$dir"
	[ ${#STOPPED[@]} -eq 0 ] || stopped+=("the Sentinels and the replica (pids ${STOPPED[*]})")
	stop_pgha "$dir"
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
		local elsewhere=()
		[ "$pg" = "$dir/pg" ] || elsewhere+=("$pg")
		pgha=$(sed -n 's/^PGHA_DIR=//p' "$dir/pgha/env" 2>/dev/null || true)
		[ -z "$pgha" ] || [ "$pgha" = "$dir/pgha" ] || elsewhere+=("$pgha")
		if [ ${#elsewhere[@]} -eq 0 ]; then
			log "the data stays in $dir ('make clean' deletes it, for a fresh start)"
		else
			log "the data stays in $dir and ${elsewhere[*]} ('make clean' deletes them, for a fresh start)"
		fi
	fi
}

# cmd_purge DIR stops DIR's servers and deletes their data: the
# PostgreSQL cluster wherever it lives (PG_DIR, a directory under the
# postgres user's home for a DIR that user cannot enter), the Patroni
# nodes' wherever it lives (PGHA_DIR, likewise) and etcd's, Redis's,
# Sentinels' and the Redis Cluster's directories, and DIR/env and
# DIR/pgha/env (the next start picks new ports and secrets). Logs and
# other files stay.
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
	purge_pgha "$dir"
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
	local home pg origin bin data
	home=$(getent passwd postgres 2>/dev/null | cut -d: -f6)
	[ -n "$home" ] && [ -d "$home/seatlock" ] || return 0
	bin=$(pg_bindir) || return 0
	for pg in "$home"/seatlock/*/; do
		pg=${pg%/}
		[ -f "$pg/origin" ] || continue
		origin=$(cat "$pg/origin")
		[ -n "$origin" ] && [ ! -e "$origin" ] || continue
		# DIR's cluster (data), or its Patroni nodes' (pg1, pg2).
		for data in "$pg/data" "$pg"/pg[0-9]*; do
			if [ -f "$data/PG_VERSION" ] && as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
				log "kept $pg: its origin $origin is gone but it still runs"
				continue 2
			fi
		done
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
patroni) shift; cmd_patroni "$(absolute "$1")" ;;
stop) shift; cmd_stop "$(absolute "$1")" say ;;
purge) shift; [ -d "$1" ] && cmd_purge "$(cd "$1" && pwd)" ;;
remove) shift; [ ! -d "$1" ] || cmd_remove "$(cd "$1" && pwd)" ;;
orphans) cmd_orphans ;;
*) sed -n '2,/^set -euo pipefail/{/^set -euo/!p}' "$0" >&2; exit 2 ;;
esac
