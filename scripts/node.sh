#!/usr/bin/env bash
# node.sh CMD...: runs CMD (an `npx` of a pinned package) once Node.js and
# npm are on the machine, installing them from the OS packages if missing.
set -euo pipefail
if ! command -v npx >/dev/null; then
	echo "node: installing nodejs and npm from the OS packages" >&2
	as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
exec "$@"
