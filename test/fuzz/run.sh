#!/usr/bin/env bash
# Run every libFuzzer harness (or those named) for a bounded time on its seed corpus.
# Usage: test/fuzz/run.sh BUILD_DIR [SECONDS_EACH] [HARNESS...]
#   BUILD_DIR: a build configured with -DCMAKE_C_COMPILER=clang -DNUMAPLACE_FUZZ=ON
#   SECONDS_EACH: -max_total_time per harness (default 15)
# The seed corpus in test/fuzz/corpus/<harness>/ is only read: what the fuzzer finds goes to a
# scratch directory, and a crashing input to $NUMAPLACE_FUZZ_ARTIFACTS (default: a scratch
# directory, kept and named when something failed). One line per harness, then "N passed, M
# failed" (test/run-all counts each harness as one suite).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR [SECONDS_EACH] [HARNESS...]}
seconds=${2:-15}
shift $(($# > 1 ? 2 : 1))
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(proto_request proto_reply stored_summary summary_json report numa_maps procfs
    helperconf siteconf topology_xml scenario)
fi
# The readers' scratch trees (fuzz_common.c) on tmpfs when there is one: ten times the speed.
[ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
# ASan keeps 256 MB of freed memory by default, which counts against -rss_limit_mb: 64 MB keeps
# the limit about the code's own memory (a 4 MiB summary's decode peaks near 250 MB under ASan).
export ASAN_OPTIONS=quarantine_size_mb=64${ASAN_OPTIONS:+:$ASAN_OPTIONS}
scratch=$(mktemp -d)
artifacts=${NUMAPLACE_FUZZ_ARTIFACTS:-$scratch/artifacts}
mkdir -p "$artifacts"
# fuzz_one NAME: run one harness; its lines on stdout, its status "pass" or "fail" as the last.
fuzz_one() {
  local name=$1 bin=$build/test/fuzz/fuzz_$1 dict=() limit log runs cov
  case $name in
  proto_*) dict=(-dict="$here/protocol.dict") ;;
  summary_json | stored_summary) dict=(-dict="$here/summary.dict") ;;
  report) dict=(-dict="$here/report.dict") ;;
  scenario) dict=(-dict="$here/scenario.dict") ;;
  esac
  mkdir -p "$scratch/$name" "$artifacts/$name"
  log=$scratch/$name.log
  if [ ! -x "$bin" ]; then
    echo "FAIL fuzz_$name: $bin is not built (configure with -DNUMAPLACE_FUZZ=ON)"
    echo fail
    return
  fi
  # hwloc 2.9.0's XML import (not numaplace's code) crashes on mutated XML within seconds:
  # CI replays the topology corpus; the long run mutates it (bench/RESULTS.md, "Fuzzing").
  limit=(-max_total_time="$seconds")
  [ "$name" != topology_xml ] || [ "${NUMAPLACE_FUZZ_TOPOLOGY_MUTATE:-0}" = 1 ] || limit=(-runs=0)
  # Bounded memory: libFuzzer fails an input past 512 MB of RSS or a single malloc over 128 MB.
  if "$bin" "${dict[@]}" "${limit[@]}" -rss_limit_mb=512 -malloc_limit_mb=128 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/$name/" \
    "$scratch/$name" "$here/corpus/$name" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
    echo "PASS fuzz_$name: ${runs:-?} runs (${limit[*]}), $cov"
    echo pass
  else
    echo "FAIL fuzz_$name: the input is in $artifacts/$name/; its log:"
    grep -E -A30 'ERROR|invariant failed|SUMMARY' "$log" | head -60
    echo fail
  fi
}
# Each harness is one process on one processor: NUMAPLACE_FUZZ_JOBS of them at a time (default
# one per processor), their lines printed in the harnesses' order.
jobs=${NUMAPLACE_FUZZ_JOBS:-$(nproc)}
running=0
for name in "${harnesses[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$name" >"$scratch/$name.result" &
  running=$((running + 1))
done
wait
passed=0
failed=0
for name in "${harnesses[@]}"; do
  sed '$d' "$scratch/$name.result"
  if [ "$(tail -1 "$scratch/$name.result")" = pass ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
if [ "$failed" -gt 0 ]; then
  echo "the crashing inputs are under $artifacts (test/fuzz/README.md: reproduce, minimise)"
fi
case $artifacts in
"$scratch"/*) [ "$failed" -gt 0 ] || rm -rf "$scratch" ;; # keep what failed
*) rm -rf "$scratch" ;;
esac
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
