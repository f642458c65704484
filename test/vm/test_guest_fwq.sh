#!/usr/bin/env bash
# Host side: boot the model's 4-node guest and run bench/fwq's smoke run inside it, where every
# row has figures: the rate-limited migration (c) moves the large job between two real nodes,
# and numad scans processes (it does only with two nodes or more). It checks the report's shape,
# never a time (the guest's CPUs are emulated). Nothing is mounted beforehand: the guest boots
# without tracefs, as a fresh machine does, and fwq finds its own way to sched_switch (the
# smoke's other cases, a mounted tracefs and none to be had, run on the host: slurm.fwq_smoke).
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
# shellcheck disable=SC2016 # expanded inside the guest
"$here/run" --layout 4node --timeout 600 -- env NUMAPLACE_BUILD="$build" bash -c '
  FWQ_SMOKE_CASES=unmounted bash bench/fwq_smoke.sh "$NUMAPLACE_BUILD/bench/fwq" "$NUMAPLACE_BUILD/daemon/numaplaced"'
