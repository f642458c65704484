#!/usr/bin/env bash
# Install test: numaplace's Debian packages in a clean Debian root, as a site would use them.
#
#   test/packaging/test_install.sh DEB_DIR [SUITE]     (SUITE: bookworm, the default, or trixie)
#
# 1. A clean root of SUITE with Slurm and munge (mmdebstrap, cached as a tarball under
#    $NUMAPLACE_ROOT_CACHE, /var/cache/numaplace-test by default; made again when missing). Its apt
#    sources are this host's own Debian sources with the suite names changed.
# 2. The packages in DEB_DIR installed with apt, their dependencies from Debian.
# 3. The plugin enabled in plugstack.conf.d; munged, slurmctld, slurmd and numaplaced started
#    inside the root as the packages set them up (no systemd: numaplaced as its unit runs it).
# 4. A job with --numa-policy=verbose,interleave: its policy applied, its report in the spool and
#    `numaplace report --steps` reading it.
# 5. The packages purged: nothing they installed or made is left (Debian keeps only the
#    dependencies' own files, which autoremove takes too).
# Reports cross releases during an upgrade: NUMAPLACE_EXPORT_REPORTS=DIR copies this job's report
# there; NUMAPLACE_FOREIGN_REPORTS=DIR has this release's `numaplace report --steps` read each
# report found there (written by another release's numaplaced).
# Runs in its own mount namespace, so no mount outlives it; every daemon it starts is killed.
set -euo pipefail
deb_dir=$(cd "${1:?usage: test_install.sh DEB_DIR [SUITE]}" && pwd)
suite=${2:-bookworm}
cache=${NUMAPLACE_ROOT_CACHE:-/var/cache/numaplace-test}

if [ -z "${NP_IN_NAMESPACE:-}" ]; then
  NP_IN_NAMESPACE=1 exec unshare --mount --propagation private -- "$0" "$deb_dir" "$suite"
fi

