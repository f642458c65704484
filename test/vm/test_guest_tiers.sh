#!/usr/bin/env bash
# Host side: memory tiers described through HMAT (test/vm/run --layout tiered|hbm), on Debian 13's
# 6.12 kernel, which tiers memory-only nodes by those figures and has weighted interleave, and on
# Debian 12's 6.1, which has neither (tiers_cases.sh: tiers, the access0 figures, preferred-many,
# weighted interleave split by the sysfs weights or refused). Three short boots, no Slurm: about
# 2 minutes under TCG. The kernels come through test/vm/run's --kernel.
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
[ -x "$build/test/numa_probe" ] || { echo "test_guest_tiers: $build/test/numa_probe is not built" >&2; exit 1; }
# The weighted-interleave stand-in (Debian 12's numactl has no --weighted-interleave), built here:
# the guest shares this machine's files.
work=$(mktemp -d "${TMPDIR:-/tmp}/np-tiers.XXXXXX")
trap 'rm -rf "$work"' EXIT
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$work/wi_exec" "$here/wi_exec.c" ||
  { echo "test_guest_tiers: cannot build wi_exec.c" >&2; exit 1; }
status=0
# The hbm boot also moves memory between its tiers (tier_migration_cases.sh: numaplaced's
# demotion and promotion, numaplace migrate --tier).
for boot in "tiered trixie 400" "hbm trixie 700" "tiered bookworm 300"; do
  read -r layout kernel limit <<<"$boot"
  echo "---- $layout layout, $kernel's kernel"
  t0=$SECONDS
  cases="bash test/vm/tiers_cases.sh $layout $kernel"
  [ "$layout" != hbm ] || cases+="; r=\$?; bash test/vm/tier_migration_cases.sh || r=1; exit \$r"
  "$here/run" --layout "$layout" --kernel "$kernel" --timeout "$limit" -- \
    env NUMAPLACE_BUILD="$build" WI_EXEC="$work/wi_exec" bash -c "$cases" || status=1
  echo "---- $layout layout, $kernel's kernel: $((SECONDS - t0)) s"
done
exit $status
