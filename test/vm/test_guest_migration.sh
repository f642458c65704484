#!/usr/bin/env bash
# Host side: boot the model's 4-node guest and run the migration cases inside it (the helper
# moving real processes' memory between emulated nodes), then the migration benchmark.
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
# 1150 s, under ctest's 1200: every case passed in 900 s beside stress-ng --cpu 2 and CI's other
# lanes, and the last ones did not get to run.
"$here/run" --layout 4node --timeout 1150 -- env NUMAPLACE_BUILD="$build" bash test/vm/migration_cases.sh
