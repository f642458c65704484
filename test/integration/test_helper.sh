#!/usr/bin/env bash
# numaplaced on a real local Slurm: the plugin registers tasks from slurmstepd, the helper samples
# a workload of known size, `numaplace status` shows it while it runs, the report appears at the
# step's end with figures that match what the kernel told the workload itself, users see their
# own jobs only, and jobs launch and finish with the helper stopped (one log line). Expected node
# sets come from this machine's sysfs, so the suite runs unchanged in the multi-NUMA guest.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"

user=nptest
other=nptest2
np_test_user_ensure "$user"
np_test_user_ensure "$other"
out_dir=$(mktemp -d /tmp/numaplace-helper.XXXXXX)
chmod 777 "$out_dir"
np_at_exit "rm -rf '$out_dir'"

# json EXPR FILE: evaluate a Python expression over the JSON document `d` in FILE.
json() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[2]))
print(eval(sys.argv[1]))' "$1" "$2"
}

# within ACTUAL EXPECTED FRACTION [ABS]: |actual - expected| <= max(fraction * expected, abs)
within() {
  python3 -c 'import sys
a, e, f = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
slack = max(f * abs(e), float(sys.argv[4]) if len(sys.argv) > 4 else 0)
sys.exit(0 if abs(a - e) <= slack else 1)' "$@"
}

np_cluster_start
np_cluster_set_plugstack "$(np_helper_plugstack)"
np_helper_start
log="$np_dir/helper/numaplaced.log"

np_case "the helper says where it runs and what it can count"
np_out=$(cat "$log")
np_expect_match "runs on CPUs [0-9,-]+"
np_expect_match "listening on $np_dir/helper/numaplaced.sock"
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
  np_expect_match "perf::CYCLES unavailable: .*no hardware PMU"
fi
np_expect_match "perf: [0-9] of 7 events count on this node"
np_end_case

