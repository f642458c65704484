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
comment_stored() { [ -n "$(stored "$1")" ]; }
# The first node's epilog log: the detached store's word on each job it ran.
first_node=${np_nodes[0]}
node_log=$(np_node_dir "$first_node")/helper/epilog.log
epilog_logged() { grep -q " job $1 on $first_node: " "$node_log" 2>/dev/null; }
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

np_case "root's report --plot never writes through a symlink the user planted"
victim=$np_dir/root-only.txt
echo "root's own file" >"$victim"
chmod 600 "$victim"
for ext in svg png; do
  np_run_as "$user" ln -s "$victim" "$out/planted.$ext"
  np_run "$NP_CLI" --spool /nonexistent report "$job" --plot "$out/planted.$ext"
  np_expect_fail
  np_expect_match "planted.$ext: a symlink \(not written through\)"
  np_expect_eq "$(cat "$victim")" "root's own file" "the link's target after root's --plot $out/planted.$ext"
done
# a regular file of the user's at the name is replaced by root's own, not written in place
np_run_as "$user" sh -c "echo mine >'$out/users.svg'"
np_run "$NP_CLI" --spool /nonexistent report "$job" --plot "$out/users.svg"
np_expect_rc 0
np_expect_eq "$(stat -c %U "$out/users.svg")" root "owner of the plot root wrote over the user's file"
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
np_expect_match "^predicted sensitivity unavailable for [0-9]+ job\\(s\\) \\(first: [0-9]+\\): "
np_run "$NP_CLI" jobs --user "$other"
np_expect_no_match "^$job "
np_end_case

np_case "another tool's AdminComment is left alone; the report falls back to the spool"
job2=$(np_run_as "$user" sbatch --parsable -N1 -n1 -w "${np_nodes[0]}" -o "$out/job2.out" \
  --wrap "srun $NP_WORKLOAD --mb 8 --busy 3 --idle 1")
np_wait_for 30 bash -c "squeue -h -j $job2 -t R | grep -q ." || np_fail "job $job2 never ran"
scontrol update JobId="$job2" AdminComment="JS1:another-tool"
np_sacct_wait "$job2" 90 || np_fail "job $job2 did not finish in sacct"
# The epilog's store runs detached: wait for its word, then for slurmdbd to have the comment
# slurmctld passes it (no fixed sleep: beside CI's other lanes either may take seconds).
np_wait_for 90 epilog_logged "$job2" || np_fail "no store logged for job $job2: $(cat "$node_log" 2>&1)"
np_expect_match "another tool's text" "$(grep -A3 " job $job2 on " "$node_log")"
np_wait_for 30 comment_stored "$job2" || true
np_expect_eq "$(stored "$job2")" "JS1:another-tool" "AdminComment after the job"
np_run np_on_node "${np_nodes[0]}" "$NP_CLI" --spool "$np_dir/helper/spool" report "$job2"
np_expect_rc 0
np_expect_match "source: this node's spool .*another tool's text"
np_end_case

np_case "the user cannot rewrite their report; root trusts only what numaplaced wrote"
node=${np_nodes[0]} spool=$np_dir/helper/spool # the node's own spool, seen from inside it
report=$(np_on_node "$node" sh -c "ls $spool/$job.0.*.json" | head -1)
np_expect_eq "$(np_on_node "$node" stat -c %U "$report")" root "the report's owner"
np_run np_on_node "$node" runuser -u "$user" -- cat "$report"
np_expect_rc 0 # read through its ACL entry
np_run np_on_node "$node" runuser -u "$user" -- sh -c "echo '{}' >'$report'"
np_expect_fail
# What the helper before this fix let the user do: their own file, saying uid 0, another node,
# class high (planted by root here, as the user can no longer write it).
hostile() { # hostile OWNER: replace the report by a rewritten copy owned by OWNER
  np_on_node "$node" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.update(uid=0, node="evil", **{"class": "high"}); json.dump(d, open(sys.argv[1], "w"))' "$report"
  np_on_node "$node" chown "$1" "$report"
}
hostile "$user"
epilog_env=(env SLURM_JOB_ID="$job" SLURM_JOB_UID="$(id -u "$user")" SLURM_JOB_USER="$user" SLURMD_NODENAME="$node")
np_run np_on_node "$node" "${epilog_env[@]}" "$NP_CLI" --spool "$spool" store "$job"
np_expect_match "owned by uid $(id -u "$user"): not trusted"
np_run np_on_node "$node" "$NP_CLI" --spool "$spool" report --steps "$job"
np_expect_match "not trusted"
np_expect_no_match "on evil"
hostile root # numaplaced's file but not what it wrote: the identity is Slurm's, not the file's
np_run np_on_node "$node" "${epilog_env[@]}" "$NP_CLI" --spool "$spool" store "$job"
np_expect_match "left out a report naming job $job, uid 0, node evil"
# the node's honest reports (its batch step's) may be stored again; the planted one never is
np_run "$NP_CLI" --json report "$job"
np_expect_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["uid"], d["user"], " ".join(sorted(d["nodes"])))' <<<"$np_out")" \
  "$(id -u "$user") $user ${np_nodes[*]}" "uid, user and nodes of the stored summary"