# shellcheck source=test/packaging/root_hosts.sh
. "$(dirname "$0")/root_hosts.sh"
# shellcheck source=test/packaging/root_sources.sh
. "$(dirname "$0")/root_sources.sh"
passed=0
failed=0
say() { printf 'install-test(%s): %s\n' "$suite" "$*"; }
pass() { passed=$((passed + 1)); say "PASS $*"; }
fail() { failed=$((failed + 1)); say "FAIL $*"; }
expect() { # expect WHAT CMD...: CMD's success passes WHAT
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
indent() { sed 's/^/    /'; }

# ---- 1. the clean root ----
# The cached root is named after its package list, so a changed list makes a new root (a root
# cached by an earlier run with another list is never used in its place).
root_packages=slurmd,slurmctld,slurm-client,munge,procps
root_tar=$cache/$suite-clean-$(echo "$root_packages" | md5sum | cut -c1-8).tar
if [ ! -s "$root_tar" ]; then
  say "making a clean $suite root (cached in $root_tar)"
  mkdir -p "$cache"
  sources=$(mktemp)
  np_root_sources "$suite" "$sources"
  mmdebstrap --quiet --format=tar --variant=minbase --include="$root_packages" \
    "$suite" "$root_tar.new" "$sources"
  rm -f "$sources"
  mv "$root_tar.new" "$root_tar"
fi
work=$(mktemp -d /var/tmp/numaplace-install.XXXXXX)
root=$work/root
mkdir -p "$root"
tar -C "$root" -xf "$root_tar"
np_root_add_host "$root" # see root_hosts.sh: a 10 s stall at every job's end otherwise

# Every process whose root is ours is ours to kill; then the files go.
cleanup() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  sleep 1
  umount -R "$root/proc" "$root/sys" "$root/dev" "$root/run" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
in_root find / -xdev \( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/cache -o -path /var/log \
  -o -path /tmp \) -prune -o -print | sort >"$work/files.before"

# ---- 2. install with apt ----
mkdir -p "$root/tmp/debs"
cp "$deb_dir"/*.deb "$root/tmp/debs/"
rm -f "$root"/tmp/debs/*-dbgsym_*.deb
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
if in_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/debs/*.deb' \
  >"$work/apt.log" 2>&1; then
  pass "apt installed $(cd "$root/tmp/debs" && echo *.deb)"
else
  tail -20 "$work/apt.log"
  fail "apt could not install the packages"
  exit 1
fi
expect "state directory made by the package, mode 0700" test "$(stat -c %a "$root/var/lib/numaplace")" = 700
expect "spool directory made by the package" test -d "$root/var/spool/numaplace"
expect "the measured sensitivity table installed (numaplace-data)" \
  test -s "$root/usr/share/numaplace/sandman-spec2017.csv"

# ---- 3. enable the plugin, start the cluster and the helper ----
sed -i 's/^#optional /optional /' "$root/etc/slurm/plugstack.conf.d/numaplace.conf"
expect "plugin enabled in plugstack.conf.d" \
  grep -q '^optional .*numaplace.so' "$root/etc/slurm/plugstack.conf.d/numaplace.conf"
host=$(hostname -s)
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
node_line=$(in_root slurmd -C | sed -n "s/^NodeName=[^ ]*//p")
cat >"$root/etc/slurm/slurm.conf" <<CONF
ClusterName=numaplace-install
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurmctld.log
SlurmdLogFile=/var/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$host$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
mkdir -p "$root/run/munge" "$root/run/numaplace" "$root/var/spool/slurmctld" "$root/var/spool/slurmd"
[ -s "$root/etc/munge/munge.key" ] || dd if=/dev/urandom of="$root/etc/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$root/etc/munge/munge.key"
in_root munged --force
# As numaplaced.service runs it (RuntimeDirectory=numaplace made /run/numaplace above).
in_root /usr/sbin/numaplaced --config=/etc/numaplace/numaplaced.conf --log=/var/log/numaplaced.log &
in_root slurmctld -i >/dev/null 2>&1
in_root slurmd >/dev/null 2>&1
for _ in $(seq 60); do
  in_root sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 1
done
if in_root sinfo -h -o %T | grep -q idle; then
  pass "munged, slurmctld, slurmd and numaplaced up"
else
  fail "the node never became idle"
  tail "$root/var/log/slurmctld.log" "$root/var/log/slurmd.log" || true
  exit 1
fi

# ---- 4. a job with placement, and its report ----
in_root useradd --create-home numaplace-tester
# shellcheck disable=SC2016 # expanded by the task's shell
out=$(in_root runuser -u numaplace-tester -- srun --numa-policy=verbose,interleave -n1 \
  sh -c 'echo "job=$SLURM_JOB_ID policy=$NUMAPLACE_POLICY mode=$NUMAPLACE_MODE nodes=$NUMAPLACE_NODES"; sleep 2' 2>&1) || true
indent <<<"$out"
expect "the job ran with --numa-policy=interleave applied" grep -q 'policy=interleave' <<<"$out"
expect "no plugin error at submission" test -z "$(grep 'error' <<<"$out")"
job=$(sed -n 's/^job=\([0-9]*\) .*/\1/p' <<<"$out")
report=""
for _ in $(seq 20); do
  report=$(find "$root/var/spool/numaplace" -name "$job.0.*.json" 2>/dev/null | head -1)
  [ -n "$report" ] && break
  sleep 1
done
expect "numaplaced wrote job $job's step report in /var/spool/numaplace" test -n "$report"
if out=$(in_root numaplace report --steps "$job" 2>&1) && echo "$out" | grep -q 'interleave'; then
  pass "numaplace report --steps $job reads it"
else
  indent <<<"$out"
  fail "numaplace report --steps $job"
fi

if [ -n "${NUMAPLACE_EXPORT_REPORTS:-}" ] && [ -n "$report" ]; then
  mkdir -p "$NUMAPLACE_EXPORT_REPORTS"
  cp "$report" "$NUMAPLACE_EXPORT_REPORTS/"
fi
for foreign in "${NUMAPLACE_FOREIGN_REPORTS:-/nonexistent}"/*.json; do
  [ -e "$foreign" ] || continue
  mkdir -p "$root/tmp/foreign"
  cp "$foreign" "$root/tmp/foreign/"
  name=$(basename "$foreign")
  if out=$(in_root numaplace --spool /tmp/foreign report --steps "${name%%.*}" 2>&1) &&
    grep -q 'interleave' <<<"$out"; then
    pass "this release's numaplace reads $name, written by another release"
  else
    indent <<<"$out"
    fail "this release's numaplace cannot read $name, written by another release"
  fi
  rm -f "$root/tmp/foreign/$name"
done

# ---- 5. purge: nothing left behind ----
for p in /proc/[0-9]*; do
  [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill "${p#/proc/}" 2>/dev/null
done
sleep 2
owned=$(in_root dpkg -L slurm-spank-numaplace numaplaced numaplace numaplace-data | sort -u)
if in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq slurm-spank-numaplace numaplaced numaplace numaplace-data &&
  DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -qq' >>"$work/apt.log" 2>&1; then
  pass "purged"
else
  tail -20 "$work/apt.log"
  fail "apt could not purge the packages"
fi
left=()
while IFS= read -r path; do
  # What the packages installed, unless it is a directory other packages share (/usr, /etc, the
  # units' directory ...: still holding their files) or was there before.
  [ -e "$root$path" ] || continue
  [ -d "$root$path" ] && [ -n "$(ls -A "$root$path")" ] && continue
  grep -qxF "$path" "$work/files.before" && continue
  left+=("$path")
done <<<"$owned"
for path in /etc/numaplace /var/lib/numaplace /var/spool/numaplace; do
  [ -e "$root$path" ] && left+=("$path")
done
expect "nothing of numaplace is left after purge${left[*]:+ (left: ${left[*]})}" test ${#left[@]} -eq 0

say "$passed passed, $failed failed"
[ "$failed" = 0 ]
