#!/usr/bin/env bash
# Steps numaplaced tracks at a descriptor limit: for each LIMIT, a fresh
# numaplaced under `prlimit --nofile=LIMIT:LIMIT` and STEPS steps registered one after another
# (each a sleeping process, registered by root as slurmstepd would), sampled for two intervals,
# then ended. Per limit: how many registered, were refused (the reserve reached), kept their perf
# counters or ran on /proc alone, the most descriptors it held, the median time of a
# registration (the exact count of /proc/self/fd included), and whether every registered step
# has its report. Prints a markdown table on stdout.
#   bench/fd_budget.sh [STEPS] [LIMIT...]     (default 500 steps at 256 and 1024)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export NUMAPLACE_BUILD=${NUMAPLACE_BUILD:-$top/build}
# shellcheck source=test/integration/lib.sh
source "$top/test/integration/lib.sh"
np_require prlimit python3 jq
steps=${1:-500}
shift || true
limits=("$@")
[ ${#limits[@]} -gt 0 ] || limits=(256 1024)
np_helper_alone
echo "| limit | steps | registered | refused | with perf counters | /proc alone | most descriptors held | registration, median | reports missing |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for limit in "${limits[@]}"; do
  rm -rf "$np_dir/helper"
  np_helper_command
  prlimit --nofile="$limit:$limit" -- "${np_helper_cmd[@]}" >>"$np_dir/helper/numaplaced.out" 2>&1 &
  np_helper_pid=$!
  np_wait_for 15 np_helper_answers || np_die "numaplaced did not answer at limit $limit"
    out=$(python3 "$top/test/integration/lib/descriptor_churn.py" "$np_dir/helper/numaplaced.sock" \
    "$steps" 0 9000 "$np_helper_pid")
  missing=0
  for job in $(jq -r '.ok[]' <<<"$out"); do
    ls "$np_dir/helper/spool/$job".*.json >/dev/null 2>&1 || missing=$((missing + 1))
  done
  registered=$(jq '.ok | length' <<<"$out")
  perf=$(jq '[.backends[] | select(.[0] == "perf,proc")] | length' <<<"$out")
  printf '| %s | %s | %s | %s | %s | %s | %s | %.2f ms | %s |\n' "$limit" "$steps" "$registered" \
    "$(jq '.refused | length' <<<"$out")" "$perf" "$((registered - perf))" "$(jq '.most' <<<"$out")" \
    "$(jq '.ms' <<<"$out")" "$missing"
  np_helper_stop
done
echo
echo "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$top" rev-parse --short HEAD)."
