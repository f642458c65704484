#!/usr/bin/env bash
# Host side: boot the model's 4-node guest once and run, inside it, the guest self-check, the
# plugin's and the helper's whole Slurm integration suites, the multi-NUMA cases and
# `numaplace characterize` (before any Slurm starts: it wants an idle node).
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
# shellcheck disable=SC2016 # expanded inside the guest
"$here/run" --layout 4node --timeout 900 -- env NUMAPLACE_BUILD="$build" bash -c '
  status=0
  bash test/vm/selfcheck.sh 4node || status=1
  bash test/vm/characterize_cases.sh 4node || status=1
  bash test/integration/test_plugin.sh || status=1
  bash test/integration/test_helper.sh || status=1
  bash test/vm/numa_cases.sh 4node || status=1
  exit $status'
