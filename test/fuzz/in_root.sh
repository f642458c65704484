#!/usr/bin/env bash
# Fuzz the topology XML harness against another Debian release's hwloc (Debian 13 "trixie" by
# default), inside the clean root test/packaging/in_root.sh caches, every input fed to hwloc
# (NUMAPLACE_FUZZ_HWLOC_ALL=1: none of the 2.9.0 crash classes skipped):
#
#   test/fuzz/in_root.sh [SECONDS] [SUITE] [WORK_DIR]
#
# Extracts the newest cached $NUMAPLACE_ROOT_CACHE/SUITE-ci-*.tar (made by in_root.sh) into a
# scratch directory, installs clang in it when missing (the root's own apt), builds only
# fuzz_topology_xml with clang there and runs it at nice 19 for SECONDS (default 600) on the seed
# corpus, restarting after a crash until the time is used. WORK_DIR (default: a new directory
# under /var/tmp) keeps the grown corpus, crashing inputs and logs. The last lines give the
# root's hwloc, the executions, the coverage and the crashes. Runs in its own mount namespace.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-600}
suite=${2:-trixie}
keep=${3:-$(mktemp -d /var/tmp/numaplace-fuzz-root.XXXXXX)}
cache=${NUMAPLACE_ROOT_CACHE:-/var/cache/numaplace-test}
if [ -z "${NP_IN_NAMESPACE:-}" ]; then
  NP_IN_NAMESPACE=1 exec unshare --mount --propagation private -- "$0" "$seconds" "$suite" "$keep"
fi
say() { printf 'fuzz-in-root(%s): %s\n' "$suite" "$*"; }
# shellcheck source=test/packaging/root_cleanup.sh
. "$top/test/packaging/root_cleanup.sh"
root_tar=$(find "$cache" -maxdepth 1 -name "$suite-ci-*.tar" -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -1 | cut -d' ' -f2-)
if [ -z "$root_tar" ]; then
  say "no cached root $cache/$suite-ci-*.tar: run test/packaging/in_root.sh $suite once"
  exit 1
fi
work=$(mktemp -d /var/tmp/numaplace-fuzzroot.XXXXXX)
cleanup() { np_root_cleanup "$work"; }
trap cleanup EXIT
mkdir -p "$work/root"
tar -C "$work/root" -xf "$root_tar"
mount --bind "$work/root" "$work/root"
mount -t proc proc "$work/root/proc"
mount -t tmpfs tmpfs "$work/root/tmp"
# A /dev of its own with the few nodes a build and the fuzzer open: never the host's, so nothing
# done in the root (or to it, at the end) reaches the host's devices.
mount -t tmpfs -o mode=755 tmpfs "$work/root/dev"
for node in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
  IFS=: read -r name major minor <<<"$node"
  mknod -m 666 "$work/root/dev/$name" c "$major" "$minor"
done
mkdir -m 1777 "$work/root/dev/shm"
mount -t tmpfs tmpfs "$work/root/dev/shm"
ln -s /proc/self/fd "$work/root/dev/fd"
cp -L /etc/resolv.conf "$work/root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$work/root/src/numaplace" "$work/root/keep"
mount --bind "$keep" "$work/root/keep"
tar -C "$top" --exclude='./build*' --exclude='./_install' --exclude=./.git -cf - . |
  tar -C "$work/root/src/numaplace" -xf -
in_root() { chroot "$work/root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@"; }
if ! in_root sh -c 'command -v clang >/dev/null'; then
  say "installing clang in the root (its own apt)"
  in_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null'
fi
# shellcheck disable=SC2016 # expanded by the root's shell
hwloc=$(in_root sh -c 'dpkg-query -W -f=\${Version} libhwloc-dev')
# shellcheck disable=SC2016 # expanded by the root's shell
say "hwloc $hwloc, $(in_root sh -c 'clang --version | head -1')"
in_root nice -n 19 sh -c 'cd /src/numaplace && cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang \
  -DNUMAPLACE_FUZZ=ON -DBUILD_TESTING=OFF -DNUMAPLACE_BUILD_PLUGIN=OFF -DNUMAPLACE_BUILD_DAEMON=OFF \
  -DNUMAPLACE_BUILD_CLI=OFF >/dev/null && cmake --build build-fuzz -j2 --target fuzz_topology_xml >/dev/null'
mkdir -p "$keep/corpus" "$keep/artifacts"
feed_all=${NUMAPLACE_FUZZ_HWLOC_ALL:-1}
end=$(($(date +%s) + seconds))
runs=0 crashes=0 n=0
while [ "$(date +%s)" -lt "$end" ] && [ "$crashes" -lt 50 ]; do
  left=$((end - $(date +%s)))
  n=$((n + 1))
  # shellcheck disable=SC2016 # expanded by the root's shell
  in_root env NUMAPLACE_FUZZ_HWLOC_ALL="$feed_all" TMPDIR=/tmp ASAN_OPTIONS=quarantine_size_mb=64 \
    nice -n 19 /src/numaplace/build-fuzz/test/fuzz/fuzz_topology_xml -max_total_time="$left" \
    -rss_limit_mb=512 -malloc_limit_mb=128 -timeout=10 -print_final_stats=1 \
    -artifact_prefix=/keep/artifacts/ /keep/corpus /src/numaplace/test/fuzz/corpus/topology_xml \
    >"$keep/run$n.log" 2>&1 && rc=0 || rc=$?
  r=$(sed -n 's/^stat::number_of_executed_units: *//p' "$keep/run$n.log")
  [ -n "$r" ] || r=$(grep -Eo '^#[0-9]+' "$keep/run$n.log" | tail -1 | tr -d '#')
  runs=$((runs + ${r:-0}))
  if [ "$rc" != 0 ]; then
    crashes=$((crashes + 1))
    say "run $n stopped (rc $rc): $(grep -E -m1 'ERROR|invariant failed' "$keep/run$n.log" || echo 'see its log')"
    grep -E -m3 '^ +#[0-9]+ .* in ' "$keep/run$n.log" | sed 's/^/    /' || true
  fi
done
cov=$(grep -Eho 'cov: [0-9]+ ft: [0-9]+' "$keep"/run*.log | tail -1)
say "$seconds s at nice 19 against hwloc $hwloc (NUMAPLACE_FUZZ_HWLOC_ALL=$feed_all): $runs executions, $cov, corpus $(find "$keep/corpus" -type f | wc -l) files, $crashes crash(es); logs and inputs in $keep"
