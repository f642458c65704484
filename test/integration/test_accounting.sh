#!/usr/bin/env bash
# Job summaries in Slurm accounting, on a real two-node cluster with real MariaDB and slurmdbd
# (lib.sh: NP_ACCOUNTING=1, NP_NODES=2): each node runs its own numaplaced; numaplace's epilog
# (etc/numaplace-epilog) stores each node's part in the job's AdminComment; `numaplace report`
# reads it back through sacct as the job's user would, draws the plot, refuses other users;
# `numaplace jobs` lists it; another tool's AdminComment is left alone.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"

np_require pngcheck
user=nptest other=nptest2
np_test_user_ensure "$user"
np_test_user_ensure "$other"
NP_ACCOUNTING=1 NP_ACCOUNTING_USERS="$user $other" NP_NODES=2 NP_NUMAPLACE_EPILOG=1 np_cluster_start
np_cluster_set_plugstack "$(np_helper_plugstack default_policy=local)"
for node in "${np_nodes[@]}"; do np_node_helper_start "$node" --interval_ms=500; done
out=$np_dir/out
mkdir -p "$out"
chmod 777 "$out"

stored() { sacct -j "$1" -X -n -P -o AdminComment 2>/dev/null | head -1; }
# Every node's epilog adds its part: the summary is whole once it names every node.
has_summary() {
  [[ $(stored "$1") == NPS1:* ]] &&
    "$NP_CLI" --spool /nonexistent --json report "$1" 2>/dev/null |
    python3 -c 'import json,sys; sys.exit(len(json.load(sys.stdin)["nodes"]) != int(sys.argv[1]))' "${#np_nodes[@]}"
}

np_case "a two-node job's summary is stored in its AdminComment by each node's epilog"
job=$(np_run_as "$user" sbatch --parsable -N2 -n2 --numa-policy=interleave -o "$out/job.out" \
  --wrap "srun $NP_WORKLOAD --mb 24 --busy 2 --idle 1.5")
np_wait_for 90 has_summary "$job" ||
  np_fail "no NPS1 summary in sacct for job $job: '$(stored "$job" | cut -c1-80)'; epilog logs: $(cat "$np_dir"/node-*/helper/epilog.log 2>/dev/null)"
np_run "$NP_CLI" --json report "$job"
np_expect_rc 0
np_expect_match '"schema": "numaplace.summary/1"'
nodes=$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["nodes"])))' <<<"$np_out")
np_expect_eq "$nodes" "${np_nodes[*]}" "nodes in the merged summary"
np_expect_eq "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["missing_nodes"])' <<<"$np_out")" "[]" "missing nodes"
np_end_case

np_case "numaplace report JOBID: the user reads it from accounting, seff-like, with advice"
# The spool is not consulted: accounting alone must serve (a node's spool may be gone).
np_run np_run_as "$user" "$NP_CLI" --spool /nonexistent report "$job"
np_expect_rc 0
np_expect_match "source: Slurm accounting"
np_expect_match "local memory +\[[#-]+\] +[0-9]+%"
np_expect_match "interleave"
for node in "${np_nodes[@]}"; do np_expect_match "$node"; done
np_expect_match "[Aa]dvice"
np_end_case

np_case "numaplace report --plot writes a valid PNG and SVG"
np_run np_run_as "$user" "$NP_CLI" --spool /nonexistent report "$job" --plot "$out/job.png"
np_expect_rc 0
np_run pngcheck "$out/job.png"
np_expect_rc 0
np_expect_match "OK"
np_run np_run_as "$user" "$NP_CLI" --spool /nonexistent report "$job" --plot "$out/job.svg" --node "${np_nodes[1]}"
np_expect_rc 0
python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); sys.exit(d.documentElement.tagName != "svg")' "$out/job.svg" ||
  np_fail "$out/job.svg is not an SVG document"
np_end_case

np_case "another user may not read the report"
np_run np_run_as "$other" "$NP_CLI" --spool /nonexistent report "$job"
np_expect_fail
np_expect_match "job $job is not yours"
np_end_case

np_case "numaplace jobs lists finished jobs with their policy, class, predicted sensitivity and local share"
np_run "$NP_CLI" jobs
np_expect_rc 0
np_expect_match "^JOBID .* CLASS +PREDICTED +LOCAL"
np_expect_match "^$job +$user +COMPLETED +2 +interleave"
# a 4-second job is too short to judge, and says so rather than guessing
np_expect_match "^$job: predicted sensitivity unavailable: "
np_run "$NP_CLI" jobs --user "$other"
np_expect_no_match "^$job "
np_end_case

np_case "another tool's AdminComment is left alone; the report falls back to the spool"
job2=$(np_run_as "$user" sbatch --parsable -N1 -n1 -w "${np_nodes[0]}" -o "$out/job2.out" \
  --wrap "srun $NP_WORKLOAD --mb 8 --busy 3 --idle 1")
np_wait_for 30 bash -c "squeue -h -j $job2 -t R | grep -q ." || np_fail "job $job2 never ran"
scontrol update JobId="$job2" AdminComment="JS1:another-tool"
np_sacct_wait "$job2" 90 || np_fail "job $job2 did not finish in sacct"
sleep 3 # the epilog ran; give slurmctld time to pass any update to slurmdbd
np_expect_eq "$(stored "$job2")" "JS1:another-tool" "AdminComment after the job"
np_run np_on_node "${np_nodes[0]}" "$NP_CLI" --spool "$np_dir/helper/spool" report "$job2"
np_expect_rc 0
np_expect_match "source: this node's spool .*another tool's text"
np_end_case

np_finish
