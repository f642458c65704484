#!/usr/bin/env python3
"""applied_flood: root's latency on a real numaplaced while a step's tasks flood `applied`.

    sudo bench/applied_flood.py NUMAPLACED [TASKS] [FLOODERS] [SECONDS]

Starts NUMAPLACED (run as root) in a temporary directory, registers one step of TASKS (default
500) sleeping processes as root would, then runs FLOODERS (default 8) processes that each send
`applied` for the step's tasks in turn, alternating the policy and a 500-byte reason (as root,
which may speak for any task: the daemon's work per request is a task's own), for SECONDS
(default 10). Root's `ping` is timed beside a first flood (and the bytes the daemon writes
meanwhile counted: the flood's own), root's `register` (a new step each time) beside a second,
and both for as long with no flood; and the step's own registers, its first tenth of tasks
against its last (a register whose cost grows with its step). Printed: median, 99th
percentile and worst of each, and the bytes the daemon wrote under the first flood (/proc/<pid>/io write_bytes, where the
kernel counts it). Run it with the old and the new numaplaced one after the other on the same
machine; the ratio of the two medians is what to compare, not the milliseconds.
"""
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def request(sock, req, timeout=5.0):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(sock)
    s.sendall(json.dumps(req).encode() + b"\n")
    line = s.makefile().readline()
    s.close()
    return json.loads(line)


def write_bytes(pid):
    try:
        with open(f"/proc/{pid}/io") as f:
            for line in f:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def flooder(sock, job, pids, seconds):
    """In a child: applied for each task in turn until the time is up; exits with nothing."""
    end = time.monotonic() + seconds
    sent = 0
    i = 0
    while time.monotonic() < end:
        pid = pids[i % len(pids)]
        req = {"v": 1, "op": "applied", "job": job, "step": 0, "pid": pid,
               "policy": "local" if i % 2 else "interleave", "mode": "",
               "nodes": "0", "cpus": "0", "reason": ("ab"[i % 2]) * 500}
        try:
            request(sock, req)
            sent += 1
        except (OSError, ValueError):
            pass
        i += 1
    return sent


def timed(sock, seconds, first_job, registers=True):
    """Root's ping and (with REGISTERS) register, one after the other, for SECONDS: their
    latencies in ms."""
    pings, regs = [], []
    timeouts = [0]
    end = time.monotonic() + seconds
    job = first_job
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        while time.monotonic() < end:
            t0 = time.perf_counter()
            try:
                request(sock, {"v": 1, "op": "ping"})
                pings.append((time.perf_counter() - t0) * 1e3)
            except OSError:  # no answer within 5 s: counted, not timed
                timeouts[0] += 1
                continue
            if not registers:
                time.sleep(0.01)
                continue
            t0 = time.perf_counter()
            try:
                request(sock, {"v": 1, "op": "register", "job": job, "step": 0, "uid": 0,
                               "pid": sleeper.pid, "task": 0, "cpus": "0",
                               "sensitivity": "low"})
                regs.append((time.perf_counter() - t0) * 1e3)
            except OSError:
                timeouts[0] += 1
            job += 1
            time.sleep(0.01)
    finally:
        sleeper.kill()
        sleeper.wait()
    return pings, regs, timeouts[0]


def summary(name, values, timeouts):
    values = sorted(values)
    late = f", {timeouts} unanswered within 5 s" if timeouts else ""
    if not values:
        return f"{name}: unavailable (no request answered{late})"
    p99 = values[min(len(values) - 1, int(0.99 * len(values)))]
    return (f"{name}: n={len(values)} median {statistics.median(values):.2f} ms, "
            f"p99 {p99:.2f} ms, worst {values[-1]:.2f} ms{late}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    ntasks = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    nflood = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
    top = tempfile.mkdtemp(prefix="applied-flood.")
    sock = f"{top}/numaplaced.sock"
    conf = f"{top}/numaplaced.conf"
    with open(conf, "w") as f:
        f.write("# applied_flood\n")
    helper = subprocess.Popen([binary, f"--config={conf}", f"--socket={sock}",
                               f"--state_dir={top}/state", f"--spool_dir={top}/spool",
                               f"--pid_file={top}/numaplaced.pid", f"--log={top}/numaplaced.log",
                               "--housekeeping_cpus=none"])
    tasks = []
    try:
        for _ in range(100):
            try:
                request(sock, {"v": 1, "op": "ping"}, timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        tasks = [subprocess.Popen(["sleep", "600"]) for _ in range(ntasks)]
        step_regs = []
        for k, t in enumerate(tasks):
            t0 = time.perf_counter()
            r = request(sock, {"v": 1, "op": "register", "job": 7, "step": 0, "uid": 0,
                               "pid": t.pid, "task": k, "cpus": "0", "sensitivity": "low"})
            step_regs.append((time.perf_counter() - t0) * 1e3)
            if not r.get("ok"):
                sys.exit(f"register task {k}: {r}")
        pids = [t.pid for t in tasks]
        print(f"{ntasks} tasks registered; {nflood} flooders for {seconds:g} s")
        # Each task's register into the one step, as slurmstepd sends them: the last tenth's
        # against the first tenth's says whether a register costs more as the step grows.
        tenth = max(1, ntasks // 10)
        print(summary("register into the step, its first tenth of tasks", step_regs[:tenth], 0))
        print(summary("register into the step, its last tenth of tasks", step_regs[-tenth:], 0))
        def flood(registers):
            children = []
            for k in range(nflood):
                child = os.fork()
                if child == 0:
                    flooder(sock, 7, pids[k::nflood] or pids, seconds)
                    os._exit(0)
                children.append(child)
            got = timed(sock, seconds, 100000 if registers else 0, registers)
            for c in children:
                os.waitpid(c, 0)
            return got

        # First the flood beside pings alone: what it writes is the flood's own (root's
        # registrations, and the reports of the steps they made, come after).
        before = write_bytes(helper.pid)
        flood_p, _, flood_pt = flood(False)
        after = write_bytes(helper.pid)
        quiet_p, quiet_r, quiet_t = timed(sock, seconds, 1000)
        _, flood_r, flood_rt = flood(True)
        print(summary("ping, no flood", quiet_p, 0))
        print(summary("register, no flood", quiet_r, quiet_t))
        print(summary("ping, under the flood", flood_p, flood_pt))
        print(summary("register, under the flood", flood_r, flood_rt))
        if before is None or after is None:
            print("bytes written under the flood: unavailable (no /proc/<pid>/io write_bytes)")
        else:
            print(f"bytes written under the flood: {after - before}")
        for name in ("registry.json", "registry.journal"):
            try:
                print(f"{name}: {os.stat(f'{top}/state/{name}').st_size} bytes at the end")
            except OSError:
                print(f"{name}: none at the end")
    finally:
        for t in tasks:
            t.kill()
            t.wait()
        helper.send_signal(signal.SIGTERM)
        helper.wait()
        subprocess.run(["rm", "-rf", top], check=False)


if __name__ == "__main__":
    main()
