#!/usr/bin/env bash
# Demotion and promotion between memory tiers, run INSIDE the hbm guest on Debian 13's kernel
# (test/vm/run --layout hbm --kernel trixie): DRAM nodes 0 and 1 own CPUs 0-1 and 2-3, HBM nodes 2
# and 3 (512 MiB each) hang under them, and the kernel puts the HBM nodes in a faster tier from
# their HMAT figures. Real numaplaced, real move_pages; every claim checked in numa_maps.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=test/vm/helper_lib.sh
source "$(dirname "$0")/helper_lib.sh"

demotion=/sys/kernel/mm/numa/demotion_enabled
# The kernel's own movers off, as docs/migration.md advises where numaplaced decides the tiers.
echo 0 >/proc/sys/kernel/numa_balancing
echo false >"$demotion"
moves() { grep -E "trigger|request|moved" "$work/numaplaced.log" | tail -6; }

np_case "the kernel's own demotion on: numaplaced warns once, and demotion and promotion stand aside"
echo true >"$demotion"
: >"$work/numaplaced.log"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off --free_floor_mb=100
JOB_POLICY=fast-tier job 11 high 0 0 8
job 12 low 0 2 "$(($(free_mb 2) - 40))"; j12=$job_pid
settle
np_out=$(cat "$work/numaplaced.log")
np_expect_match "warning: migration: the kernel demotes pages itself \($demotion is true\)"
np_expect_match "trigger demotion inactive: the kernel demotes pages itself"
[ "$(mib_on "$j12" 0)" = 0 ] || np_fail "the low job's pages moved while the kernel demotes: $(moves)"
echo false >"$demotion"
np_end_case

np_case "a fast-tier high job needs the HBM: a low job's pages go one tier down, the high job's stay"
# Node 2 keeps 40 MiB free under a 100 MiB floor: about 60 MiB of the low job go to node 0, the
# DRAM nearest node 2, never to node 1 or to the other HBM node.
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off \
  --trigger_promotion=off --free_floor_mb=100
JOB_POLICY=fast-tier job 21 high 0 0 8; j21=$job_pid
job 22 low 0 2 "$(($(free_mb 2) - 40))"; j22=$job_pid
if ! np_wait_for 60 has_mib_on "$j22" 0; then
  np_fail "no page of the low job went down to node 0; numaplaced said: $(moves)"
else
  settle
  moved=$(mib_on "$j22" 0)
  near "$moved" 60 30 || np_fail "the low job has $moved MiB on node 0, not about 60: $(moves)"
  if [ "$(mib_on "$j22" 1)" != 0 ] || [ "$(mib_on "$j22" 3)" != 0 ]; then
    np_fail "pages went to node 1 ($(mib_on "$j22" 1) MiB) or 3 ($(mib_on "$j22" 3) MiB)"
  fi
  [ "$(mib_on "$j21" 0)" -ge 8 ] || np_fail "the high job's pages moved: $(mib_on "$j21" 0) MiB left on node 0"
fi
np_out=$(moves)
np_expect_match "trigger demotion: node 2 \(tier 0\) has [0-9]+ MiB free, below the 100 MiB floor, and high job 21.0 needs it"
np_end_case

np_case "numaplace migrate --tier: down from the HBM to its DRAM; up from the HBM is refused"
np_run cli --json migrate --from 2 --tier down --pages 256
np_expect_rc 0
echo "$np_out" >"$work/tier.json"
python3 - "$work/tier.json" <<'PY' || np_fail "the reply is not a move from node 2 (tier 0) to node 0 (tier 1): $np_out"
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if (r["from"], r["to"], r["from_tier"], r["to_tier"]) == (2, 0, 0, 1) and
         "one tier down" in r["reason"] else 1)
PY
np_run cli migrate --from 2 --tier up --pages 256
np_expect_rc 1
np_expect_match "node 2 \(tier 0\): no node one tier up has memory free above the floor"
np_end_case

np_case "room back on the HBM: a fast-tier high job's DRAM pages come up, a low job's stay"
start_helper --migration_rate_mb_s=0 --trigger_homecoming=off --trigger_pressure=off \
  --trigger_demotion=off --free_floor_mb=64
JOB_POLICY=fast-tier job 31 high 0 0 32; j31=$job_pid
job 32 low 1 1 16; j32=$job_pid
if ! np_wait_for 60 has_mib_at_least "$j31" 2 30; then
  np_fail "the high job has $(mib_on "$j31" 2) MiB on node 2, not its 32; numaplaced said: $(moves)"
fi
settle
if [ "$(mib_on "$j32" 3)" != 0 ] || [ "$(mib_on "$j32" 2)" != 0 ]; then
  np_fail "the low job went up a tier: $(mib_on "$j32" 3) MiB on node 3, $(mib_on "$j32" 2) on 2"
fi
np_out=$(moves)
np_expect_match "trigger promotion: high job 31.0 has [0-9]+ pages on node 0 \(tier 1\), below its tier 0; node 2 has room"
np_end_case

np_case "numaplaced stops within 30 s of SIGTERM after all of the above"
stop_helper
[ "$stop_failed" = 0 ] || np_fail "it did not (see above)"
np_end_case

np_finish
