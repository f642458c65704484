#!/usr/bin/env bash
# Multi-NUMA cases, run INSIDE the guest (test/vm/run) on a real local Slurm:
#   numa_cases.sh 4node     Slurm binds a task to node 2's CPUs: local = preferred 2, local-strict
#                           = bind 2, and 64 MiB touched stay >= 95% on node 2; a step whose CPUs
#                           span nodes 1 and 2 interleaves over exactly {1,2}, evenly within 10%;
#                           interleave-all covers {0,1,2,3}; numaplaced's report of an
#                           interleaved job shows its pages on nodes 1 and 2
#   numa_cases.sh cpuless   the CPU-less node 2 is left out of interleave-all unless the site
#                           opts in with cpuless_nodes=include
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/../integration/lib.sh"
layout=${1:?usage: numa_cases.sh 4node|cpuless}

probe_line() { grep '^rank=' <<<"$np_out" | head -1; }
field() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }

# share_on NODE PAGES: the percentage of the touched pages on NODE ("0:10,2:90" -> 90 for 2).
share_on() {
  awk -v node="$1" -v pages="$2" 'BEGIN {
    n = split(pages, parts, ","); total = 0; mine = 0
    for (i = 1; i <= n; i++) { split(parts[i], kv, ":"); total += kv[2]; if (kv[1] == node) mine = kv[2] }
    printf "%d", total ? 100 * mine / total : 0 }'
}

np_cluster_start "optional $NP_PLUGIN"

# hold CORES: a job that occupies the first CORES cores, so the next step gets the ones after.
hold() {
  holder=$(sbatch --parsable -n1 -c"$1" --wrap "sleep 300")
  np_wait_for 60 bash -c "squeue -h -j $holder -o %T | grep -q RUNNING" || np_fail "holder job did not start"
}

