#!/usr/bin/env bash
# Which address `make run` or `make cluster` serves on, so that `make
# smoke`, `make hammer`, `make token` and DIR/tokens.env follow it.
#
#   served.sh claim DIR ADDR WHO PID  PID (make run's or make cluster's
#                                     script, WHO "make run" or "make
#                                     cluster") serves on ADDR: writes
#                                     DIR/served.env and DIR/tokens.env (the
#                                     URL and fresh tokens), keeping what
#                                     they said before
#   served.sh release DIR PID         PID stops serving: if DIR/served.env
#                                     is still PID's, the one before it comes
#                                     back when its owner still serves, else
#                                     served.env and tokens.env are removed
#   served.sh addr DIR                HTTP_ADDR when it is set, else the
#                                     address a live make run or make
#                                     cluster serves on, else 127.0.0.1:8080
#   served.sh who DIR                 "make run on ADDR" (or make cluster),
#                                     or nothing when nothing serves
#
# DIR/served.env holds HTTP_ADDR, SERVED_BY and SERVED_PID as shell
# assignments; a served.env whose SERVED_PID no longer runs (the script was
# killed) counts as none. What a claim replaced is kept as
# DIR/served.env.PID and DIR/tokens.env.PID until PID releases.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# value FILE NAME prints NAME's value in FILE (empty when either is missing).
value() { sed -n "s/^$2=//p" "$1" 2>/dev/null | tail -n 1; }

# live FILE: FILE is a served.env whose owner still runs.
live() {
	local pid
	pid=$(value "$1" SERVED_PID)
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

claim() {
	local dir=$1 addr=$2 who=$3 pid=$4
	if [ -f "$dir/served.env" ] && live "$dir/served.env"; then
		cp "$dir/served.env" "$dir/served.env.$pid"
		[ ! -f "$dir/tokens.env" ] || cp -p "$dir/tokens.env" "$dir/tokens.env.$pid"
	fi
	bash "$here/tokens.sh" "$dir" "http://$addr"
	printf 'HTTP_ADDR=%s\nSERVED_BY="%s"\nSERVED_PID=%s\n' "$addr" "$who" "$pid" >"$dir/served.env.tmp"
	mv "$dir/served.env.tmp" "$dir/served.env"
}

release() {
	local dir=$1 pid=$2
	if [ "$(value "$dir/served.env" SERVED_PID)" = "$pid" ]; then
		if [ -f "$dir/served.env.$pid" ] && live "$dir/served.env.$pid" && [ -f "$dir/tokens.env.$pid" ]; then
			mv "$dir/tokens.env.$pid" "$dir/tokens.env"
			mv "$dir/served.env.$pid" "$dir/served.env"
		else
			rm -f "$dir/served.env" "$dir/tokens.env"
		fi
	fi
	rm -f "$dir/served.env.$pid" "$dir/tokens.env.$pid"
}

addr() {
	local dir=$1
	if [ -n "${HTTP_ADDR:-}" ]; then
		echo "$HTTP_ADDR"
	elif live "$dir/served.env"; then
		value "$dir/served.env" HTTP_ADDR
	else
		echo 127.0.0.1:8080
	fi
}

who() {
	local dir=$1
	live "$dir/served.env" || return 0
	echo "$(value "$dir/served.env" SERVED_BY | tr -d '"') on $(value "$dir/served.env" HTTP_ADDR)"
}

case "${1:-}" in
claim) claim "$2" "$3" "$4" "$5" ;;
release) release "$2" "$3" ;;
addr) addr "$2" ;;
who) who "$2" ;;
*) sed -n '2,25p' "$0" >&2; exit 2 ;;
esac
