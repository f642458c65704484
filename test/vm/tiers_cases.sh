#!/usr/bin/env bash
# Inside a tiered guest (test/vm/run --layout tiered|hbm): what the kernel makes of the HMAT the
# layout describes, on the kernel that is expected to support it and on the one that is not.
#   tiers_cases.sh tiered|hbm trixie|bookworm
# trixie (6.12): memory-only nodes get a tier of their own from their HMAT figures (since 6.10),
# and weighted interleave (since 6.9) splits a task's pages by the weights in sysfs. bookworm
# (6.1): the memory-only node sits in the DRAM tier, and weighted interleave is refused (EINVAL).
# Both: the HMAT figures in each node's access0, and preferred-many (5.15) over the memory-only
# nodes. Needs NUMAPLACE_BUILD (numa_probe) and WI_EXEC (wi_exec.c, built by the host).
set -u
layout=${1:?usage: tiers_cases.sh tiered|hbm trixie|bookworm}
kernel=${2:?usage: tiers_cases.sh tiered|hbm trixie|bookworm}
probe=${NUMAPLACE_BUILD:?}/test/numa_probe
wi_exec=${WI_EXEC:?}
# shellcheck source=test/vm/checks.sh
source "$(dirname "$0")/checks.sh"
yes_if() { if "$@"; then echo yes; else echo no; fi; }

# The layout's figures, as test/vm/run gives them to QEMU (bandwidth in MB/s as the guest shows
# it): per node, its initiator and the latency and bandwidth from that initiator.
case $layout in
  tiered) dram="0 1" slow="2" fast="" figures="0:0:100:20480 1:1:100:20480 2:0:300:5120" ;;
  hbm) dram="0 1" slow="" fast="2 3" figures="0:0:100:20480 1:1:100:20480 2:0:120:81920 3:1:120:81920" ;;
  *) echo "tiers_cases: unknown layout '$layout' (accepted: tiered, hbm)"; exit 2 ;;
esac
case $kernel in
  trixie) release=6.12 ;;
  bookworm) release=6.1 ;;
  *) echo "tiers_cases: unknown kernel '$kernel' (accepted: trixie, bookworm)"; exit 2 ;;
esac
check "kernel: $kernel's $release" "$release" "$(uname -r | cut -d. -f1-2)"