if [ "$layout" = 4node ]; then
  hold 4 # cores 0-3 (nodes 0 and 1) taken: Slurm gives the next two-core step CPUs 4-5, node 2
  for policy in local local-strict; do
    np_case "a task Slurm binds to node 2's CPUs gets $policy = node 2, memory stays there"
    np_run srun -n1 -c2 --numa-policy="verbose,$policy" "$NP_PROBE" --touch 64
    np_expect_rc 0
    line=$(probe_line)
    np_expect_eq "$(field cpus "$line")" 4-5 "task CPUs"
    np_expect_eq "$(field mode "$line")" "$([ $policy = local ] && echo preferred || echo bind)" "mode"
    np_expect_eq "$(field nodes "$line")" 2 "nodes"
    share=$(share_on 2 "$(field pages "$line")")
    [ "$share" -ge 95 ] || np_fail "only $share% of the touched pages are on node 2 ($(field pages "$line"))"
    np_end_case
  done
  scancel "$holder"
  np_wait_for 60 np_node_idle || true

  hold 2 # cores 0-1 (node 0) taken: the next four-core step gets CPUs 2-5, nodes 1 and 2
  np_case "a step whose CPUs span nodes 1 and 2 interleaves over exactly {1,2}, evenly"
  np_run srun -n1 -c4 --numa-policy=verbose,interleave "$NP_PROBE" --touch 64
  np_expect_rc 0
  line=$(probe_line)
  np_expect_eq "$(field cpus "$line")" 2-5 "step CPUs"
  np_expect_eq "$(field mode "$line")" interleave "mode"
  np_expect_eq "$(field nodes "$line")" 1-2 "interleave nodes"
  for node in 1 2; do
    share=$(share_on "$node" "$(field pages "$line")")
    if [ "$share" -lt 45 ] || [ "$share" -gt 55 ]; then
      np_fail "node $node holds $share% of the pages, not 50 +/- 5 ($(field pages "$line"))"
    fi
  done
  np_end_case

  np_case "interleave-all covers every node with memory: {0,1,2,3}"
  np_run srun -n1 -c4 --numa-policy=verbose,interleave-all "$NP_PROBE" --touch 64
  np_expect_rc 0
  line=$(probe_line)
  np_expect_eq "$(field nodes "$line")" 0-3 "interleave-all nodes"
  for node in 0 1 2 3; do
    share=$(share_on "$node" "$(field pages "$line")")
    if [ "$share" -lt 22 ] || [ "$share" -gt 28 ]; then
      np_fail "node $node holds $share% of the pages, not 25 +/- 2.5 ($(field pages "$line"))"
    fi
  done
  np_end_case

  np_case "numaplaced sees a job's memory on two nodes: the report's pages per node"
  np_cluster_set_plugstack "$(np_helper_plugstack)"
  np_helper_start
  # shellcheck disable=SC2016 # expanded by the task's shell
  np_run srun -n1 -c4 --numa-policy=interleave -o "$np_dir/workload.out" \
    bash -c 'echo "job=$SLURM_JOB_ID" >&2; exec "$0" --mb 64 --busy 2 --idle 2.5' "$NP_WORKLOAD"
  np_expect_rc 0
  # The task's stderr goes to the -o file with its stdout.
  job=$(sed -n 's/^job=//p' "$np_dir/workload.out" 2>/dev/null | head -1)
  report="$np_dir/helper/spool/$job.0.$(hostname).json"
  np_wait_for 20 test -s "$report" || np_fail "no report for job $job"
  # Interleaved over nodes 1 and 2: 32 MiB on each within 10%, and (next to nothing) elsewhere.
  np_out=$(python3 - "$report" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
peak = d["pages"]["peak_bytes"]
print(" ".join(f"node{k}={v}" for k, v in sorted(peak.items())))
ok = all(abs(peak.get(n, 0) - (32 << 20)) <= 0.1 * (32 << 20) for n in ("1", "2"))
print("interleaved-ok" if ok else "interleaved-wrong")
PY
)
  np_expect_match "interleaved-ok"
  np_run np_numaplace report --steps "$job"
  np_expect_match "peak .*node1=3[0-9]\.[0-9] MiB node2=3[0-9]\.[0-9] MiB"
  np_helper_stop
  np_cluster_set_plugstack "optional $NP_PLUGIN"
  np_end_case
  scancel "$holder"
  np_wait_for 60 np_node_idle || true

  # --numa-policy=auto next to a bandwidth-heavy neighbour on node 0 (stress-ng's stream,
  # outside Slurm, CPUs and memory bound to node 0). The emulated guest has no PMU and no
  # memory-controller counters, so its traffic cannot be measured here: numaplaced runs with
  # auto_load=cpu-busy, the proxy a site opts into, and every reason must say it was a proxy.
  np_cluster_set_plugstack "$(np_helper_plugstack)"
  np_helper_start --auto_load=cpu-busy
  numactl --cpunodebind=0 --membind=0 stress-ng --stream 2 --stream-l3-size 4M --timeout 300 \
    >"$np_dir/neighbour.out" 2>&1 &
  neighbour=$!
  np_at_exit "kill $neighbour 2>/dev/null"
  # Under emulation stress-ng takes seconds to start its workers: wait until node 0's CPUs are
  # busy as /proc/stat counts them (the proxy's own source), then two of the helper's intervals.
  node0_busy_pct() { # the share of CPUs 0-1's time busy over one second, in percent
    local a b
    a=$(awk '/^cpu[01] / { busy += $2 + $3 + $4 + $7 + $8; all += $2 + $3 + $4 + $5 + $6 + $7 + $8 } END { print busy, all }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu[01] / { busy += $2 + $3 + $4 + $7 + $8; all += $2 + $3 + $4 + $5 + $6 + $7 + $8 } END { print busy, all }' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); d = y[2] - x[2]; print (d > 0 ? int(100 * (y[1] - x[1]) / d) : 0) }'
  }
  node0_loaded() { [ "$(node0_busy_pct)" -ge 90 ]; }
  np_wait_for 90 node0_loaded || echo "numa_cases: node 0's CPUs never reached 90% busy ($(node0_busy_pct)%)"
  # numaplace_advised_loaded NODE yes|no: numaplaced's own advice (what the plugin asks for)
  # says NODE is loaded, or not: waited for, however many intervals a starved guest needs.
  numaplace_advised_loaded() {
    python3 - "$np_dir/helper/numaplaced.sock" "$1" "$2" <<'PY'
import os, sys
sys.path.insert(0, os.environ["NUMAPLACE_SOURCE"] + "/test/integration/lib")
import np_proto  # the suites' one request-reply call
reply = np_proto.call(sys.argv[1], {"op": "advise", "job": 1, "step": 0, "uid": 0, "name": ""})
if not reply:
    sys.exit(1)  # no answer: neither loaded nor not, asked again
nodes = reply["advice"]["nodes"]
loaded = any(n["node"] == int(sys.argv[2]) and n.get("loaded") for n in nodes)
sys.exit(0 if loaded == (sys.argv[3] == "yes") else 1)
PY
  }
  np_wait_for 60 numaplace_advised_loaded 0 yes || echo "numa_cases: numaplaced never advised node 0 loaded"

  np_case "auto: a task labelled high on the loaded node 0 is interleaved away, with its reason"
  np_run srun -n1 -c2 --numa-sensitivity=high --numa-policy=verbose,auto "$NP_PROBE" --touch 32
  np_expect_rc 0
  line=$(probe_line)
  np_expect_eq "$(field cpus "$line")" 0-1 "task CPUs (node 0, the neighbour's)"
  np_expect_eq "$(field env_policy "$line")" interleave-all "NUMAPLACE_POLICY"
  np_expect_eq "$(field env_mode "$line")" interleave "NUMAPLACE_MODE"
  np_expect_eq "$(field mode "$line")" interleave "kernel mode"
  np_expect_eq "$(field nodes "$line")" 0-3 "interleave nodes"
  np_expect_match "env_reason=auto: interleave-all: sensitivity high \(user\), node 0 loaded by proxy \(its CPUs [0-9]+% busy; no memory counter\)"
  np_expect_match "^numaplace: task 0 on [^ ]+: policy=interleave-all \(auto\)"
  np_end_case

  np_case "auto: an insensitive task on the same loaded node stays local, with its reason"
  np_run srun -n1 -c2 --numa-sensitivity=low --numa-policy=verbose,auto "$NP_PROBE" --touch 32
  np_expect_rc 0
  line=$(probe_line)
  np_expect_eq "$(field cpus "$line")" 0-1 "task CPUs"
  np_expect_eq "$(field env_policy "$line")" local "NUMAPLACE_POLICY"
  np_expect_eq "$(field mode "$line")" preferred "kernel mode"
  np_expect_eq "$(field nodes "$line")" 0 "preferred node"
  np_expect_match "env_reason=auto: local: sensitivity low \(user\)"
  np_end_case

  np_case "auto: with the neighbour gone, the high task stays local on node 0, now not loaded"
  kill "$neighbour" 2>/dev/null
  wait "$neighbour" 2>/dev/null
  np_wait_for 60 numaplace_advised_loaded 0 no || echo "numa_cases: numaplaced still advises node 0 loaded"
  np_run srun -n1 -c2 --numa-sensitivity=high --numa-policy=verbose,auto "$NP_PROBE" --touch 32
  np_expect_rc 0
  np_expect_eq "$(field env_policy "$(probe_line)")" local "NUMAPLACE_POLICY"
  np_expect_match "env_reason=auto: local: sensitivity high \(user\), node 0 not loaded by proxy"
  np_end_case
  np_helper_stop
  np_cluster_set_plugstack "optional $NP_PLUGIN"
