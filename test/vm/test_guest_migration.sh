#!/usr/bin/env bash
# Host side: boot the model's 4-node guest and run the migration cases inside it (the helper
# moving real processes' memory between emulated nodes), then the migration benchmark.
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
"$here/run" --layout 4node --timeout 900 -- env NUMAPLACE_BUILD="$build" bash test/vm/migration_cases.sh
