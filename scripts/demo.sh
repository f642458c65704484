#!/usr/bin/env bash
# The demo behind scripts/main-job: a throwaway local Slurm cluster with numaplace's plugin and
# its per-node helper numaplaced, a short job under each policy, what every task got, a monitored
# job with `numaplace status` while it runs, its job report, and everything stopped at the end.
# Environment:
#   NUMAPLACE_PLUGIN   the installed numaplace.so (main-job sets <prefix>/lib/slurm/numaplace.so)
#   NUMAPLACE_HELPER, NUMAPLACE_CLI   the installed numaplaced and numaplace (default: build tree)
#   NUMAPLACE_BUILD    the build tree, for test/numa_probe (or NUMAPLACE_PROBE)
#   NUMAPLACE_DEMO_PLUGIN=0   run the cluster parts only: empty plugstack, no --numa-policy
#                      (for checking the demo itself without the plugin; says so loudly)
#   NUMAPLACE_DEMO_ACCOUNTING=1   also Slurm accounting (private MariaDB and slurmdbd) with
#                      numaplace's epilog: the monitored job runs as the user nptest, who then
#                      reads its summary from sacct with `numaplace report`
#   NUMAPLACE_DEMO_PLOT=FILE.png  where that report draws the job's timeline
#   NUMAPLACE_DEMO_MIGRATE=1      the migration scene (needs several NUMA nodes: the guest)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=test/integration/lib.sh
source "$top/test/integration/lib.sh"

use_plugin=${NUMAPLACE_DEMO_PLUGIN:-1}
section() { printf '\n=== %s ===\n' "$*"; }

[ -x "$NP_PROBE" ] || np_die "the probe is not built: $NP_PROBE (set NUMAPLACE_BUILD or NUMAPLACE_PROBE)"
if [ "$use_plugin" = 1 ]; then
  [ -f "$NP_PLUGIN" ] || np_die "the plugin is not there: $NP_PLUGIN (set NUMAPLACE_PLUGIN)"
else
  echo "!!!! NUMAPLACE_DEMO_PLUGIN=0: running WITHOUT the numaplace plugin (cluster parts only) !!!!"
fi

# policy_opt POLICY: the srun option selecting POLICY, or nothing without the plugin.
policy_opt() {
  if [ "$use_plugin" = 1 ]; then printf -- '--numa-policy=verbose,%s\n' "$1"; fi
}

# show_tasks: the probe's lines, one task per line, in rank order; anything else (the plugin's
# verbose lines, warnings) after them, indented.
show_tasks() {
  local out
  out=$(cat)
  grep '^rank=' <<<"$out" | sort -t= -k2,2n | sed 's/^rank=\([^ ]*\) /  task \1: /' || true
  grep -v '^rank=' <<<"$out" | sed 's/^/    /' || true
}

accounting=${NUMAPLACE_DEMO_ACCOUNTING:-0}
demo_user=nptest

# demo_job_report JOB: the job's summary as its user reads it: from Slurm accounting when the
# demo keeps it (stored by the epilog), else merged from this node's spool.
demo_job_report() {
  local job=$1 plot=${NUMAPLACE_DEMO_PLOT:-}
  np_wait_for 15 bash -c "ls '$np_dir/helper/spool/$job.'* >/dev/null 2>&1" || true
  if [ "$accounting" = 1 ]; then
    section "job report, as $demo_user reads it after the job: numaplace report $job${plot:+ --plot $plot}"
    np_wait_for 150 bash -c "sacct -j $job -X -n -P -o AdminComment | grep -q '^NPS1:'" ||
      echo "(the epilog has not stored job $job's summary in accounting yet)"
    # The user draws the plot where it may write; the demo keeps a copy outside the cluster.
    mkdir -p "$np_dir/out" && chmod 1777 "$np_dir/out"
    np_run_as "$demo_user" "$NP_CLI" --spool "$np_dir/helper/spool" report "$job" \
      ${plot:+--plot "$np_dir/out/$(basename "$plot")"} || echo "(no report for job $job)"
    [ -z "$plot" ] || cp "$np_dir/out/$(basename "$plot")" "$plot" 2>/dev/null || true
  else
    section "job report: numaplace report $job"
    np_numaplace report "$job" || echo "(no report for job $job)"
  fi
}

section "machine"
numactl --hardware | sed -n '1,3p'
if [ "$use_plugin" = 1 ]; then
  echo "plugin: $NP_PLUGIN"
  echo "helper: $NP_HELPER"
  if [ "$accounting" = 1 ]; then
    np_test_user_ensure "$demo_user"
    NP_ACCOUNTING=1 NP_NUMAPLACE_EPILOG=1 np_cluster_start
  else
    np_cluster_start
  fi
  np_cluster_set_plugstack "$(np_helper_plugstack default_policy=local)"
  np_helper_start
  section "numaplaced start-up (its log)"
  sed 's/^[^ ]* numaplaced: /  /' "$np_dir/helper/numaplaced.log"
else
  np_cluster_start
fi
echo "slurm: $(srun --version)" # after the start: without a slurm.conf srun tries DNS SRV
section "site configuration (plugstack.conf)"
cat "$np_dir/plugstack.conf"

