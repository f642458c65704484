#!/usr/bin/env bash
# The long fuzzing run of bench/RESULTS.md ("Fuzzing"): one harness at a time, at nice 19,
# each until RUNS executions or SECONDS seconds, whichever comes first. After a crash the
# harness is restarted on its grown corpus until its time is used, and the crashes are counted.
# Usage: test/fuzz/long-run.sh BUILD_DIR WORK_DIR RUNS NAME:SECONDS...
#   WORK_DIR keeps each harness's grown corpus, crashing inputs and logs; one line per harness
#   goes to WORK_DIR/results.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: long-run.sh BUILD_DIR WORK_DIR RUNS NAME:SECONDS...}
work=${2:?}
runs=${3:?}
shift 3
# The readers' scratch trees (fuzz_common.c) on tmpfs when there is one: ten times the speed.
[ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
# ASan keeps 256 MB of freed memory by default, which counts against -rss_limit_mb: 64 MB keeps
# the limit about the code's own memory (a 4 MiB summary's decode peaks near 250 MB under ASan).
export ASAN_OPTIONS=quarantine_size_mb=64${ASAN_OPTIONS:+:$ASAN_OPTIONS}
mkdir -p "$work"
for spec in "$@"; do
  name=${spec%%:*}
  budget=${spec#*:}
  dict=()
  case $name in
  proto_*) dict=(-dict="$here/protocol.dict") ;;
  summary_json | stored_summary) dict=(-dict="$here/summary.dict") ;;
  report) dict=(-dict="$here/report.dict") ;;
  esac
  mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
  # A copy of the binary: the build tree may be rebuilt while this runs.
  cp "$build/test/fuzz/fuzz_$name" "$work/$name/fuzz_$name"
  start=$(date +%s)
  total=0
  crashes=0
  attempt=0
  while :; do
    left=$((budget - ($(date +%s) - start)))
    if [ "$left" -le 5 ] || [ "$total" -ge "$runs" ]; then break; fi
    attempt=$((attempt + 1))
    log=$work/$name/run$attempt.log
    nice -n 19 "$work/$name/fuzz_$name" "${dict[@]}" -runs=$((runs - total)) \
      -max_total_time="$left" -rss_limit_mb=512 -malloc_limit_mb=128 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$work/$name/artifacts/" \
      "$work/$name/corpus" "$here/corpus/$name" >"$log" 2>&1
    rc=$?
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    total=$((total + ${n:-0}))
    [ "$rc" = 0 ] || crashes=$((crashes + 1))
    [ "$rc" = 0 ] && break
  done
  secs=$(($(date +%s) - start))
  cov=$(grep -Eho 'cov: [0-9]+ ft: [0-9]+' "$work/$name"/run*.log | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$work/$name"/run*.log | sort -n | tail -1)
  printf '%s runs=%s seconds=%s exec_per_s=%s %s peak_rss_mb=%s crashes=%s artifacts=%s\n' \
    "$name" "$total" "$secs" "$((total / (secs > 0 ? secs : 1)))" "$cov" "${rss:-?}" \
    "$crashes" "$(find "$work/$name/artifacts" -type f | wc -l)" | tee -a "$work/results.txt"
done
