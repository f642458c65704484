#!/usr/bin/env bash
# Migration throughput of numaplaced, end to end, against the raw system call, run INSIDE a
# multi-NUMA guest (bench/migrate_guest.sh boots it). A real numaplaced (rate limit off, triggers
# off, numa_maps read every second) and one registered low job that touched MIB MiB on node 1
# with its CPUs on node 0. Each round moves that same memory to node 2 and back, once each way:
#   helper: the migrate request `numaplace migrate` sends, over the socket (view, order, plan,
#           the worker's count of the job's pages and its migrate_pages, the reply), timed from
#           the request to the reply;
#   raw:    migrate_pages(2) on the same process, through ctypes;
# both from one Python process, so neither pays for starting a program. Who moves there and who
# moves back alternates by round; both wait the same 2 s before their move (the helper's view of
# the job's pages catches up). An untimed round trip first brings every page both ways once.
# Reported: the medians, the ratio of the medians and the median of the per-round ratios (a
# round's two moves run back to back, so their ratio cancels drift between rounds). Also: the
# time from request to first page moved, as the time to the reply of a one-page request (an
# upper bound). Prints a markdown table.
#   bash bench/migrate_helper.sh [MIB] [ROUNDS]     (defaults 160, 16)
# Environment: MOVER_CPU (the CPU both movers run on, default 1, "any" for none); INTERVAL_MS and
# NUMA_MAPS_MS (the helper's sampling and numa_maps intervals, default 1000 each); PAUSE_S (the
# wait before each move, default 2: keep it above both intervals, so the helper's view has
# caught up with the other side's move).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NUMAPLACE_BUILD:-$top/build}
helper=$build/daemon/numaplaced cli=$build/cli/numaplace workload=$build/test/np_workload
mib=${1:-160} rounds=${2:-16}
[ "$(numactl --hardware | awk '/^available:/ { print $2 }')" -ge 3 ] ||
  { echo "migrate_helper: needs NUMA nodes 0-2 (run it in the guest: bench/migrate_guest.sh)" >&2; exit 77; }
for p in "$helper" "$cli" "$workload"; do [ -x "$p" ] || { echo "migrate_helper: $p is not built" >&2; exit 2; }; done

