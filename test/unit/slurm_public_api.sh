#!/bin/sh
# Every Slurm symbol a numaplace binary imports is declared in Slurm's public headers: no
# release promises to keep anything else (a symbol libslurm exports but no header declares, such
# as sacctmgr's record constructor, can change or go in any release).
#   slurm_public_api.sh INCLUDE_DIR BINARY...
# A symbol counts as Slurm's when the binary's libslurm exports it, or when its name starts with
# slurm_, slurmdb_ or spank_ (the plugins' come from slurmd and slurmstepd at load time).
set -u
include=$1/slurm
shift
[ -d "$include" ] || { echo "no Slurm headers in $include"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Declarations only: comments out, so a name in a comment does not count.
cat "$include"/*.h | sed -e 's|/\*.*\*/||g' -e '/\/\*/,/\*\//d' >"$tmp/headers"
bad=0
for bin in "$@"; do
  if [ ! -f "$bin" ]; then
    echo "FAIL: no binary $bin"
    bad=1
    continue
  fi
  nm -D --undefined-only "$bin" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/imports"
  : >"$tmp/exports"
  lib=$(ldd "$bin" 2>/dev/null | awk '/libslurm[.]so/ {print $3}')
  [ -n "$lib" ] && nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/exports"
  { comm -12 "$tmp/imports" "$tmp/exports"; grep -E '^(slurm_|slurmdb_|spank_)' "$tmp/imports"; } |
    sort -u >"$tmp/slurm"
  n=0
  while read -r sym; do
    n=$((n + 1))
    if ! grep -Eq "(^|[^A-Za-z0-9_])${sym}[[:space:]]*\(" "$tmp/headers"; then
      echo "FAIL: $bin imports $sym, which no header in $include declares"
      bad=1
    fi
  done <"$tmp/slurm"
  echo "$bin: $n Slurm symbols checked against $include"
done
exit $bad
