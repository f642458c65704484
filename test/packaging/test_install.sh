#!/usr/bin/env bash
# Install test: numaplace's Debian packages in a clean Debian root, as a site would use them.
#
#   test/packaging/test_install.sh DEB_DIR [SUITE]     (SUITE: bookworm, the default, trixie or sid)
#
# 1. A clean root of SUITE with Slurm and munge (mmdebstrap, cached as a tarball under
#    $NUMAPLACE_ROOT_CACHE, /var/cache/numaplace-test by default; made again when missing). Its apt
#    sources are this host's own Debian sources with the suite names changed.
# 2. The previous build of the packages installed with apt, their dependencies from Debian: the
#    packages of DEB_DIR with a lower version ("~prev", repacked with dpkg-deb: same contents and
#    maintainer scripts, as a rebuild of this source at the last version would be).
# 3. The plugin enabled in plugstack.conf.d; numaplaced and the numaplace-store-pending timer
#    started with systemctl, as a site would; munged, slurmctld and slurmd started. The root has
#    no systemd as PID 1: root_systemctl.sh stands in for systemctl (ExecStart of the installed
#    unit), so the maintainer scripts stop, start and restart as they would under systemd.
# 4. A job with --numa-policy=verbose,interleave: its policy applied, its report in the spool and
#    `numaplace report --steps` reading it.
# 5. Upgrade to DEB_DIR's packages with a job running: numaplaced and the timer run afterwards,
#    numaplaced restarted with the new binary and the running job still in its registry.
# 6. numaplaced purged alone: it stops, and the summaries waiting in the spool's pending/ (the
#    numaplace package's) stay. Then the rest purged: nothing they installed or made is left
#    (Debian keeps only the dependencies' own files, which autoremove takes too).
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
  mapfile -t aptopts < <(np_root_aptopts)
  mmdebstrap --quiet "${aptopts[@]}" --format=tar --variant=minbase --include="$root_packages" \
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
in_root() { chroot "$root" env -i PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
inactive() { ! in_root systemctl is-active "$1"; }
in_root find / -xdev \( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/cache -o -path /var/log \
  -o -path /tmp \) -prune -o -print | sort >"$work/files.before"

# ---- 2. install the previous build with apt ----
mkdir -p "$root/tmp/debs" "$root/tmp/prev"
cp "$deb_dir"/*.deb "$root/tmp/debs/"
rm -f "$root"/tmp/debs/*-dbgsym_*.deb
version=$(dpkg-deb -f "$(ls "$root"/tmp/debs/numaplaced_*.deb)" Version)
for deb in "$root"/tmp/debs/*.deb; do
  rm -rf "$work/repack"
  dpkg-deb -R "$deb" "$work/repack"
  sed -i "s/^Version: .*/Version: $version~prev/; s/(= $version)/(= $version~prev)/g" "$work/repack/DEBIAN/control"
  dpkg-deb -b "$work/repack" "$root/tmp/prev/$(basename "${deb%%_*}")_prev.deb" >/dev/null
done
# A systemd machine's view for the maintainer scripts (see root_systemctl.sh).
mkdir -p "$root/run/systemd/system"
# Where dpkg finds it: maintainer scripts run with dpkg's own PATH, without /usr/local.
cp "$(dirname "$0")/root_systemctl.sh" "$root/usr/bin/systemctl"
chmod 755 "$root/usr/bin/systemctl"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
if in_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/prev/*.deb' \
  >"$work/apt.log" 2>&1; then
  pass "apt installed the previous build ($version~prev) of $(cd "$root/tmp/debs" && echo *.deb)"
else
  tail -20 "$work/apt.log"
  fail "apt could not install the packages"
  exit 1
fi
expect "numaplaced not started without the site's consent" \
  inactive numaplaced.service
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
expect "numaplaced.service and numaplace-store-pending.timer started (systemctl)" \
  in_root systemctl start numaplaced.service numaplace-store-pending.timer
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

# ---- 5. upgrade with the helper running ----
helper_pid() { cat "$root/run/np-systemctl/numaplaced.service.pid" 2>/dev/null; }
# Alive and not a zombie, from one read of its stat: a process that exits between two reads
# (seen: numaplaced ending as apt stopped it) is not taken for running.
running() {
  local state
  state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ -n "$state" ] && [ "$state" != Z ]
}
# shellcheck disable=SC2016 # expanded by the task's shell
in_root runuser -u numaplace-tester -- srun -n1 sh -c 'echo "job=$SLURM_JOB_ID"; sleep 300' \
  >"$work/running.out" 2>&1 &
running=""
for _ in $(seq 30); do
  running=$(sed -n 's/^job=//p' "$work/running.out")
  [ -n "$running" ] && in_root numaplace status 2>/dev/null | grep -qw "$running" && break
  sleep 1
done
expect "numaplaced tracks running job ${running:-?} before the upgrade" test -n "$running"
before=$(helper_pid)
if in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/debs/*.deb' >>"$work/apt.log" 2>&1; then
  pass "upgraded from $version~prev to $version"
else
  tail -20 "$work/apt.log"
  fail "apt could not upgrade the packages"
fi
for _ in $(seq 15); do in_root numaplace ping >/dev/null 2>&1 && break; sleep 1; done
after=$(helper_pid)
expect "numaplaced runs after the upgrade, restarted (pid $before, then ${after:-none})" \
  test -n "$after" -a "$after" != "$before" -a -n "$(running "$after" && echo yes)"
expect "the restarted numaplaced answers" in_root numaplace ping
if out=$(in_root numaplace status 2>&1) && grep -qw "$running" <<<"$out"; then
  pass "the restarted numaplaced kept job $running from its registry"
else
  indent <<<"$out"
  fail "the restarted numaplaced lost job $running"
fi
expect "numaplace-store-pending.timer active after the upgrade" \
  in_root systemctl is-active numaplace-store-pending.timer
in_root scancel "$running" 2>/dev/null || true

# ---- 6. purge: each package its own, nothing left behind ----
for p in /proc/[0-9]*; do
  if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && [ "${p#/proc/}" != "$(helper_pid)" ]; then
    kill "${p#/proc/}" 2>/dev/null || true
  fi
done
sleep 2
# A summary the epilog could not store: numaplace-store-pending.timer still has to.
mkdir -p "$root/var/spool/numaplace/pending"
echo '{}' >"$root/var/spool/numaplace/pending/4242.json"
last=$(helper_pid)
owned=$(in_root dpkg -L slurm-spank-numaplace numaplaced numaplace numaplace-data | sort -u)
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq numaplaced' >>"$work/apt.log" 2>&1 ||
  fail "apt could not purge numaplaced"
expect "removing numaplaced stopped it" test -z "$(running "$last" && echo yes)"
expect "purging numaplaced kept the numaplace package's pending summaries" \
  test -e "$root/var/spool/numaplace/pending/4242.json"
if in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq slurm-spank-numaplace numaplace numaplace-data &&
  DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -qq' >>"$work/apt.log" 2>&1; then
  pass "purged"
else
  tail -20 "$work/apt.log"
  fail "apt could not purge the packages"
fi
expect "removing numaplace stopped its timer" inactive numaplace-store-pending.timer
for p in /proc/[0-9]*; do
  if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ]; then kill "${p#/proc/}" 2>/dev/null || true; fi
done
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

if [ "$failed" != 0 ]; then
  say "systemctl calls (root_systemctl.sh):"
  indent <"$root/run/np-systemctl/calls" || true
  grep -i "systemd\|invoke\|warning" "$work/apt.log" | indent || true
fi
say "$passed passed, $failed failed"
[ "$failed" = 0 ]
