#!/usr/bin/env bash
# Migration throughput of numaplaced, end to end, against the raw system call, run INSIDE a
# multi-NUMA guest (bench/migrate_guest.sh boots it). A real numaplaced (rate limit off, triggers
# off) and a registered low job that touched MIB MiB on node 1 with its CPUs on node 0; then,
# round by round, the same memory moves between nodes 1 and 2 two ways:
#   helper: the migrate request `numaplace migrate` sends, over the socket (view, order, plan,
#           the worker's count of the job's pages and its migrate_pages, the reply), timed from
#           the request to the reply;
#   raw:    migrate_pages(2) on the same process, through ctypes;
# both from one Python process, so neither pays for starting a program. The two alternate who
# goes first and which direction each takes. Also: the time from request to first page moved,
# as the time to the reply of a one-page request (an upper bound). Prints a markdown table.
#   bash bench/migrate_helper.sh [MIB] [ROUNDS]     (defaults 160, 8)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NUMAPLACE_BUILD:-$top/build}
helper=$build/helper/numaplaced cli=$build/helper/numaplace workload=$build/test/np_workload
mib=${1:-160} rounds=${2:-8}
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
"$helper" --socket="$sock" --state_dir="$work/state" --spool_dir="$work/spool" --pid_file= \
  --log="$work/numaplaced.log" --housekeeping_cpus=none --migration_rate_mb_s=0 \
  --trigger_homecoming=off --trigger_pressure=off --trigger_bandwidth=off --free_floor_mb=16 &
helper_pid=$!
for _ in $(seq 100); do "$cli" --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done

# Two identical jobs: the helper moves the registered one, the raw call the other, so the helper
# never works from a view the raw moves made stale, and sampling one job never touches the other.
start_job() { # start_job NAME: sets job_pid
  numactl --cpunodebind=0 --membind=1 "$workload" --mb "$mib" --busy 0 --idle 3600 2>"$work/$1.err" >/dev/null &
  job_pid=$!
  pids+=("$job_pid")
  for _ in $(seq 600); do grep -q '^ready' "$work/$1.err" && break; sleep 0.1; done
}
pids=()
start_job helper_job
helper_job=$job_pid
start_job raw_job
raw_job=$job_pid
job_pid="${pids[*]}"
python3 - "$sock" "$helper_job" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall((json.dumps({"v": 1, "op": "register", "job": 1, "step": 0, "uid": 0, "pid": int(sys.argv[2]),
                       "task": 0, "cpus": "0-1", "policy": "none", "sensitivity": "low"}) + "\n").encode())
sys.exit(0 if json.loads(s.recv(65536)).get("ok") else 1)
PY
sleep 3 # the helper reads the job's numa_maps at its first samples

# One Python process times both, so neither pays for starting a program: the helper through its
# socket (the request as `numaplace migrate` sends it, timed until the reply), the raw call as
# migrate_pages(2) through ctypes. More pages than the job has on S: the engine then takes the job
# whole (one migrate_pages after counting its pages on S in numa_maps), the same work as the raw
# call; the request "ends short" by design. Each side moves S -> D, then the other side moves it
# back, and who goes first alternates, so both see both directions equally.
python3 - "$sock" "$helper_job" "$raw_job" "$mib" "$rounds" <<'PY'
import ctypes, json, socket, statistics, sys, time
sock_path, helper_pid, raw_pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mib, rounds = int(sys.argv[4]), int(sys.argv[5])
libc = ctypes.CDLL(None, use_errno=True)
SYS_migrate_pages = 256  # x86-64

def on_node(pid, node):
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
    left = libc.syscall(SYS_migrate_pages, raw_pid, 64, ctypes.byref(old), ctypes.byref(new))
    t1 = time.monotonic()
    assert left >= 0, ctypes.get_errno()
    return t1 - t0

mb = mib * 1048576 / 1e6
h_rate, h_call_rate, r_rate, first = [], [], [], []
src, dst = 1, 2
time.sleep(3)  # the helper reads the job's numa_maps at its first samples
for r in range(rounds):
    for who in (("helper", "raw") if r % 2 == 0 else ("raw", "helper")):
        pid = helper_pid if who == "helper" else raw_pid
        assert on_node(pid, src) >= mib * 0.95, f"{who}: only {on_node(pid, src)} MiB on node {src}"
        if who == "helper":
            time.sleep(2)  # its last move made the helper re-read the job's pages: let it finish
            wall, moving = helper(src, dst, mib * 256 * 2)
            h_rate.append(mb / wall)
            h_call_rate.append(mb / moving if moving > 0 else float("nan"))
        else:
            r_rate.append(mb / raw(src, dst))
        assert on_node(pid, dst) >= mib * 0.95, f"{who} left only {on_node(pid, dst)} MiB on node {dst}"
    src, dst = dst, src
time.sleep(2)
for r in range(rounds):  # one page there and back: the helper's fixed cost per request
    wall, _ = helper(src, dst, 1)
    first.append(wall * 1e3)
    time.sleep(2)
    wall, _ = helper(dst, src, 1)
    first.append(wall * 1e3)
    time.sleep(2)

h, w = statistics.median(h_rate), statistics.median(r_rate)
print("| moved | rounds | raw migrate_pages MB/s (median) | numaplaced request MB/s (median) | ratio |")
print("|---|---|---|---|---|")
print(f"| {mib} MiB, node 1 <-> 2 | {rounds} | {w:.0f} | {h:.0f} | {h / w:.3f} |")
print()
print("raw MB/s per run:", " ".join(f"{x:.0f}" for x in r_rate))
print("helper MB/s per run (request to reply):", " ".join(f"{x:.0f}" for x in h_rate))
print("helper MB/s per run (its migrate_pages call alone):", " ".join(f"{x:.0f}" for x in h_call_rate))
print(f"time from request to first page moved (one-page request, until the reply): median "
      f"{statistics.median(first):.1f} ms (runs: {' '.join(f'{x:.1f}' for x in first)})")
PY
