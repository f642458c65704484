#!/usr/bin/env bash
# The migration benchmarks in the model's 4-node guest (test/vm/run): the mover against the raw
# system calls in one process (bench_migrate), then numaplaced end to end against migratepages
# (bench/migrate_helper.sh). Results go to bench/RESULTS.md by hand, with the machine.
#   bash bench/migrate_guest.sh [BUILD_DIR]      (default: build)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
cd "$top"
echo "host: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exec test/vm/run --layout 4node --timeout 1200 -- env NUMAPLACE_BUILD="$build" bash -c "
  echo \"guest: \$(nproc) CPUs, \$(uname -r), \$(numactl --hardware | head -1)\"
  echo '## bench_migrate --mib 128 --rounds 6 --from 1 --to 2'
  '$build/bench/bench_migrate' --mib 128 --rounds 6 --from 1 --to 2
  echo
  echo '## bench/migrate_helper.sh 160 8'
  bash bench/migrate_helper.sh 160 8"
