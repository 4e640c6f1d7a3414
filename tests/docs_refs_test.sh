#!/usr/bin/env bash
# The documents name code: paths in the repository and, in backticks, C++ types and functions.
# This test fails when a document names something the code does not have, so that a rename or a
# removal cannot leave a document describing code that is gone. It reads README.md and
# docs/*.md and fails, naming document:line and the reference, on:
#
#   - a path that starts with a top-level folder of the repository (src/, apps/, tests/, bench/,
#     scripts/, fuzz/, docs/, packaging/, cmake/) and does not exist; globs (src/engine/*) and
#     one level of braces (src/engine/{fs,space}/) are expanded, a trailing #anchor or :LINE and
#     trailing punctuation are dropped. A path preceded by a letter, '/', '.' or '~' is not one
#     of ours (/usr/src/..., build/tests/...). A Markdown link's target (not http:, not an
#     anchor alone) is resolved against the document's folder;
#   - an inline code span (`...`, outside fenced blocks) that is a C++ name and that no source
#     file has as an identifier outside // comments. A span is a C++ name when, after dropping
#     one trailing argument list "(...)", it is either qualified (`engine::ServedDisks`,
#     `CommitQueue::Commit()`: every ::-separated part is checked, a leading ~ dropped) or one
#     CamelCase word with a capital, a lower-case letter and another capital (`DiskFs`,
#     `DataStore`; not `ENOSPC`, not `Write`), or one capitalised word with its arguments
#     (`Recover()`). A name qualified by another library's namespace (`rocksdb::`, `std::`,
#     `google::`, `boost::`) is that library's and is not checked. `Suite.Name` (a gtest test;
#     `Suite.Prefix...` and `Suite.*` too) is checked part by part. The sources are src/, apps/,
#     tests/, bench/ and fuzz/ (*.h, *.cc, *.proto), and the files of packaging/ (the systemd
#     unit's directives).
#
# Not read: docs/adr/ (dated decision records: they may name what a later change replaced) and
# docs/measurements.md from its "## Appendix: raw output" on (it quotes the benchmarks' output
# as it was printed, at the revision each run names; the sections above it are checked).
# Names that are deliberately not ours go in the allowlist below, each with its reason.
#
#   tests/docs_refs_test.sh [REPO_ROOT]     (about two seconds; no build needed)
set -uo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root" || { echo "FAIL: no repository at $root"; exit 1; }

# Names that match the rules above but are deliberately not code of ours, one per line with its
# reason (a name of another system that a document quotes, unqualified). Empty today: the
# documents qualify other libraries' names (`rocksdb::DBImpl::Write`), and systemd's directives
# are found in packaging/. Prefer fixing the document to adding a name here.
allowlist=(
)

docs=(README.md)
for f in docs/*.md; do docs+=("$f"); done

# Top-level folders of the repository (not build output, not installed packages).
tops=()
for d in */; do
  d=${d%/}
  case "$d" in build | build-* | node_modules) continue ;; esac
  tops+=("$d")
done
top_re=$(IFS='|'; echo "${tops[*]}")

