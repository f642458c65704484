#!/usr/bin/env bash
# Launch overhead of the numaplace plugin: `srun -n2 true` and `srun -n1 true` without the
# plugin, with a SPANK plugin that does nothing (the floor any plugin pays: bench/empty_spank.c),
# with it as a site runs it (default_policy=local, live topology discovery), with it reading a
# cached hwloc XML (topology_xml=), with that plus verbose=yes, and with that and
# default_policy=auto (one advise call per step), both with no numaplaced to answer (the bounded
# fallback) and with numaplaced answering advise (a helper started on the cluster), rotated step
# by step on one throwaway local cluster. The ratios are taken in the site's configuration (no
# verbose line: that line is one more message through slurmstepd's I/O to srun, which a site
# does not pay); the verbose rotation reports the plugin's own time per task (took=<us> in its
# line, the plugin's clock around its work in the task) and what the line itself costs.
# plugstack.conf is rewritten between steps: srun and slurmstepd read it at every step
# (test/integration/README.md), so no slurmd restart and no blocks are needed. Before each timed
# step the harness waits (untimed) for the node to be idle again, so no step queues behind the
# previous one's cleanup. Prints a markdown section on stdout.
#   bench/launch_overhead.sh [STEPS]     (default 100 of each kind; at least 20)
# NUMAPLACE_BENCH_OTHER_PLUGIN=PATH adds, for each row timed but "without", one with another
# build's numaplace.so in the same configuration (row "other MODE"), to compare two builds side by
# side in one run (with numaplaced: both builds' plugins talk to this build's numaplaced).
# NUMAPLACE_BENCH_MODES="with advised ..." times only those rows beside "without" (more steps
# of each in the same time). Each ratio comes with a 95% interval: the ratio of medians over
# 2000 resamples of the rotations (a rotation's steps kept together, as they ran side by side).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=test/integration/lib.sh
source "$top/test/integration/lib.sh"
steps=${1:-100}
if ! [[ $steps =~ ^[0-9]+$ ]] || [ "$steps" -lt 20 ]; then
  np_die "STEPS must be a number >= 20, not '$steps'"
fi
[ -f "$NP_PLUGIN" ] || echo "!!!! $NP_PLUGIN does not exist: the 'with' rows will measure an optional plugin that fails to load" >&2

