#!/usr/bin/env bash
# The libraries in src/ depend on each other one way only (src/CMakeLists.txt draws the graph).
# A shared include root cannot stop a file from including a header of a library it must not know,
# so this test reads every #include in src/ and apps/ and fails on any that crosses the graph the
# wrong way, and on the client side (its libraries and binaries) including a server-side
# third-party header.
#
#   tests/layering_test.sh [SRC_DIR [APPS_DIR]]
set -uo pipefail
src="${1:-$(dirname "$0")/../src}"
apps="${2:-$src/../apps}"

declare -A allowed=(
  [base]="base"
  [io]="io base"
  [posix]="posix base"
  [search]="search posix base"
  [api]="api base"
  [catalog]="catalog api base"
  [control]="control catalog api metrics io base"
  [dataplane]="dataplane server control catalog engine search io base"
  [http]="http base"
  [cli]="cli http api base"
  [engine]="engine posix io base"
  [proto]="proto base"
  [store]="store io base"
  [tier]="tier engine store api posix io base"
  [net]="net base"
  [metrics]="metrics net base"
  [server]="server metrics net proto engine posix io base"
  [client]="client metrics net proto posix base"
  [fs]="fs posix base"
  [fuse]="fuse fs posix base"
  [mount]="mount fuse fs client metrics http api net proto posix base"
)
# Libraries linked into the client binary, and the third-party headers they must never see
# (docs/adr/0001-binary-split.md).
client_libs=" base posix api http cli proto net metrics client fs fuse mount "
client_forbidden='^(httplib\.h|sqlite3\.h|rocksdb/|spdlog/|re2/)'

# The binaries: what each may include (each links only these libraries).
declare -A app_allowed=(
  [archil]="cli"
  [archil-mount]="mount"
  [archil-server]="dataplane tier store control catalog api server metrics engine io base"
)
client_apps=" archil archil-mount "

failures=0
# check ROOT NAME ALLOWED CLIENT: every #include under ROOT/NAME.
check() {
  local root=$1 name=$2 allowed_here=$3 client=$4 line file header top
  while IFS= read -r line; do
    file=${line%%:*}
    header=$(sed -E 's/^[^:]*:[0-9]+:\s*#\s*include\s*[<"]([^>"]+)[>"].*/\1/' <<<"$line")
    top=${header%%/*}
    if [ "$top" != "$header" ] && [ -d "$src/$top" ]; then
      if [[ " $allowed_here " != *" $top "* ]]; then
        echo "FAIL: ${file#"$root"/} includes $header, but $name may depend only on: $allowed_here"
        failures=$((failures + 1))
      fi
    fi
    if [ "$client" = 1 ] && grep -qE "$client_forbidden" <<<"$header"; then
      echo "FAIL: ${file#"$root"/} includes $header, a server-side library"
      failures=$((failures + 1))
    fi
  done < <(grep -nE '^\s*#\s*include\s*[<"]' -r "$root/$name" --include='*.h' --include='*.cc' \
             | sed -E 's/^([^:]*):([0-9]+):/\1:\2:/')
}

# check_tree ROOT LABEL CLIENTS TABLE: every folder under ROOT against its entry in the
# associative array named TABLE; CLIENTS lists the folders on the client side.
check_tree() {
  local root=$1 label=$2 clients=$3 dir name client
  local -n table=$4
  for dir in "$root"/*/; do
    name=$(basename "$dir")
    if [ -z "${table[$name]+x}" ]; then
      echo "FAIL: $label/$name has no entry in tests/layering_test.sh: add what it may include"
      failures=$((failures + 1))
      continue
    fi
    client=0
    [[ "$clients" == *" $name "* ]] && client=1
    check "$root" "$name" "${table[$name]}" "$client"
  done
}
check_tree "$src" src "$client_libs" allowed
check_tree "$apps" apps "$client_apps" app_allowed

if [ "$failures" -gt 0 ]; then
  echo "$failures layering violation(s)"
  exit 1
fi
echo "layering: every include in $src and $apps follows the dependency graph"
