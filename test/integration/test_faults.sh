#!/usr/bin/env bash
# numaplaced under faults, host-only: Slurm adds nothing here, so a driver plays
# slurmstepd on the real socket (register each task of a step, step_end) with real processes of an
# unprivileged user.
# - kill -9 twenty times at random moments (seeded: NP_FAULTS_SEED, printed) while steps register,
#   run and end: after each restart every step it acknowledged is tracked again, and at the end
#   every step has exactly one report (parsed; complete unless the helper restarted during it;
#   never replaced by a poorer one), no temporary file is left, and one planted by a "killed
#   earlier run" is removed;
# - kill -9 right after the early step_end answer (on the disk, and with a full spool holding the
#   report): the restart writes the step's final report, and the log says so;
# - a full spool (a small tmpfs) and a read-only one: logged once, the helper keeps answering and
#   sampling, no file half-written, held steps listed ending, and the held reports are written
#   once the spool takes them (or by the next start, after a stop);
#   a full state directory: the registry's failed saves are logged once.
# The host has one NUMA node, so no migration runs here (test/vm/ does that).
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"

user=nptest
np_test_user_ensure "$user"
uid=$(id -u "$user")
seed=${NP_FAULTS_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "test_faults: seed $seed (NP_FAULTS_SEED=$seed repeats the schedule)"

np_helper_alone
np_helper_command --interval_ms=200
spool="$np_dir/helper/spool"
state="$np_dir/helper/state"
log="$np_dir/helper/numaplaced.log"
host=$(hostname)

# The driver: slurmstepd's calls in a thread, kill -9 and restarts in the main one. Prints one
# line per finding; exits 1 if any.
driver() {
  python3 - "$seed" "$uid" "$np_dir/helper" "$host" "$@" <<'PY'
import json, os, random, signal, socket, subprocess, sys, threading, time

sys.path.insert(0, os.environ["NUMAPLACE_SOURCE"] + "/test/integration/lib")
import np_proto  # the suites' one request-reply call

seed, uid, hdir, host = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
cmd = sys.argv[5:]
sock, spool, state = hdir + "/numaplaced.sock", hdir + "/spool", hdir + "/state"
rnd = random.Random(seed)
lock = threading.Lock()
findings = []
steps = {}  # job -> {procs, acked, end: None/"acked"/"tried", crossed, samples}
done = False
helper = None


def call(req, timeout=1.0):
    return np_proto.call(sock, req, timeout)


def start_helper():
    global helper
    helper = subprocess.Popen(cmd, stdout=open(hdir + "/numaplaced.out", "a"), stderr=subprocess.STDOUT)
    for _ in range(150):
        if (call({"op": "ping"}) or {}).get("ok"):
            return
        time.sleep(0.1)
    sys.exit("numaplaced did not answer within 15 s")


def report(job):
    try:
        return json.load(open("%s/%d.0.%s.json" % (spool, job, host)))
    except (OSError, ValueError):
        return None


def start_step(job):
    st = steps[job] = {"procs": [], "acked": 0, "end": None, "crossed": False, "samples": None}
    for task in range(2):
        p = subprocess.Popen(["sleep", "600"], user=uid, group=uid)
        st["procs"].append(p)
        r = call({"op": "register", "job": job, "step": 0, "uid": uid, "pid": p.pid, "task": task,
                  "cpus": "0", "policy": "local", "sensitivity": "low"})
        st["acked"] += bool(r and r.get("ok"))


def end_step(job):
    st = steps[job]
    r = call({"op": "step_end", "job": job, "step": 0}, timeout=3.0)
    st["end"] = "acked" if r and r.get("ok") else "tried"
    for p in st["procs"]:
        p.kill()
        p.wait()
    if st["end"] == "acked":
        rep = report(job)
        st["samples"] = rep["sampling"]["count"] if rep else -1


def churn():
    job = 100
    while not done:
        with lock:
            running = [j for j, st in steps.items() if st["end"] is None]
            if len(running) < 3 or (len(running) < 12 and rnd.random() < 0.5):
                start_step(job)
                job += 1
            else:
                end_step(rnd.choice(running))
        time.sleep(rnd.uniform(0.02, 0.3))


start_helper()
worker = threading.Thread(target=churn)
worker.start()
for kill in range(20):
    time.sleep(rnd.uniform(0.1, 1.5))
    helper.kill()  # SIGKILL
    helper.wait()
    with lock:
        for st in steps.values():
            if st["end"] is None:
                st["crossed"] = True
        if kill == 10:  # what a kill between a temporary file's creation and its rename leaves
            open("%s/.99.0.%s.json.%d.tmp" % (spool, host, 4000000 + kill), "w").write("{")
            open("%s/.registry.json.%d.tmp" % (state, 4000000 + kill), "w").write("{")
        start_helper()
        reply = call({"op": "status"}, timeout=3.0) or {}
        tracked = {j["job"] for j in reply.get("jobs", [])}
        for job, st in steps.items():
            if st["end"] is None and st["acked"] and job not in tracked:
                findings.append("kill %d: job %d (registered, running) is not tracked after the restart" % (kill + 1, job))
        left = [f for d in (spool, state) for f in os.listdir(d) if f.endswith(".tmp")]
        if left:
            findings.append("kill %d: temporary files after the restart: %s" % (kill + 1, left))
done = True
worker.join()
with lock:
    for job, st in steps.items():
        if st["end"] is None:
            end_step(job)
time.sleep(0.5)
names = os.listdir(spool)
for job, st in sorted(steps.items()):
    mine = [n for n in names if n.startswith("%d." % job)]
    rep = report(job)
    if st["acked"] and len(mine) != 1:
        findings.append("job %d: %d reports, expected one: %s" % (job, len(mine), mine))
    if len(mine) > 1 or (mine and rep is None):
        findings.append("job %d: %s unreadable or duplicated" % (job, mine))
    if rep is None:
        continue
    if rep.get("schema") != "numaplace.report/1.1":
        findings.append("job %d: schema %r" % (job, rep.get("schema")))
    samples, duration = rep["sampling"]["count"], rep["duration_s"]
    if st["end"] == "acked":
        if rep["complete"] != (not st["crossed"]):
            findings.append("job %d: complete=%s, but the helper %s during the step" % (job, rep["complete"], "restarted" if st["crossed"] else "never restarted"))
        if samples != st["samples"]:
            findings.append("job %d: %d samples at the end, %s when its step ended" % (job, samples, st["samples"]))
        if not st["crossed"] and samples < max(1, 0.3 * duration / 0.2):
            findings.append("job %d: %d samples over %.1f s at 200 ms" % (job, samples, duration))
acked = sum(1 for st in steps.values() if st["acked"])
ends = sum(1 for st in steps.values() if st["end"] == "acked")
crossed = sum(1 for st in steps.values() if st["crossed"])
print("%d steps (%d registered, %d ended with the helper up, %d across a restart), %d reports" % (len(steps), acked, ends, crossed, len(names)))
helper.terminate()
helper.wait()
left = [f for d in (spool, state) for f in os.listdir(d) if f.endswith(".tmp")]
if left:
    findings.append("temporary files at the end: %s" % left)
for f in findings:
    print("FINDING:", f)
sys.exit(1 if findings else 0)
PY
}

np_case "kill -9 twenty times while steps register, run and end (seed $seed)"
np_run driver "${np_helper_cmd[@]}"
echo "$np_out" | grep -v '^FINDING' | tail -3
np_expect_rc 0
np_expect_no_match "^FINDING"
np_out=$(cat "$log")
np_expect_match "removed 1 temporary file\(s\) an earlier run left in $spool"
np_expect_match "removed 1 temporary file\(s\) an earlier run left in $state"
np_end_case

# The early step_end answer ("wait_report": false, the plugin's) comes after the final sample and
# before the report is durable. A driver that plays slurmstepd, kills numaplaced with SIGKILL and
# starts it again: CASE is "at-once" (killed right after the answer, on the disk's spool: the
# report may or may not be written yet) or "held" (the spool full, so the report is not durable
# when the kill comes). Either way the restart writes the step's final report: complete, with
# the samples it had, its duration the step's (never the restart's); the log says so, and never
# that the step ended while the helper was down. Prints one line per finding; exits 1 if any.
early_answer_driver() {
  python3 - "$1" "$uid" "$np_dir/helper" "$host" "${np_helper_cmd[@]}" <<'PY'
import json, os, re, socket, subprocess, sys, time

sys.path.insert(0, os.environ["NUMAPLACE_SOURCE"] + "/test/integration/lib")
import np_proto  # the suites' one request-reply call

case, uid, hdir, host = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cmd = sys.argv[5:]
sock, spool, logf = hdir + "/numaplaced.sock", hdir + "/spool", hdir + "/numaplaced.log"
job = {"at-once": 701, "held": 702}[case]
findings = []


def call(req, timeout=3.0):
    return np_proto.call(sock, req, timeout)


def wait_for(what, pred, seconds=30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.05)
    sys.exit("%s: gave up after %.0f s waiting for %s" % (case, seconds, what))


def start_helper():
    h = subprocess.Popen(cmd, stdout=open(hdir + "/numaplaced.out", "a"), stderr=subprocess.STDOUT)
    wait_for("numaplaced to answer", lambda: (call({"op": "ping"}) or {}).get("ok"))
    return h


def listed(job):
    r = call({"op": "status", "job": job}) or {}
    return (r.get("jobs") or [None])[0]


def report():
    try:
        return json.load(open("%s/%d.0.%s.json" % (spool, job, host)))
    except (OSError, ValueError):
        return None


log_at = os.path.getsize(logf) if os.path.exists(logf) else 0
helper = start_helper()
procs = [subprocess.Popen(["sleep", "600"], user=uid, group=uid) for _ in range(2)]
before = time.time()
for task, p in enumerate(procs):
    r = call({"op": "register", "job": job, "step": 0, "uid": uid, "pid": p.pid, "task": task,
              "cpus": "0", "policy": "local", "sensitivity": "low"})
    if not (r and r.get("ok")):
        sys.exit("%s: register refused: %r" % (case, r))
seen = wait_for("three samples", lambda: (lambda st: st and st["latest"]["samples"] >= 3 and st["latest"]["samples"])(listed(job)))
r = call({"op": "step_end", "job": job, "step": 0, "wait_report": False})
answered = time.time()
if case == "at-once":
    helper.kill()  # SIGKILL, right after the answer
helper_was = helper
if not (r and r.get("ok")):
    findings.append("step_end refused: %r" % (r,))
for p in procs:
    p.kill()
    p.wait()
if case == "held":
    # the spool refused the report: held, and listed as ending, before the kill
    wait_for("the report held", lambda: "job %d.0: cannot write its report" % job in open(logf).read()[log_at:])
    st = listed(job)
    if not (st and st.get("ending")):
        findings.append("the held step is not listed as ending before the kill: %r" % (st,))
    helper.kill()
helper_was.wait()
restart_at = os.path.getsize(logf)
helper = start_helper()
if case == "held":
    st = listed(job)
    if not (st and st.get("ending")):
        findings.append("after the restart the held step is not listed as ending: %r" % (st,))
    os.unlink(spool + "/filler")
rep = wait_for("its report", report, 15.0)
if rep["complete"] is not True:
    findings.append("the report says complete=%r" % rep["complete"])
if rep["sampling"]["count"] < seen:
    findings.append("the report has %d samples, the step had %d before its end" % (rep["sampling"]["count"], seen))
if rep["duration_s"] > answered - before:
    findings.append("the report's duration %.3f s is longer than the step (%.3f s from registration to the answer): the restart's time" % (rep["duration_s"], answered - before))
wait_for("the step to leave status", lambda: listed(job) is None, 15.0)
log = open(logf).read()[restart_at:]
if re.search(r"[1-9][0-9]* ended while the helper was down", log):
    findings.append("the log says the step ended while the helper was down")
if case == "held" and "1 ended before it stopped (their reports, kept in the registry, go to the spool)" not in log:
    findings.append("the log does not say the report was written from the registry")
helper.terminate()
helper.wait()
print("%s: %d samples seen, report of %d samples over %.3f s (step %.3f s)" % (case, seen, rep["sampling"]["count"], rep["duration_s"], answered - before))
for f in findings:
    print("FINDING:", f)
sys.exit(1 if findings else 0)
PY
}

np_at_exit "mountpoint -q '$spool' && umount -l '$spool'"

np_case "kill -9 right after the early step_end answer: the restart writes the step's final report"
np_run early_answer_driver at-once
echo "$np_out" | tail -3
np_expect_rc 0
np_expect_no_match "^FINDING"
np_end_case

np_case "kill -9 after the early answer while the full spool holds the report: written after the restart"
mount -t tmpfs -o size=64k,mode=0755 numaplace-faults "$spool" || np_fail "cannot mount a tmpfs on $spool"
dd if=/dev/zero of="$spool/filler" bs=4k count=64 status=none 2>/dev/null
np_run early_answer_driver held
echo "$np_out" | tail -3
np_expect_rc 0
np_expect_no_match "^FINDING"
umount "$spool"
np_end_case

# step_run JOB: a step of two tasks of $user registered as slurmstepd would; pids in $step_pids.
step_pids=()
step_run() {
  local task pid
  step_pids=()
  for task in 0 1; do
    setpriv --reuid="$uid" --regid="$uid" --clear-groups sleep 600 &
    pid=$!
    step_pids+=("$pid")
    proto "{\"v\":1,\"op\":\"register\",\"job\":$1,\"step\":0,\"uid\":$uid,\"pid\":$pid,\"task\":$task,\"cpus\":\"0\",\"sensitivity\":\"low\"}" |
      grep -q '"ok": *true' || np_fail "job $1 task $task: register refused"
  done
}

step_end() {
  proto "{\"v\":1,\"op\":\"step_end\",\"job\":$1,\"step\":0}" | grep -q '"ok": *true' ||
    np_fail "job $1: step_end refused"
  kill "${step_pids[@]}" 2>/dev/null
}

proto() {
  python3 - "$np_dir/helper/numaplaced.sock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())
PY
}

# Files in the spool other than the filler, one per line.
spool_files() {
  find "$spool" -mindepth 1 -maxdepth 1 ! -name filler -printf '%f\n' | sort
}

# A live step's sample count, from status (it keeps growing while the helper samples).
samples_of() {
  proto '{"v":1,"op":"status","job":'"$1"'}' | python3 -c 'import json, sys
r = json.load(sys.stdin)
print(r["jobs"][0]["latest"]["samples"])'
}

np_helper_start --interval_ms=200
np_at_exit "mountpoint -q '$state' && umount -l '$state'"

# Many steps end while the spool is full: each stays listed, ending (what `numaplace store` and
# `report` wait for), until its report is written; once there is room the held reports are
# written on the writer's thread, the oldest first, while the helper keeps answering, and the
# epilog's store, started while they were held, finds its job's report (it once said "nothing
# to store" at once).
np_case "forty reports held: their steps listed ending, written once there is room"
log_from=$(($(wc -l <"$log") + 1))
mount -t tmpfs -o size=4m,mode=0755 numaplace-faults "$spool" || np_fail "cannot mount a tmpfs on $spool"
dd if=/dev/zero of="$spool/filler" bs=4k status=none 2>/dev/null # until the tmpfs is full
np_run python3 - "$np_dir/helper/numaplaced.sock" "$uid" "$spool" "$host" "$NP_CLI" "$user" "$log" "$log_from" <<'PY'
import json, os, re, socket, subprocess, sys, time

sys.path.insert(0, os.environ["NUMAPLACE_SOURCE"] + "/test/integration/lib")
import np_proto  # the suites' one request-reply call

sock, uid, spool, host, cli, user, log = sys.argv[1], int(sys.argv[2]), *sys.argv[3:8]
log_from = int(sys.argv[8])
jobs = range(801, 841)


def call(req, timeout=10.0):
    return np_proto.call(sock, req, timeout)


def ending():
    return sorted(j["job"] for j in call({"op": "status"})["jobs"] if j.get("ending") and j["job"] in jobs)


def written():
    return [j for j in jobs if os.path.exists("%s/%d.0.%s.json" % (spool, j, host))]


for job in jobs:
    p = subprocess.Popen(["sleep", "600"], user=uid, group=uid)
    assert call({"op": "register", "job": job, "step": 0, "uid": uid, "pid": p.pid, "task": 0,
                 "cpus": "0", "policy": "local", "sensitivity": "low"})["ok"]
    assert call({"op": "step_end", "job": job, "step": 0, "wait_report": False})["ok"]
    p.kill()
    p.wait()


def held():
    """The steps whose report the spool refused, from the log (debug: every one is logged)."""
    with open(log) as f:
        lines = f.readlines()[log_from - 1:]
    said = re.compile(r"job (\d+)\.0: (cannot write its report|report held)")
    return {int(m.group(1)) for m in map(said.search, lines) if m} & set(jobs)


# The writer thread may not yet have tried every report: wait for that, not for a time, so
# that none is written straight to the spool once there is room (a loaded machine lags).
deadline = time.monotonic() + 60
while len(held()) < len(jobs) and time.monotonic() < deadline:
    time.sleep(0.05)
if len(held()) < len(jobs):
    print("FINDING: after 60 s, %d of %d reports tried and held" % (len(held()), len(jobs)))
listed = ending()
print("listed ending while held: %d of %d" % (len(listed), len(jobs)))
if listed != list(jobs) or written():
    print("FINDING: held steps listed ending: %s; reports written: %s" % (listed, written()))
# the epilog's store, as slurmd runs it (no Slurm here: it stops at accounting, after the spool)
env = dict(os.environ, SLURM_JOB_ID="801", SLURM_JOB_UID=str(uid), SLURM_JOB_USER=user, SLURMD_NODENAME=host)
store = subprocess.Popen(["timeout", "120", cli, "--socket", sock, "--spool", spool, "store", "801"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
os.unlink(spool + "/filler")
deadline = time.monotonic() + 30
while (len(written()) < len(jobs) or ending()) and time.monotonic() < deadline:
    assert call({"op": "ping"})["ok"]  # answered throughout
if len(written()) < len(jobs) or ending():
    print("FINDING: after 30 s, %d reports written, %s still listed ending" % (len(written()), ending()))
said = store.communicate()[0]
print("the store: %s" % (said.strip().splitlines() or ["(nothing)"])[-1])
if "nothing to store" in said:
    print("FINDING: the store did not wait for the held step: %s" % said.strip())
for job in jobs:
    rep = json.load(open("%s/%d.0.%s.json" % (spool, job, host)))
    if not rep["complete"] or rep["sampling"]["count"] < 1:
        print("FINDING: report %d: complete %s, %d samples" % (job, rep["complete"], rep["sampling"]["count"]))
PY
echo "$np_out" | grep -v '^FINDING' | tail -3
np_expect_rc 0
np_expect_no_match "^FINDING"
np_out=$(tail -n +"$log_from" "$log")
np_expect_match "takes reports again: 40 held report\(s\) written"
umount "$spool"
np_end_case

np_case "a full spool: logged once, reports held and written once there is room"
log_from=$(($(wc -l <"$log") + 1)) # the cases before this one held reports too
mount -t tmpfs -o size=64k,mode=0755 numaplace-faults "$spool" || np_fail "cannot mount a tmpfs on $spool"
dd if=/dev/zero of="$spool/filler" bs=4k count=64 status=none 2>/dev/null
step_run 501
kept=("${step_pids[@]}")
step_run 502
sleep 0.5
step_end 502
step_run 503
sleep 0.3
step_end 503
np_expect_eq "$(spool_files)" "" "files in the full spool (nothing half-written)"
np_expect_eq "$(tail -n +"$log_from" "$log" | grep -c 'held in memory')" 1 "log lines about the full spool"
np_out=$(tail -n +"$log_from" "$log" | grep 'held in memory')
np_expect_match "job 502.0: cannot write its report .*No space left on device"
np_helper_answers >/dev/null || np_fail "the helper stopped answering"
before=$(samples_of 501)
sampled_again() { [ "$(samples_of 501)" != "$before" ]; }
np_wait_for 30 sampled_again || np_fail "job 501 is no longer sampled: $before"
rm -f "$spool/filler"
np_wait_for 5 test -s "$spool/503.0.$host.json" || np_fail "the held reports were never written"
np_expect_eq "$(spool_files)" "$(printf '502.0.%s.json\n503.0.%s.json' "$host" "$host")" "reports once there is room"
np_out=$(cat "$log")
np_expect_match "takes reports again: 2 held report\(s\) written"
for j in 502 503; do
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["complete"] else 1)' \
    "$spool/$j.0.$host.json" || np_fail "report $j is not a complete JSON report"
done
np_end_case

np_case "a read-only spool: logged, held, written once it is writable again"
mount -o remount,ro "$spool" || np_fail "cannot remount $spool read-only"
step_pids=("${kept[@]}")
step_end 501
np_expect_eq "$(spool_files | grep -c 501)" 0 "report 501 in the read-only spool"
np_out=$(tail -5 "$log")
np_expect_match "job 501.0: cannot write its report .*Read-only file system"
np_helper_answers >/dev/null || np_fail "the helper stopped answering"
mount -o remount,rw "$spool"
np_wait_for 5 test -s "$spool/501.0.$host.json" || np_fail "the held report was never written"
np_expect_eq "$(find "$spool" -name '*.tmp' | wc -l)" 0 "temporary files"
np_end_case

np_case "a full state directory: the registry's failed saves logged once, saved again after"
mount -t tmpfs -o size=64k,mode=0700 numaplace-faults-state "$state" || np_fail "cannot mount a tmpfs on $state"
dd if=/dev/zero of="$state/filler" bs=4k count=64 status=none 2>/dev/null
step_run 505
step_end 505
np_wait_for 5 grep -q 'cannot save the registry' "$log"
np_expect_eq "$(grep -c 'cannot save the registry' "$log")" 1 "log lines about the registry"
np_helper_answers >/dev/null || np_fail "the helper stopped answering"
np_wait_for 5 test -s "$spool/505.0.$host.json" || np_fail "no report for job 505"
umount "$state"
step_run 506
# the registry is written at the interval's tick, not at the request
np_wait_for 5 grep -q "registry saved to $state/registry.json again" "$log"
np_out=$(cat "$log")
np_expect_match "registry saved to $state/registry.json again"
step_end 506
np_end_case

np_case "at stop, a report the spool still refuses is kept in registry.json: the next start writes it"
mount -o remount,ro "$spool"
step_run 504
step_end 504
np_helper_stop
np_out=$(cat "$log")
np_expect_match "job 504.0: its report 504.0.$host.json is still held .*: kept in $state/registry.json"
mount -o remount,rw "$spool"
np_helper_start --interval_ms=200
np_wait_for 5 test -s "$spool/504.0.$host.json" || np_fail "the held report was not written at the next start"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["complete"] and d["sampling"]["count"] > 0 else 1)' \
  "$spool/504.0.$host.json" || np_fail "report 504 is not the step's complete report"
np_helper_stop
np_end_case

np_finish