# ratio_interval WITHOUT_FILE MODE_FILE: "lo-hi", the 95% bootstrap interval of the ratio of medians
ratio_interval() {
  python3 - "$1" "$2" <<'PY'
import random, statistics, sys
a = [float(x) for x in open(sys.argv[1])]
b = [float(x) for x in open(sys.argv[2])]
n = min(len(a), len(b))
rng = random.Random(1)
r = []
for _ in range(2000):
    idx = [rng.randrange(n) for _ in range(n)]
    r.append(statistics.median(b[i] for i in idx) / statistics.median(a[i] for i in idx))
r.sort()
print("%.3f-%.3f" % (r[49], r[1949]))
PY
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now_us() { echo $(($(date +%s%N) / 1000)); }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
np_cluster_start # an empty plugstack to begin with
# at the packaged log level (info), not the suites' debug: a line per request is not a site's cost
np_helper_start --log_level=info # answers advise for the "advised" rotation only (no other plugstack names it)
slurm_version=$(srun --version)
work=$(mktemp -d)
np_at_exit "rm -rf '$work'"
lstopo-no-graphics --of xml --force "$work/topology.xml"
declare -A plugstack=(
  [without]=""
  # the floor: a SPANK plugin that registers one option and does nothing (bench/empty_spank.c),
  # what Slurm charges any plugin, so numaplace's own share is the difference
  [empty]="optional $NUMAPLACE_BUILD/bench/empty_spank.so"
  [with]="optional $NP_PLUGIN default_policy=local"
  [xml]="optional $NP_PLUGIN default_policy=local topology_xml=$work/topology.xml"
  [verbose]="optional $NP_PLUGIN default_policy=local topology_xml=$work/topology.xml verbose=yes"
  # --numa-policy=auto as a site default: one advise call per step (no helper runs here, so it
  # is the bounded fallback's cost; docs/auto.md)
  [auto]="optional $NP_PLUGIN default_policy=auto topology_xml=$work/topology.xml"
  # numaplaced monitoring the tasks (each registered before it execs), policy local: what the
  # helper costs a launch, auto or not
  [monitored]="$(np_helper_plugstack default_policy=local topology_xml="$work/topology.xml")"
  # the same with numaplaced answering advise (and registering the tasks, as a site runs it)
  [advised]="$(np_helper_plugstack default_policy=auto topology_xml="$work/topology.xml")"
  # the tier policies as site defaults, beside xml's local (NUMAPLACE_BENCH_MODES only: on a
  # machine without a fast tier they take their documented fallback, which is what is timed)
  [fast_tier]="optional $NP_PLUGIN default_policy=fast-tier topology_xml=$work/topology.xml"
  [weighted]="optional $NP_PLUGIN default_policy=weighted-interleave topology_xml=$work/topology.xml"
)
modes=(without empty with xml verbose auto monitored advised)
accepted="${modes[*]:1} fast_tier weighted"
if [ -n "${NUMAPLACE_BENCH_MODES:-}" ]; then
  modes=(without)
  for mode in $NUMAPLACE_BENCH_MODES; do
    if [ -z "${plugstack[$mode]+set}" ] || [ "$mode" = without ]; then
      np_die "NUMAPLACE_BENCH_MODES: unknown row '$mode' (accepted: $accepted)"
    fi
    modes+=("$mode")
  done
fi
other=${NUMAPLACE_BENCH_OTHER_PLUGIN:-}
if [ -n "$other" ]; then
  [ -f "$other" ] || np_die "NUMAPLACE_BENCH_OTHER_PLUGIN: no such file: $other"
  for mode in "${modes[@]}"; do
    if [ "$mode" = without ] || [ "$mode" = empty ]; then continue; fi
    plugstack[other.$mode]=${plugstack[$mode]//"$NP_PLUGIN"/"$other"}
    modes+=("other.$mode")
  done
fi
queued=0
for n in 2 1; do
  for mode in "${modes[@]}"; do : >"$work/$mode.$n"; done
  for ((i = 0; i < steps; i++)); do
    for ((k = 0; k < ${#modes[@]}; k++)); do
      mode=${modes[$(((i + k) % ${#modes[@]}))]} # each mode takes each place in the rotation
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
# Steps whose tasks fell back instead of getting advice: the advised rows would not be that.
fallbacks=$(grep -c 'without advice' "$np_dir/slurmd.log" 2>/dev/null || true)
# Steps of a numaplaced row not monitored (a registration refused or unanswered); the rows without
# numaplaced find no socket at the default path, which is not counted.
unreached=$(grep 'helper not reached' "$np_dir/slurmd.log" 2>/dev/null | grep -vc 'No such file or directory' || true)
# verbose=yes with numaplaced: slurmstepd logs its time in the plugin's hooks at each step's end
grep -o "time in the plugin: .*" "$np_dir/slurmd.log" >"$work/stepd_times" 2>/dev/null || true
np_helper_stop
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
echo "Steps told \"without advice\" in slurmd's log (the fallback; every auto row without numaplaced): $fallbacks."
echo "Steps whose registration numaplaced did not answer (\"helper not reached\"): $unreached."
echo
echo "| step | plugin | median ms | p25-p75 ms | ratio to without | its 95% interval | plugin time per task (median / max us) |"
echo "|---|---|---|---|---|---|---|"
for n in 2 1; do
  without=$(median <"$work/without.$n")
  for mode in "${modes[@]}"; do
    t=$(median <"$work/$mode.$n")
    took=$(grep -o 'took=[0-9]*us' "$work/stderr.$mode.$n" | tr -dc '0-9\n' | sort -n || true)
    if [ "${mode#other.}" != verbose ]; then
      plugin="-"
    elif [ -n "$took" ]; then
      plugin="$(median <<<"$took") / $(tail -1 <<<"$took")"
    else
      plugin="unavailable: plugin did not report its time"
    fi
    case $mode in
      without) label="not configured" ;;
      empty) label="a SPANK plugin that does nothing (the floor)" ;;
      with) label="live topology" ;;
      xml) label="topology_xml" ;;
      verbose) label="topology_xml, verbose=yes" ;;
      auto) label="topology_xml, default_policy=auto, no numaplaced (fallback)" ;;
      monitored) label="topology_xml, default_policy=local, numaplaced registering the tasks" ;;
      advised) label="topology_xml, default_policy=auto, numaplaced registering and answering" ;;
      fast_tier) label="topology_xml, default_policy=fast-tier" ;;
      weighted) label="topology_xml, default_policy=weighted-interleave" ;;
      other.*) label="the same as ${mode#other.}, $other" ;;
    esac
    spread=$(sort -n "$work/$mode.$n" | awk '{ v[NR] = $1 } END { printf "%.1f-%.1f", v[int((NR + 3) / 4)] / 1000, v[int((3 * NR + 3) / 4)] / 1000 }')
    interval=-
    [ "$mode" = without ] || interval=$(ratio_interval "$work/without.$n" "$work/$mode.$n")
    awk -v n="$n" -v l="$label" -v a="$without" -v b="$t" -v p="$plugin" -v s="$spread" -v ci="$interval" \
      'BEGIN { printf "| srun -n%s true | %s | %.1f | %s | %.3f | %s | %s |\n", n, l, b / 1000, s, b / a, ci, p }'
  done
done
# slurmstepd's own time in the hooks (the verbose rows log it)
for n in 2 1; do
  times=$(grep "registering $n task(s)" "$work/stepd_times" || true)
  [ -n "$times" ] || continue
  field() { sed -n "s/.* $1 \([0-9]*\)us.*/\1/p" <<<"$times" | median; }
  echo
  echo "slurmstepd's time in the plugin per step of srun -n$n (medians of $(wc -l <<<"$times") steps):" \
    "advise $(field advise) us, topology $(field topology) us, registering the tasks $(field 'task(s)') us."
done