if [ "$use_plugin" = 1 ]; then
  section "srun --numa-policy=help"
  srun -n1 --numa-policy=help true
fi

# The step's shape: two one-CPU tasks here; in the 4-node guest, one two-CPU task per node
# (scripts/main-job sets NUMAPLACE_DEMO_STEP="-n4 -c2"), where the policies visibly differ.
read -r -a step_shape <<<"${NUMAPLACE_DEMO_STEP:--n2}"
for policy in none local local-strict interleave interleave-all; do
  opt=$(policy_opt "$policy")
  section "$policy: srun ${step_shape[*]} ${opt:-(plugin off, no option)} numa_probe --touch 16"
  # shellcheck disable=SC2086 # $opt is one option or nothing
  srun "${step_shape[@]}" $opt "$NP_PROBE" --touch 16 2>&1 | show_tasks
done

if [ "$use_plugin" = 1 ]; then
  section "no option: the site default (local) applies"
else
  section "no option"
fi
srun -n2 "$NP_PROBE" 2>&1 | show_tasks

sbatch_opts=(-n2)
[ "$use_plugin" = 0 ] || sbatch_opts+=("--numa-policy=verbose,interleave" --numa-sensitivity=high)
section "sbatch ${sbatch_opts[*]}"
out="$np_dir/demo-sbatch.out"
job=$(sbatch --parsable "${sbatch_opts[@]}" -o "$out" --wrap "srun $NP_PROBE")
np_wait_for 60 bash -c "scontrol show job $job | grep -qE 'JobState=(COMPLETED|FAILED|CANCELLED)'" ||
  echo "(job $job did not finish within 60 s)"
show_tasks <"$out"

if [ "$use_plugin" = 1 ]; then
  section "an invalid value is refused before submission"
  srun -n1 --numa-policy=interleaf true || echo "(srun exited with $?)"
fi

if [ "$use_plugin" = 1 ]; then
  run_as=()
  [ "$accounting" = 0 ] || run_as=(np_run_as "$demo_user")
  section "a monitored job: ${run_as[*]:+(as $demo_user) }srun --numa-policy=interleave np_workload --mb 64 (5 s busy)"
  "${run_as[@]}" srun -n1 --numa-policy=verbose,interleave "$NP_WORKLOAD" --mb 64 --busy 5 --idle 2 &
  srun_pid=$!
  sleep 4
  job=$(squeue -h -o %i | tail -1)
  section "numaplace status (while job $job runs)"
  np_numaplace status || true
  wait "$srun_pid" || true
  demo_job_report "$job"
fi

# Migration needs several NUMA nodes: scripts/main-job sets NUMAPLACE_DEMO_MIGRATE=1 in the
# 4-node guest. Four one-task jobs, started one after another so Slurm gives each the next two
# CPUs (one node each); numactl puts each job's memory where the scene needs it.
demo_migration() {
  local jobs=() pids=() j
  section "migration: four jobs, memory placed by numactl inside the task"
  # job   class  CPUs on node  memory on node  for the request 2 -> 1 below
  #  A    low    0             2               remote stays remote (O)
  #  B    low    1             2               gains: its memory comes home (L)
  #  C    high   2             2               high: never moved away
  #  D    high   3             0               away from home: the homecoming trigger moves it
  for spec in "low 2" "low 2" "high 2" "high 0"; do
    read -r class mem <<<"$spec"
    srun -n1 -c2 --numa-policy=none --numa-sensitivity="$class" \
      numactl --membind="$mem" "$NP_WORKLOAD" --mb 48 --busy 0 --idle 45 >/dev/null 2>&1 &
    pids+=($!)
    np_wait_for 30 bash -c "[ \$(squeue -h -t R | wc -l) -ge $((${#jobs[@]} + 1)) ]" || true
    jobs+=("$(squeue -h -t R -o %i | sort -n | tail -1)")
  done
  sleep 4 # numaplaced samples each job, reads its pages, and acts on the high job away from home
  section "numaplace status: pages per node (job D's pages already came home to node 3)"
  np_numaplace status || true
  section "numaplace migrate --from 2 --to 1 --pages 16384 (64 MiB, order best-plus)"
  np_numaplace migrate --from 2 --to 1 --pages 16384 || true
  sleep 2
  section "numaplace status after the request"
  np_numaplace status || true
  section "what numaplaced logged about migration"
  grep -E 'migration|trigger|homecoming|best-plus' "$np_dir/helper/numaplaced.log" | sed 's/^[^ ]* numaplaced: /  /' | tail -12 || true
  for j in "${jobs[@]}"; do scancel "$j"; done
  # Only the jobs' sruns: a bare `wait` would also wait for numaplaced, started by this shell.
  wait "${pids[@]}" || true
  demo_job_report "${jobs[1]}"
}
if [ "$use_plugin" = 1 ] && [ "${NUMAPLACE_DEMO_MIGRATE:-0}" = 1 ]; then
  demo_migration
fi

np_cluster_stop
echo
echo "demo finished: cluster stopped, nothing left running"
