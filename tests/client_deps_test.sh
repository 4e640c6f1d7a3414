#!/usr/bin/env bash
# The client binary must stay lean (docs/adr/0001-binary-split.md): its only shared libraries are
# the C runtime's. Fails, naming the library, if a dependency sneaks onto the client's load path.
set -euo pipefail
bin="$1"
allowed='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|/lib64/ld-linux-x86-64\.so\.2)$'
bad=$(ldd "$bin" | awk '{print $1}' | grep -Ev "$allowed" || true)
if [ -n "$bad" ]; then
  echo "FAIL: $bin loads libraries it must not: $bad"
  exit 1
fi
if nm -C "$bin" 2>/dev/null | grep -qiE ' (T|W) (rocksdb::|sqlite3_|httplib::)'; then
  echo "FAIL: $bin contains server-side code (RocksDB, SQLite or httplib symbols)"
  exit 1
fi
echo "ok: $(ldd "$bin" | wc -l) shared objects, none server-side"
