#!/usr/bin/env python3
"""Register STEPS processes with numaplaced as steps of their own, let them be sampled for two
intervals, then end each step and kill it: the descriptor churn of test_descriptors.sh and
bench/fd_budget.sh. One JSON line out: what every request was answered, and (with HELPER_PID)
the most descriptors numaplaced held meanwhile.

  descriptor_churn.py SOCKET STEPS UID FIRST_JOB [HELPER_PID]
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time


def ask(path, req):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(path)
    s.sendall(json.dumps(req).encode() + b"\n")
    reply = json.loads(s.makefile().readline())
    s.close()
    return reply


def main():
    path, steps, uid, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    pid = int(sys.argv[5]) if len(sys.argv) > 5 else 0

    def held():
        return len(os.listdir("/proc/%d/fd" % pid)) if pid else 0

    procs = [subprocess.Popen(["sleep", "600"]) for _ in range(steps)]
    out = {"ok": [], "refused": [], "ended": 0, "end_errors": []}
    took, most = [], held()
    for i, p in enumerate(procs):
        t0 = time.perf_counter()
        r = ask(path, {"v": 1, "op": "register", "job": first + i, "step": 0, "uid": uid,
                       "pid": p.pid, "task": 0, "cpus": "0", "sensitivity": "low"})
        took.append(time.perf_counter() - t0)
        if r.get("ok"):
            out["ok"].append(first + i)
        else:
            out["refused"].append(r.get("error", ""))
        most = max(most, held())
    time.sleep(2.5)
    out["most"] = max(most, held())
    out["ms"] = statistics.median(took) * 1000
    status = ask(path, {"v": 1, "op": "status"})
    out["memory_controllers"] = status.get("helper", {}).get("memory_controllers", "")
    out["backends"] = {str(j["job"]): [j.get("backends", ""), j.get("backends_reason", "")]
                       for j in status.get("jobs", [])}
    # step_end as slurmstepd sends it, its tasks still there: answered once the report is durable.
    for job in out["ok"]:
        r = ask(path, {"v": 1, "op": "step_end", "job": job, "step": 0})
        if r.get("ok"):
            out["ended"] += 1
        else:
            out["end_errors"].append(r.get("error", ""))
    for p in procs:
        p.kill()
        p.wait()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