work=$(mktemp -d /tmp/numaplace-bench.XXXXXX)
helper_pid="" job_pid=""
cleanup() {
  # shellcheck disable=SC2086 # the jobs' pids
  [ -n "$job_pid" ] && kill -9 $job_pid 2>/dev/null
  [ -n "$helper_pid" ] && kill "$helper_pid" 2>/dev/null && wait "$helper_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
sock=$work/numaplaced.sock
# Both movers run on the same CPU (MOVER_CPU, default 1; "any" for no pinning), so the comparison
# is of the two code paths, not of where the scheduler put each caller: under emulation a vCPU's
# speed depends on what shares its host CPU.
mover_cpu=${MOVER_CPU:-1}
pin=()
[ "$mover_cpu" = any ] || pin=(taskset -c "$mover_cpu")
"${pin[@]}" "$helper" --socket="$sock" --state_dir="$work/state" --spool_dir="$work/spool" --pid_file= \
  --log="$work/numaplaced.log" --housekeeping_cpus=none --interval_ms="${INTERVAL_MS:-1000}" --migration_rate_mb_s=0 \
  --trigger_homecoming=off --trigger_pressure=off --trigger_bandwidth=off --free_floor_mb=16 \
  --numa_maps_interval_ms="${NUMA_MAPS_MS:-1000}" --numa_maps_large_interval_ms="${NUMA_MAPS_MS:-1000}" &
helper_pid=$!
for _ in $(seq 100); do "$cli" --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done

numactl --cpunodebind=0 --membind=1 "$workload" --mb "$mib" --busy 0 --idle 3600 2>"$work/job.err" >/dev/null &
job_pid=$!
for _ in $(seq 600); do grep -q '^ready' "$work/job.err" && break; sleep 0.1; done
python3 - "$sock" "$job_pid" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall((json.dumps({"v": 1, "op": "register", "job": 1, "step": 0, "uid": 0, "pid": int(sys.argv[2]),
                       "task": 0, "cpus": "0-1", "policy": "none", "sensitivity": "low"}) + "\n").encode())
sys.exit(0 if json.loads(s.recv(65536)).get("ok") else 1)
PY
sleep 3 # the helper reads the job's numa_maps at its first samples

# One Python process times both, so neither pays for starting a program. More pages than the job
# has on S: the engine then takes the job whole (one migrate_pages after counting its pages on S
# in numa_maps), the same work as the raw call; the request "ends short" by design.
"${pin[@]}" python3 - "$sock" "$job_pid" "$mib" "$rounds" <<'PY'
import ctypes, json, os, socket, statistics, sys, time
sock_path, pid = sys.argv[1], int(sys.argv[2])
mib, rounds = int(sys.argv[3]), int(sys.argv[4])
pause = float(os.environ.get("PAUSE_S", "2"))
libc = ctypes.CDLL(None, use_errno=True)
SYS_migrate_pages = 256  # x86-64

def on_node(node):
    kib = 0
    for line in open(f"/proc/{pid}/numa_maps"):
        for f in line.split():
            if f.startswith(f"N{node}="):
                kib += int(f[len(f"N{node}="):]) * 4
    return kib // 1024

def helper(src, dst, pages):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    t0 = time.monotonic()
    s.sendall((json.dumps({"v": 1, "op": "migrate", "from": src, "to": dst, "pages": pages}) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    t1 = time.monotonic()
    reply = json.loads(buf)
    assert reply.get("ok"), reply
    moving = sum(j["moving_s"] for j in reply["result"]["jobs"])
    return t1 - t0, moving

def raw(src, dst):
    old = ctypes.c_ulong(1 << src)
    new = ctypes.c_ulong(1 << dst)
    t0 = time.monotonic()
    left = libc.syscall(SYS_migrate_pages, pid, 64, ctypes.byref(old), ctypes.byref(new))
    t1 = time.monotonic()
    assert left >= 0, ctypes.get_errno()
    return t1 - t0

mb = mib * 1048576 / 1e6
raw(1, 2); raw(2, 1)  # untimed: every page has been on both nodes once
h_rate, h_call_rate, r_rate, paired, first = [], [], [], [], []
for r in range(rounds):
    rates = {}
    for leg, who in enumerate(("helper", "raw") if r % 2 == 0 else ("raw", "helper")):
        src, dst = (1, 2) if leg == 0 else (2, 1)
        assert on_node(src) >= mib * 0.95, f"round {r}: only {on_node(src)} MiB on node {src} before the {who} move"
        time.sleep(pause)
        if who == "helper":
            wall, moving = helper(src, dst, mib * 256 * 2)
            rates[who] = mb / wall
            h_call_rate.append(mb / moving if moving > 0 else float("nan"))
        else:
            rates[who] = mb / raw(src, dst)
        assert on_node(dst) >= mib * 0.95, f"round {r}: the {who} move left only {on_node(dst)} MiB on node {dst}"
    h_rate.append(rates["helper"])
    r_rate.append(rates["raw"])
    paired.append(rates["helper"] / rates["raw"])
time.sleep(2)
src, dst = 1, 2
for r in range(8):  # one page there and back: the helper's fixed cost per request
    wall, _ = helper(src, dst, 1)
    first.append(wall * 1e3)
    time.sleep(2)
    wall, _ = helper(dst, src, 1)
    first.append(wall * 1e3)
    time.sleep(2)

h, w = statistics.median(h_rate), statistics.median(r_rate)
print("| moved | rounds | raw migrate_pages MB/s (median) | numaplaced request MB/s (median) | ratio of medians | median of paired ratios |")
print("|---|---|---|---|---|---|")
print(f"| {mib} MiB of one job, node 1 <-> 2 | {rounds} | {w:.0f} | {h:.0f} | {h / w:.3f} | {statistics.median(paired):.3f} |")
print()
print("raw MB/s per round:", " ".join(f"{x:.0f}" for x in r_rate))
print("helper MB/s per round (request to reply):", " ".join(f"{x:.0f}" for x in h_rate))
print("helper MB/s per round (its migrate_pages call alone):", " ".join(f"{x:.0f}" for x in h_call_rate))
print("paired ratio per round:", " ".join(f"{x:.2f}" for x in paired))
print(f"time from request to first page moved (one-page request, until the reply): median "
      f"{statistics.median(first):.1f} ms (runs: {' '.join(f'{x:.1f}' for x in first)})")
PY
