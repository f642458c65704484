#!/usr/bin/env bash
# Launch overhead of the numaplace plugin: `srun -n2 true` and `srun -n1 true` without the
# plugin, with it (live topology discovery) and with it reading a cached hwloc XML
# (topology_xml=), rotated step by step on one throwaway local cluster. plugstack.conf is
# rewritten between steps: srun and slurmstepd read it at every step (test/integration/README.md),
# so no slurmd restart and no blocks are needed. Before each timed step the harness waits
# (untimed) for the node to be idle again, so no step queues behind the previous one's cleanup.
# Reports the median wall time of each, the ratios to "not configured", and the plugin's own
# time per task (took=<us> in its verbose line), as a markdown section on stdout.
#   bench/launch_overhead.sh [STEPS]     (default 30 of each kind; at least 20)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=test/integration/lib.sh
source "$top/test/integration/lib.sh"
steps=${1:-30}
if ! [[ $steps =~ ^[0-9]+$ ]] || [ "$steps" -lt 20 ]; then
  np_die "STEPS must be a number >= 20, not '$steps'"
fi
[ -f "$NP_PLUGIN" ] || echo "!!!! $NP_PLUGIN does not exist: the 'with' rows will measure an optional plugin that fails to load" >&2

median() { sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now_us() { echo $(($(date +%s%N) / 1000)); }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
np_cluster_start # an empty plugstack to begin with
slurm_version=$(srun --version)
work=$(mktemp -d)
np_at_exit "rm -rf '$work'"
lstopo-no-graphics --of xml --force "$work/topology.xml"
declare -A plugstack=(
  [without]=""
  [with]="optional $NP_PLUGIN default_policy=local verbose=yes"
  [xml]="optional $NP_PLUGIN default_policy=local verbose=yes topology_xml=$work/topology.xml"
)
orders=("without with xml" "with xml without" "xml without with")
queued=0
for n in 2 1; do
  for mode in without with xml; do : >"$work/$mode.$n"; done
  for ((i = 0; i < steps; i++)); do
    for mode in ${orders[$((i % 3))]}; do
      np_cluster_set_plugstack "${plugstack[$mode]}"
      np_wait_for 10 np_node_idle || np_die "the node did not return to idle"
      t0=$(now_us)
      srun -n"$n" true 2>>"$work/stderr.$mode.$n"
      echo $(($(now_us) - t0)) >>"$work/$mode.$n"
    done
  done
done
queued=$(cat "$work"/stderr.* | grep -c 'queued and waiting for resources' || true)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
np_cluster_stop

cores=$(lscpu | awk -F: '/^Socket\(s\)/ { s = $2 } /^Core\(s\) per socket/ { c = $2 } /^Thread\(s\) per core/ { t = $2 }
  END { gsub(/ /, "", s); gsub(/ /, "", c); gsub(/ /, "", t); printf "%s socket(s) x %s core(s) x %s thread(s)", s, c, t }')
echo "## Launch overhead (bench/launch_overhead.sh, $steps steps of each kind, alternated)"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs ($cores),"
echo "NUMA nodes: $(numactl --hardware | sed -n 's/^available: \([0-9]*\) nodes* /\1 /p' | head -1), $(free -g | awk '/Mem:/ {print $2}') GiB,"
echo "kernel $(uname -r), $slurm_version, $(. /etc/os-release && echo "$PRETTY_NAME")."
echo "Load average (1/5/15 min) before: $load_before, after: $load_after. Steps that queued behind the previous one: $queued."
echo
echo "| step | plugin | median ms | ratio to without | plugin time per task (median / max us) |"
echo "|---|---|---|---|---|"
for n in 2 1; do
  without=$(median <"$work/without.$n")
  for mode in without with xml; do
    t=$(median <"$work/$mode.$n")
    took=$(grep -o 'took=[0-9]*us' "$work/stderr.$mode.$n" | tr -dc '0-9\n' | sort -n || true)
    if [ "$mode" = without ]; then
      plugin="-"
    elif [ -n "$took" ]; then
      plugin="$(median <<<"$took") / $(tail -1 <<<"$took")"
    else
      plugin="unavailable: plugin did not report its time"
    fi
    case $mode in
      without) label="not configured" ;;
      with) label="live topology" ;;
      *) label="topology_xml" ;;
    esac
    awk -v n="$n" -v l="$label" -v a="$without" -v b="$t" -v p="$plugin" \
      'BEGIN { printf "| srun -n%s true | %s | %.1f | %.3f | %s |\n", n, l, b / 1000, b / a, p }'
  done
done
