#!/usr/bin/env bash
# docs/protocol.md shows src/proto/archil.proto split by topic in ```proto blocks: this test fails
# when the two differ, so that the document and the schema cannot drift apart. The file's lines
# outside those blocks are comments and the header (syntax, package, options).
set -uo pipefail
root="${1:-$(dirname "$0")/..}"
doc=$(awk '/^```proto$/ {on=1; next} /^```$/ {on=0} on' "$root/docs/protocol.md")
file=$(grep -vE '^(//|syntax |package |option )' "$root/src/proto/archil.proto" | sed '/^$/d')
if [ "$(sed '/^$/d' <<<"$doc")" != "$file" ]; then
  echo "FAIL: src/proto/archil.proto and the proto blocks of docs/protocol.md differ:"
  diff <(sed '/^$/d' <<<"$doc") <(echo "$file") | head -20
  exit 1
fi
echo "ok: archil.proto matches docs/protocol.md"
