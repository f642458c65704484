#!/usr/bin/env bash
# Regenerates the captured trees of the tiered guests that unit tests load as machine roots:
#   test/vm/capture_tiers.sh [NAME...]     (default: all of them)
#     qemu-cxl-6.12   --layout tiered on Debian 13's kernel (a CXL-like node in its own tier)
#     qemu-hbm-6.12   --layout hbm on Debian 13's kernel (HBM-like nodes above DRAM's tier)
#     qemu-cxl-6.1    --layout tiered on Debian 12's kernel (every node in the DRAM tier)
# into test/fixtures/roots/NAME/. Each tree is what hwloc-gather-topology saves (the /sys and /proc
# files hwloc's Linux backend reads: the CPUs' topology and caches, the nodes with their cpulist,
# meminfo, distance and access0/access1 HMAT figures) plus the kernel's memory tiers, the weighted
# interleave weights, demotion and NUMA balancing switches; the guest's own lstopo -v and XML and
# numactl -H beside it (lstopo-v.txt, topology.xml, numactl-H.txt: the answers as the guest saw
# them), and a README saying how it was made. Left out: per-node event counters, CPU hotplug and
# power files, uevents, symlinks that would point outside the tree, the command line's per-run
# parameters and /proc/mounts' line for the run's shared directory.
# One guest at a time (about 4 minutes each under TCG: hwloc-gather-topology forks a cat per file). Inside the guest it runs itself as --in-guest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

if [ "${1:-}" = --in-guest ]; then
  work=$(mktemp -d)
  hwloc-gather-topology --no-cpuid "$work/gathered" >/dev/null 2>&1
  mkdir "$work/root"
  tar -xjf "$work/gathered.tar.bz2" -C "$work/root" --strip-components=1
  r=$work/root
  copy() { # copy FILE...: each readable file's contents at its path under the tree
    local f
    for f in "$@"; do
      [ -r "$f" ] || continue
      mkdir -p "$r$(dirname "$f")"
      cat "$f" >"$r$f"
    done
  }
  copy /sys/devices/virtual/memory_tiering/memory_tier*/nodelist \
    /sys/kernel/mm/mempolicy/weighted_interleave/* \
    /sys/kernel/mm/numa/demotion_enabled /proc/sys/kernel/numa_balancing
  share=$(sed -n 's/.*np_share=\([^ ]*\).*/\1/p' /proc/cmdline)
  sed 's/ np_[a-z_]*=[^ ]*//g' /proc/cmdline >"$r/proc/cmdline"
  [ ! -f "$r/proc/mounts" ] || sed -i "\\# $share #d" "$r/proc/mounts"
  # What no reader of a machine root looks at: per-node event counters, CPU hotplug states,
  # power management, uevents.
  rm -rf "$r"/sys/devices/system/node/node*/{vmstat,numastat,compact,memory_failure,x86,power} \
    "$r"/sys/devices/system/cpu/{vulnerabilities,hotplug,cpuidle,cpufreq,power} \
    "$r"/sys/devices/system/cpu/cpu*/{hotplug,crash_notes,crash_notes_size,power}
  find "$r" -name uevent -delete
  # Links to what the tree does not hold (memory blocks, drivers, firmware nodes) would dangle.
  find "$r" -xtype l -delete
  cp "$work/gathered.output" "$r/lstopo-v.txt"
  cp "$work/gathered.xml" "$r/topology.xml"
  numactl -H >"$r/numactl-H.txt"
  {
    echo "kernel $(uname -r)"
    for t in /sys/devices/virtual/memory_tiering/memory_tier*; do echo "${t##*/} $(cat "$t/nodelist")"; done
    for n in /sys/devices/system/node/node[0-9]*; do echo "${n##*/} cpulist '$(cat "$n/cpulist")'"; done
  } >"$r/kernel-answers.txt"
  echo "===np-capture-begin==="
  tar -czf - -C "$r" . | base64 -w 100
  echo "===np-capture-end==="
  rm -rf "$work"
  exit 0
fi

captures=("qemu-cxl-6.12 tiered trixie" "qemu-hbm-6.12 hbm trixie" "qemu-cxl-6.1 tiered bookworm")
names=()
for c in "${captures[@]}"; do names+=("${c%% *}"); done
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=("${names[@]}")
for w in "${wanted[@]}"; do
  [[ " ${names[*]} " == *" $w "* ]] || { echo "capture_tiers: unknown tree '$w' (accepted: ${names[*]})" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/np-capture.XXXXXX")
trap 'rm -rf "$work"' EXIT
for c in "${captures[@]}"; do
  read -r name layout kernel <<<"$c"
  [[ " ${wanted[*]} " == *" $name "* ]] || continue
  echo "capture_tiers: $name (--layout $layout --kernel $kernel)" >&2
  nice -n 10 "$here/run" --layout "$layout" --kernel "$kernel" --timeout 300 -- \
    bash test/vm/capture_tiers.sh --in-guest >"$work/$name.out"
  rm -rf "${work:?}/${name:?}" && mkdir "$work/$name"
  sed -n '/^===np-capture-begin===$/,/^===np-capture-end===$/p' "$work/$name.out" | sed '1d;$d' |
    base64 -d | tar -xzf - -C "$work/$name"
  [ -f "$work/$name/kernel-answers.txt" ] || { echo "capture_tiers: $name: nothing captured" >&2; exit 1; }
  {
    echo "Captured by test/vm/capture_tiers.sh $name: test/vm/run --layout $layout --kernel $kernel"
    echo "($(head -1 "$work/$name/kernel-answers.txt"), $(qemu-system-x86_64 --version | head -1), TCG), on $(date -u +%Y-%m-%d)."
    echo "hwloc-gather-topology's files plus the memory tiers, weighted interleave weights, demotion and"
    echo "NUMA balancing switches; lstopo-v.txt, topology.xml and numactl-H.txt are the guest's own"
    echo "answers (they also show what the tree does not carry: PCI devices, and caches' Inclusive from"
    echo "CPUID), kernel-answers.txt its memory tiers and each node's cpulist as the kernel listed them."
  } >"$work/$name/README"
  # The host's hwloc must read the tree as a machine root and find the guest's NUMA nodes.
  got=$(HWLOC_FSROOT="$work/$name" HWLOC_THISSYSTEM=0 lstopo-no-graphics --only numanode 2>/dev/null | wc -l)
  want=$(grep -c '^node[0-9]* cpulist' "$work/$name/kernel-answers.txt")
  [ "$got" = "$want" ] || { echo "capture_tiers: $name: hwloc finds $got NUMA nodes in the tree, the guest had $want" >&2; exit 1; }
  rm -rf "$top/test/fixtures/roots/${name:?}"
  mv "$work/$name" "$top/test/fixtures/roots/$name"
  echo "capture_tiers: $name: $(find "$top/test/fixtures/roots/$name" -type f | wc -l) files, $(du -sk "$top/test/fixtures/roots/$name" | cut -f1) KiB" >&2
done
