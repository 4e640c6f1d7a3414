#!/usr/bin/env bash
# Runs test suites again and again on a machine made slow on purpose, to find the tests that
# depend on timing (a guessed sleep, a bound too tight for a sanitizer on a busy machine): CI runs
# on fresh machines with cold caches, where those fail first (docs/ci.md, "Tests wait for events").
#
#   scripts/flake_hunt.sh [--preset P] [--rounds N] [--hogs H] [--regex R]
#
# Defaults: the asan preset (built already: `cmake --build --preset asan`), 3 rounds, one busy
# loop per core but one beside `ctest -j2`, and the end-to-end suites. Round i runs with
# ARCHIL_TEST_SEED=1000+i, so a randomized test's failure replays. Prints one line per round and
# each failed test; the logs stay in $TMPDIR/flake-hunt-<round>.log. Exits 1 if any test failed.
set -uo pipefail
cd "$(dirname "$0")/.."
preset=asan
rounds=3
hogs=1
regex='^(CliTest|MountTest|LineageTest|UnwedgeTest|TierTest|ControlApiTest|DiskServer|MountDiffTest|NetnsTest|HttpServerTest|MountControlTest)'
while (($#)); do
  case $1 in
    --preset) preset=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    --regex) regex=$2; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "flake_hunt.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
export ARCHIL_TEST_ROOT="${ARCHIL_TEST_ROOT:-/tmp/archil-tests}"
logs="${TMPDIR:-/tmp}"
pids=()
for ((h = 0; h < hogs; h++)); do
  (while :; do :; done) &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2> /dev/null' EXIT
scripts/sweep.sh > /dev/null
failed=0
for ((i = 1; i <= rounds; i++)); do
  start=$SECONDS
  log="$logs/flake-hunt-$i.log"
  ARCHIL_TEST_SEED=$((1000 + i)) ctest --test-dir "build/$preset" -j2 --timeout 300 -R "$regex" \
    --output-on-failure > "$log" 2>&1
  echo "round $i (seed $((1000 + i))): $(grep -E 'tests passed' "$log") in $((SECONDS - start)) s"
  # ctest's list of tests that did not pass, less the ones skipped on purpose.
  if grep -E '^\s+[0-9]+ - ' "$log" | grep -v '(Skipped)'; then failed=1; fi
  if ! scripts/sweep.sh --check > /dev/null; then
    echo "round $i left mounts or processes behind:"
    scripts/sweep.sh
    failed=1
  fi
done
exit $failed
