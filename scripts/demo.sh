#!/usr/bin/env bash
# The demo behind scripts/main-job: a throwaway local Slurm cluster with numaplace's plugin,
# a short job under each policy, what every task got, and everything stopped at the end.
# Expects NUMAPLACE_PLUGIN (the installed numaplace.so) and NUMAPLACE_BUILD (for the probe).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=test/integration/lib.sh
source "$top/test/integration/lib.sh"

section() { printf '\n=== %s ===\n' "$*"; }

section "machine"
numactl --hardware | sed -n '1,3p'
echo "plugin: $NP_PLUGIN"

np_cluster_start "optional $NP_PLUGIN default_policy=local"
section "site configuration (plugstack.conf)"
cat "$np_dir/plugstack.conf"

section "srun --numa-policy=help"
srun -n1 --numa-policy=help true

for policy in none local local-strict interleave interleave-all; do
  section "srun -n2 --numa-policy=verbose,$policy"
  srun -n2 --numa-policy="verbose,$policy" "$NP_PROBE" --touch 16 2>&1 | sort
done

section "no option: the site default (local) applies"
srun -n2 "$NP_PROBE" | sort

section "sbatch --numa-policy=interleave --numa-sensitivity=high"
out=$(mktemp)
job=$(sbatch --parsable -n2 --numa-policy=verbose,interleave --numa-sensitivity=high -o "$out" \
  --wrap "srun $NP_PROBE")
np_wait_for 60 bash -c "scontrol show job $job | grep -qE 'JobState=(COMPLETED|FAILED)'" || true
sort "$out"
rm -f "$out"

section "an invalid value is refused before submission"
srun -n1 --numa-policy=interleaf true || echo "(srun exited with $?)"

section "job report"
echo "Per-job reports come from the per-node helper numaplaced, which is not part of this"
echo "version yet; above, each task's line shows the policy it got and the pages it touched."

np_cluster_stop
echo
echo "demo finished: cluster stopped, nothing left running"
