#!/usr/bin/env bash
# The include-layer check (docs/architecture.md): data flows one way, topology and samples ->
# policies -> actions -> reports -> programs, so a file may include a numaplace header of its own
# layer or a lower one, never a higher one; and no two components include each other, directly
# or through others (tsort finds the cycle). Usage: scripts/lint-layers.sh (from anywhere).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# component -> layer. A component is a directory under lib/ (its headers in <dir>/numaplace/),
# or a program's directory.
declare -A layer=(
  [core]=0
  [topology]=1 [protocol]=1 [sample]=1 [characterize]=1
  [placement]=2 [migration]=2 [config]=2
  [move]=3
  [report]=4 [summary]=4
  [plugin]=5 [daemon]=5 [cli]=5
)
declare -A name=([0]=base [1]=inputs [2]=policies [3]=actions [4]=reports [5]=programs)

component_of() { # path -> component
  case $1 in
    lib/*) local rest=${1#lib/}; echo "${rest%%/*}" ;;
    *) echo "${1%%/*}" ;;
  esac
}

status=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
mapfile -t files < <(git ls-files 'lib/*.[ch]' 'plugin/*.[ch]' 'daemon/*.[ch]' 'cli/*.[ch]' 2>/dev/null ||
  find lib plugin daemon cli -name '*.[ch]' 2>/dev/null)
for file in "${files[@]}"; do
  from=$(component_of "$file")
  if [ -z "${layer[$from]+x}" ]; then
    echo "lint-layers: $file: component '$from' has no layer (add it to scripts/lint-layers.sh and docs/architecture.md)"
    status=1
    continue
  fi
  while IFS= read -r header; do
    matches=(lib/*/numaplace/"$header")
    if [ ! -e "${matches[0]}" ]; then
      echo "lint-layers: $file includes numaplace/$header, which no component has"
      status=1
      continue
    fi
    to=$(component_of "${matches[0]}")
    if [ "${layer[$to]}" -gt "${layer[$from]}" ]; then
      echo "lint-layers: $file (${name[${layer[$from]}]}, layer ${layer[$from]}) includes numaplace/$header (${name[${layer[$to]}]}, layer ${layer[$to]}): data flows the other way"
      status=1
    fi
    [ "$to" = "$from" ] || echo "$from $to" >>"$edges"
  done < <(sed -n 's/^#include "numaplace\/\([^"]*\)".*/\1/p' "$file")
done
# tsort prints the cycle's members to stderr when the component graph has one.
if ! sort -u "$edges" | tsort >/dev/null 2>"$edges.err"; then
  echo "lint-layers: components include each other in a cycle:"
  cat "$edges.err"
  status=1
fi
rm -f "$edges.err"
[ "$status" = 0 ] && echo "lint-layers: clean (${#files[@]} files)"
exit "$status"
