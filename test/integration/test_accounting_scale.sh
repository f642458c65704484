#!/usr/bin/env bash
# Accounting at scale: a job on NP_SCALE_NODES (default 16) namespaced slurmd nodes,
# each node's epilog (etc/numaplace-epilog) storing its part in the one AdminComment at the same
# time. The summary must end up with every node's part: concurrent read-merge-writes must not
# lose one. Prints the time from the job's end to the complete summary and each node's costs
# (bench/RESULTS.md has the figures; this suite only checks that nothing is lost). The last cases
# force the single merger for large jobs (EpilogSlurmctld's `numaplace store --merge`) with a low
# NUMAPLACE_STORE_MAX_NODES, with slurmdbd up and down.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"

user=nptest
nodes_wanted=${NP_SCALE_NODES:-16}
np_test_user_ensure "$user"
NP_ACCOUNTING=1 NP_ACCOUNTING_USERS="$user" NP_NODES=$nodes_wanted NP_NUMAPLACE_EPILOG=1 np_cluster_start
np_cluster_set_plugstack "$(np_helper_plugstack default_policy=local)"
for node in "${np_nodes[@]}"; do np_node_helper_start "$node" --interval_ms=1000; done
out=$np_dir/out  # job output, written by the job's user
mkdir -p "$out"
chmod 777 "$out"

stored_nodes() { # the number of nodes in the job's stored summary (0: none yet)
  "$NP_CLI" --spool /nonexistent --json report "$1" 2>/dev/null |
    python3 -c 'import json,sys
try: print(len(json.load(sys.stdin)["nodes"]))
except Exception: print(0)'
}
epilogs_done() { # every node's epilog logged the end of its store (it logs once, at the end)
  local node done=0
  for node in "${np_nodes[@]}"; do
    grep -q " job $1 on $node: " "$np_dir/node-$node/helper/epilog.log" 2>/dev/null &&
      done=$((done + 1))
  done
  [ "$done" = "${#np_nodes[@]}" ]
}

# One case: a job on every node; its summary must name every node once each epilog is done.
scale_case() { # scale_case [_ NODES_EXPECTED]
  local job ended done_at got
  job=$(np_run_as "$user" sbatch --parsable -N"${#np_nodes[@]}" --ntasks-per-node=1 -o "$out/job.out" \
    --wrap "srun $NP_WORKLOAD --mb 8 --busy 1 --idle 0.5")
  np_wait_for 60 bash -c "[ \"\$(squeue -h -j $job)\" = '' ]" || np_fail "job $job did not end within $((60 * np_wait_scale)) s"
  ended=$(date +%s.%N)
  np_wait_for 150 epilogs_done "$job" || np_fail "not every node's store ended within $((150 * np_wait_scale)) s"
  done_at=$(date +%s.%N)
  got=$(stored_nodes "$job")
  echo "job $job: ${#np_nodes[@]} nodes, $got in the stored summary; the last node's store ended $(
    python3 -c "print(f'{$done_at - $ended:.1f}')") s after the job left the queue"
  grep -h " job $job on " "$np_dir"/node-*/helper/epilog.log | sed 's/^/  /'
  np_expect_eq "$got" "${2:-${#np_nodes[@]}}" "nodes in the stored summary"
}

np_case "a job on ${#np_nodes[@]} nodes stores one summary with every node's part"
scale_case
np_end_case

# A busy slurmdbd times sacct out now and then. A store that took a failed read for "nothing
# stored yet" wrote its part alone over every other node's. Here one sacct in four of the
# epilogs' fails (never twice in a row for one caller), through a sacct first in their PATH.
np_case "a sacct that fails now and then does not lose a node's part"
mkdir -p "$np_dir/busy"
cat >"$np_dir/busy/sacct" <<SH
#!/bin/sh
state=$np_dir/busy/failed.\$PPID
if [ ! -e "\$state" ] && [ \$((\$(od -An -N1 -tu1 /dev/urandom) % 4)) = 0 ]; then
  : >"\$state"
  echo "sacct: error: slurmdbd: Socket timed out" >&2
  exit 1
fi
rm -f "\$state"
exec /usr/bin/sacct "\$@"
SH
chmod 755 "$np_dir/busy/sacct"
sed -i "s|^export PATH=|export PATH=$np_dir/busy:|" "$np_dir/numaplace-epilog"
scale_case
np_end_case

# Past NUMAPLACE_STORE_MAX_NODES the nodes leave the AdminComment alone (docs/accounting.md).
np_case "a job over NUMAPLACE_STORE_MAX_NODES stores no summary and says why"
sed -i "s|^export PATH=|export NUMAPLACE_STORE_MAX_NODES=$((${#np_nodes[@]} - 1)) PATH=|" "$np_dir/numaplace-epilog"
scale_case _ 0
np_expect_match "over the $((${#np_nodes[@]} - 1)) whose nodes each store .*no parts directory" "$(cat "$np_dir/node-node1/helper/epilog.log")"
np_end_case

