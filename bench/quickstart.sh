#!/usr/bin/env bash
# Times the README's first command, scripts/quickstart.sh, on a fresh Debian 12 machine: a
# minimal root made by debootstrap (not timed), a clean clone of this checkout's HEAD in it, no
# ccache, no packages beyond the base system. Inside a private mount namespace (nothing it mounts
# is seen outside, and everything goes when it ends) it runs, as root:
#   quickstart (apt packages, build of the three binaries, install, server, disk, mount),
#   a write and a read-back through the mount, then quickstart --stop.
#
#   bench/quickstart.sh [ROOT]        ROOT (default /var/tmp/archil-fresh) is made, used, removed
#   ARCHIL_KEEP_ROOT=1                keep ROOT afterwards (a second run then skips debootstrap)
#
# Prints "quickstart on a fresh machine: N s" and the quickstart's own step times. Needs the
# Debian archive (the one this machine's apt uses) and root.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
root=${1:-/var/tmp/archil-fresh}
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

[ "$(id -u)" -eq 0 ] || { echo "bench/quickstart.sh: run as root" >&2; exit 2; }
command -v debootstrap >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null

cleanup() {
  # Whatever still runs inside the root (a server, a mount daemon) ends with it.
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null || true
  done
  if [ "${ARCHIL_KEEP_ROOT:-0}" != 1 ]; then
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT

if [ ! -x "$root/usr/bin/apt-get" ]; then
  echo "bench: debootstrap bookworm into $root (not timed)"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
rm -rf --one-file-system "$root/src/archil"
git clone -q "$src" "$root/src/archil"

# The quickstart needs /dev/fuse, /proc and a /run of its own; the mount it makes lives in this
# namespace only.
unshare --mount --propagation private -- bash -euo pipefail -c '
  root=$1
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount -t sysfs sys "$root/sys"
  mount -t tmpfs tmpfs "$root/run"
  mkdir -p "$root/mnt"
  exec chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root TERM=dumb bash -euo pipefail -c "
      cd /src/archil
      SECONDS=0
      timeout 1800 scripts/quickstart.sh
      took=\$SECONDS
      echo hello > /mnt/demo/hello.txt
      [ \"\$(timeout 10 cat /mnt/demo/hello.txt)\" = hello ]
      echo \"quickstart on a fresh machine: \$took s\"
      timeout 120 scripts/quickstart.sh --stop
    "
' bash "$root"
