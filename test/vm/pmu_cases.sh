#!/usr/bin/env bash
# Hardware counters end to end, run INSIDE the arm64 guest (test/vm/run --arch arm64): a real
# Slurm, numaplaced counting each step through the kernel's armv8 PMU driver, and its reports.
#
# What the emulation defines: QEMU runs the guest with precise instruction counting (-icount
# shift=N, test/vm/run): every instruction advances its virtual clock by exactly 2^N ns
# (softmmu/icount.c, icount_to_ns), and its PMU's cycle counter is that clock at the emulated
# CPU's 1 GHz (target/arm/helper.c: cycles_get_count, ARM_CPU_FREQ), its instruction counter the
# instruction count itself (instructions_get_count). So cycles / instructions = 2^N ns x 1 GHz =
# 2^N, for any code, user or kernel mode. Both counters read one machine-wide count (every vCPU's
# instructions while the counted task is on its CPU), so a figure is the machine's, and the
# ratio stays exact; only the virtual clock's jumps while every vCPU idles add cycles with no
# instruction, and a counted task is running, not idle, when its counters are on.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/../integration/lib.sh"

shift_n=$(sed -n 's/.*np_icount_shift=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$shift_n" ] || np_die "pmu_cases.sh: no np_icount_shift on the kernel's command line (not the arm64 guest?)"
expected_cpi=$((1 << shift_n))
spin=$NUMAPLACE_BUILD/test/np_spin
[ -x "$spin" ] || np_die "pmu_cases.sh: $spin is not built"
# A loop of 3e8 iterations: about 1.2e9 instructions, 2.4 s of the emulated clock at shift 1,
# several of numaplaced's 500 ms intervals.
loop=${NUMAPLACE_PMU_LOOP:-300000000}

# report_of JOB: the path of step 0's report, once numaplaced has written it.
report_of() {
  local r
  r="$np_dir/helper/spool/$1.0.$(hostname).json"
  np_wait_for 30 test -s "$r" || np_fail "no report for job $1 ($r)"
  echo "$r"
}
# job_of FILE: the job id the step's task wrote (its first line, "job=N").
job_of() { sed -n 's/^job=//p' "$1" | head -1; }
# check REPORT PYTHON: run PYTHON with d = the report; it prints "ok ..." or "bad ..." lines.
check() {
  np_out=$(python3 - "$1" "$expected_cpi" "$loop" <<PY
import json, sys
d = json.load(open(sys.argv[1]))
expected, loop = int(sys.argv[2]), int(sys.argv[3])
$2
PY
  )
  awk '{ print "  " $0 }' <<<"$np_out"
  if grep -q '^bad' <<<"$np_out" || ! grep -q '^ok' <<<"$np_out"; then
    np_fail "$(grep '^bad' <<<"$np_out" | head -3 | tr '\n' ' ')"
  fi
}

np_case "the guest has the armv8 PMU driver and precise icount (shift $shift_n)"
[ -d /sys/bus/event_source/devices/armv8_pmuv3 ] || np_fail "no armv8_pmuv3 PMU: $(ls /sys/bus/event_source/devices)"
np_end_case

# The PMU's counters: the driver says how many at boot ("7 counters available": the cycle
# counter and the general ones).
counters=$(dmesg | sed -n 's/.*armv8_pmuv3 PMU driver, \([0-9]*\) counters available.*/\1/p' | head -1)
echo "pmu_cases: the PMU has ${counters:-an unknown number of} counters; CPI expected $expected_cpi"

np_cluster_start "optional $NP_PLUGIN"
np_cluster_set_plugstack "$(np_helper_plugstack)"
np_helper_start --interval_ms=500

np_case "a user-mode loop's CPI in numaplaced's report is 2^shift = $expected_cpi"
# Then 31 s asleep: the sensitivity prediction judges only steps of 30 s or more (the case
# below); the sleep adds no counts (the task is off its CPU, its counters with it).
# shellcheck disable=SC2016 # expanded by the task's shell
np_run srun -n1 -o "$np_dir/loop.out" bash -c 'echo "job=$SLURM_JOB_ID"; "$0" --loop "$1" && sleep 31' "$spin" "$loop"
np_expect_rc 0
loop_job=$(job_of "$np_dir/loop.out")
loop_report=$(report_of "$loop_job")
# Tolerance 1%: the ratio is exact in the emulation (above); what remains is the report's
# rounding and the few context-switch edges where the virtual clock may jump while the task's
# counters are on. A counter that missed kernel or user mode, counted another event, or was
# scaled wrongly is off by far more (the loop alone is 1.2e9 instructions).
check "$loop_report" '
cpi = d["cpi"]
if "unavailable" in cpi:
    print("bad cpi unavailable:", cpi["unavailable"]); sys.exit()
print("cpi", cpi)
ok = abs(cpi["mean"] - expected) <= 0.01 * expected and abs(cpi["median"] - expected) <= 0.01 * expected
print(("ok" if ok else "bad") + " cpi mean %.4f median %.4f, expected %d +/- 1%%" % (cpi["mean"], cpi["median"], expected))
print(("ok" if cpi["intervals"] >= 2 else "bad") + " intervals %d" % cpi["intervals"])
pc = d["perf_counts"]
for k in ("cycles", "instructions"):
    v = pc[k]
    print(("ok" if "value" in v and "multiplexed" not in v else "bad") + " %s %s" % (k, v))
ratio = pc["cycles"]["value"] / pc["instructions"]["value"]
print(("ok" if abs(ratio - expected) <= 0.01 * expected else "bad") + " total cycles/instructions %.4f" % ratio)
# at least one instruction an iteration: a counter that missed the loop falls short of it
print(("ok" if pc["instructions"]["value"] >= loop else "bad") + " instructions %d >= the loop, %d iterations" % (pc["instructions"]["value"], loop))
'
np_end_case

np_case "LLC-miss bandwidth is unavailable with the reason (the emulated CPU has no cache events), not zero"
check "$loop_report" '
bw = d["bandwidth"]
print(("ok" if "unavailable" in bw and "per_node" not in bw else "bad") + " bandwidth %s" % bw)
print(("ok" if "LLC-LOAD-MISSES" in bw.get("unavailable", "") else "bad") + " the reason names the event")
for k in ("llc_load_misses", "llc_store_misses"):
    v = d["perf_counts"][k]
    print(("ok" if "unavailable" in v and "value" not in v else "bad") + " %s %s" % (k, v))
'
np_end_case

np_case "forked children are counted (inherit) and their counts survive exec"
# The task (bash) forks two children, each exec's np_spin, which counts itself from its first
# line; the step's counters were opened on the task before either fork, and must hold at least
# what both counted after their exec.
# shellcheck disable=SC2016 # expanded by the task's shell
np_run srun -n1 -o "$np_dir/children.out" bash -c 'echo "job=$SLURM_JOB_ID"
  "$0" --loop "$1" --self-count & "$0" --loop "$1" --self-count & wait' "$spin" "$loop"
np_expect_rc 0
children_job=$(job_of "$np_dir/children.out")
children_report=$(report_of "$children_job")
check "$children_report" "
import re
selves = [json.loads(l) for l in open('$np_dir/children.out') if l.startswith('{')]
print(('ok' if len(selves) == 2 else 'bad') + ' %d children reported their own counts' % len(selves))
pc = d['perf_counts']
for k in ('cycles', 'instructions'):
    mine = sum(s[k] for s in selves)
    step = pc[k].get('value', 0)
    print(('ok' if step >= mine else 'bad') + ' step %s %d >= the children\\'s own %d' % (k, step, mine))
"
np_end_case

np_case "the report and the plot show the CPI"
np_run np_numaplace report --steps "$loop_job"
np_expect_rc 0
np_expect_match "CPI +mean $expected_cpi\.0[0-9]*, median"
np_run np_numaplace report --plot "$np_dir/loop.png" "$loop_job"
np_expect_rc 0
[ -s "$np_dir/loop.png" ] || np_fail "no plot written"
if command -v pngcheck >/dev/null; then pngcheck -q "$np_dir/loop.png" || np_fail "the plot is not a valid PNG"; fi
# Every interval within 1%, as the step: cycles and instructions are one group, read at one
# instant, so an interval's ratio carries no skew from the time between two reads.
check "$loop_report" '
tl = d.get("timeline", {})
cpis = [c for c in tl.get("cpi", []) if c is not None]
print(("ok" if len(cpis) >= 2 and "cpi_note" not in tl else "bad") + " timeline CPI points %s" % cpis[:6])
print(("ok" if all(abs(c - expected) <= 0.01 * expected for c in cpis) else "bad") + " every point at %d" % expected)
'
np_end_case

np_case "the sensitivity prediction runs on the counters and says it is not meaningful here"
# The step ran 30 s and more, so it is judged: no LLC MPKI (no cache events here), and the reason
# goes on to say the counts are an emulator's, where a prediction would not be meaningful.
np_run np_numaplace report "$loop_job"
np_expect_rc 0
np_expect_match "Predicted sensitivity: unavailable: no LLC MPKI \(perf::LLC-LOAD-MISSES: .*; and counted on an emulated CPU \(CPU implementer 0x00"
np_expect_match "where a prediction is not meaningful"
np_run np_numaplace report --steps "$loop_job"
np_expect_match "counted on an emulated CPU: the emulator's definition of a cycle"
check "$loop_report" '
print(("ok" if "0x00" in d["sampling"].get("emulated_cpu", "") else "bad") + " sampling.emulated_cpu %s" % d["sampling"].get("emulated_cpu"))
print(("ok" if d["duration_s"] >= 30 else "bad") + " the step ran %.1f s" % d["duration_s"])
'
np_end_case

if [ -n "$counters" ] && [ "$counters" -ge 2 ]; then
  np_case "with more events than free counters, multiplexing is reported and values are scaled"
  # numaplaced counts cycles and instructions as one group (its cache events do not open here).
  # Once the step's task is counted, a hog attaches a group of every counter but one to the
  # same task: the two groups cannot be on the PMU together, so the kernel rotates them. The
  # task waits for the hog before its loop (its pid and counters survive the exec).
  rm -f "$np_dir/hog.stop" "$np_dir/hog.on" "$np_dir/mux.pid"
  # shellcheck disable=SC2016 # expanded by the task's shell
  srun -n1 -o "$np_dir/mux.out" bash -c 'echo "job=$SLURM_JOB_ID"; echo $$ >"$2/mux.pid"
    while [ ! -e "$2/hog.on" ]; do sleep 0.1; done; exec "$0" --loop "$1"' "$spin" "$loop" "$np_dir" &
  step=$!
  np_wait_for 60 test -s "$np_dir/mux.pid" || np_fail "the step's task did not start"
  "$spin" --hog $((counters - 1)) --pid "$(cat "$np_dir/mux.pid")" --until "$np_dir/hog.stop" >"$np_dir/hog.out" 2>&1 &
  hog=$!
  np_at_exit "kill $hog 2>/dev/null"
  np_wait_for 30 grep -q '^hogging' "$np_dir/hog.out" || np_fail "the hog did not start: $(cat "$np_dir/hog.out")"
  touch "$np_dir/hog.on"
  step_rc=0
  wait "$step" || step_rc=$?
  [ "$step_rc" -eq 0 ] || np_fail "the step exited $step_rc"
  touch "$np_dir/hog.stop"
  wait "$hog" 2>/dev/null
  mux_report=$(report_of "$(job_of "$np_dir/mux.out")")
  # Tolerance 1%, as for the unshared loop: one group is on the PMU or off it as a whole, so
  # both counts share one running time and one scale, and their ratio is the emulation's.
  check "$mux_report" '
pc = d["perf_counts"]
shares = []
for k in ("cycles", "instructions"):
    v = pc[k]
    m = v.get("multiplexed", {})
    shares.append(m.get("running_share", 0))
    print(("ok" if "value" in v and 0 < m.get("running_share", 0) < 1 else "bad") + " %s %s" % (k, v))
    print(("ok" if "scaled" in v.get("source", "") else "bad") + " the source says scaled")
print(("ok" if abs(shares[0] - shares[1]) < 1e-6 else "bad") + " one group, one running share: %s" % shares)
cpi = d["cpi"]
print(("ok" if "multiplexed" in cpi else "bad") + " cpi says multiplexed: %s" % cpi.get("multiplexed"))
ratio = pc["cycles"]["value"] / pc["instructions"]["value"]
print(("ok" if abs(ratio - expected) <= 0.01 * expected else "bad") + " scaled cycles/instructions %.3f" % ratio)
'
  np_end_case
fi

np_helper_stop
np_cluster_stop
np_finish