# slurmstepd asks auto's advice as root (init_post_opt): from user_init, under the job's euid,
# numaplaced refused it ("uid N may not") and every task fell back to the static choice.
np_case "--numa-policy=auto with numaplaced answering: a user's tasks get its advice"
np_run np_run_as "$user" srun -n1 --numa-sensitivity=high --numa-policy=verbose,auto "$NP_PROBE"
np_expect_rc 0
np_expect_match "^numaplace: task 0 on [^ ]+: policy=[a-z-]+ \(auto\) .*\(auto: "
np_expect_match "env_reason=auto: "
! grep -q "did not answer" <<<"$np_out" || np_fail "numaplaced's advice did not reach the task: $np_out"
# auto's facts reach the step's report as fields, beside its reason (docs/report-schema.md)
auto_facts() {
  python3 - "$np_dir"/helper/spool/*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        continue
    if r.get("policy", {}).get("requested") == "auto":
        task = r["policy"]["tasks"][0]
        if sorted(task.get("auto", {})) == ["allowed_nodes", "loaded_nodes", "sensitivity", "task_nodes"] \
                and task["auto"]["sensitivity"] == "high" and task["auto"]["task_nodes"]:
            sys.exit(0)
sys.exit(1)
PY
}
np_wait_for 10 auto_facts || np_fail "no report in the spool has the task's auto facts"
np_end_case

# numaplaced refuses advise for a job name with a control character: the task's reason says it
# refused and why, not that it did not answer (a refusal is an answer, not a timeout).
np_case "--numa-policy=auto with a job name numaplaced refuses: the task says it refused, and why"
np_run np_run_as "$user" srun -n1 -J "$(printf 'np\001name')" --numa-policy=verbose,auto "$NP_PROBE"
np_expect_rc 0
np_expect_match "\(the helper refused: request field \"name\" has a control character"
! grep -q "did not answer" <<<"$np_out" || np_fail "the refusal was told as silence: $np_out"
np_end_case

# What auto learnt of a (user, job name) is in state_dir/history.json, root's alone, and a
# numaplaced killed with SIGKILL and started again still knows it.
np_case "--numa-policy=auto's history survives kill -9 and a restart; the user cannot write it"
history="$np_dir/helper/state/history.json"
np_run np_run_as "$user" srun -n1 -J np-auto-history --numa-sensitivity=high --numa-policy=auto "$NP_PROBE"
np_expect_rc 0
np_wait_for 20 grep -q '"name":"np-auto-history"' "$history" 2>/dev/null ||
  np_fail "history.json never named the job: $(cat "$history" 2>&1)"
np_expect_eq "$(stat -c '%U %a' "$history")" "root 600" "history.json's owner and mode"
! np_run_as "$user" sh -c "echo x >>'$history'" 2>/dev/null || np_fail "$user could write $history"
kill -9 "$np_helper_pid"
wait "$np_helper_pid" 2>/dev/null || true
np_helper_pid=""
np_helper_start
np_run np_run_as "$user" srun -n1 -J np-auto-history --numa-policy=verbose,auto "$NP_PROBE"
np_expect_rc 0
np_expect_match "env_reason=auto: [a-z-]+: sensitivity high \(history\)"
np_run np_run_as "$other" srun -n1 -J np-auto-history --numa-policy=verbose,auto "$NP_PROBE"
np_expect_match "env_reason=auto: local: sensitivity unknown" # another user's runs say nothing
np_end_case

np_case "a job of known size: status while it runs, then its report"
mb=64 busy=8 idle=2
np_run_as "$user" srun -n1 -J np-known-size --numa-policy=interleave -o "$out_dir/workload.out" \
  "$NP_WORKLOAD" --mb $mb --busy $busy --idle $idle &
srun_pid=$!
job=""
# By its name: the user's job of the case before may still be listed, completing.
np_wait_for 30 bash -c "squeue -h -u $user -n np-known-size -o %i | grep -q ." ||
  np_fail "the job never started"
job=$(squeue -h -u "$user" -n np-known-size -o %i | head -1)
# Status once the workload has touched its memory and the helper has read it (the verdict in
# awk's END: with no line listed, a verdict in the per-line block would never run, and pass).
np_wait_for 20 bash -c "'$NP_CLI' --socket '$np_dir/helper/numaplaced.sock' status | grep -E '^$job +0 .*node[0-9]+=[0-9.]+MiB' | awk '{ for (i = 1; i <= NF; i++) if (\$i ~ /^node/) { split(\$i, a, \"=\"); s += a[2] } } END { exit !(s > 0.9 * $mb) }'" ||
  np_fail "numaplace status never showed job $job with its $mb MiB"
np_run np_numaplace status
np_expect_rc 0
np_expect_match "^$job +0 +[0-9]+ +low +interleave "
# the node's memory traffic, each node with its source (MB/s only where measured)
np_expect_match "^memory traffic by node: node[0-9]+ ([0-9.]+ MB/s \((misses|uncore)\)|proxy|unavailable \()"
np_run np_run_as "$user" "$NP_CLI" --socket "$np_dir/helper/numaplaced.sock" status
np_expect_match "^$job +0 "
np_run np_run_as "$other" "$NP_CLI" --socket "$np_dir/helper/numaplaced.sock" status
np_expect_no_match "^$job "
np_run np_run_as "$other" "$NP_CLI" --socket "$np_dir/helper/numaplaced.sock" status "$job"
np_expect_fail
np_expect_match "no job $job of yours is tracked on this node"
wait "$srun_pid" || np_fail "srun failed"
report="$np_dir/helper/spool/$job.0.$(hostname).json"
np_wait_for 10 test -s "$report" || np_fail "no report $report"
np_end_case

np_case "the report's figures match the allocation and what the kernel told the workload"
cp "$report" "$out_dir/report.json"
chmod 644 "$out_dir/report.json"
r="$out_dir/report.json"
wl=$(grep '^{' "$out_dir/workload.out")
[ -n "$wl" ] || np_fail "the workload printed no figures: $(cat "$out_dir/workload.out")"
echo "$wl" >"$out_dir/workload.json"
np_expect_eq "$(json 'd["schema"]' "$r")" "numaplace.report/1.1" "schema"
np_expect_eq "$(json 'd["complete"]' "$r")" "True" "complete"
np_expect_eq "$(json 'd["sensitivity"]' "$r")" "low" "class"
np_expect_eq "$(json 'd["policy"]["requested"]' "$r")" "interleave" "requested policy"
np_expect_eq "$(json 'd["policy"]["tasks"][0]["policy"]' "$r")" "interleave" "applied policy (reported by the task)"
np_expect_eq "$(json 'd["uid"]' "$r")" "$(id -u "$user")" "uid"
# One sample per interval over the step's life, within one interval (plus the final sample).
duration=$(json 'd["duration_s"]' "$r")
samples=$(json 'd["sampling"]["count"]' "$r")
within "$samples" "$(python3 -c "print($duration / 1.0 + 1)")" 0 1.01 ||
  np_fail "$samples samples over $duration s at 1 s intervals"
# Pages per node: the allocation (plus the program itself) within 10%.
peak=$(json 'd["pages"]["peak_total_bytes"]' "$r")
within "$peak" $((mb << 20)) 0.10 || np_fail "peak pages $peak bytes, allocation $((mb << 20))"
# CPU and kernel time: what getrusage told the workload.
user_s=$(json 'd["cpu"]["user_s"]' "$r")
sys_s=$(json 'd["cpu"]["system_s"]' "$r")
within "$user_s" "$(json 'd["user_s"]' "$out_dir/workload.json")" 0.05 0.1 ||
  np_fail "user CPU $user_s s; the workload measured $(json 'd["user_s"]' "$out_dir/workload.json") s"
within "$sys_s" "$(json 'd["system_s"]' "$out_dir/workload.json")" 0.10 0.1 ||
  np_fail "system CPU $sys_s s; the workload measured $(json 'd["system_s"]' "$out_dir/workload.json") s"
# perf, through real perf_event_open: task-clock counts the same CPU time.
tc=$(json 'd["perf_counts"]["task_clock_ns"].get("value", -1)' "$r")
within "$tc" "$(python3 -c "print(($user_s + $sys_s) * 1e9)")" 0.10 2e8 ||
  np_fail "perf task-clock $tc ns against /proc's $user_s + $sys_s s"
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
  np_out=$(json 'd["cpi"]["unavailable"] + " | " + d["bandwidth"]["unavailable"]' "$r")
  np_expect_match "no hardware PMU"
fi
np_out=$(json 'sorted(d["os_interference"])' "$r")
for k in kernel_time_share involuntary_cs_per_s interrupts_on_cpus softirqs_on_cpus other_cpu_time_s; do
  np_expect_match "'$k'"
done
np_expect_eq "$(json '"count" in d["os_interference"]["interrupts_on_cpus"]' "$r")" "True" "interrupts measured"
np_expect_eq "$(json 'd["helper"]["cpu_time_s"] > 0' "$r")" "True" "helper's own CPU time"
np_end_case

np_case "numaplace report: text and JSON for the owner, refused for another user"
np_run np_run_as "$user" "$NP_CLI" --spool "$np_dir/helper/spool" report --steps "$job"
np_expect_rc 0
np_expect_match "^job $job step 0 on "
np_expect_match "CPI +unavailable \(|CPI +mean "
np_expect_match "pages per node"
np_run np_run_as "$user" "$NP_CLI" --spool "$np_dir/helper/spool" report --steps "$job" --json
np_expect_rc 0
np_expect_match '"schema": "numaplace.report/1.1"'
# Without --steps: the job summary, merged from this node's spool (this cluster keeps no
# accounting, and the command says so).
np_run np_run_as "$user" "$NP_CLI" --spool "$np_dir/helper/spool" report "$job" --json
np_expect_rc 0
np_expect_match '"schema": "numaplace.summary/1"'
np_run np_run_as "$user" "$NP_CLI" --spool "$np_dir/helper/spool" report "$job"
np_expect_rc 0
np_expect_match "source: this node's spool"
np_run np_run_as "$other" "$NP_CLI" --spool "$np_dir/helper/spool" report "$job"
np_expect_fail
np_expect_match "job $job is not yours"
np_run np_numaplace report 999999
np_expect_fail
np_expect_match "no report for job 999999"
np_run np_numaplace report 12x
np_expect_rc 2
np_expect_match "\"12x\" is not a job id"
np_end_case

np_case "sbatch: the batch step and a step inside get reports of their own"
jb=$(np_run_as "$user" sbatch --parsable -n1 -o "$out_dir/batch.out" \
  --wrap "$NP_WORKLOAD --mb 8 --busy 1 --idle 1.5; srun $NP_WORKLOAD --mb 8 --busy 1 --idle 1.5")
np_wait_for 60 test -s "$np_dir/helper/spool/$jb.batch.$(hostname).json" ||
  np_fail "no batch report for job $jb"
np_wait_for 10 test -s "$np_dir/helper/spool/$jb.0.$(hostname).json" ||
  np_fail "no step 0 report for job $jb"
np_run np_numaplace report --steps "$jb"
np_expect_match "^job $jb step batch "
np_expect_match "^job $jb step 0 "
np_end_case

np_case "only root registers; malformed requests get a clear error and the helper stays up"
np_run np_run_as "$user" python3 - "$np_dir/helper/numaplaced.sock" <<'PY'
import json, socket, sys
def call(text):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1]); s.sendall(text.encode()); r = s.recv(65536).decode(); s.close()
    print(r.strip())
call(json.dumps({"v": 1, "op": "register", "job": 1, "step": 0, "uid": 0, "pid": 1, "sensitivity": "high"}) + "\n")
call(json.dumps({"v": 1, "op": "step_end", "job": 1, "step": 0}) + "\n")
call("{not json\n")
call(json.dumps({"v": 9, "op": "ping"}) + "\n")
call("x" * 70000 + "\n")
PY
np_expect_match "only root \(slurmstepd\) may register tasks; uid [0-9]+ may not"
np_expect_match "only root \(slurmstepd\) may end steps"
np_expect_match "request is not valid JSON"
np_expect_match "request speaks protocol version 9; this side speaks 1"
np_expect_match "request over 65536 bytes"
np_helper_answers >/dev/null || np_fail "the helper stopped answering"
np_end_case

np_case "SIGHUP reloads the configuration"
echo "interval_ms = 500" >"$np_dir/helper/numaplaced.conf"
kill -HUP "$np_helper_pid"
np_wait_for 10 grep -q "reloaded: interval 500 ms" "$log" || np_fail "no reload line in the log"
np_run np_numaplace status
np_expect_match "interval 500 ms"
echo "interval_ms = 1000" >"$np_dir/helper/numaplaced.conf"
kill -HUP "$np_helper_pid"
np_wait_for 10 grep -q "reloaded: interval 1000 ms" "$log" || np_fail "no second reload line"
np_end_case

np_case "a restart keeps a running step: the registry survives in the state directory"
# Long enough to outlive the restart on an emulated guest beside other work (a 7-s step once
# ended before the restarted helper's status, and the case read no step).
np_run_as "$user" srun -n1 -o /dev/null "$NP_WORKLOAD" --mb 8 --busy 3 --idle 25 &
srun_pid=$!
np_wait_for 30 bash -c "'$NP_CLI' --socket '$np_dir/helper/numaplaced.sock' status | grep -qE '^[0-9]+ +0 '" ||
  np_fail "the step never showed in status"
jr=$(np_numaplace status | awk '$2 == "0" { print $1; exit }')
np_helper_stop
np_helper_start
np_run np_numaplace status
np_expect_match "^$jr +0 "
wait "$srun_pid" || np_fail "srun failed across the helper restart"
np_wait_for 15 test -s "$np_dir/helper/spool/$jr.0.$(hostname).json" || np_fail "no report for $jr"
np_end_case

# A helper that accepts but never answers (stopped, stuck on a disk): after one call of a step
# times out, the step's other tasks do not call it (a marker the whole step shares). Counted, not
# timed: the stopped helper's listen queue holds every connection made to it.
np_case "a stopped numaplaced: a step of sixteen tasks calls it once, and waits one timeout"
sock="$np_dir/helper/numaplaced.sock"
timeout_ms=$(sed -n 's/.*helper_timeout_ms=\([0-9]*\).*/\1/p' <<<"$(np_helper_plugstack)")
queued() { ss -xlnH src "$sock" | awk '{ print $3 }'; }
step16() { # the step's wall time in ms, its output in np_out
  local t0 t1
  t0=$(date +%s%N)
  # shellcheck disable=SC2016 # expanded by the task's shell
  np_run np_run_as "$user" srun -n16 -O --numa-policy=local \
    bash -c '[ "$SLURM_PROCID" != 0 ] || echo "job=$SLURM_JOB_ID"'
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000)) >"$out_dir/step16.ms"
}
out_dir=$(mktemp -d)
step16
np_expect_rc 0
answered_ms=$(cat "$out_dir/step16.ms")
# srun returns before slurmstepd tells numaplaced the step ended: stopped before that, the helper
# would hold this step's step_end too (one connection more, and 2 s in which the next step waits
# for the CPUs this one still holds).
np_wait_for 30 bash -c "'$NP_CLI' --socket '$sock' status | grep -q ', 0 job step(s) shown'" ||
  np_fail "numaplaced still lists a step after the first one ended"
