#!/usr/bin/env bash
# The harness itself (lib.sh) on a real local Slurm: the cluster starts, srun and sbatch run,
# Slurm binds tasks to distinct CPUs, an unprivileged user can submit, plugstack.conf is re-read
# at every step (srun and slurmstepd), slurmstepd's lines land in slurmd.log, two clusters run
# side by side, slurmd restarts, the case framework counts, a missing program or a machine name
# that does not resolve is a loud error, and nothing is left running after a stop, a failed script
# or SIGTERM.
# A subshell starts the second cluster with its own np_dir on purpose:
# shellcheck disable=SC2030,SC2031
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"
lib="$(cd "$(dirname "$0")" && pwd)/lib.sh"

user=nptest
np_test_user_ensure "$user"
out_dir=$(mktemp -d /tmp/numaplace-harness.XXXXXX)
chmod 777 "$out_dir"
# shellcheck disable=SC2016 # expanded at exit
np_at_exit 'rm -rf "$out_dir"'
host=$(hostname -s)

# alive PID...: the pids among PID... that still exist (zombies count as gone).
alive() {
  local pid
  for pid in "$@"; do
    [ -e "/proc/$pid" ] && [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ] && echo "$pid"
  done
  return 0
}

np_cluster_start

case_up() {
  np_expect_eq "$(sinfo -h -o %T)" idle "node state"
  np_expect_match "^SlurmctldPort=[0-9]+$" "$(cat "$SLURM_CONF")"
  np_expect_match "^AuthInfo=socket=$np_dir/munge/munge.socket$" "$(cat "$SLURM_CONF")"
  np_expect_eq "$(scontrol show config | sed -n 's/^ClusterName *= *//p')" numaplace-test "ClusterName"
  np_expect_eq "$(scontrol show config | sed -n 's/^PlugStackConfig *= *//p')" "$np_dir/plugstack.conf" "PlugStackConfig"
  np_expect_eq "$(wc -c <"$np_dir/plugstack.conf")" 0 "plugstack.conf size without lines"
  # The node line is the machine's own (slurmd -C).
  np_expect_eq "$(scontrol show node "$host" | grep -o 'CPUTot=[0-9]*')" "CPUTot=$(nproc --all)" "CPUs"
}
np_case "cluster starts: node idle, every path in the temp dir" case_up

case_srun() {
  np_run srun -n2 hostname
  np_expect_rc 0
  np_expect_eq "$(grep -cx "$host" <<<"$np_out")" 2 "hostname lines"
}
np_case "srun -n2 hostname" case_srun

case_sbatch() {
  local job
  job=$(sbatch --parsable -n1 -o "$out_dir/sbatch.out" --wrap "echo sbatch-ran-\$SLURM_JOB_ID")
  np_expect_match '^[0-9]+$' "$job"
  np_wait_for 60 grep -q "^sbatch-ran-$job$" "$out_dir/sbatch.out" || np_fail "no output from job $job"
  np_wait_for 30 bash -c "scontrol show job $job | grep -q JobState=COMPLETED" ||
    np_fail "job $job not COMPLETED: $(scontrol show job "$job" | grep -o 'JobState=[A-Z]*')"
}
np_case "sbatch job runs and its output file appears" case_sbatch

case_binding() {
  local lists
  np_run srun -n2 --cpu-bind=verbose,cores grep Cpus_allowed_list /proc/self/status
  np_expect_rc 0
  np_expect_match "cpu-bind=MASK - $host, task +0"
  lists=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' <<<"$np_out" | sort)
  np_expect_eq "$(wc -l <<<"$lists")" 2 "tasks"
  np_expect_eq "$(sort -u <<<"$lists" | wc -l)" 2 "distinct CPU lists ($(paste -sd' ' <<<"$lists"))"
  # The probe sees the same binding.
  np_run srun -n2 "$NP_PROBE"
  np_expect_rc 0
  np_expect_eq "$(grep -o ' cpus=[^ ]*' <<<"$np_out" | sort -u | wc -l)" 2 "distinct probe cpus"
}
if [ "$(nproc --all)" -ge 2 ]; then
  np_case "tasks are bound to distinct CPUs (task/affinity)" case_binding
fi

case_user() {
  np_run np_run_as "$user" srun -n1 id -un
  np_expect_rc 0
  np_expect_eq "$(tail -1 <<<"$np_out")" "$user" "task user"
  np_run np_run_as "$user" sbatch --parsable -o "$out_dir/user.out" --wrap "id -un"
  np_expect_rc 0
  np_wait_for 60 grep -qx "$user" "$out_dir/user.out" || np_fail "the user's batch job wrote nothing"
}
np_case "srun and sbatch as the unprivileged user $user" case_user

