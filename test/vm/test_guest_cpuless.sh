#!/usr/bin/env bash
# Host side: the guest with a CPU-less memory node (and the 8-node layout's self-check): the
# CPU-less node stays out of every policy unless the site opts in.
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
status=0
# shellcheck disable=SC2016 # expanded inside the guest
"$here/run" --layout cpuless --timeout 600 -- env NUMAPLACE_BUILD="$build" bash -c '
  status=0
  bash test/vm/selfcheck.sh cpuless || status=1
  bash test/vm/numa_cases.sh cpuless || status=1
  exit $status' || status=1
"$here/run" --layout 8node --timeout 300 -- bash test/vm/selfcheck.sh 8node || status=1

# The harness itself: a hung guest says what was still running before the deadline, is killed
# at the deadline, says so, and leaves nothing behind. Emulated, so the time is the boot's and
# the command's (a KVM attempt would spend some of it).
out=$(NUMAPLACE_VM_ACCEL=tcg "$here/run" --timeout 120 -- sleep 600 2>&1)
rc=$?
if [ "$rc" = 124 ] && grep -q "guest timed out after 120 s" <<<"$out" &&
  grep -q "np-guest: still running" <<<"$out" && grep -q "hrtimer_nanosleep *sleep 600" <<<"$out" &&
  ! pgrep -f "qemu-system-x86_64.*build-vm-cache" >/dev/null; then
  echo "PASS a hung guest reports what still runs, is killed after --timeout (exit 124), leaves nothing"
else
  echo "FAIL a hung guest: exit $rc, output: $out"
  status=1
fi
exit $status