np_run "$NP_CLI" report "$job"
np_expect_match "User: $user "
np_expect_no_match "evil"
np_end_case

# slurmdbd down during the epilog: the node's part waits in its spool
# (pending/JOBID.json) and is stored later, by `numaplace store --pending` or by the next store.
node=$first_node
pending_dir=$(np_node_dir "$node")/helper/spool/pending
one_node_job() {
  np_run_as "$user" sbatch --parsable -N1 -n1 -w "$node" -o "$out/$1.out" \
    --wrap "srun $NP_WORKLOAD --mb 8 --busy 1 --idle 0.5"
}
job_gone() { [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]; }
sacct_knows() { sacct -n -X -j "$1" -o JobID 2>/dev/null | grep -qw "$1"; }
store_pending_on_node() {
  np_on_node "$node" env NUMAPLACE_SPOOL="$np_dir/helper/spool" "$NP_CLI" store --pending
}

np_case "slurmdbd down during the epilog: the part waits in the spool, store --pending stores it"
np_slurmdbd_stop
job3=$(one_node_job job3)
np_wait_for 60 job_gone "$job3" || np_fail "job $job3 did not end"
np_wait_for 90 epilog_logged "$job3" || np_fail "no store logged for job $job3: $(cat "$node_log")"
np_expect_match "job $job3: .*waits in .*/pending" "$(grep -A10 " job $job3 on " "$node_log")"
[ -f "$pending_dir/$job3.json" ] || np_fail "no $pending_dir/$job3.json: $(ls -la "$pending_dir" 2>&1)"
np_expect_eq "$(stat -c '%U %a' "$pending_dir")" "root 700" "pending directory owner and mode"
np_expect_eq "$(stat -c '%U %a' "$pending_dir/$job3.json")" "root 600" "pending file owner and mode"
np_slurmdbd_start
# a store killed mid-write left its temporary file: the next pass removes it
dead_pid=$(sh -c 'echo $$')
stale=$pending_dir/.$job3.json.$dead_pid.tmp
echo '{"half' >"$stale"
touch -d '-2 minutes' "$stale"
np_run store_pending_on_node
np_expect_rc 0
np_expect_match "job $job3: this node's waiting part stored in AdminComment"
np_expect_match "removed 1 temporary file\(s\) a killed numaplace store left in pending"
[ ! -e "$stale" ] || np_fail "$stale is still there after store --pending"
[ ! -e "$pending_dir/$job3.json" ] || np_fail "$pending_dir/$job3.json is still there after the store"
np_run np_run_as "$user" "$NP_CLI" --spool /nonexistent report "$job3"
np_expect_rc 0
np_expect_match "source: Slurm accounting"
np_expect_match "$node"
np_end_case

np_case "a part left waiting is stored by the next job's epilog on the node"
np_slurmdbd_stop
job4=$(one_node_job job4)
np_wait_for 60 job_gone "$job4" || np_fail "job $job4 did not end"
np_wait_for 90 epilog_logged "$job4" || np_fail "no store logged for job $job4"
[ -f "$pending_dir/$job4.json" ] || np_fail "no $pending_dir/$job4.json"
np_slurmdbd_start
# slurmctld hands slurmdbd the jobs it queued while it was down a moment after it is back (24.11
# later than 22.05): the next epilog can store a waiting part once its job's record is there.
np_wait_for 120 sacct_knows "$job4" || np_fail "slurmdbd never received job $job4's record"
job5=$(one_node_job job5)
np_wait_for 60 job_gone "$job5" || np_fail "job $job5 did not end"
np_wait_for 150 epilog_logged "$job5" || np_fail "no store logged for job $job5"
np_expect_match "job $job4: this node's waiting part stored" "$(cat "$node_log")"
for j in "$job4" "$job5"; do
  np_run np_run_as "$user" "$NP_CLI" --spool /nonexistent report "$j"
  np_expect_rc 0
  np_expect_match "source: Slurm accounting"
done
[ -z "$(ls -A "$pending_dir")" ] || np_fail "parts still waiting: $(ls -A "$pending_dir")"
np_end_case

np_finish