# Every identifier in the sources, outside // comments.
# The systemd unit's directives (packaging/) count too: operations.md names them.
idents=$( (find src apps tests bench fuzz -type f \( -name '*.h' -o -name '*.cc' -o -name '*.proto' \) \
  -exec sed -E 's@//.*$@@' {} + ; cat packaging/*/* 2>/dev/null) | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u)
declare -A ident=()
while IFS= read -r w; do ident[$w]=1; done <<<"$idents"
for w in "${allowlist[@]}"; do ident[$w]=1; done

# One line per reference: DOC<TAB>LINE<TAB>KIND<TAB>TEXT, KIND path, link, name or test.
refs=$(awk -v top_re="$top_re" '
  FNR == 1 { fence = 0; stop = 0 }
  FILENAME == "docs/measurements.md" && /^## Appendix: raw output/ { stop = 1 }
  stop { next }
  /^[ \t]*(```|~~~)/ { fence = !fence; next }
  {
    line = $0
    # Paths anywhere, code blocks included.
    s = line
    re = "(^|[^A-Za-z0-9_./~-])(" top_re ")/[A-Za-z0-9_.*{},/+-]*"
    while (match(s, re)) {
      p = substr(s, RSTART, RLENGTH)
      s = substr(s, RSTART + RLENGTH)
      if (p !~ "^(" top_re ")/") p = substr(p, 2)  # the character before the path
      print FILENAME "\t" FNR "\tpath\t" p
    }
    # Markdown link targets.
    s = line
    while (match(s, /\]\([^) \t]+\)/)) {
      t = substr(s, RSTART + 2, RLENGTH - 3)
      s = substr(s, RSTART + RLENGTH)
      if (t ~ /^(https?|mailto|ftp):/ || t ~ /^#/) continue
      print FILENAME "\t" FNR "\tlink\t" t
    }
    if (fence) next
    # Inline code spans.
    s = line
    while (match(s, /`[^`]+`/)) {
      t = substr(s, RSTART + 1, RLENGTH - 2)
      s = substr(s, RSTART + RLENGTH)
      if (t ~ /^[A-Z][A-Za-z0-9]*\.([A-Z][A-Za-z0-9_]*(\.\.\.|…)?|\*)$/)
        print FILENAME "\t" FNR "\ttest\t" t
      else
        print FILENAME "\t" FNR "\tname\t" t
    }
  }' "${docs[@]}")

failures=0
fail() {
  echo "FAIL: $1:$2 names $3, $4"
  failures=$((failures + 1))
}

# path_exists PATH: PATH (after braces and globs) names at least one file or folder.
path_exists() {
  local p=$1 pre alts post alt
  if [[ $p =~ ^([^{]*)\{([^}]*)\}(.*)$ ]]; then
    pre=${BASH_REMATCH[1]} alts=${BASH_REMATCH[2]} post=${BASH_REMATCH[3]}
    IFS=',' read -ra alts <<<"$alts"
    for alt in "${alts[@]}"; do path_exists "$pre$alt$post" || return 1; done
    return 0
  fi
  if [[ $p == *'*'* ]]; then
    compgen -G "$p" >/dev/null
    return
  fi
  [ -e "$p" ]
}

# clean PATH: drop an anchor, a :LINE suffix and trailing punctuation.
trailing='^(.*)[.,;:)]$' line_suffix='^(.*):[0-9]+(-[0-9]+)?$'
clean() {
  local p=${1%%#*}
  while [[ $p =~ $trailing ]]; do p=${BASH_REMATCH[1]}; done
  if [[ $p =~ $line_suffix ]]; then p=${BASH_REMATCH[1]}; fi
  while [[ $p =~ $trailing ]]; do p=${BASH_REMATCH[1]}; done
  printf '%s' "$p"
}

checked=0
while IFS=$'\t' read -r doc line kind text; do
  [ -n "$doc" ] || continue
  case "$kind" in
    path)
      p=$(clean "$text")
      checked=$((checked + 1))
      path_exists "$p" || fail "$doc" "$line" "$p" "which does not exist"
      ;;
    link)
      p=$(clean "$text")
      [ -n "$p" ] || continue
      checked=$((checked + 1))
      path_exists "$(dirname "$doc")/$p" || fail "$doc" "$line" "a link to $p" "which does not exist"
      ;;
    name)
      t=$text
      t=${t%%(*}  # one trailing argument list
      if [[ $t =~ ^~?[A-Za-z_][A-Za-z0-9_]*(::~?[A-Za-z_][A-Za-z0-9_]*)+$ ]]; then
        :
      elif [[ $t =~ ^[A-Z][A-Za-z0-9]*$ && $t =~ [a-z] && ${t:1} =~ [A-Z] ]]; then
        :
      elif [[ $t =~ ^[A-Z][A-Za-z0-9]*$ && $text == "$t("*")" ]]; then
        :  # a capitalised function with its arguments: `Recover()`
      else
        continue
      fi
      # The argument list must close the span: `Foo(x)` yes, `Foo(x) + 1` no.
      if [[ $text == *'('* && $text != *')' ]]; then continue; fi
      # Another library's names, qualified by its namespace, are that library's.
      case "${t#\~}" in rocksdb::* | std::* | google::* | boost::*) continue ;; esac
      checked=$((checked + 1))
      IFS=':' read -ra parts <<<"${t//::/:}"
      for part in "${parts[@]}"; do
        part=${part#\~}
        if [ -z "${ident[$part]+x}" ]; then
          fail "$doc" "$line" "\`$text\`" "but no source in src/ apps/ tests/ bench/ fuzz/ has $part"
          break
        fi
      done
      ;;
    test)
      # `Suite.Name` (a gtest test), `Suite.Prefix...` or `Suite.*`.
      suite=${text%%.*} name=${text#*.}
      checked=$((checked + 1))
      if [ -z "${ident[$suite]+x}" ]; then
        fail "$doc" "$line" "\`$text\`" "but no source in src/ apps/ tests/ bench/ fuzz/ has $suite"
        continue
      fi
      name=${name%...} name=${name%…}
      if [ "$name" = '*' ] || [ -n "${ident[$name]+x}" ]; then continue; fi
      if [ "$name" != "${text#*.}" ] && grep -q "^$name" <<<"$idents"; then continue; fi
      fail "$doc" "$line" "\`$text\`" "but no source in src/ apps/ tests/ bench/ fuzz/ has $name"
      ;;
  esac
done <<<"$refs"

if [ "$failures" -gt 0 ]; then
  echo "$failures reference(s) in README.md and docs/*.md to code that does not exist"
  exit 1
fi
echo "docs refs: $checked paths and names in README.md and docs/*.md exist in the code"