kill -STOP "$np_helper_pid"
np_expect_eq "$(queued)" 0 "connections queued at the stopped helper before the step"
step16
np_expect_rc 0
stopped_ms=$(cat "$out_dir/step16.ms")
calls=$(queued)
kill -CONT "$np_helper_pid"
jt=$(sed -n 's/^job=//p' <<<"$np_out")
np_expect_eq "$calls" 1 "calls the sixteen tasks' step made to the stopped helper (one register)"
step16
np_expect_rc 0
answered_ms=$((answered_ms > $(cat "$out_dir/step16.ms") ? answered_ms : $(cat "$out_dir/step16.ms")))
# One timeout more than the step with numaplaced answering (the slower of the runs before and
# after); one per task and step_end's 2 s would be 16 x ${timeout_ms} ms + 2 s more. Eight
# timeouts is the bound: far from both.
echo "a step of 16 tasks: ${answered_ms} ms with numaplaced answering, ${stopped_ms} ms with it stopped (timeout ${timeout_ms} ms)"
[ "$stopped_ms" -lt $((answered_ms + 8 * timeout_ms)) ] ||
  np_fail "the step took ${stopped_ms} ms with numaplaced stopped, ${answered_ms} ms with it answering"
np_expect_eq "$(np_slurmd_log_grep "numaplace: job $jt step 0: helper not reached" | wc -l)" 1 \
  "log lines for the sixteen tasks of the step"
