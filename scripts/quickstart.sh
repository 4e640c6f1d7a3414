#!/usr/bin/env bash
# One command from a fresh machine to a usable disk: installs and builds (scripts/setup.sh),
# starts `archil server` with embedded defaults in the background, creates disk `demo`, keeps a
# token for it in /etc/archil/demo.token (0600), and mounts it at /mnt/demo (ARCHIL_MNT).
#
#   scripts/quickstart.sh          start (idempotent: reuses a running server, the disk, the mount)
#   scripts/quickstart.sh --stop   unmount /mnt/demo and stop the server
#
# ARCHIL_DATA_DIR (default /var/lib/archil) holds the catalog, the admin key and disk data.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
data=${ARCHIL_DATA_DIR:-/var/lib/archil}
bin="$root/build/release/bin"
pidfile="$data/server.pid"
mnt=${ARCHIL_MNT:-/mnt/demo}

if [ "${1:-}" = "--stop" ]; then
  if [ -x "$bin/archil" ] && grep -qs " $mnt fuse.archil " /proc/self/mounts; then
    "$bin/archil" unmount "$mnt" || "$bin/archil" unmount -f "$mnt" || true
  fi
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

"$bin/archil" -q disks create demo

# A disk token for the mount, kept where `archil mount` looks for it (/etc/archil/DISK.token).
mkdir -p /etc/archil
# A token file left by another server (another data directory) is replaced, not trusted.
token_id=$(sed -n 's/^adt_\([0-9a-f]*\)_.*/\1/p' /etc/archil/demo.token 2>/dev/null || true)
if [ -z "$token_id" ] || ! "$bin/archil" --json users list demo |
    jq -e --arg id "$token_id" 'any(.[]; .identifier == $id)' >/dev/null; then
  (umask 077 && "$bin/archil" --json users add demo --nickname quickstart | jq -r .token \
    > /etc/archil/demo.token.new && mv /etc/archil/demo.token.new /etc/archil/demo.token)
fi
# mount -t archil and fstab lines run /sbin/mount.archil.
ln -sf "$bin/archil-mount" /sbin/mount.archil

mkdir -p "$mnt"
if grep -qs " $mnt fuse.archil " /proc/self/mounts; then
  echo "disk demo already mounted at $mnt"
else
  "$bin/archil" mount demo "$mnt"
fi

cat <<TXT

Disk demo is mounted at $mnt: every local user can use it by their own permissions.
  cd $mnt && echo hello > hello.txt
  $bin/archil status
  $bin/archil unmount $mnt          # and: $bin/archil mount demo $mnt
In /etc/fstab:  demo $mnt archil _netdev,token_file=/etc/archil/demo.token 0 0
The control plane runs at $(jq -r .api /run/archil/local.json) (region local).
  $bin/archil disks list
  curl -H "Authorization: Bearer \$(cat $data/admin-api-key)" $(jq -r .api /run/archil/local.json)/api/disks
Stop everything with: scripts/quickstart.sh --stop
TXT
