#!/usr/bin/env bash
# One command from a fresh machine to a running system: installs and builds (scripts/setup.sh),
# starts `archil server` with embedded defaults in the background, and creates a disk.
#
#   scripts/quickstart.sh          start (idempotent: reuses a running server and the disk)
#   scripts/quickstart.sh --stop   stop the server
#
# ARCHIL_DATA_DIR (default /var/lib/archil) holds the catalog, the admin key and disk data.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
data=${ARCHIL_DATA_DIR:-/var/lib/archil}
bin="$root/build/release/bin"
pidfile="$data/server.pid"

if [ "${1:-}" = "--stop" ]; then
  if [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null; then
    while kill -0 "$(cat "$pidfile")" 2>/dev/null; do sleep 0.1; done
    rm -f "$pidfile"
    echo "archil server stopped"
  else
    echo "no archil server running from $data"
  fi
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "quickstart: run as root: the server advertises itself under /run/archil" >&2
  exit 2
fi

scripts/setup.sh --preset release

mkdir -p "$data"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "archil server already running (pid $(cat "$pidfile"))"
else
  nohup "$bin/archil" server --data-dir "$data" >>"$data/server.log" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 100); do
    [ -f /run/archil/local.json ] && break
    sleep 0.05
  done
  if [ ! -f /run/archil/local.json ]; then
    echo "quickstart: the server did not start; see $data/server.log" >&2
    tail -5 "$data/server.log" >&2
    exit 1
  fi
  echo "archil server started (pid $(cat "$pidfile")), log in $data/server.log"
fi

"$bin/archil" disks create demo

cat <<TXT

The control plane runs at $(jq -r .api /run/archil/local.json) (region local).
Try:
  $bin/archil disks list
  $bin/archil keys create my-laptop
  curl -H "Authorization: Bearer \$(cat $data/admin-api-key)" $(jq -r .api /run/archil/local.json)/api/disks
Mounting (archil mount) arrives with the data path; see docs/architecture.md.
Stop the server with: scripts/quickstart.sh --stop
TXT
