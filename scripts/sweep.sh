#!/usr/bin/env bash
# Clears what cut-short test runs left under the test root (ARCHIL_TEST_ROOT, default
# /tmp/archil-tests), touching no mount by a path walk: FUSE mounts there are found in the mount
# table, their connections aborted (fusectl) and detached; tmpfs mounts detached; processes whose
# command line names the root (servers, mount daemons) killed; network namespaces named
# archil-<s|c>-<pid> whose pid is gone deleted; then the root removed (never across a mount).
#
#   scripts/sweep.sh           clear, and say what was cleared
#   scripts/sweep.sh --check   only report: exit 1 and name each mount and process left
set -uo pipefail
root="${ARCHIL_TEST_ROOT:-/tmp/archil-tests}"
check=0
[ "${1:-}" = "--check" ] && check=1

# The mount table's mount points under the root (mountinfo field 5, \040-escaped), with their
# type and the connection number (the minor of field 3), innermost last.
mounts() {
  awk -v root="$root/" '{
    dash = 7; while ($dash != "-") dash++;
    mp = $5; gsub(/\\040/, " ", mp);
    if (index(mp, root) == 1) { split($3, dev, ":"); print $(dash + 1) "\t" dev[2] "\t" mp }
  }' /proc/self/mountinfo
}

# Pids of processes (not this script's) whose command line names the root.
processes() {
  local p cmd
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
    cmd=$( { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null) || continue
    case "$cmd" in
      *archil*"$root/"*) echo "$p $cmd" ;;
    esac
  done
}

left=0
while IFS=$'\t' read -r type minor mp; do
  [ -n "$mp" ] || continue
  left=$((left + 1))
  echo "sweep: mount left: $mp ($type)"
  [ "$check" = 1 ] && continue
  if [[ "$type" == fuse* ]]; then
    awk '$3 == "fusectl"' /proc/self/mounts | grep -q . ||
      mount -t fusectl fusectl /sys/fs/fuse/connections 2>/dev/null || true
    echo 1 > "/sys/fs/fuse/connections/$minor/abort" 2>/dev/null || true
  fi
  umount -l "$mp" 2>/dev/null || echo "sweep: could not detach $mp"
done < <(mounts | sort -r -t$'\t' -k3)

while read -r pid cmd; do
  [ -n "$pid" ] || continue
  left=$((left + 1))
  echo "sweep: process left: $pid $cmd"
  [ "$check" = 1 ] || kill -KILL "$pid" 2>/dev/null
done < <(processes)

if command -v ip > /dev/null && [ "$(id -u)" = 0 ]; then
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    case "$ns" in
      archil-[sc]-[0-9]*)
        owner=${ns#archil-?-}
        if ! kill -0 "$owner" 2>/dev/null; then
          left=$((left + 1))
          echo "sweep: network namespace left: $ns"
          [ "$check" = 1 ] || ip netns del "$ns" 2>/dev/null
        fi
        ;;
    esac
  done
fi

if [ "$check" = 1 ]; then
  [ "$left" = 0 ]
  exit
fi
# Nothing is mounted under the root now: remove it without crossing into any file system.
[ -d "$root" ] && rm -rf --one-file-system "$root" 2>/dev/null
mkdir -p "$root"
exit 0
