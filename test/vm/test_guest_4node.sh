#!/usr/bin/env bash
# Host side: boot the model's 4-node guest once and run, inside it, the guest self-check, the
# plugin's whole Slurm integration suite and the multi-NUMA cases.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${NUMAPLACE_BUILD:-$top/build}
if ! command -v qemu-system-x86_64 >/dev/null; then
  echo "!!!! SKIPPED: qemu-system-x86_64 is not installed, the multi-NUMA guest cannot run here !!!!"
  exit 77
fi
cd "$top" || exit 1
# shellcheck disable=SC2016 # expanded inside the guest
"$here/run" --layout 4node --timeout 900 -- env NUMAPLACE_BUILD="$build" bash -c '
  status=0
  bash test/vm/selfcheck.sh 4node || status=1
  bash test/integration/test_plugin.sh || status=1
  bash test/vm/numa_cases.sh 4node || status=1
  exit $status'
