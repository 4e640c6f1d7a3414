#!/usr/bin/env bash
# Sets up (scripts/setup.sh), builds and runs everything CI runs, stage by stage, and prints each
# stage's time. The last line is the summary "N passed, N failed": the tests of every ctest stage,
# plus one per other stage (lint, fuzz). Exits non-zero if anything failed.
#
#   scripts/test.sh                           every stage in STAGES below (what CI runs)
#   scripts/test.sh --preset P [ctest args]   one preset: build it and run its ctest
#   scripts/test.sh --stage NAME              one stage of STAGES (e.g. lint, fuzz)
#
# Environment: ARCHIL_FUZZ_SECONDS (per fuzz target, default 10), ARCHIL_LINT=1 (add the lint
# stage), ARCHIL_TEST_SEED (randomized
# tests), ARCHIL_CTEST_TIMEOUT (seconds per test without its own TIMEOUT, default 300),
# ARCHIL_TEST_ROOT (where tests keep their directories and mounts, default /tmp/archil-tests).
#
# Nothing a run leaves stays: it starts by sweeping what cut-short runs left under the test root
# (scripts/sweep.sh: mounts aborted and detached, processes killed, namespaces deleted), and each
# stage ends by checking that no mount or process of its tests remains; one left is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout and ignores the build directory's own path, so
# every clone (CI's included) shares one cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
export ARCHIL_TEST_ROOT="${ARCHIL_TEST_ROOT:-/tmp/archil-tests}"

# One line per stage: "name|command". `ctest_stage P [ctest args]` builds preset P and runs its
# ctest (the clang-tsa build is the compile-time thread-safety analysis: of its tests only the
# one that proves the analysis is on runs); any other command counts as one test that passes
# when it exits 0.
STAGES=(
  "release|ctest_stage release"
  "asan|ctest_stage asan"
  "tsan|ctest_stage tsan"
  "clang-tsa|tsa_stage"
  "fuzz|scripts/fuzz.sh ${ARCHIL_FUZZ_SECONDS:-10}"
)
# clang-tidy over every file takes 15-20 minutes on 2 cores, a third of CI's budget: it runs by
# hand (scripts/test.sh --stage lint, or scripts/lint.sh FILE-REGEX for what a change touches), and
# in CI only with ARCHIL_LINT=1 (docs/ci.md).
if [ "${ARCHIL_LINT:-0}" = 1 ]; then STAGES+=("lint|scripts/lint.sh -j 2"); fi
OPTIONAL_STAGES=("lint|scripts/lint.sh -j 2")

passed=0
failed=0
timings=()
failures=()  # "preset: test" for every failed ctest test, repeated before the summary
details=()   # what the failed tests' assertions printed (bounded), repeated before the summary
ctest_args=()

# Builds preset $1 and runs its tests; adds their counts (or one failure if it cannot build).
ctest_stage() {
  local preset="$1" log summary n_failed n_total rc
  shift
  local stage_args=("$@")
  # BUILD_TARGETS (space-separated) builds only those: the clang-tsa stage's analysis needs the
  # libraries and the binaries, not the tests' and benchmarks' code.
  local targets=()
  read -r -a targets <<< "${BUILD_TARGETS:-}"
  if ! { cmake --preset "$preset" >/dev/null &&
         cmake --build --preset "$preset" ${targets[@]+--target "${targets[@]}"}; }; then
    echo "test.sh: $preset: build FAILED"
    failed=$((failed + 1))
    return 1
  fi
  log=$(mktemp)
  ctest --preset "$preset" -j2 --timeout "${ARCHIL_CTEST_TIMEOUT:-300}" \
    ${stage_args[@]+"${stage_args[@]}"} ${ctest_args[@]+"${ctest_args[@]}"} 2>&1 |
    tee "$log"
  rc=${PIPESTATUS[0]}
  summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  # ctest lists the failed tests after "The following tests FAILED:" as "  N - name (Failed)".
  local line
  while read -r line; do failures+=("$preset: $line"); done < <(
    sed -n '/^The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ')
  # The assertions that failed, so that a failure seen only in CI's last lines can be read there:
  # gtest's "file:line: Failure" and the lines after it, at most 60 lines per stage.
  while IFS= read -r line; do details+=("$preset| $line"); done < <(
    grep -E -A7 ': Failure$' "$log" | cut -c1-300 | head -60)
  rm -f "$log"
  if [ -z "$summary" ]; then
    echo "test.sh: $preset: ctest ran no tests"
    failed=$((failed + 1))
    return 1
  fi
  n_failed=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
  n_total=$(echo "$summary" | sed -E 's/.* failed out of ([0-9]+).*/\1/')
  passed=$((passed + n_total - n_failed))
  failed=$((failed + n_failed))
  return "$rc"
}

# The clang thread-safety build: the analysis runs as the libraries and binaries compile (the
# tests' and benchmarks' code is left out, for CI's time), then its one test, which checks that
# the analysis rejects a misuse.
tsa_stage() {
  BUILD_TARGETS="archil archil-server archil-mount" ctest_stage clang-tsa -R thread_safety
}

run_stage() {
  local name="$1" cmd="$2" start=$SECONDS rc
  echo "=== stage $name: $cmd"
  if [[ "$cmd" == ctest_stage* || "$cmd" == tsa_stage ]]; then
    $cmd
    rc=$?
  else
    $cmd
    rc=$?
    if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  fi
  # What the stage's tests started ends with them (ARCHIL_OWNER_PID: within a second of each test
  # process); anything still there after that grace is a failure, and is cleared.
  if ! scripts/sweep.sh --check > /dev/null; then
    sleep 2
    if ! scripts/sweep.sh --check; then
      echo "test.sh: stage $name left the mounts or processes above behind"
      failed=$((failed + 1))
      rc=1
      scripts/sweep.sh > /dev/null
    fi
  fi
  local status=ok
  [ "$rc" -eq 0 ] || status=FAILED
  timings+=("$(printf '%-10s %-6s %4ds' "$name" "$status" $((SECONDS - start)))")
  echo "=== stage $name: $status in $((SECONDS - start))s"
}

selected=()
case "${1:-}" in
  --preset)
    selected=("$2|ctest_stage $2")
    shift 2
    ctest_args=("$@")
    ;;
  --stage)
    for s in "${STAGES[@]}" "${OPTIONAL_STAGES[@]}"; do [ "${s%%|*}" = "$2" ] && selected=("$s"); done
    [ ${#selected[@]} -eq 1 ] || { echo "test.sh: no stage $2"; echo "0 passed, 1 failed"; exit 1; }
    ;;
  "") selected=("${STAGES[@]}") ;;
  -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
  *) echo "test.sh: unknown option $1 (see --help)"; echo "0 passed, 1 failed"; exit 2 ;;
esac

start=$SECONDS
echo "=== stage setup"
if ! scripts/setup.sh --no-build; then
  echo "0 passed, 1 failed"
  exit 1
fi
scripts/sweep.sh
timings+=("$(printf '%-10s %-6s %4ds' setup ok $((SECONDS - start)))")

for s in "${selected[@]}"; do run_stage "${s%%|*}" "${s#*|}"; done

if [ ${#failures[@]} -gt 0 ]; then
  echo "=== failed tests"
  printf '%s\n' "${failures[@]}"
  if [ ${#details[@]} -gt 0 ]; then
    echo "=== what they printed"
    printf '%s\n' "${details[@]}"
  fi
fi
echo "=== timings"
printf '%s\n' "${timings[@]}"
printf '%-10s %-6s %4ds\n' total "" $((SECONDS - start))
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