# ---- memory tiers --------------------------------------------------------------------------------
# tier_of NODE: the N of the memory_tierN whose nodelist holds NODE ("none" when none does).
tier_of() {
  local t list part
  for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
    list=$(cat "$t/nodelist" 2>/dev/null) || continue
    for part in ${list//,/ }; do
      if [ "$1" -ge "${part%-*}" ] && [ "$1" -le "${part#*-}" ]; then
        echo "${t##*memory_tier}"
        return
      fi
    done
  done
  echo none
}
echo "memory tiers: $(for t in /sys/devices/virtual/memory_tiering/memory_tier*; do printf '%s=%s ' "${t##*/}" "$(cat "$t/nodelist")"; done)"
# DRAM is memory_tier4 in every kernel with tiers (MEMTIER_ADISTANCE_DRAM / chunk size).
for n in $dram; do check "tiers: DRAM node $n in memory_tier4" 4 "$(tier_of "$n")"; done
for n in $slow $fast; do
  t=$(tier_of "$n")
  if [ "$release" = 6.1 ]; then
    # Before 6.10 a memory-only node onlined as ordinary memory joins the DRAM tier.
    check "tiers: memory-only node $n in the DRAM tier before 6.10" 4 "$t"
  elif [[ " $slow " == *" $n "* ]]; then
    check "tiers: slow node $n in a tier below DRAM's" yes "$([ "$t" != none ] && [ "$t" -gt 4 ] && echo yes || echo "no (memory_tier$t)")"
  else
    check "tiers: fast node $n in a tier above DRAM's" yes "$([ "$t" != none ] && [ "$t" -lt 4 ] && echo yes || echo "no (memory_tier$t)")"
  fi
done

# ---- HMAT figures per node -----------------------------------------------------------------------
for f in $figures; do
  IFS=: read -r n init lat bw <<<"$f"
  d=/sys/devices/system/node/node$n/access0/initiators
  got=$(for k in read_latency write_latency read_bandwidth write_bandwidth; do cat "$d/$k" 2>/dev/null || echo missing; done | paste -sd' ' -)
  check "hmat: node $n access0 latency and bandwidth (read, write)" "$lat $lat $bw $bw" "$got"
  check "hmat: node $n's best initiator is node $init" yes "$(yes_if [ -e "$d/node$init" ])"
done

# ---- preferred-many: the nearest of the preferred nodes, from each socket -------------------------
# pages_on NODE PROBE_LINE: that node's share of the probe's touched pages, in percent.
pages_on() {
  sed -n 's/.* pages=\([^ ]*\).*/\1/p' <<<"$2" | tr ',' '\n' |
    awk -F: -v n="$1" '{ all += $2; if ($1 == n) mine += $2 } END { print all ? int(100 * mine / all) : 0 }'
}
targets="$slow${slow:+${fast:+ }}$fast" # the memory-only nodes, one space apart
first_cpu=(0 2) # a CPU on node 0 and one on node 1
for socket in 0 1; do
  # The node the kernel's zonelist reaches first from this socket: the target with the smallest
  # distance (SLIT) from the socket's node.
  near=$(for n in $targets; do echo "$(cut -d' ' -f$((n + 1)) "/sys/devices/system/node/node$socket/distance") $n"; done | sort -n | head -1 | cut -d' ' -f2)
  out=$(taskset -c "${first_cpu[$socket]}" numactl --preferred-many="${targets// /,}" "$probe" --touch 16 2>&1)
  check "preferred-many over {${targets// /,}} from node $socket: policy" preferred-many "$(sed -n 's/.* mode=\([^ ]*\).*/\1/p' <<<"$out")"
  check "preferred-many over {${targets// /,}} from node $socket: >= 95% of 16 MiB on node $near" yes \
    "$([ "$(pages_on "$near" "$out")" -ge 95 ] && echo yes || echo "no ($(head -3 <<<"$out"))")"
done

# ---- numaplace's fast-tier: the nearest faster memory, the socket's DDR behind it -----------------
# np_place_exec places itself as the plugin places a task (the live topology read by hwloc and
# numaplace, the same decision and the same kernel calls), then execs the probe.
place=$NUMAPLACE_BUILD/test/np_place_exec
mode_nodes() { sed -n 's/^rank=.* mode=\([^ ]*\) nodes=\([^ ]*\) .*/\1 \2/p' <<<"$1"; }
if [ -n "$fast" ] && [ "$release" != 6.1 ]; then
  # The kernel ranks the HBM nodes above DRAM from their HMAT figures (above): they are fast.
  for socket in 0 1; do
    near=$((socket + 2)) # the layout's HBM beside each socket
    out=$(taskset -c "${first_cpu[$socket]}" "$place" fast-tier "$probe" --touch 16 2>&1)
    check "fast-tier from node $socket: preferred on its HBM node $near" "preferred $near" "$(mode_nodes "$out")"
    check "fast-tier from node $socket: >= 95% of 16 MiB on node $near" yes \
      "$([ "$(pages_on "$near" "$out")" -ge 95 ] && echo yes || echo "no ($(head -2 <<<"$out"))")"
  done
  out=$(taskset -c 0-3 "$place" fast-tier "$probe" --touch 4 2>&1)
  check "fast-tier from both sockets: preferred-many over both HBM nodes" "preferred-many 2-3" "$(mode_nodes "$out")"
  out=$(taskset -c 0 "$place" fast-tier-strict "$probe" --touch 16 2>&1)
  check "fast-tier-strict from node 0: bound to node 2" "bind 2" "$(mode_nodes "$out")"
  # More than the HBM node has free: it fills, and the rest comes from the socket's DDR (node 2's
  # nearest node after itself), not from the other socket. 48 MiB over: at least 24 on node 0.
  free=$(awk '/MemFree/ { print int($4 / 1024) }' /sys/devices/system/node/node2/meminfo)
  mib=$((free + 48))
  out=$(taskset -c 0 "$place" fast-tier "$probe" --touch "$mib" 2>&1)
  on2=$(pages_on 2 "$out") on0=$(pages_on 0 "$out")
  check "fast-tier from node 0, $mib MiB with $free MiB free on node 2: node 2 full, the rest on node 0" yes \
    "$([ $((on2 + on0)) -ge 95 ] && [ $((on0 * mib / 100)) -ge 24 ] && [ $((on2 * mib / 100)) -ge $((free / 2)) ] && echo yes || echo "no (node 2 $on2%, node 0 $on0%: $(head -2 <<<"$out"))")"
else
  # No memory faster than DRAM that the kernel or hwloc 2.9 can tell: fast-tier is local.
  out=$(taskset -c 0 "$place" fast-tier "$probe" --touch 4 2>&1)
  check "fast-tier with no faster memory ($layout, $release): local, preferred node 0" "preferred 0" "$(mode_nodes "$out")"
  check "fast-tier with no faster memory: the reason says local instead" yes \
    "$(grep -q 'fast-tier: no faster memory than the task.s node(s) it may use: local instead' <<<"$out" && echo yes || echo "no ($out)")"
fi

# ---- weighted interleave ---------------------------------------------------------------------------
wdir=/sys/kernel/mm/mempolicy/weighted_interleave
if [ "$release" = 6.1 ]; then
  check "weighted interleave: no $wdir before 6.9" no "$(yes_if [ -d "$wdir" ])"
  out=$("$wi_exec" 0,2 "$probe" --touch 4 2>&1)
  rc=$?
  check "weighted interleave: set_mempolicy(6) refused with EINVAL" "3 errno=22" "$rc $(grep -o 'errno=[0-9]*' <<<"$out")"
  # numaplace's weighted-interleave falls back to plain interleave, saying why; 6.1 keeps the
  # memory-only node in the DRAM tier, so the step's own node is all there is.
  out=$(taskset -c 0 "$place" weighted-interleave "$probe" --touch 4 2>&1)
  check "numaplace weighted-interleave on 6.1: plain interleave over node 0" "interleave 0" "$(mode_nodes "$out")"
  check "numaplace weighted-interleave on 6.1: the reason says so" yes \
    "$(grep -q 'this kernel has no weighted interleave (Linux 6.9+): plain interleave' <<<"$out" && echo yes || echo "no ($out)")"
elif [ -n "$slow" ]; then
  dram_node=${dram%% *}
  pair="$dram_node,$slow"
  nodes=(/sys/devices/system/node/node[0-9]*) weights=("$wdir"/node[0-9]*)
  check "weighted interleave: a weight for every node" "${#nodes[@]}" "${#weights[@]}"
  saved=$(for n in $dram_node $slow; do echo "$n $(cat "$wdir/node$n")"; done)
  # weighted_split DRAM_WEIGHT SLOW_WEIGHT MiB: the weights written, a task interleaving over the
  # pair touches MiB; its pages must split by the weights. The kernel picks each page's node from
  # its offset in the mapping (a cycle of DRAM_WEIGHT + SLOW_WEIGHT pages), so the split is exact
  # to within one cycle; 1% of the pages leaves room for the odd page the kernel had to place on
  # another node because the chosen one was momentarily short, never for a split by other weights
  # (3:1 against 1:1 is a 25-point difference).
  weighted_split() {
    local wd=$1 ws=$2 mib=$3 out total want got
    echo "$wd" >"$wdir/node$dram_node" && echo "$ws" >"$wdir/node$slow"
    check "weighted interleave: weights $wd and $ws written" "$wd $ws" "$(cat "$wdir/node$dram_node") $(cat "$wdir/node$slow")"
    out=$("$wi_exec" "$pair" "$probe" --touch "$mib" 2>&1)
    echo "  $out"
    check "weighted interleave $wd:$ws: the task's policy is weighted interleave (mode 6)" mode-6 "$(sed -n 's/.* mode=\([^ ]*\).*/\1/p' <<<"$out")"
    total=$((mib * 256))
    want=$((total * wd / (wd + ws)))
    got=$(sed -n 's/.* pages=\([^ ]*\).*/\1/p' <<<"$out" | tr ',' '\n' | awk -F: -v n="$dram_node" '$1 == n { print $2 }')
    check "weighted interleave $wd:$ws over {$pair}: $want of $total pages on node $dram_node (+/- 1%)" yes \
      "$([ -n "$got" ] && [ $((got > want ? got - want : want - got)) -le $((total / 100)) ] && echo yes || echo "no (${got:-none})")"
    check "weighted interleave $wd:$ws over {$pair}: no page outside the pair" yes \
      "$(sed -n 's/.* pages=\([^ ]*\).*/\1/p' <<<"$out" | tr ',' '\n' | awk -F: -v a="$dram_node" -v b="$slow" '$1 != a && $1 != b { bad = 1 } END { print bad ? "no" : "yes" }')"
  }
  # With transparent huge pages, the kernel interleaves whole 2 MiB folios (seen here: 32 MiB at 1:1
  # split 4352:3840): base pages only for these cases, as the split by weights is per page.
  thp=/sys/kernel/mm/transparent_hugepage/enabled
  thp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp" 2>/dev/null)
  [ -z "$thp_was" ] || echo never >"$thp"
  weighted_split 3 1 64
  weighted_split 1 1 32
  # numaplace's weighted-interleave: the step's node 0 and the expander, the nearest node of
  # another tier, by the kernel's weights (3:1 here); the split as above.
  echo 3 >"$wdir/node$dram_node" && echo 1 >"$wdir/node$slow"
  out=$(taskset -c 0 "$place" weighted-interleave "$probe" --touch 64 2>&1)
  check "numaplace weighted-interleave from node 0: mode 6 over {$pair}" "mode-6 $pair" "$(mode_nodes "$out")"
  check "numaplace weighted-interleave: the reason names the kernel's weights" yes \
    "$(grep -q "the kernel's weights $dram_node:3 $slow:1" <<<"$out" && echo yes || echo "no ($out)")"
  got=$(sed -n 's/^rank=.* pages=\([^ ]*\).*/\1/p' <<<"$out" | tr ',' '\n' | awk -F: -v n="$dram_node" '$1 == n { print $2 }')
  check "numaplace weighted-interleave 3:1: 12288 of 16384 pages on node $dram_node (+/- 1%)" yes \
    "$([ -n "$got" ] && [ $((got > 12288 ? got - 12288 : 12288 - got)) -le 163 ] && echo yes || echo "no (${got:-none})")"
  [ -z "$thp_was" ] || echo "$thp_was" >"$thp"
  # A weight is a byte from 1 to 255: the kernel refuses more.
  check "weighted interleave: a weight of 256 refused" no "$(yes_if sh -c "echo 256 >$wdir/node$dram_node" 2>/dev/null)"
  while read -r n w; do echo "$w" >"$wdir/node$n"; done <<<"$saved"
fi

checks_end
