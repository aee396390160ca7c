# shellcheck shell=bash
# Sourced by scripts/rolling.sh and scripts/pgfailovers.sh: `make cluster`
# on servers of the caller's own. The caller defines log and here (the
# scripts' folder).
#
# own_cluster DIR starts `devenv cluster up DIR` on a free port, in a session
# of its own (its instances and HAProxy go with it), sets addr (HAProxy's
# address) and up (the script's pid), and on the caller's exit stops it and
# deletes its servers' data (the PostgreSQL clusters wherever they live);
# the logs stay in DIR. It returns once HAProxy answers /readyz (60 s at
# most), with DIR/env's variables exported.
own_cluster() {
	own_dir=$1
	addr=127.0.0.1:$(go run ./cmd/devenv port)
	mkdir -p "$own_dir"
	HTTP_ADDR=$addr setsid go run ./cmd/devenv cluster up "$own_dir" >"$own_dir/cluster-up.log" 2>&1 &
	up=$!
	trap own_cluster_down EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	for _ in $(seq 1 300); do
		curl -fsS -o /dev/null --max-time 1 "http://$addr/readyz" 2>/dev/null && break
		kill -0 "$up" 2>/dev/null || { cat "$own_dir/cluster-up.log" >&2; log "make cluster ended"; exit 1; }
		sleep 0.2
	done
	curl -fsS -o /dev/null --max-time 1 "http://$addr/readyz" 2>/dev/null ||
		{ cat "$own_dir/cluster-up.log" >&2; log "the cluster is not ready"; exit 1; }
	set -a
	# shellcheck disable=SC1091
	. "$own_dir/env"
	set +a
}

own_cluster_down() {
	kill -TERM -- "-$up" 2>/dev/null || true
	wait "$up" 2>/dev/null || true
	go run ./cmd/devenv purge "$own_dir" >/dev/null 2>&1 || true
}
