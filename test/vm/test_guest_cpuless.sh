#!/usr/bin/env bash
# Host side: the guest with a CPU-less memory node (and the 8-node layout's self-check): the
# CPU-less node stays out of every policy unless the site opts in. Both boots also run
# `numaplace characterize` (characterize_cases.sh). The runner's own cases (a hung guest, a
# frozen one) are test_guest_harness.sh.
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
status=0
# shellcheck disable=SC2016 # expanded inside the guest
"$here/run" --layout cpuless --timeout 600 -- env NUMAPLACE_BUILD="$build" bash -c '
  status=0
  bash test/vm/selfcheck.sh cpuless || status=1
  bash test/vm/numa_cases.sh cpuless || status=1
  bash test/vm/characterize_cases.sh cpuless || status=1
  exit $status' || status=1
# shellcheck disable=SC2016 # expanded inside the guest
"$here/run" --layout 8node --timeout 400 -- env NUMAPLACE_BUILD="$build" bash -c '
  status=0
  bash test/vm/selfcheck.sh 8node || status=1
  bash test/vm/characterize_cases.sh 8node || status=1
  exit $status' || status=1
exit $status
