#!/usr/bin/env bash
# Host side: test/vm/run's own cases. A hung guest says what still runs, is killed at its
# deadline and leaves nothing; a frozen guest is found by its silent heartbeat, killed and booted
# again. A suite of its own so that CI can run it beside the other guests (test/run-all).
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
status=0

# These cases boot from a cache of their own (the prepared kernel and initramfs
# linked in), so that they count only their own guests: CI boots a release root's guest beside
# this suite, and a guest of another checkout or one an earlier killed run left is not theirs.
shared_cache=${NUMAPLACE_VM_CACHE:-$top/build-vm-cache}
mkdir -p "$shared_cache"
cache=$(mktemp -d "$shared_cache/harness.XXXXXX")
trap 'rm -rf "$cache"' EXIT
# (run first, with no shared cache yet, the runner prepares its kernel in this one)
for f in vmlinuz initramfs.gz initramfs.stamp; do
  [ -e "$shared_cache/$f" ] || continue
  ln "$shared_cache/$f" "$cache/$f" 2>/dev/null || cp "$shared_cache/$f" "$cache/$f"
done
export NUMAPLACE_VM_CACHE=$cache
guests() { pgrep -f "qemu-system-x86_64.*$cache/runs/" | sort || true; }

# The harness itself: a hung guest says what was still running before the deadline, is killed
# at the deadline, says so, and leaves nothing behind. Emulated, so the time is the boot's and
# the command's (a KVM attempt would spend some of it).
guests_before=$(guests)
out=$(NUMAPLACE_VM_ACCEL=tcg "$here/run" --timeout 120 -- sleep 600 2>&1)
rc=$?
if [ "$rc" = 124 ] && grep -q "guest timed out after 120 s" <<<"$out" &&
  grep -q "np-guest: still running" <<<"$out" && grep -q "hrtimer_nanosleep *sleep 600" <<<"$out" &&
  [ -z "$(comm -13 <(echo "$guests_before") <(guests))" ]; then
  echo "PASS a hung guest reports what still runs, is killed after --timeout (exit 124), leaves nothing"
else
  echo "FAIL a hung guest: exit $rc, output: $out"
  status=1
fi

# A guest that freezes (here: QEMU stopped with SIGSTOP once its heartbeat began) is found by
# its silent heartbeat, killed, and booted again; the command then runs to its end.
log=$(mktemp)
# Only this run's heartbeat: newer than this marker (an earlier killed run can leave its own).
since=$(mktemp)
NUMAPLACE_VM_ACCEL=tcg NUMAPLACE_VM_FROZEN_LIMIT=15 "$here/run" --timeout 400 -- \
  bash -c 'echo begun; sleep 30; echo finished' >"$log" 2>&1 &
runner=$!
for _ in $(seq 240); do
  beat=$(find "$cache/runs" -mindepth 2 -maxdepth 2 -name heartbeat -newer "$since" 2>/dev/null |
    head -1)
  [ -z "$beat" ] || break
  sleep 0.5
done
[ -n "${beat:-}" ] && pkill -STOP -f "qemu-system-x86_64.*${beat%/heartbeat}"
wait "$runner"
rc=$?
out=$(cat "$log")
rm -f "$log" "$since"
if [ "$rc" = 0 ] && grep -q "froze: no heartbeat for 15 s (attempt 1)" <<<"$out" &&
  grep -q "QEMU threads' CPU over 2 s" <<<"$out" &&
  grep -q "^finished" <<<"$out"; then
  echo "PASS a frozen guest is found by its heartbeat, killed and booted again; the command then ends"
else
  echo "FAIL a frozen guest: exit $rc, output: $out"
  status=1
fi
exit $status