case_plugstack_srun() {
  np_cluster_set_plugstack "required $out_dir/no-such-plugin.so"
  np_expect_fail srun -n1 true
  np_cluster_set_plugstack
  np_run srun -n1 true
  np_expect_rc 0
}
np_case "srun re-reads plugstack.conf at every start" case_plugstack_srun

case_plugstack_stepd() {
  [ -f "$NP_PLUGIN" ] || { np_fail "the plugin is not built: $NP_PLUGIN"; return; }
  # srun runs with a configuration of its own whose plugstack is empty, so whatever policy the
  # probe sees was applied by slurmstepd from the cluster's plugstack.conf as it was then.
  : >"$out_dir/empty-plugstack.conf"
  sed "s|^PlugStackConfig=.*|PlugStackConfig=$out_dir/empty-plugstack.conf|" "$SLURM_CONF" >"$out_dir/client.conf"
  np_cluster_set_plugstack "optional $NP_PLUGIN default_policy=interleave"
  np_run env SLURM_CONF="$out_dir/client.conf" srun -n1 "$NP_PROBE"
  np_expect_match "mode=interleave .*env_policy=interleave"
  np_cluster_set_plugstack
  np_run env SLURM_CONF="$out_dir/client.conf" srun -n1 "$NP_PROBE"
  np_expect_match "mode=default nodes=- .*env_policy= "
  np_cluster_set_plugstack "optional $NP_PLUGIN default_policy=local-strict"
  np_run env SLURM_CONF="$out_dir/client.conf" srun -n1 "$NP_PROBE"
  np_expect_match "mode=bind .*env_policy=local-strict"
  np_cluster_set_plugstack
}
np_case "slurmstepd re-reads plugstack.conf at every step (no slurmd restart)" case_plugstack_stepd

case_logs() {
  np_run srun -n1 true
  np_expect_rc 0
  np_slurmd_log_grep '^\[[^]]*\] \[[0-9]+\.0\] debug: +spank: opening plugin stack' >/dev/null ||
    np_fail "no slurmstepd line in slurmd.log"
  np_log_grep '_job_complete: JobId=[0-9]+ done' >/dev/null || np_fail "no slurmctld line"
  np_expect_fail np_slurmd_log_grep 'no such line in any log, surely'
}
np_case "slurmstepd logs into slurmd.log; np_slurmd_log_grep/np_log_grep find lines" case_logs

case_two_clusters() {
  local second
  second=$(
    # A subshell: its own np_dir, SLURM_CONF and trap; the first cluster is untouched.
    np_dir=""
    np_exit_cmds=()
    np_cluster_start >/dev/null
    printf 'conf=%s\n' "$SLURM_CONF"
    srun -n1 hostname
    np_cluster_stop
  ) || np_fail "the second cluster failed"
  np_out=$second
  np_expect_match "^$host$"
  np_expect_no_match "^conf=$SLURM_CONF$"
  np_run srun -n1 hostname
  np_expect_rc 0
}
np_case "a second cluster runs beside the first (own ports and directory)" case_two_clusters

case_restart() {
  local before=$np_slurmd_pid
  np_cluster_restart_slurmd
  [ "$np_slurmd_pid" != "$before" ] || np_fail "slurmd pid unchanged"
  np_expect_eq "$(alive "$before")" "" "old slurmd still alive"
  np_run srun -n2 hostname
  np_expect_rc 0
}
np_case "np_cluster_restart_slurmd: a new slurmd, steps still run" case_restart

case_framework() {
  np_run bash -c "source '$lib'
    t() { np_expect_eq 1 2 one; np_expect_match '^x' 'y'; }
    np_case a true; np_case b false; np_case c t
    np_case d; np_run false; np_expect_fail; np_end_case
    np_finish"
  np_expect_rc 1
  np_expect_match "^PASS a \([0-9]+ s\)$"
  np_expect_match "^FAIL b \([0-9]+ s\): 'false' exited with status 1$"
  np_expect_match "^FAIL c \([0-9]+ s\): one: got '1', expected '2'$"
  np_expect_match "^  and: no line matches /\^x/$"
  np_expect_match "^PASS d \([0-9]+ s\)$"
  np_expect_eq "$(tail -1 <<<"$np_out")" "2 passed, 2 failed" "summary line"
}
np_case "case framework: PASS/FAIL lines and the summary" case_framework

