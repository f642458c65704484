#!/usr/bin/env bash
# numaplace-run-scenario end to end, run INSIDE the 4-node guest (test/vm/run --layout 4node): a
# real Slurm (munged, slurmctld, one slurmd), numaplaced, the plugin in plugstack.conf, and the
# runner with short stand-in jobs (np_workload) on test/vm/scenario-guest.json (six jobs over the
# four nodes, four requests, runs Best and Worst), then a one-run set bound with numactl.
# Checked from the outside, not from the runner's word: every job's CPUs and memory at its start,
# read from /proc (Cpus_allowed_list, numa_maps) before the run's first request was sent; every
# request answered with pages moved; every job of every run in the results with its ratio to
# Best; Best's geometric mean exactly 1. Node n has CPUs 2n and 2n+1.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/../integration/lib.sh"
np_require jq numactl
here=$(cd "$(dirname "$0")" && pwd)
runner=$NUMAPLACE_SOURCE/scripts/numaplace-run-scenario.sh
mb=24

# Pages move only as asked: no automatic NUMA balancing (docs/migration.md), no triggers, no rate.
echo 0 >/proc/sys/kernel/numa_balancing
np_cluster_start
work=$np_dir/scenario-cases
mkdir -p "$work"
np_cluster_set_plugstack "$(np_helper_plugstack)"
np_helper_start --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off \
  --trigger_bandwidth=off --free_floor_mb=16 --interval_ms=500 --numa_maps_interval_ms=1000
export NUMAPLACE=$NP_CLI NUMAPLACE_SOCKET=$np_dir/helper/numaplaced.sock

# watch_starts OUT RESULT PID: until PID exits, note once per (run, job) what each stand-in job
# holds once its memory is touched: its CPUs, its anonymous pages per node, and whether the run's
# requests had begun (OUT/runR-ORDER/migrate.out exists from the moment they are sent).
watch_starts() {
  python3 - "$@" "$mb" <<'PY'
import glob, os, re, sys, time
out, result, watched, mb = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
done = set()
with open(result, "w") as f:
    while os.path.exists(f"/proc/{watched}"):
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if open(f"/proc/{pid}/comm").read().strip() != "np_workload":
                    continue
                env = dict(kv.split("=", 1) for kv in open(f"/proc/{pid}/environ").read().split("\0") if "=" in kv)
                key = (env["NUMAPLACE_RUN"], env["NUMAPLACE_JOB_INDEX"])
                if key in done:
                    continue
                pages = [0] * 4
                for line in open(f"/proc/{pid}/numa_maps"):
                    if "anon=" in line:
                        k = re.search(r"kernelpagesize_kB=(\d+)", line)
                        for node, count in re.findall(r"\bN(\d+)=(\d+)", line):
                            pages[int(node)] += int(count) * (int(k.group(1)) // 4 if k else 1)
                if sum(pages) < 0.95 * mb * 256:
                    continue  # not touched yet
                sent = bool(glob.glob(f"{out}/run{key[0]}-*/migrate.out"))
                cpus = re.search(r"Cpus_allowed_list:\s*(\S+)", open(f"/proc/{pid}/status").read()).group(1)
                f.write("\t".join([key[0], key[1], env["NUMAPLACE_NODE"], cpus,
                                   ",".join(map(str, pages)), "sent" if sent else "before"]) + "\n")
                f.flush()
                done.add(key)
            except (OSError, KeyError, ValueError, AttributeError):
                continue
        time.sleep(0.2)
PY
}

# run_set OUT SCENARIO [OPTIONS...]: the runner on SCENARIO with stand-in jobs, watched; its
# output in $np_out and OUT/runner.out, its status in $np_rc, the start readings in OUT.starts.
# The stand-ins idle until the run's requests have been answered (the runner's mark), however
# slow the emulated guest: a fixed idle time (25 s, then 60 s) let them end first in a starved
# guest under CI's other lanes. 600 s is only the most they wait when the runner dies.
run_set() {
  local out=$1 scenario=$2 pid watcher
  shift 2
  bash "$runner" --stand-in "$NP_WORKLOAD" --stand-in-mb "$mb" --stand-in-busy 1 --stand-in-idle 600 \
    --register-timeout 120 --repeat 1 --seed 1 --out "$out" "$@" "$scenario" >"$out.log" 2>&1 &
  pid=$!
  watch_starts "$out" "$out.starts" "$pid" &
  watcher=$!
  wait "$pid"
  np_rc=$?
  wait "$watcher"
  np_out=$(cat "$out.log")
  sed 's/^/    /' "$out.log" "$out/runs-info.tsv"
}

# check_starts OUT JOBS RUNS: every job of every run was seen at its start, before the run's
# requests, with its CPUs exactly its node's and at least 95% of its memory there.
check_starts() {
  local out=$1 jobs=$2 runs=$3 r j line
  for ((r = 1; r <= runs; r++)); do
    for ((j = 0; j < jobs; j++)); do
      line=$(awk -F'\t' -v r="$r" -v j="$j" '$1 == r && $2 == j' "$out.starts")
      [ -n "$line" ] || { np_fail "run $r: job $j was never seen with its memory touched"; continue; }
      awk -F'\t' -v want="$(awk -F'\t' -v j="$j" '$1 == j { print $4 }' "$out/jobs.tsv")" '{
          node = $3; split($5, p, ","); total = p[1] + p[2] + p[3] + p[4]
          if (node != want) { print "runs on node " node ", the scenario says " want; exit 1 }
          if ($4 != (2 * node) "-" (2 * node + 1)) { print "CPUs " $4 ", node " node " has " 2 * node "-" 2 * node + 1; exit 1 }
          if (p[node + 1] < 0.95 * total) { print "pages per node " $5 ": under 95% on node " node; exit 1 }
          if ($6 != "before") { print "first seen after the requests had begun"; exit 1 }
        }' <<<"$line" >"$work/why" || np_fail "run $r, job $j at its start: $(cat "$work/why")"
    done
  done
}