np_helper_answers >/dev/null || np_fail "numaplaced does not answer after SIGCONT"
rm -rf "$out_dir"
np_end_case

# A step of at most eight tasks registers them on sockets slurmstepd connected before the fork,
# and no task waits for the answers: slurmstepd reads them at the step's end (docs/protocol.md,
# register). Stopped, the helper answers none: the launch waits for nothing, and the step's end
# one timeout for all eight, with one log line.
np_case "a stopped numaplaced: a step of eight tasks registered ahead waits one timeout, not eight"
sock="$np_dir/helper/numaplaced.sock"
timeout_ms=$(sed -n 's/.*helper_timeout_ms=\([0-9]*\).*/\1/p' <<<"$(np_helper_plugstack)")
queued() { ss -xlnH src "$sock" | awk '{ print $3 }'; }
step8() { # the step's wall time in ms, its output in np_out
  local t0 t1
  t0=$(date +%s%N)
  # shellcheck disable=SC2016 # expanded by the task's shell
  np_run np_run_as "$user" srun -n8 -O --numa-policy=local \
    bash -c '[ "$SLURM_PROCID" != 0 ] || echo "job=$SLURM_JOB_ID"'
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000)) >"$out_dir/step8.ms"
}
out_dir=$(mktemp -d)
step8
np_expect_rc 0
answered_ms=$(cat "$out_dir/step8.ms")
ja=$(sed -n 's/^job=//p' <<<"$np_out")
np_expect_eq "$(np_slurmd_log_grep "numaplace: job $ja step 0: helper not reached" | wc -l)" 0 \
  "log lines for the step with numaplaced answering"