case_missing() {
  # PATH without any Slurm or munge program.
  np_run env -i PATH=/nonexistent NUMAPLACE_SOURCE="$NUMAPLACE_SOURCE" /bin/bash -c "source '$lib'; echo reached"
  np_expect_rc 1
  np_expect_match "^!!!! numaplace test harness: required program 'munged' is not installed"
  np_expect_no_match "^reached$"
}
np_case "a missing program is a loud error, not a skip" case_missing

case_unresolvable_host() {
  # The machine's name as a UTS namespace of its own sets it: a name no resolver knows.
  np_run unshare --uts /bin/bash -c "hostname np-unresolvable.invalid && source '$lib' &&
    np_cluster_start && echo reached"
  np_expect_rc 1
  np_expect_match "^!!!! numaplace test harness: this machine's name 'np-unresolvable.invalid' does not resolve"
  np_expect_no_match "^reached$"
  np_expect_no_match "test cluster up"
}
np_case "a machine name that does not resolve is a loud error before any daemon starts" case_unresolvable_host

# child_cluster MODE: a script that starts a cluster in $out_dir/MODE, then exits 3 (fail) or
# waits for SIGTERM (term). The EXIT trap must stop everything either way.
child_cluster() {
  cat >"$out_dir/child-$1.sh" <<EOF
source '$lib'
NUMAPLACE_CLUSTER_DIR='$out_dir/cluster-$1' np_cluster_start
sbatch -o /dev/null --wrap 'sleep 300' >/dev/null
np_wait_for 30 bash -c '[ -n "\$(squeue -h -t R)" ]'
touch '$out_dir/up-$1'
np_wait_for 60 test -e '$out_dir/go-$1'
if [ '$1' = fail ]; then exit 3; fi
for _ in \$(seq 600); do sleep 0.1; done
EOF
  bash "$out_dir/child-$1.sh" >"$out_dir/child-$1.out" 2>&1
}

case_child() {
  local mode=$1 pid rc=0
  child_cluster "$mode" &
  pid=$!
  np_wait_for 60 test -e "$out_dir/up-$mode" || np_fail "the child's cluster never came up"
  local pids
  pids=$(pgrep -f -- "$out_dir/cluster-$mode/" | paste -sd' ')
  [ -n "$pids" ] || np_fail "no daemons seen for the child's cluster"
  touch "$out_dir/go-$mode"
  sleep 0.5
  [ "$mode" = fail ] || pkill -TERM -P "$pid" -f "child-$mode.sh" || np_fail "could not signal the child"
  wait "$pid" || rc=$?
  np_out=$(cat "$out_dir/child-$mode.out")
  np_expect_eq "$rc" "$([ "$mode" = fail ] && echo 3 || echo 143)" "child exit status"
  # shellcheck disable=SC2086 # one argument per pid
  np_expect_eq "$(alive $pids)" "" "daemons still alive"
  np_expect_eq "$(pgrep -f -- "$out_dir/cluster-$mode/" || true)" "" "processes naming the child's dir"
  np_expect_eq "$(pgrep -fx 'sleep 300' | while read -r p; do tr '\0' '\n' <"/proc/$p/environ" | grep -qx "SLURM_CONF=$out_dir/cluster-$mode/slurm.conf" && echo "$p"; done)" "" "the job's task"
  [ ! -e "$out_dir/cluster-$mode" ] || np_fail "the child's cluster directory is still there"
}
np_case "a script that fails mid-way leaves no daemons (EXIT trap)" case_child fail
np_case "SIGTERM to a script leaves no daemons (TERM trap)" case_child term

cluster_has_step() { [ "$(np_cluster_pids | wc -l)" -ge 4 ]; }
case_stop() {
  local pids dir=$np_dir job
  job=$(sbatch --parsable -o /dev/null --wrap 'sleep 300')
  np_wait_for 30 bash -c "scontrol show job $job | grep -q JobState=RUNNING" || np_fail "job $job never ran"
  # RUNNING is slurmctld's word: on a loaded machine the node's slurmstepd comes a moment later.
  np_wait_for 30 cluster_has_step
  pids=$(np_cluster_pids | paste -sd' ')
  [ "$(wc -w <<<"$pids")" -ge 4 ] || np_fail "expected munged, slurmctld, slurmd and a slurmstepd; got '$pids'"
  np_cluster_stop
  # shellcheck disable=SC2086 # one argument per pid
  np_expect_eq "$(alive $pids)" "" "processes of the cluster still alive"
  np_expect_eq "$(pgrep -f -- "$dir/" || true)" "" "processes naming the cluster directory"
  np_expect_eq "$np_dir" "" "np_dir after stop"
  [ ! -e "$dir" ] || np_fail "$dir is still there"
}
np_case "np_cluster_stop leaves no daemons, steps or directory" case_stop

np_finish