# The single merger: past NUMAPLACE_STORE_MAX_NODES (here 4, to force it on 16
# nodes) each node leaves its part in NUMAPLACE_PARTS_DIR and EpilogSlurmctld's
# `numaplace store --merge` merges them once and writes once. The epilogs' sacct still fails one
# time in four.
parts=$np_dir/parts
merge_log=$np_dir/epilog-slurmctld.log
mkdir -m 0750 "$parts"
for wrapper in "$np_dir/numaplace-epilog" "$np_dir/numaplace-epilog-slurmctld"; do
  sed -i -e "s|NUMAPLACE_STORE_MAX_NODES=[0-9]* ||" \
    -e "s|^export PATH=|export NUMAPLACE_STORE_MAX_NODES=4 NUMAPLACE_PARTS_DIR=$parts PATH=|" "$wrapper"
done
merged() { grep -q "job $1 merge: " "$merge_log" 2>/dev/null; }
# The merge runs in EpilogSlurmctld's time: the job leaves the queue once it ended (at most
# 120 s), and none of its processes is left then (an earlier version detached it with setsid).
merger_gone() { # merger_gone JOB: no process of this cluster's EpilogSlurmctld (its wrapper's
  # environment names merge_log) still runs when job JOB has left the queue
  np_expect_eq "$(grep -lsxzF "NUMAPLACE_EPILOG_LOG=$merge_log" /proc/[0-9]*/environ | wc -l)" 0 \
    "EpilogSlurmctld processes left when job $1 left the queue"
}
merge_case() { # merge_case: a job on every node, stored by the one merge; prints its costs
  local job ended
  job=$(np_run_as "$user" sbatch --parsable -N"${#np_nodes[@]}" --ntasks-per-node=1 -o "$out/job.out" \
    --wrap "srun $NP_WORKLOAD --mb 8 --busy 1 --idle 0.5")
  np_wait_for 200 bash -c "[ \"\$(squeue -h -j $job)\" = '' ]" || np_fail "job $job did not end within $((200 * np_wait_scale)) s"
  ended=$(date +%s.%N)
  merger_gone "$job"
  merged "$job" || np_fail "job $job left the queue before its merge was logged: $(cat "$merge_log" 2>&1)"
  np_wait_for 150 epilogs_done "$job" || np_fail "not every node's store ended within $((150 * np_wait_scale)) s"
  np_wait_for 200 merged "$job" || np_fail "no merge logged for job $job: $(cat "$merge_log" 2>&1)"
  echo "job $job: merged $(python3 -c "print(f'{$(date +%s.%N) - $ended:.1f}')") s after it left the queue"
  grep -h " job $job " "$np_dir"/node-*/helper/epilog.log | sed 's/^/  /'
  sed 's/^/  /' "$merge_log" # the merge's whole output: its first line alone names the job
  np_expect_match "job $job: ${#np_nodes[@]} of ${#np_nodes[@]} nodes' parts merged and stored in AdminComment .*1 writes" "$(cat "$merge_log")"
  np_expect_eq "$(cat "$np_dir"/node-*/helper/epilog.log | grep -c " job $job on .*left in $parts for the job's one merge")" \
    "${#np_nodes[@]}" "nodes that left their part for the merge"
  np_expect_eq "$(stored_nodes "$job")" "${#np_nodes[@]}" "nodes in the stored summary"
  np_expect_eq "$(ls -A "$parts")" "" "parts left after the merge"
}

np_case "a job over NUMAPLACE_STORE_MAX_NODES is stored by one merge (EpilogSlurmctld) with every node's part"
merge_case
np_end_case

# slurmdbd down when the job ends: the nodes' parts wait in their spools, the merge fails and
# leaves what it has; once slurmdbd is back, each node's `store --pending` leaves its part and
# `store --merge --pending` on the controller stores them all, nothing lost.
np_case "slurmdbd down: the parts wait, and store --merge --pending stores every node's"
np_slurmdbd_stop
job=$(np_run_as "$user" sbatch --parsable -N"${#np_nodes[@]}" --ntasks-per-node=1 -o "$out/job.out" \
  --wrap "srun $NP_WORKLOAD --mb 8 --busy 1 --idle 0.5")
np_wait_for 200 bash -c "[ \"\$(squeue -h -j $job)\" = '' ]" || np_fail "job $job did not end within $((200 * np_wait_scale)) s"
merger_gone "$job"
np_wait_for 200 merged "$job" || np_fail "no merge logged for job $job"
np_wait_for 150 epilogs_done "$job" || np_fail "not every node's store ended within $((150 * np_wait_scale)) s"
np_slurmdbd_start
sacct_knows() { sacct -n -X -j "$1" -o JobID 2>/dev/null | grep -qw "$1"; }
np_wait_for 120 sacct_knows "$job" || np_fail "slurmdbd never received job $job's record"
for node in "${np_nodes[@]}"; do
  np_on_node "$node" env NUMAPLACE_SPOOL="$np_dir/helper/spool" NUMAPLACE_STORE_MAX_NODES=4 \
    NUMAPLACE_PARTS_DIR="$parts" "$NP_CLI" store --pending >>"$np_dir/pending.out" 2>&1
done
np_run env NUMAPLACE_STORE_MAX_NODES=4 NUMAPLACE_PARTS_DIR="$parts" "$NP_CLI" store --merge --pending
np_expect_rc 0
np_expect_match "job $job: ${#np_nodes[@]} of ${#np_nodes[@]} nodes' parts merged and stored"
np_expect_eq "$(stored_nodes "$job")" "${#np_nodes[@]}" "nodes in the stored summary"
np_expect_eq "$(ls -A "$parts")" "" "parts left after the merge"
np_end_case

np_finish
