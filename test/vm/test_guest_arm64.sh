#!/usr/bin/env bash
# Host side: boot the arm64 guest (test/vm/run --arch arm64: QEMU's virt machine, -cpu max with
# its PMU, precise icount, two NUMA nodes) on an arm64 Debian root and run, inside it, the
# hardware-counter cases (pmu_cases.sh: a real Slurm and numaplaced counting through the kernel's
# armv8 PMU driver). The root is NUMAPLACE_VM_ROOT: test/packaging/in_root.sh bookworm-arm64 runs
# this suite with the root it built (numaplace built in /src/numaplace/build); without one the
# suite is skipped, loudly. NUMAPLACE_GUEST_PARTS: of "pmu unit cost" (default "pmu"); unit runs
# the unit suites NUMAPLACE_GUEST_UNIT names (a ctest -R regex: those qemu-user cannot run, as
# in_root.sh gives it) on the guest's real arm64 kernel; cost is bench/helper_cost's backends
# ratio in this guest (bench/RESULTS.md).
set -u
guest_qemu=qemu-system-aarch64
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
if [ -z "${NUMAPLACE_VM_ROOT:-}" ]; then
  echo "!!!! SKIPPED: no arm64 root (NUMAPLACE_VM_ROOT); test/packaging/in_root.sh bookworm-arm64 runs this suite in its root !!!!"
  exit 77
fi
parts=${NUMAPLACE_GUEST_PARTS:-pmu}
for part in $parts; do
  case $part in
  pmu | unit | cost) ;;
  *)
    echo "test_guest_arm64: NUMAPLACE_GUEST_PARTS: unknown part '$part' (accepted: pmu unit cost)" >&2
    exit 2
    ;;
  esac
done
t0=$SECONDS
# shellcheck disable=SC2016 # expanded inside the guest
"$here/run" --arch arm64 --layout 2node --timeout 1800 -- env NUMAPLACE_BUILD="$build" PARTS="$parts" UNIT="${NUMAPLACE_GUEST_UNIT:-^unit\.test_perf\$}" bash -c '
  status=0
  echo "---- guest up after $(cut -d" " -f1 /proc/uptime) s of its own clock"
  for part in $PARTS; do
    t0=$SECONDS
    case $part in
    pmu) bash test/vm/pmu_cases.sh ;;
    unit) CK_TIMEOUT_MULTIPLIER=4 ctest --test-dir "$NUMAPLACE_BUILD" -R "$UNIT" --output-on-failure ;;
    cost) "$NUMAPLACE_BUILD/bench/helper_cost" "$NUMAPLACE_BUILD/daemon/numaplaced" 10 16 ratio:16 ;;
    esac || status=1
    echo "---- guest part $part: $((SECONDS - t0)) s"
  done
  exit $status'
rc=$?
echo "test_guest_arm64: $((SECONDS - t0)) s in all"
exit $rc