# Every task registered, and each said what it applied (numaplaced takes that only from a task it
# knows: it reads the registration, on the older connection, first).
report="$np_dir/helper/spool/$ja.0.$(hostname).json"
np_wait_for 10 test -s "$report" || np_fail "no report $report"
np_expect_eq "$(json 'len(d["policy"]["tasks"])' "$report")" 8 "tasks in the report"
np_expect_eq "$(json 'sum(t.get("policy") == "local" for t in d["policy"]["tasks"])' "$report")" 8 \
  "tasks whose applied policy the report has"
np_wait_for 30 bash -c "'$NP_CLI' --socket '$sock' status | grep -q ', 0 job step(s) shown'" ||
  np_fail "numaplaced still lists a step after the first one ended"
kill -STOP "$np_helper_pid"
step8
np_expect_rc 0
stopped_ms=$(cat "$out_dir/step8.ms")
calls=$(queued)
jt=$(sed -n 's/^job=//p' <<<"$np_out")
# slurmstepd's one line, once the step's end has waited its one timeout for the answers
np_wait_for 30 np_slurmd_log_grep "numaplace: job $jt step 0: helper not reached" ||
  np_fail "no log line about the stopped helper for job $jt"
kill -CONT "$np_helper_pid"
np_expect_eq "$calls" 16 "connections the eight tasks' step made to the stopped helper (per task: its registration, its applied)"
echo "a step of 8 tasks: ${answered_ms} ms with numaplaced answering, ${stopped_ms} ms with it stopped (timeout ${timeout_ms} ms)"
# One timeout if the tasks wait together, eight if one after the other: four is the bound.
[ "$stopped_ms" -lt $((answered_ms + 4 * timeout_ms)) ] ||
  np_fail "the step took ${stopped_ms} ms with numaplaced stopped, ${answered_ms} ms with it answering"
