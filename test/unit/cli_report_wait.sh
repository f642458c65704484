#!/bin/sh
# `numaplace report` right after a step (srun returned): the plugin does not wait for the report
# to reach the spool, numaplaced lists the step "ending" until it does, and report waits for
# that. A stand-in numaplaced lists job 300's step as ending for 0.6 s, then puts its report in
# the spool and no longer lists it: report must print it. A step listed running is not waited
# for: report says at once that there is no report yet.
#   cli_report_wait.sh NUMAPLACE FIXTURES
set -eu
numaplace=$1 fixtures=$2
dir=$(mktemp -d)
helper=""
trap '[ -z "$helper" ] || kill "$helper" 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -m 0755 "$dir/spool"
cp "$fixtures/data/report-auto.json" "$dir/report.json"

# stand_in STATE: answers status with job 300 in STATE ("ending" or "running") for 0.6 s; an
# ending step's report lands in the spool then, and the step is no longer listed.
stand_in() {
  rm -f "$dir/helper.sock"
  python3 - "$dir" "$1" <<'PY' &
import json, os, shutil, socket, sys, time
d, state = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(d + "/helper.sock"); s.listen(8)
start, landed = time.monotonic(), False
while True:
    c, _ = s.accept(); c.recv(65536)
    with open(d + "/calls", "a") as calls:
        calls.write("status\n")
    if time.monotonic() - start < 0.6 or state == "running":
        step = {"job": 300, "step": 0, "uid": 1000}
        if state == "ending":
            step["ending"] = True
        reply = {"v": 1, "ok": True, "jobs": [step], "helper": {}}
    else:
        if not landed:
            shutil.copy(d + "/report.json", d + "/spool/.tmp")
            os.chmod(d + "/spool/.tmp", 0o600)
            os.rename(d + "/spool/.tmp", d + "/spool/300.0.node1.json")
            landed = True
        reply = {"v": 1, "ok": False, "error": "job 300 is not tracked on this node"}
    c.sendall(json.dumps(reply).encode() + b"\n"); c.close()
PY
  helper=$!
  for _ in $(seq 100); do [ -S "$dir/helper.sock" ] && return 0; sleep 0.05; done
  echo "FAIL: the stand-in numaplaced did not start"; exit 1
}

stand_in ending
if out=$("$numaplace" --socket "$dir/helper.sock" --spool "$dir/spool" report 300.0 2>&1) &&
  echo "$out" | grep -q '^job 300 step 0 on node1'; then
  echo "PASS report waits for a step listed ending, then prints its report"
else
  echo "FAIL report of a step listed ending: $out"; exit 1
fi
kill "$helper"; wait "$helper" 2>/dev/null || true
rm -f "$dir/spool/300.0.node1.json"

# Counted, not timed: a report that waited would ask again and again (a stand-in that lists the
# step running for ever), one that does not asks once.
stand_in running
rm -f "$dir/calls"
rc=0
out=$("$numaplace" --socket "$dir/helper.sock" --spool "$dir/spool" report 300.0 2>&1) || rc=$?
calls=$(wc -l <"$dir/calls" 2>/dev/null || echo 0)
if [ "$rc" = 1 ] && echo "$out" | grep -q 'no report for job 300.0' && [ "$calls" -eq 1 ]; then
  echo "PASS report does not wait for a running step (asked numaplaced once)"
else
  echo "FAIL report of a running step: exit $rc after $calls call(s) to numaplaced: $out"; exit 1
fi
