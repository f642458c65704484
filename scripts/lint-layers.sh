#!/usr/bin/env bash
# The include-layer check (docs/architecture.md). Data flows one way: topology and samples ->
# policies -> actions -> reports -> programs. So:
#   - a file may include a numaplace header of its own layer or a lower one, never a higher one;
#   - a decision (policies/) may include only lib/core, lib/topology and other policies, never
#     the mover, the sampler, the tables' readers or reports;
#   - no two components include each other, directly or through others (tsort finds the cycle);
#   - policies/ does no I/O: none of its sources names a call that reads or writes a file, the
#     machine or a terminal (snprintf into a buffer is fine).
# Usage: scripts/lint-layers.sh (from anywhere).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# component -> layer. A component is a directory under lib/ or policies/ (its headers in
# <dir>/numaplace/), or a program's directory.
declare -A layer=(
  [lib/core]=0
  [lib/topology]=1 [lib/protocol]=1 [lib/sample]=1 [lib/characterize]=1
  [policies/placement]=2 [policies/migration]=2 [policies/model]=2 [policies/sim]=2
  [lib/tables]=3 [lib/config]=3 [lib/mempolicy]=3 [lib/move]=3
  [lib/report]=4 [lib/summary]=4
  [plugin]=5 [daemon]=5 [cli]=5
)
declare -A name=([0]=base [1]=inputs [2]=policies [3]=actions [4]=reports [5]=programs)
# What a decision may include besides other policies.
declare -A policy_may_use=([lib/core]=1 [lib/topology]=1)
# Calls that read or write outside the process's memory; policies/ names none of them.
io_calls='\b(fopen|fdopen|open|openat|close|read|write|pread|pwrite|fgets|fread|fwrite|getline|printf|fprintf|vfprintf|puts|fputs|fputc|putchar|perror|syslog|ioctl|mmap|socket|connect|send|recv|set_mempolicy|mbind|move_pages|migrate_pages|json_load_file|json_loadf|json_dumpf|json_dump_file|getenv|time|clock_gettime|gettimeofday|rand|random|np_open_regular)[[:space:]]*\('

component_of() { # path -> component
  case $1 in
    lib/* | policies/*) local top_dir=${1%%/*} rest=${1#*/}; echo "$top_dir/${rest%%/*}" ;;
    *) echo "${1%%/*}" ;;
  esac
}

status=0
edges=$(mktemp)
trap 'rm -f "$edges" "$edges.err"' EXIT
mapfile -t files < <(git ls-files 'lib/*.[ch]' 'policies/*.[ch]' 'plugin/*.[ch]' 'daemon/*.[ch]' 'cli/*.[ch]' 2>/dev/null ||
  find lib policies plugin daemon cli -name '*.[ch]' 2>/dev/null)
for file in "${files[@]}"; do
  from=$(component_of "$file")
  if [ -z "${layer[$from]+x}" ]; then
    echo "lint-layers: $file: component '$from' has no layer (add it to scripts/lint-layers.sh and docs/architecture.md)"
    status=1
    continue
  fi
  while IFS= read -r header; do
    matches=(lib/*/numaplace/"$header" policies/*/numaplace/"$header")
    existing=()
    for m in "${matches[@]}"; do [ -e "$m" ] && existing+=("$m"); done
    if [ ${#existing[@]} -eq 0 ]; then
      echo "lint-layers: $file includes numaplace/$header, which no component has"
      status=1
      continue
    fi
    to=$(component_of "${existing[0]}")
    if [ "${layer[$to]}" -gt "${layer[$from]}" ]; then
      echo "lint-layers: $file (${name[${layer[$from]}]}, layer ${layer[$from]}) includes numaplace/$header (${name[${layer[$to]}]}, layer ${layer[$to]}): data flows the other way"
      status=1
    fi
    if [[ $from == policies/* && $to != policies/* && -z ${policy_may_use[$to]+x} ]]; then
      echo "lint-layers: $file (a decision) includes numaplace/$header ($to): policies use only lib/core, lib/topology and other policies"
      status=1
    fi
    [ "$to" = "$from" ] || echo "$from $to" >>"$edges"
  done < <(sed -n 's/^#include "numaplace\/\([^"]*\)".*/\1/p' "$file")
  if [[ $from == policies/* ]]; then
    # Comments and string literals are not calls: the compiler drops the comments, sed the strings.
    if hits=$(gcc -fpreprocessed -dD -E -P -x c "$file" 2>/dev/null | sed 's/"[^"]*"/""/g' |
      grep -nE "$io_calls"); then
      echo "lint-layers: $file (a decision) does I/O; policies/ decide, lib/ reads and acts:"
      printf '  %s\n' "$hits"
      status=1
    fi
  fi
done
# tsort prints the cycle's members to stderr when the component graph has one.
if ! sort -u "$edges" | tsort >/dev/null 2>"$edges.err"; then
  echo "lint-layers: components include each other in a cycle:"
  cat "$edges.err"
  status=1
fi
[ "$status" = 0 ] && echo "lint-layers: clean (${#files[@]} files)"
exit "$status"