np_expect_eq "$(np_slurmd_log_grep "numaplace: job $jt step 0: helper not reached" | wc -l)" 1 \
  "log lines for the eight tasks of the step"
np_helper_answers >/dev/null || np_fail "numaplaced does not answer after SIGCONT"
rm -rf "$out_dir"
np_end_case

np_case "with the helper stopped, jobs launch and finish and the plugin logs one line per step"
np_helper_stop
start=$SECONDS
# shellcheck disable=SC2016 # expanded by the task's shell
np_run np_run_as "$user" srun -n2 --numa-policy=local bash -c 'echo "job=$SLURM_JOB_ID"; exec "$0"' "$NP_PROBE"
np_expect_rc 0
[ "$(grep -c '^rank=' <<<"$np_out")" = 2 ] || np_fail "expected two probe lines"
[ $((SECONDS - start)) -lt 30 ] || np_fail "the launch took $((SECONDS - start)) s"
jd=$(sed -n 's/^job=//p' <<<"$np_out" | head -1)
np_wait_for 10 np_slurmd_log_grep "numaplace: job $jd step 0: helper not reached" ||
  np_fail "no plugin log line about the helper for job $jd"
np_expect_eq "$(np_slurmd_log_grep "numaplace: job $jd step 0: helper not reached" | wc -l)" 1 \
  "log lines for the two tasks of one step"
np_out=$(np_slurmd_log_grep "numaplace: job $jd step 0: helper not reached")
np_expect_match "placement applies, the step is not monitored"
np_end_case

np_finish
