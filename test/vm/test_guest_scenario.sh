#!/usr/bin/env bash
# Host side: boot the model's 4-node guest and run numaplace-run-scenario end to end inside it
# (a real Slurm, numaplaced and the plugin; stand-in jobs; scenario_cases.sh).
set -u
# shellcheck source=test/vm/guest_suite.sh
source "$(dirname "$0")/guest_suite.sh"
"$here/run" --layout 4node --timeout 900 -- env NUMAPLACE_BUILD="$build" bash test/vm/scenario_cases.sh
