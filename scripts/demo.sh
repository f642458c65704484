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

# demo_job_report JOB: what numaplaced recorded for the job's steps on this node.
demo_job_report() {
  local job=$1
  section "job report: numaplace report $job"
  np_wait_for 15 bash -c "ls '$np_dir/helper/spool/$job.'* >/dev/null 2>&1" || true
  np_numaplace report "$job" || echo "(no report for job $job)"
}

section "machine"
numactl --hardware | sed -n '1,3p'
if [ "$use_plugin" = 1 ]; then
  echo "plugin: $NP_PLUGIN"
  echo "helper: $NP_HELPER"
  np_cluster_start
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
  section "a monitored job: srun --numa-policy=interleave np_workload --mb 64 (5 s busy)"
  srun -n1 --numa-policy=verbose,interleave "$NP_WORKLOAD" --mb 64 --busy 5 --idle 2 &
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
  local jobs=() j
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
  wait || true
  demo_job_report "${jobs[1]}"
}
if [ "$use_plugin" = 1 ] && [ "${NUMAPLACE_DEMO_MIGRATE:-0}" = 1 ]; then
  demo_migration
fi

np_cluster_stop
echo
echo "demo finished: cluster stopped, nothing left running"
