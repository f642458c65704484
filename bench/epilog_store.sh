#!/usr/bin/env bash
# How long numaplace's epilog keeps a node completing now that its store runs in the epilog's
# time: on a real cluster with accounting (NODES namespaced slurmd nodes, MariaDB, slurmdbd), JOBS
# rounds, each an sbatch job and an srun job (no batch step) with the store on and the same two
# with the epilog's store off (NUMAPLACE_STORE=0), alternated in one cluster. Per job: the seconds
# from its end (it leaves RUNNING) to its release (it leaves the queue: every node's epilog has
# ended), and whether its summary is in accounting at that moment. Prints a markdown table and
# the medians.
#   bench/epilog_store.sh [JOBS] [NODES]     (default 3 rounds on 2 nodes)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export NUMAPLACE_BUILD=${NUMAPLACE_BUILD:-$top/build}
# shellcheck source=test/integration/lib.sh
source "$top/test/integration/lib.sh"
np_require bc
rounds=${1:-3} nodes=${2:-2}
user=nptest
np_test_user_ensure "$user"
NP_ACCOUNTING=1 NP_ACCOUNTING_USERS="$user" NP_NODES=$nodes NP_NUMAPLACE_EPILOG=1 np_cluster_start
np_cluster_set_plugstack "$(np_helper_plugstack default_policy=local)"
for node in "${np_nodes[@]}"; do np_node_helper_start "$node" --interval_ms=500; done
out=$np_dir/out
mkdir -p "$out"
chmod 777 "$out"
wrapper=$np_dir/numaplace-epilog
cp "$wrapper" "$wrapper.on"
sed 's|^exec |NUMAPLACE_STORE=0 exec |' "$wrapper.on" >"$wrapper.off"

# completing JOB: seconds from the job's end to its release, polled every 0.1 s (a job that
# leaves the queue between two polls ended after the last poll that saw it running)
completing() {
  local job=$1 ended="" running="" state now
  while :; do
    state=$(squeue -h -j "$job" -o %T 2>/dev/null)
    now=$(date +%s.%N)
    case $state in
      PENDING | CONFIGURING | RUNNING) running=$now ;;
      "") if [ -n "$ended" ] || [ -n "$running" ]; then
            ended=${ended:-$running}
            break
          fi ;;
      *) [ -n "$ended" ] || ended=$now ;;
    esac
    sleep 0.1
  done
  echo "$now - $ended" | bc
}
run_job() { # run_job KIND NAME: the job's id once it is queued
  local kind=$1 name=$2 id=""
  if [ "$kind" = sbatch ]; then
    np_run_as "$user" sbatch --parsable -N"$nodes" -n"$nodes" -J "$name" -o "$out/$name.out" \
      --wrap "srun $NP_WORKLOAD --mb 8 --busy 1 --idle 0.5"
    return
  fi
  np_run_as "$user" srun -N"$nodes" -n"$nodes" -J "$name" "$NP_WORKLOAD" --mb 8 --busy 2 --idle 0.5 \
    >/dev/null 2>&1 &
  until [ -n "$id" ]; do
    id=$(squeue -h -n "$name" -o %i 2>/dev/null | head -1)
    sleep 0.1
  done
  echo "$id"
}
echo "| round | job | store | completing (s) | summary in accounting |"
echo "| ---: | --- | --- | ---: | --- |"
declare -A times
for round in $(seq 1 "$rounds"); do
  for store in on off; do
    cp "$wrapper.$store" "$wrapper"
    for kind in sbatch srun; do
      job=$(run_job "$kind" "bench-$kind-$store-$round")
      t=$(completing "$job")
      summary=$(sacct -j "$job" -X -n -P -o AdminComment | cut -c1-5)
      printf '| %d | %s | %s | %.1f | %s |\n' "$round" "$kind" "$store" "$t" "${summary:-none}"
      times[$kind-$store]+="$t "
    done
  done
done
cp "$wrapper.on" "$wrapper"
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
for key in sbatch-on sbatch-off srun-on srun-off; do
  printf '%s: median %.1f s completing (%s)\n' "$key" "$(median <<<"${times[$key]}")" "${times[$key]% }"
done
np_cluster_stop