# check_placement OUT JOBS RUNS: numaplaced placed every job of every run on its own node (its
# CPUs narrowed to the job's binding: placement.tsv's helper_nodes is the job's node alone), so its
# orders see who gains or loses from a move.
check_placement() {
  local out=$1 jobs=$2 runs=$3 r f
  for ((r = 1; r <= runs; r++)); do
    f=$(echo "$out/run$r"-*/placement.tsv)
    [ -f "$f" ] || { np_fail "run $r: no placement.tsv"; continue; }
    awk -F'\t' -v jobs="$jobs" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      { seen++; if ($col["helper_nodes"] != $col["node"]) {
          print "job " $1 " on node " $col["node"] ": numaplaced sees nodes " $col["helper_nodes"] " (CPUs " $col["helper_cpus"] ")"; bad = 1 } }
      END { if (seen != jobs) { print seen " of " jobs " jobs"; bad = 1 } exit bad }' "$f" >"$work/why" ||
      np_fail "run $r, $f: $(cat "$work/why")"
  done
}

# check_results OUT JOBS RUNS REQUESTS: every request of every run answered (and some moved
# pages), every job of every run with a time and a ratio, Best's figure exactly 1.
check_results() {
  local out=$1 jobs=$2 runs=$3 requests=$4 moved
  awk -F'\t' -v n="$requests" 'NR > 1 && !($4 == n && $5 == n && $6 == 0) {
      print "run " $1 " (" $2 "): " $5 " of " $4 " requests answered, migrate exit " $6; bad = 1 }
    END { exit bad }' "$out/runs-info.tsv" >"$work/why" || np_fail "$(cat "$work/why")"
  moved=$(cat "$out"/run*/migrate.out | grep -c 'moved [1-9]')
  [ "$moved" -ge 1 ] || np_fail "no request moved a page: $(cat "$out"/run1-*/migrate.out)"
  np_expect_eq "$(awk 'NR > 1' "$out/runs-info.tsv" | wc -l)" "$runs" "runs"
  awk -F'\t' -v jobs="$jobs" -v runs="$runs" 'NR > 1 { seen[$1 "." $4] = 1
      if ($9 != "0" || $10 !~ /^[0-9.]+$/ || $14 !~ /^[0-9.]+$/) { print "run " $1 " job " $4 ": exit " $9 ", time " $10 ", ratio " $14; bad = 1 } }
    END { for (r = 1; r <= runs; r++) for (j = 0; j < jobs; j++) if (!((r "." j) in seen)) { print "run " r " job " j " missing"; bad = 1 }
      exit bad }' "$out/results.tsv" >"$work/why" || np_fail "results.tsv: $(cat "$work/why")"
  np_expect_eq "$(awk -F'\t' '$1 == "best" { print $3 }' "$out/orders.tsv")" 1.0000 "Best's geometric mean"
  np_expect_eq "$(jq '.jobs | length' "$out/results.json")" $((jobs * runs)) "jobs in results.json"
}

np_case "six stand-in jobs on four nodes, Best then Worst: placement, requests, ratios to Best"
run_set "$work/set" "$here/scenario-guest.json"
np_expect_rc 0
np_expect_match "binding: slurm"
# numaplaced narrows each step's allocation (--whole: all eight CPUs) to its tasks' binding: it
# sees every job on its own node, so the runner's guard is silent. Nothing is warned.
! grep -q warning <<<"$np_out" || np_fail "warnings: $(grep warning <<<"$np_out")"
check_placement "$work/set" 6 2
check_starts "$work/set" 6 2
check_results "$work/set" 6 2 4
np_expect_match "worst +runs 1 +[0-9]+\.[0-9]{4}"
np_expect_match "spread: [a-z-]+ / [a-z-]+ = [0-9.]+"
np_end_case

np_case "--bind numactl: one job per node, one Best run"
cat >"$work/numactl.json" <<'EOF'
{"numaplace_scenario": 1, "name": "guest-numactl", "nodes": 4,
 "jobs": [{"benchmark": "505.mcf_r", "node": 0}, {"benchmark": "505.mcf_r", "node": 1},
          {"benchmark": "505.mcf_r", "node": 2}, {"benchmark": "505.mcf_r", "node": 3}],
 "requests": [{"delay_s": 3, "from": 3, "to": 2, "pages": 4096}],
 "runs": ["best"]}
EOF
run_set "$work/numactl" "$work/numactl.json" --bind numactl
np_expect_rc 0
np_expect_match "binding: numactl"
check_placement "$work/numactl" 4 1
check_starts "$work/numactl" 4 1
check_results "$work/numactl" 4 1 1
np_end_case

np_cluster_stop
np_finish
