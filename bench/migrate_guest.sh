#!/usr/bin/env bash
# The migration benchmarks in the model's 4-node guest (test/vm/run): the mover against the raw
# system calls in one process (bench_migrate; the buffer with and without transparent huge
# pages), then numaplaced end to end against migrate_pages(2) (bench/migrate_helper.sh). Guest
# memory is preallocated on the host (--prealloc), so no move pays for a host page fault. The
# kernel's NUMA balancing is off for the ratios (docs/migration.md says why) and on for a last
# run that shows what it does to partial moves.
# Results go to bench/RESULTS.md by hand, with the machine.
#   bash bench/migrate_guest.sh [BUILD_DIR]      (default: build)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
cd "$top"
echo "host: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exec test/vm/run --layout 4node --prealloc --timeout 1500 -- env NUMAPLACE_BUILD="$build" bash -c "
  echo \"guest: \$(nproc) CPUs, \$(uname -r), \$(numactl --hardware | head -1)\"
  # As docs/migration.md advises where numaplaced migrates: the kernel's own NUMA balancing off.
  echo 0 >/proc/sys/kernel/numa_balancing
  for thp in no yes; do
    echo \"## kernel.numa_balancing=0: bench_migrate --mib 128 --rounds 8 --from 1 --to 2 --thp \$thp\"
    '$build/bench/bench_migrate' --mib 128 --rounds 8 --from 1 --to 2 --thp \$thp
    echo
  done
  echo '## kernel.numa_balancing=0: bench/migrate_helper.sh 160 16'
  bash bench/migrate_helper.sh 160 16
  echo
  echo 1 >/proc/sys/kernel/numa_balancing
  echo '## kernel.numa_balancing=1 (the kernel default here): bench_migrate --mib 128 --rounds 4 --from 1 --to 2 --thp no'
  '$build/bench/bench_migrate' --mib 128 --rounds 4 --from 1 --to 2 --thp no"
