#!/usr/bin/env bash
# Migration cases, run INSIDE the 4-node guest (test/vm/run --layout 4node) against the real
# numaplaced: processes with known footprints on known nodes (numactl binds their CPUs and
# memory), registered over the real protocol as root, moved by real move_pages and
# migrate_pages. Every claim is checked from /proc/<pid>/numa_maps, not from the helper's word.
# Node n has CPUs 2n and 2n+1 and 512 MiB.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/../integration/lib.sh"

# shellcheck source=test/vm/helper_lib.sh
source "$(dirname "$0")/helper_lib.sh"

np_case "kernel NUMA balancing on: numaplaced warns at start; quiet once it is off"
echo 1 >/proc/sys/kernel/numa_balancing
: >"$work/numaplaced.log"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off
np_out=$(cat "$work/numaplaced.log")
np_expect_match "warning: migration: the kernel's automatic NUMA balancing is on"
# As docs/migration.md advises for nodes where numaplaced migrates; the cases below run so.
echo 0 >/proc/sys/kernel/numa_balancing
: >"$work/numaplaced.log"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off
np_out=$(cat "$work/numaplaced.log")
np_expect_match "migration: on"
np_expect_no_match "NUMA balancing is on"
np_end_case

start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off --free_floor_mb=16

np_case "best-plus: an admin request 2 -> 1 takes the job that gains first, never the high one"
job 1 low 1 2 32; j1=$job_pid   # CPUs on node 1 (the destination): it gains
job 2 low 3 2 32; j2=$job_pid   # CPUs on node 3: remote stays remote
job 3 low 2 2 32; j3=$job_pid   # CPUs on node 2 (the source): it would lose
job 4 high 0 2 32; j4=$job_pid  # high: never moved away
settle
np_run cli migrate --from 2 --to 1 --pages 8192 --order best-plus
np_expect_rc 0
np_expect_match "order best-plus"
np_expect_match "proxy|measured"
near "$(mib_on "$j1" 1)" 32 2 || np_fail "job 1 has $(mib_on "$j1" 1) MiB on node 1, expected 32"
near "$(mib_on "$j2" 2)" 32 2 || np_fail "job 2 moved: $(mib_on "$j2" 2) MiB left on node 2"
near "$(mib_on "$j3" 2)" 32 2 || np_fail "job 3 moved: $(mib_on "$j3" 2) MiB left on node 2"
near "$(mib_on "$j4" 2)" 32 2 || np_fail "the high job moved: $(mib_on "$j4" 2) MiB left on node 2"
np_end_case

np_case "worst-plus: the reverse order takes the job that loses first, then the remote one"
settle
np_run cli migrate --from 2 --to 1 --pages 12288 --order worst-plus
np_expect_rc 0
near "$(mib_on "$j3" 1)" 32 2 || np_fail "job 3 (loses) should have moved wholly: $(mib_on "$j3" 1) MiB on node 1"
near "$(mib_on "$j2" 1)" 16 2 || np_fail "job 2 should have moved 16 MiB: $(mib_on "$j2" 1) MiB on node 1"
near "$(mib_on "$j4" 2)" 32 2 || np_fail "the high job moved"
np_end_case

np_case "dry run: decides and reports, moves nothing"
settle
before=$(mib_on "$j2" 2)
np_run cli migrate --from 2 --to 0 --pages 4096 --dry-run
np_expect_rc 0
np_expect_match "would move"
np_expect_eq "$(mib_on "$j2" 2)" "$before" "MiB of job 2 on node 2"
np_end_case

np_case "the job report counts what moved, by request"
helper_call '{"v":1,"op":"step_end","job":1,"step":0}' || np_fail "step_end refused"
np_wait_for 10 bash -c "ls $work/spool/1.0.*.json" || np_fail "no report for job 1"
np_out=$(python3 - "$work"/spool/1.0.*.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["migrations"]
print("in1", m["pages_in_bytes"].get("1", 0) >> 20, "out2", m["pages_out_bytes"].get("2", 0) >> 20)
print("requests", " ".join(q["trigger"] + ":" + q["order"] for q in m["requests"]))
PY
)
np_expect_match "in1 3[1-3] out2 3[1-3]"
np_expect_match "requests admin:best-plus"
np_end_case

