#!/usr/bin/env bash
# A test suite cut short leaves nothing that blocks the machine, and the next run starts clean
# (docs/adr/0019-a-mount-never-wedges-its-machine.md).
#
#   cut_suite_test.sh SWEEP BIN...
#
# CUTS times (ARCHIL_CUTS, default 3), one suite binary BIN in turn is killed with SIGKILL, as
# ctest's timeout or a shell's ^C-then-kill does, at a random moment 2-12 s into its run (the seed
# is printed; ARCHIL_TEST_SEED replays it). Then:
#   1. within 3 s every process the suite started has ended (servers and mount daemons watch
#      their owner), except one the suite had SIGSTOPped itself (a stopped process watches
#      nothing), and every FUSE mount left is one such stopped daemon's, or one whose daemon the
#      suite had killed itself (its connection aborted: it answers ENOTCONN at once);
#   2. a stat of the test root's parent answers within 5 s (what `df`, `ls -l /tmp` need);
#   3. SWEEP (scripts/sweep.sh) clears the rest, and SWEEP --check then finds nothing.
# Finally the first BIN runs one of its tests to the end under the same root, and must pass.
set -uo pipefail
sweep=$1
shift
bins=("$@")
cuts=${ARCHIL_CUTS:-3}
seed=${ARCHIL_TEST_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
echo "seed $seed (replay: ARCHIL_TEST_SEED=$seed)"
RANDOM=$seed
export ARCHIL_TEST_ROOT="${ARCHIL_TEST_ROOT:-/tmp/archil-tests}/cut-$$"
mkdir -p "$ARCHIL_TEST_ROOT"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# "pid state" of each process whose command line names the root.
processes() {
  local p cmd st
  for p in /proc/[0-9]*; do
    cmd=$( { tr '\0' ' ' < "$p/cmdline"; } 2> /dev/null) || continue
    [[ $cmd == *"$ARCHIL_TEST_ROOT/"* ]] || continue
    st=$( { cat "$p/stat"; } 2> /dev/null) || continue
    st=${st##*) }
    echo "${p#/proc/} ${st:0:1}"
  done
}
fuse_mounts() {
  awk -v r="$ARCHIL_TEST_ROOT/" 'index($5, r) == 1 { d = 7; while ($d != "-") d++; if ($(d + 1) ~ /^fuse/) print $5 }' \
    /proc/self/mountinfo
}

for ((i = 0; i < cuts; i++)); do
  bin=${bins[$((i % ${#bins[@]}))]}
  at=$((2 + RANDOM % 11))
  echo "cut $((i + 1)): $(basename "$bin") killed after $at s"
  timeout -s KILL "$at" "$bin" > /dev/null 2>&1
  # 1. Everything ends with its owner, within 3 s.
  end=$((SECONDS + 3))
  while ((SECONDS < end)) && processes | grep -qv ' T$'; do sleep 0.1; done
  running=$(processes | grep -v ' T$')
  stopped=$(processes | grep -c ' T$')
  [[ -z $running ]] || fail "cut $((i + 1)): processes outlived the suite by 3 s: $running"
  # A mount whose daemon the suite had killed itself (a test of exactly that, cut before it mounted
  # again) answers ENOTCONN at once: the kernel aborted its connection with the daemon's last
  # descriptor, so it blocks nothing, and the sweep removes it. Any other mount left must be a
  # stopped daemon's.
  mounts=0 dead=0
  while read -r m; do
    if err=$(timeout -k 1 2 stat "$m" 2>&1 > /dev/null); then
      mounts=$((mounts + 1))
    elif [[ $err == *"not connected"* ]]; then
      dead=$((dead + 1))
    else
      mounts=$((mounts + 1))
    fi
  done < <(fuse_mounts)
  ((dead == 0)) || echo "  $dead FUSE mounts of dead daemons left (ENOTCONN, blocking nothing)"
  ((mounts <= stopped)) || fail "cut $((i + 1)): $mounts FUSE mounts left, $stopped stopped daemons"
  # 2. The machine's walkers do not block.
  timeout -k 1 5 stat "$(dirname "$ARCHIL_TEST_ROOT")" > /dev/null ||
    fail "cut $((i + 1)): stat of $(dirname "$ARCHIL_TEST_ROOT") blocked"
  # 3. The sweep clears the rest.
  timeout -k 1 30 "$sweep" | sed 's/^/  /'
  timeout -k 1 10 "$sweep" --check || fail "cut $((i + 1)): the sweep left something"
done

# The next run starts clean.
timeout -k 5 120 "${bins[0]}" --gtest_filter="${ARCHIL_CUT_NEXT_FILTER:-*UnmountRefuses*}" > /tmp/cut-next-$$.log 2>&1 ||
  { tail -20 /tmp/cut-next-$$.log; fail "the run after the cuts failed"; }
rm -f /tmp/cut-next-$$.log
timeout -k 1 30 "$sweep" > /dev/null
rmdir "$ARCHIL_TEST_ROOT" 2> /dev/null
echo "$cuts cuts, $failures failures"
((failures == 0))
