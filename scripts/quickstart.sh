#!/usr/bin/env bash
# One command from a fresh machine to a usable disk: installs the packages the binaries need,
# builds the three binaries and installs them in /usr/local/bin (scripts/setup.sh --binaries;
# ARCHIL_PREFIX moves them), starts `archil server` with embedded defaults in the background,
# creates disk `demo`, keeps a token for it in /etc/archil/demo.token (0600), and mounts it at
# /mnt/demo (ARCHIL_MNT). It prints how long each step took.
#
#   scripts/quickstart.sh          start (idempotent: reuses a running server, the disk, the mount)
#   scripts/quickstart.sh --stop   unmount /mnt/demo (forced if it does not let go within 15 s)
#                                  and stop the server (SIGTERM; SIGKILL after 30 s)
#
# ARCHIL_DATA_DIR (default /var/lib/archil) holds the catalog, the admin key and disk data.
# The server and the mount outlive this script on purpose, so no ARCHIL_OWNER_PID is set here (it
# would end them with it); a start that fails or is interrupted stops the server it started.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
data=${ARCHIL_DATA_DIR:-/var/lib/archil}
bin="${ARCHIL_PREFIX:-/usr/local}/bin"
pidfile="$data/server.pid"
mnt=${ARCHIL_MNT:-/mnt/demo}

mounted() { grep -qs " $mnt fuse.archil " /proc/self/mounts; }

# Stops archil server PID: SIGTERM, then SIGKILL if it has not ended 30 s later (a server whose
# shutdown hangs must not hang this script too); says which.
stop_server() {
  local pid=$1 end=$((SECONDS + 30))
  kill "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "archil server (pid $pid) stopped"
    return 0
  fi
  kill -9 "$pid" 2>/dev/null || true
  end=$((SECONDS + 5))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "quickstart: archil server (pid $pid) still runs 5 s after SIGKILL" >&2
    return 1
  fi
  echo "archil server (pid $pid) did not stop within 30 s of SIGTERM: killed (SIGKILL)"
}

if [ "${1:-}" = "--stop" ]; then
  if mounted; then
    # Each bounded: a mount whose server is gone must not hang --stop.
    if [ -x "$bin/archil" ] && timeout -k 1 15 "$bin/archil" unmount "$mnt"; then
      echo "unmounted $mnt"
    elif [ -x "$bin/archil" ] && timeout -k 1 15 "$bin/archil" unmount -f "$mnt"; then
      echo "unmounted $mnt by force (archil unmount -f: files open on it now fail)"
    elif timeout -k 1 15 umount -l "$mnt"; then
      echo "detached $mnt (umount -l)"
    else
      echo "quickstart: could not unmount $mnt" >&2
    fi
  fi
  pid=$(cat "$pidfile" 2>/dev/null || true)
  # Only an archil server (`archil server` execs archil-server): after a reboot the pid in a stale
  # pidfile may be another process's.
  exe=$(readlink "/proc/${pid:-0}/exe" 2>/dev/null || true)
  if [ -n "$pid" ] && [[ $exe == */archil-server* ]]; then
    stop_server "$pid"
    rm -f "$pidfile"
  else
    rm -f "$pidfile"
    echo "no archil server running from $data"
  fi
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "quickstart: run as root: the server advertises itself under /run/archil" >&2
  exit 2
fi

t0=$SECONDS
scripts/setup.sh --binaries
echo "quickstart: packages, build and install took $((SECONDS - t0)) s"

# What this run started, stopped again if the run fails or is interrupted before its end.
started_pid='' mounted_here=0
on_exit() {
  local rc=$?
  [ "$rc" -ne 0 ] || return 0
  if [ "$mounted_here" = 1 ] && mounted; then
    timeout -k 1 5 "$bin/archil" unmount -f "$mnt" >/dev/null 2>&1 || timeout -k 1 5 umount -l "$mnt" || true
    echo "quickstart: unmounted $mnt again" >&2
  fi
  if [ -n "$started_pid" ]; then
    echo "quickstart: stopping the server this run started" >&2
    stop_server "$started_pid" >&2 || true
    rm -f "$pidfile"
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$data"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "archil server already running (pid $(cat "$pidfile"))"
else
  nohup "$bin/archil" server --data-dir "$data" >>"$data/server.log" 2>&1 &
  started_pid=$!
  echo "$started_pid" >"$pidfile"
  for _ in $(seq 100); do
    [ -f /run/archil/local.json ] && break
    kill -0 "$started_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ ! -f /run/archil/local.json ] || ! kill -0 "$started_pid" 2>/dev/null; then
    echo "quickstart: the server did not start (waited up to 5 s); see $data/server.log" >&2
    tail -5 "$data/server.log" >&2
    exit 1
  fi
  echo "archil server started (pid $started_pid), log in $data/server.log"
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
mkdir -p "$mnt"
if mounted; then
  echo "disk demo already mounted at $mnt"
else
  mounted_here=1
  "$bin/archil" mount demo "$mnt"
fi

cat <<TXT

Disk demo is mounted at $mnt ($((SECONDS - t0)) s from the start): every local user can use it by
their own permissions.
  cd $mnt && echo hello > hello.txt
  archil status
  archil unmount $mnt          # and: archil mount demo $mnt
In /etc/fstab:  demo $mnt archil _netdev,token_file=/etc/archil/demo.token 0 0
The control plane runs at $(jq -r .api /run/archil/local.json) (region local).
  archil disks list
  curl -H "Authorization: Bearer \$(cat $data/admin-api-key)" $(jq -r .api /run/archil/local.json)/api/disks
Stop everything with: scripts/quickstart.sh --stop
TXT