np_case "a request larger than every candidate ends short and says so"
settle
np_run cli migrate --from 3 --to 0 --pages 100000
np_expect_rc 0
np_expect_match "ended short"
np_end_case

np_case "a destination without room above the floor: capped, nothing pushed below it"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off --free_floor_mb=100000
job 5 low 3 3 16
settle
np_run cli migrate --from 3 --to 0 --pages 4096
np_expect_rc 0
np_expect_match "capped to keep the destination's free floor"
near "$(mib_on "$job_pid" 3)" 16 1 || np_fail "pages moved despite the floor"
np_end_case

np_case "homecoming: a high job's pages on a far node are brought home"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=on --trigger_pressure=off --free_floor_mb=16
job 6 high 0 3 32; j6=$job_pid
job 7 low 1 3 16; j7=$job_pid
np_wait_for 20 bash -c "[ \$(python3 -c 'import re,sys
t=0
for l in open(\"/proc/$j6/numa_maps\"):
    m=re.search(r\"\\bN0=(\\d+)\",l)
    t+=int(m.group(1))*4 if m and \"anon=\" in l else 0
print(t//1024)') -ge 30 ]" || np_fail "job 6 still has $(mib_on "$j6" 0) MiB at home on node 0"
near "$(mib_on "$j7" 3)" 16 1 || np_fail "the low job was moved by the homecoming"
np_out=$(cat "$work/numaplaced.log")
np_expect_match "trigger homecoming: high job 6.0 has [0-9]+ pages on node 3"
np_end_case

np_case "the rate limit holds: at most 10% above it, and near it"
# The limit must be well below what this (emulated, shared) machine can move at all, or the
# test measures the machine: first an unlimited move sets the pace, then the limit is a quarter
# of it (at most 25 MB/s), applied by a reload (SIGHUP) of the configuration.
start_helper --trigger_homecoming=off --trigger_pressure=off --free_floor_mb=16
# set_rate MB_S: the limit in force once numaplaced has logged the reload (waited for, not slept).
set_rate() {
  local before
  before=$(grep -c 'reloaded: ' "$work/numaplaced.log" 2>/dev/null || true)
  echo "migration_rate_mb_s = $1" >"$work/numaplaced.conf"
  kill -HUP "$helper_pid"
  np_wait_for 30 bash -c "[ \$(grep -c 'reloaded: ' '$work/numaplaced.log') -gt ${before:-0} ]" ||
    np_fail "numaplaced did not log its reload to migration_rate_mb_s = $1"
}
# timed_move FROM TO: move job 8's memory; prints two MB/s figures, both from numa_maps: over
# the whole request (its start-up included), and steady, from the sample where a tenth of it
# had arrived to the one where nine tenths had (what the limit governs).
timed_move() {
  python3 - "$j8" "$1" "$2" "$NP_CLI" "$sock" <<'PY'
import re, subprocess, sys, time
pid, src, dst, cli, sock = sys.argv[1:6]

def on_dst():
    total = 0
    for line in open(f"/proc/{pid}/numa_maps"):
        m = re.search(rf"\bN{dst}=(\d+)", line)
        if m and "anon=" in line:
            k = re.search(r"kernelpagesize_kB=(\d+)", line)
            total += int(m.group(1)) * (int(k.group(1)) if k else 4) * 1024
    return total

t0 = time.monotonic()
move = subprocess.Popen([cli, "--socket", sock, "migrate", "--from", src, "--to", dst,
                         "--pages", "32768"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
samples = []
while move.poll() is None:
    samples.append((time.monotonic(), on_dst()))
    time.sleep(0.1)
t1 = time.monotonic()
final = on_dst()
samples.append((t1, final))
whole = final / (t1 - t0) / 1e6
a = next((x for x in samples if x[1] >= 0.1 * final), None)
b = next((x for x in samples if x[1] >= 0.9 * final), None)
steady = (b[1] - a[1]) / (b[0] - a[0]) / 1e6 if a and b and b[0] > a[0] else whole
print(round(whole, 1), round(steady, 1))
sys.exit(move.returncode)
PY
}
set_rate 0
job 8 low 2 2 128; j8=$job_pid
settle
moves=$(timed_move 2 3) || np_fail "the unlimited move failed"
read -r unlimited _ <<<"$moves"
limit=$(python3 -c "print(max(1, min(25, int($unlimited / 4))))")
set_rate "$limit"
settle
moves=$(timed_move 3 2) || np_fail "the limited move failed"
read -r whole rate <<<"$moves"
# The limit is a most: never above it by more than 10%, at any speed. A guest starved beside
# other work moves slower than its limit, so below it only half the limit is asked for (the
# limit being a quarter of what this guest moved unlimited just before).
python3 -c "import sys; sys.exit(0 if 0.5 * $limit <= $rate <= 1.1 * $limit else 1)" ||
  np_fail "moved $(mib_on "$j8" 2) MiB at a steady $rate MB/s, limit $limit MB/s"
[ "$(mib_on "$j8" 2)" -ge 126 ] || np_fail "only $(mib_on "$j8" 2) of 128 MiB reached node 2"
echo "    rate: unlimited $unlimited MB/s; with the limit $limit MB/s: steady $rate MB/s ($whole MB/s with the request's start)"
kill -9 "$j8" # the next case's request must find its own job alone on node 2
np_end_case

np_case "a process killed mid-move: the request ends cleanly and says so"
job 9 low 2 2 128; j9=$job_pid
settle
cli migrate --from 2 --to 3 --pages 32768 >"$work/killed.out" 2>&1 &
mig=$!
np_wait_for 30 bash -c "[ \$(grep -c . /proc/$j9/numa_maps) -gt 0 ] && grep -q 'N3=[0-9]\{4,\}' /proc/$j9/numa_maps" ||
  np_fail "the move never started"
kill -9 "$j9"
wait "$mig"
np_expect_eq "$?" 0 "numaplace migrate exit status"
np_out=$(cat "$work/killed.out")
np_expect_match "a process exited"
# At least the 1000 pages seen on node 3 before the kill count as moved (the process's memory
# is gone, but what moved was moved).
moved=$(sed -n 's/.*job 9\.0 (low): planned [0-9]*, moved \([0-9]*\) pages.*/\1/p' <<<"$np_out")
[ "${moved:-0}" -ge 1000 ] || np_fail "the report counts ${moved:-no} pages moved; at least 1000 were"
"$NP_CLI" --socket "$sock" ping >/dev/null || np_fail "the helper died"
np_end_case

np_case "SIGTERM mid-move: the move ends after its batch; the client is told how far it got"
# The rate limit of the case above still holds, so the whole move would take seconds.
job 13 low 2 2 128; j13=$job_pid
settle
cli --json migrate --from 2 --to 3 --pages 32768 >"$work/stopped.json" 2>&1 &
mig=$!
# The job's own (anonymous) pages: a library's page cache may sit on node 3 from earlier cases,
# and stopping before the request reached the worker would test nothing.
np_wait_for 30 has_mib_on "$j13" 3 || np_fail "the move never started"
stop_helper
[ "$stop_failed" = 0 ] || np_fail "numaplaced did not stop within 30 s"
wait "$mig"
np_expect_eq "$?" 0 "numaplace migrate exit status"
np_out=$(cat "$work/stopped.json")
echo "    answer: $np_out"
python3 - "$(mib_on "$j13" 3)" "$work/stopped.json" <<'PY' || np_fail "the answer does not say it stopped early, or miscounts what moved"
import json, sys
r = json.load(open(sys.argv[2]))
on_dst = int(sys.argv[1]) * 256
sys.exit(0 if r["stopped"] and 0 < r["moved_pages"] < 32768 and abs(r["moved_pages"] - on_dst) <= 512 else 1)
PY
np_expect_match "stopped before its end"
np_out=$(cat "$work/numaplaced.log")
np_expect_match "stopping: the migration in progress ends after its current batch"
np_end_case

np_case "mlocked pages: moved or counted, the request ends cleanly"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off --free_floor_mb=16
job 10 low 1 1 16 "--mlock 1"; j10=$job_pid
settle
np_run cli --json migrate --from 1 --to 2 --pages 4096
np_expect_rc 0
echo "$np_out" >"$work/mlock.json"
python3 - "$(mib_on "$j10" 2)" "$work/mlock.json" <<'PY' || np_fail "moved + failed pages do not add up: $np_out"
import json, sys
r = json.load(open(sys.argv[2]))
job = r["jobs"][0]
moved, failed = job["moved_pages"], sum(job["failed_pages"].values())
on_dst = int(sys.argv[1]) * 256
sys.exit(0 if moved + failed >= 4096 * 0.95 and abs(moved - on_dst) <= 256 else 1)
PY
np_end_case

# pages_by_node PID: the process's pages per node over all its mappings (its own, files, shared
# memory, libraries), in base pages, from numa_maps: "N0=a N1=b N2=c N3=d".
pages_by_node() {
  python3 - "$1" <<'PY'
import re, sys
pages = [0] * 4
for line in open(f"/proc/{sys.argv[1]}/numa_maps"):
    k = re.search(r"kernelpagesize_kB=(\d+)", line)
    for node, count in re.findall(r"\bN(\d+)=(\d+)", line):
        pages[int(node)] += int(count) * (int(k.group(1)) // 4 if k else 1)
print(" ".join(f"N{n}={p}" for n, p in enumerate(pages)))
PY
}

# shared_pages_case ID RATE SRC DST: high job ID and low job ID+1 share a file mapping and a SysV
# segment (8 MiB each, first written by the high job, so on SRC); the low job (CPUs on DST) is
# moved SRC -> DST and back with migration_rate_mb_s=RATE. Its own 32 MiB move both ways; the
# shared pages stay, counted as `shared` in the answer and in its report; the high job's pages
# per node never change (migrate_pages as root moved them).
shared_pages_case() {
  local id=$1 rate=$2 src=$3 dst=$4 lowid=$(($1 + 1)) high low before key
  key=$((0x4e500000 + id))
  start_helper --migration_rate_mb_s="$rate" --trigger_homecoming=off --trigger_pressure=off --free_floor_mb=16
  job "$id" high "$src" "$src" 16 "--share-file $work/shared$id --share-sysv $key"; high=$job_pid
  job "$lowid" low "$dst" "$src" 32 "--share-file $work/shared$id --share-sysv $key"; low=$job_pid
  ipcrm -M "$key" # removed once both have detached
  settle
  before=$(pages_by_node "$high")
  np_run cli --json migrate --from "$src" --to "$dst" --pages 100000
  np_expect_rc 0
  echo "$np_out" >"$work/shared$id.json"
  python3 - "$work/shared$id.json" <<'PY' || np_fail "the shared pages are not counted as shared in the answer: $np_out"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
sys.exit(0 if len(jobs) == 1 and jobs[0]["class"] == "low" and
         jobs[0]["failed_pages"].get("shared", 0) >= 2 * 2048 else 1)
PY
  near "$(mib_on "$low" "$dst")" 32 2 || np_fail "the low job's own memory did not move: $(mib_on "$low" "$dst") MiB on node $dst"
  np_expect_eq "$(pages_by_node "$high")" "$before" "the high job's pages per node after the move $src -> $dst"
  settle
  np_run cli migrate --from "$dst" --to "$src" --pages 100000
  np_expect_rc 0
  near "$(mib_on "$low" "$src")" 32 2 || np_fail "the low job's own memory did not come back: $(mib_on "$low" "$src") MiB on node $src"
  np_expect_eq "$(pages_by_node "$high")" "$before" "the high job's pages per node after the move back"
  helper_call "{\"v\":1,\"op\":\"step_end\",\"job\":$lowid,\"step\":0}" || np_fail "step_end refused"
  np_wait_for 10 bash -c "ls $work/spool/$lowid.0.*.json" || np_fail "no report for the low job"
  python3 - "$work/spool/$lowid".0.*.json <<'PY' || np_fail "the low job's report does not count its shared pages"
import json, sys
m = json.load(open(sys.argv[1]))["migrations"]
print("    report: failed_pages", m["failed_pages"])
sys.exit(0 if m["failed_pages"].get("shared", 0) >= 2 * 2048 else 1)
PY
}

np_case "shared pages, no rate limit: a low job moved 2 -> 1 and back leaves the high job's pages"
shared_pages_case 20 0 2 1
np_end_case

np_case "shared pages, rate-limited: a low job moved 1 -> 2 and back leaves the high job's pages"
shared_pages_case 22 20 1 2
np_end_case

np_case "memory pressure: room is made on a high job's node by moving low pages off it"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=on --free_floor_mb=300
job 11 low 2 1 "$(($(free_mb 1) - 150))"
job 12 high 1 1 8
np_wait_for 30 bash -c "[ \$(awk '/MemFree/ { print int(\$4 / 1024) }' /sys/devices/system/node/node1/meminfo) -ge 290 ]" ||
  np_fail "node 1 has $(free_mb 1) MiB free, the floor is 300"
np_out=$(cat "$work/numaplaced.log")
np_expect_match "trigger memory-pressure: node 1 holds a high job"
np_end_case

# Destinations by distance, then by the memory node's traffic (np_pick_destination).
# From node 0, nodes 1 and 2 are near (21) and node 3 is far (30). Node 1 serves a busy job's
# memory and has the most free memory; node 2 holds an idle job's memory and 64 MiB less free,
# with room for the move above the floor. The pages must go to node 2: nearer than node 3,
# quieter than node 1 (most free alone would pick node 1).
np_case "pressure: pages go to the near node whose memory serves the least traffic"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=on --free_floor_mb=100
job 23 low 1 1 32 "--busy 3600 --idle 0"; j23=$job_pid
# Earlier cases' files and page cache leave the nodes unevenly free: size node 2's job from them.
job 24 low 2 2 "$(($(free_mb 2) - $(free_mb 1) + 64 > 16 ? $(free_mb 2) - $(free_mb 1) + 64 : 16))"
echo "    free MiB: node 1 $(free_mb 1), node 2 $(free_mb 2), node 3 $(free_mb 3)"
[ "$(free_mb 2)" -ge 220 ] || np_fail "node 2 has $(free_mb 2) MiB free: no room for the case"
# Two samples of the busy job's CPU time: its traffic (a proxy here: no PMU under TCG) exists.
node1_busy() {
  cli --json status | python3 -c 'import json, sys
nodes = {n["node"]: n for n in json.load(sys.stdin)["memory_nodes"]}
sys.exit(0 if nodes[1].get("proxy_rank", 0) > 0 else 1)'
}
np_wait_for 30 node1_busy || np_fail "node 1 never showed its job's traffic"
np_run cli --json status
echo "$np_out" >"$work/traffic.json"
python3 - "$work/traffic.json" <<'PY' || np_fail "memory_nodes does not show the busy job's traffic on node 1, ten times node 2's: $np_out"
import json, sys
nodes = {n["node"]: n for n in json.load(open(sys.argv[1]))["memory_nodes"]}
ok = sorted(nodes) == [0, 1, 2, 3] and all(n["source"] == "proxy" for n in nodes.values())
# Node 2 may serve a sliver of it: the busy job's libraries' page cache can sit there.
ok = ok and nodes[1]["proxy_rank"] > 10 * nodes[2].get("proxy_rank", 0)
sys.exit(0 if ok else 1)
PY
job 22 high 0 0 8
job 21 low 3 0 "$(($(free_mb 0) - 50))"; j21=$job_pid
moves() { grep -E "trigger|request|moved" "$work/numaplaced.log" | tail -6; }
if ! np_wait_for 60 has_mib_on "$j21" 2; then
  np_fail "no page moved to node 2; numaplaced said: $(moves)"
elif settle && { [ "$(mib_on "$j21" 1)" != 0 ] || [ "$(mib_on "$j21" 3)" != 0 ]; }; then
  np_fail "pages went to node 1 ($(mib_on "$j21" 1) MiB) or node 3 ($(mib_on "$j21" 3) MiB); numaplaced said: $(moves)"
fi
np_out=$(grep -E "trigger|request" "$work/numaplaced.log")
np_expect_match "trigger memory-pressure: node 0 holds a high job"
kill "$j23" 2>/dev/null
np_end_case

np_case "numaplaced stops within 30 s of SIGTERM after all of the above"
stop_helper
[ "$stop_failed" = 0 ] || np_fail "it did not (see above)"
np_end_case

np_finish