fi

if [ "$layout" = cpuless ]; then
  np_case "the CPU-less memory node is left out of interleave-all by default"
  np_run srun -n1 --numa-policy=verbose,interleave-all "$NP_PROBE" --touch 32
  np_expect_rc 0
  np_expect_eq "$(field nodes "$(probe_line)")" 0-1 "interleave-all nodes"
  np_expect_eq "$(share_on 2 "$(field pages "$(probe_line)")")" 0 "share on the CPU-less node"
  np_end_case

  np_cluster_set_plugstack "optional $NP_PLUGIN cpuless_nodes=include"
  np_case "cpuless_nodes=include lets interleave-all use the CPU-less node"
  np_run srun -n1 --numa-policy=verbose,interleave-all "$NP_PROBE" --touch 32
  np_expect_rc 0
  np_expect_eq "$(field nodes "$(probe_line)")" 0-2 "interleave-all nodes"
  share=$(share_on 2 "$(field pages "$(probe_line)")")
  if [ "$share" -lt 30 ] || [ "$share" -gt 37 ]; then
    np_fail "the CPU-less node holds $share% of the pages, not a third within 10%"
  fi
  np_end_case

  np_case "local never picks the CPU-less node, even when included"
  np_run srun -n1 --numa-policy=verbose,local "$NP_PROBE"
  np_expect_rc 0
  np_expect_match "mode=preferred nodes=0 "
  np_end_case
fi

np_cluster_stop
np_finish
