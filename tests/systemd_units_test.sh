#!/usr/bin/env bash
# The systemd unit and an fstab line for a disk pass systemd's own checks, offline (no systemd
# needs to run): `systemd-analyze verify` of archil-server.service as built (its ExecStart names
# the build's archil-server), and of the units systemd's fstab generator makes from
#   demo /mnt/demo archil _netdev,token_file=...,x-systemd.automount,x-systemd.requires=archil-server.service
# Any warning fails, as an unknown key or a bad value is only a warning to systemd.
#
#   tests/systemd_units_test.sh BUILT_UNIT MOUNT_HELPER
set -uo pipefail
unit="$1"
helper="$2"
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
generator=/lib/systemd/system-generators/systemd-fstab-generator
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

check() {  # check NAME FILE...: systemd-analyze verify, with any output a failure
  local name="$1" out rc
  shift
  out=$(cd "$work" && SYSTEMD_LOG_LEVEL=warning timeout 60 systemd-analyze verify "$@" 2>&1)
  rc=$?
  # Units this one refers to that only exist on a booted system are not ours to check.
  out=$(grep -vE "(network-online|remote-fs|local-fs|multi-user)\.target|Failed to prepare filename|Cannot add dependency job" <<<"$out" || true)
  if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
    echo "FAIL: $name (exit $rc):"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $name"
  fi
}

cp "$unit" "$work/archil-server.service"
grep -q "^ExecStart=$(dirname "$helper")/archil-server " "$work/archil-server.service" ||
  { echo "FAIL: ExecStart does not name the built archil-server"; failures=$((failures + 1)); }
for key in Type=notify WatchdogSec= ProtectSystem=strict ReadWritePaths= NoNewPrivileges=yes; do
  grep -q "^$key" "$work/archil-server.service" ||
    { echo "FAIL: archil-server.service has no $key"; failures=$((failures + 1)); }
done
check archil-server.service "$work/archil-server.service"

if [ -x "$generator" ]; then
  echo "demo $work/mnt/demo archil _netdev,token_file=/etc/archil/demo.token,x-systemd.automount,x-systemd.requires=archil-server.service 0 0" >"$work/fstab"
  mkdir -p "$work/gen" "$work/early" "$work/late"
  SYSTEMD_FSTAB="$work/fstab" SYSTEMD_PROC_CMDLINE="" "$generator" "$work/gen" "$work/early" "$work/late"
  mount_unit=$(cd "$work/gen" && ls ./*.mount 2>/dev/null | head -1)
  automount_unit=$(cd "$work/gen" && ls ./*.automount 2>/dev/null | head -1)
  if [ -z "$mount_unit" ] || [ -z "$automount_unit" ]; then
    echo "FAIL: the fstab generator made no .mount and .automount from the line"
    failures=$((failures + 1))
  else
    grep -q "^Type=archil" "$work/gen/$mount_unit" || { echo "FAIL: Type=archil missing"; failures=$((failures + 1)); }
    # _netdev: a network file system, mounted after the network and before remote-fs.target.
    [ -e "$work/gen/remote-fs.target.requires/${automount_unit#./}" ] ||
      { echo "FAIL: the automount is not part of remote-fs.target"; failures=$((failures + 1)); }
    grep -q "archil-server.service" "$work/gen/$mount_unit" ||
      { echo "FAIL: the mount does not require archil-server.service"; failures=$((failures + 1)); }
    cp "$work/gen/$mount_unit" "$work/gen/$automount_unit" "$work/"
    check "fstab line's units" "$work/${mount_unit#./}" "$work/${automount_unit#./}" "$work/archil-server.service"
  fi
fi
# mount(8) runs /sbin/mount.archil for Type=archil: the helper takes the line's options.
[ -x "$helper" ] || { echo "FAIL: no mount helper at $helper"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ] || exit 1
echo "systemd units: ok"
