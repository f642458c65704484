#!/usr/bin/env bash
# numaplaced's loop while held reports are written: for each HELPER binary given, a fresh
# numaplaced whose spool is a small ext4 file system (a loop device on a file of this machine's
# disk, so each write's fsync reaches a disk) filled to the last block; STEPS steps (a sleeping
# process each, registered by root as slurmstepd would) end and their reports are held; then the
# filler goes, and a client pings the helper back to back until every report is written. Per
# binary: the ping's latency before (idle, the reports held) and during the retries (median, p99,
# the most), and how long the reports took. Root only (mount). Prints a markdown table.
#   bench/held_reports.sh [STEPS] HELPER...   (default 400 steps; HELPER default build's)
#   HELD_PERF=FILE: perf record of the loop thread during each run, to FILE (the last run's kept)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export NUMAPLACE_BUILD=${NUMAPLACE_BUILD:-$top/build}
# shellcheck source=test/integration/lib.sh
source "$top/test/integration/lib.sh"
np_require python3 mkfs.ext4 losetup
[ "$(id -u)" = 0 ] || np_die "held_reports.sh mounts a file system: run it as root"
steps=400
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
  steps=$1
  shift
fi
helpers=("$@")
[ ${#helpers[@]} -gt 0 ] || helpers=("$NUMAPLACE_BUILD/daemon/numaplaced")
np_test_user_ensure nptest
uid=$(id -u nptest)
np_helper_alone
np_at_exit "mountpoint -q '$np_dir/helper/spool' && umount -l '$np_dir/helper/spool'"
echo "| numaplaced | steps | ping idle, p50 / max | ping during the retries, p50 / p99 / max | pings then (failed) | reports written in |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for helper in "${helpers[@]}"; do
  rm -rf "$np_dir/helper" "$np_dir/spool.img"
  NP_HELPER=$helper np_helper_command --interval_ms=1000 --log_level=info
  mkdir -p "$np_dir/helper/spool"
  truncate -s 64M "$np_dir/spool.img"
  mkfs.ext4 -q -F "$np_dir/spool.img"
  mount -o loop "$np_dir/spool.img" "$np_dir/helper/spool"
  chmod 0755 "$np_dir/helper/spool"
  "${np_helper_cmd[@]}" >>"$np_dir/helper/numaplaced.out" 2>&1 &
  np_helper_pid=$!
  np_wait_for 15 np_helper_answers || np_die "$helper did not answer"
  dd if=/dev/zero of="$np_dir/helper/spool/filler" bs=64k status=none 2>/dev/null || true
  dd if=/dev/zero of="$np_dir/helper/spool/filler" bs=4k oflag=append conv=notrunc status=none 2>/dev/null || true
  [ -z "${HELD_PERF:-}" ] || { perf record -q -g -t "$np_helper_pid" -o "$HELD_PERF" >/dev/null 2>&1 & perf_pid=$!; }
  python3 - "$np_dir/helper/numaplaced.sock" "$uid" "$np_dir/helper/spool" "$steps" "$helper" <<'PY'
import glob, json, os, socket, statistics, subprocess, sys, time

sys.path.insert(0, os.environ["NUMAPLACE_SOURCE"] + "/test/integration/lib")
import np_proto  # the suites' one request-reply call

sock, uid, spool, steps, helper = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]


def call(req):
    return np_proto.call(sock, req, 30.0)


failed = 0


def ping_ms():
    global failed
    t = time.perf_counter()
    try:
        assert call({"op": "ping"})["ok"]
    except (OSError, ValueError):
        failed += 1  # reset or refused: counted, its wait kept
    return (time.perf_counter() - t) * 1e3


def reports():
    return len(glob.glob(spool + "/*.json"))


procs = []
for job in range(1, steps + 1):
    p = subprocess.Popen(["sleep", "600"], user=uid, group=uid)
    procs.append(p)
    assert call({"op": "register", "job": job, "step": 0, "uid": uid, "pid": p.pid, "task": 0,
                 "cpus": "0", "policy": "local", "sensitivity": "low"})["ok"]
for job in range(1, steps + 1):
    assert call({"op": "step_end", "job": job, "step": 0, "wait_report": False})["ok"]
for p in procs:
    p.kill()
    p.wait()
time.sleep(2)  # every report tried, and refused
if reports():
    sys.exit("%d reports written into the full spool: it was not full" % reports())
idle = sorted(ping_ms() for _ in range(200))
os.unlink(spool + "/filler")
start = time.monotonic()
during = []
while reports() < steps and time.monotonic() - start < 120:
    during.append(ping_ms())
took = time.monotonic() - start
during.sort()
if reports() < steps:
    sys.exit("%d of %d reports after 120 s" % (reports(), steps))
p99 = during[min(len(during) - 1, int(0.99 * len(during)))] if during else float("nan")
print("| `%s` | %d | %.2f / %.2f ms | %.2f / %.2f / %.2f ms | %d (%d failed) | %.2f s |" % (
    helper, steps, statistics.median(idle), idle[-1],
    statistics.median(during) if during else float("nan"), p99, during[-1] if during else float("nan"),
    len(during), failed, took))
PY
  [ -z "${HELD_PERF:-}" ] || { kill -INT "$perf_pid"; wait "$perf_pid" || true; }
  np_helper_stop
  umount "$np_dir/helper/spool"
done
