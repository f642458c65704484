#!/usr/bin/env bash
# Launch overhead of the numaplace plugin: `srun -n2 true` and `srun -n1 true` with the plugin
# configured and without it, alternated step by step on one throwaway local cluster (the
# plugstack is rewritten between steps; srun and slurmstepd read it at every step). Reports the
# median wall time of each, their ratio, and the plugin's own time per task from its verbose line.
#   bench/launch_overhead.sh [STEPS]     (default 30 of each kind)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=test/integration/lib.sh
source "$top/test/integration/lib.sh"
steps=${1:-30}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now_us() { echo $(( $(date +%s%N) / 1000 )); }

np_cluster_start ""  # an empty plugstack to begin with
with="optional $NP_PLUGIN default_policy=local verbose=yes"
work=$(mktemp -d)
for n in 2 1; do
  : >"$work/with.$n"; : >"$work/without.$n"
  for ((i = 0; i < steps; i++)); do
    order="with without"
    [ $((i % 2)) = 1 ] && order="without with"
    for mode in $order; do
      if [ "$mode" = with ]; then np_cluster_set_plugstack "$with"; else np_cluster_set_plugstack; fi
      t0=$(now_us)
      srun -n"$n" true 2>>"$work/stderr.$mode.$n"
      echo $(( $(now_us) - t0 )) >>"$work/$mode.$n"
    done
  done
done
np_cluster_stop

echo "## Launch overhead (bench/launch_overhead.sh, $steps steps of each kind, alternated)"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB,"
echo "kernel $(uname -r), $(srun --version), $(. /etc/os-release && echo "$PRETTY_NAME")."
echo
echo "| step | without plugin (median ms) | with plugin (median ms) | ratio | plugin time per task (median / max us) |"
echo "|---|---|---|---|---|"
for n in 2 1; do
  without=$(median <"$work/without.$n")
  with_t=$(median <"$work/with.$n")
  took=$(grep -o 'took=[0-9]*us' "$work/stderr.with.$n" | tr -dc '0-9\n' | sort -n)
  if [ -n "$took" ]; then
    plugin="$(median <<<"$took") / $(tail -1 <<<"$took")"
  else
    plugin="unavailable: the plugin printed no took= line"
  fi
  awk -v n="$n" -v a="$without" -v b="$with_t" -v p="$plugin" \
    'BEGIN { printf "| srun -n%s true | %.1f | %.1f | %.3f | %s |\n", n, a / 1000, b / 1000, b / a, p }'
done
rm -rf "$work"
