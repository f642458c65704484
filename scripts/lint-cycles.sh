#!/usr/bin/env bash
# No circle between files of different concerns in daemon/ and lib/summary/: a part uses the
# context below it, the top sets the parts up and tears them down, never both ways.
# A node is a .c with its own header (daemon/x.c + daemon/x.h, lib/summary/x.c +
# lib/summary/numaplace/x.h), or a header without a .c. X -> Y when X (or its header) includes
# Y's header, or X's object uses a symbol Y's object defines (nm on the built objects, so a call
# through a macro counts and a name in a comment does not). Any circle fails.
# Usage: scripts/lint-cycles.sh BUILD_DIR   (BUILD_DIR holds the built objects)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: lint-cycles.sh BUILD_DIR}" && pwd)
cd "$top"
dirs=(daemon lib/summary)

node_of() { # a file -> its node: the path without .c/.h and without a numaplace/ header dir
  local dir=${1%/*} base=${1##*/}
  echo "${dir%/numaplace}/${base%.[ch]}"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
# each source's object, from compile_commands.json (CMake writes directory, command, file)
[ -f "$build/compile_commands.json" ] || { echo "lint-cycles: no $build/compile_commands.json"; exit 1; }
awk '/"directory":/ { split($0, q, "\""); dir = q[4] }
     /"command":/ && match($0, / -o [^ ]+/) { obj = substr($0, RSTART + 4, RLENGTH - 4) }
     /"file":/ { split($0, q, "\""); if (obj !~ /^\//) obj = dir "/" obj; print q[4], obj }' \
  "$build/compile_commands.json" >"$work/objects"
for dir in "${dirs[@]}"; do
  mapfile -t files < <(git ls-files "$dir/*.[ch]" 2>/dev/null || find "$dir" -name '*.[ch]')
  for file in "${files[@]}"; do
    from=$(node_of "$file")
    echo "$from" >>"$work/nodes"
    # includes of a header of this directory (others are lint-layers.sh's business)
    while read -r inc; do
      for candidate in "${file%/*}/$inc" "$dir/$inc" "$dir/numaplace/$inc"; do
        if [ -f "$candidate" ]; then
          echo "$from $(node_of "$candidate") includes:${candidate##*/}" >>"$work/edges"
          break
        fi
      done
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
    case $file in *.h) continue ;; esac
    obj=$(awk -v src="$top/$file" '$1 == src { print $2; exit }' "$work/objects")
    if [ -z "$obj" ] || [ ! -f "$obj" ]; then
      echo "lint-cycles: no object for $file under $build (build first)"
      status=1
      continue
    fi
    nm --defined-only -g "$obj" | awk -v n="$from" 'NF == 3 { print $3, n }' >>"$work/defs"
    nm -u "$obj" | awk -v n="$from" '{ print n, $NF }' >>"$work/uses"
  done
done
[ "$status" = 0 ] || exit 1
touch "$work/edges" "$work/defs" "$work/uses"

# calls and data references: a use in X of a symbol Y defines
awk 'NR == FNR { def[$1] = $2; next } ($2 in def) { print $1, def[$2], "uses:" $2 }' \
  "$work/defs" "$work/uses" >>"$work/edges"

# Every strongly connected set of more than one node, with the edges inside it.
awk '
  $1 == $2 { next }
  !(($1, $2) in why) { why[$1, $2] = $3; adj[$1, ++deg[$1]] = $2; node[$1]; node[$2] }
  END {
    for (s in node) { # reach[s, t]: t is reachable from s
      sp = 0; stack[++sp] = s
      while (sp) {
        v = stack[sp--]
        for (i = 1; i <= deg[v]; i++) {
          w = adj[v, i]
          if (!((s, w) in reach)) { reach[s, w] = 1; stack[++sp] = w }
        }
      }
    }
    bad = 0
    for (s in node) {
      if (done[s] || !((s, s) in reach)) continue
      n = 0; list = ""
      for (t in node)
        if ((s, t) in reach && (t, s) in reach) { done[t] = 1; member[++n] = t }
      for (i = 2; i <= n; i++) # in name order, so a report reads the same every run
        for (j = i; j > 1 && member[j - 1] > member[j]; j--) {
          t = member[j]; member[j] = member[j - 1]; member[j - 1] = t
        }
      for (i = 1; i <= n; i++) list = list " " member[i]
      printf "lint-cycles: a circle through %d files:%s\n", n, list
      for (i = 1; i <= n; i++)
        for (j = 1; j <= n; j++)
          if ((member[i], member[j]) in why)
            printf "  %s -> %s (%s)\n", member[i], member[j], why[member[i], member[j]]
      bad = 1
    }
    exit bad
  }' "$work/edges" || status=1

nodes=$(sort -u "$work/nodes" | wc -l)
[ "$status" = 0 ] && echo "lint-cycles: no circle among $nodes files of ${dirs[*]}"
exit "$status"
