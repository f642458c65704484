#!/usr/bin/env bash
# Install everything numaplace needs to build, test and demo on Debian 12, as root.
# Idempotent: packages already present are skipped by apt.
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config clang clang-format clang-tidy cppcheck
  libhwloc-dev libjansson-dev libnuma-dev libpfm4-dev check libslurm-dev zlib1g-dev libcairo2-dev libacl1-dev
  libmicrohttpd-dev libsystemd-dev
  # run: Slurm, munge, tools the tests and demo drive
  slurm-wlm slurm-client slurmd slurmctld munge hwloc numactl stress-ng
  util-linux procps iproute2 python3 jq
  # multi-NUMA guest: QEMU, a Debian kernel, a static busybox for the initramfs
  qemu-system-x86 busybox-static cpio zstd
  # the arm64 guest (test/vm/run --arch arm64): an emulated CPU with a PMU driver
  qemu-system-arm
  # man pages: mandoc -Tlint in scripts/lint.sh
  mandoc
  # accounting tests: a private MariaDB and slurmdbd per test cluster; pngcheck parses plots
  mariadb-server slurmdbd pngcheck
  # Debian packages: build, lint, and the install test's clean Debian roots
  debhelper lintian mmdebstrap systemd
  # the arm64 lane: an arm64 Debian root whose programs run under qemu-user (binfmt_misc);
  # mmdebstrap checks a foreign architecture with arch-test
  qemu-user-static binfmt-support arch-test
  # metrics tests: a Prometheus server scraping numaplaced, promtool checking the page and the
  # dashboard (tests start their own server; the package's service is not used)
  prometheus curl
  # bench/fwq runs Debian's numad beside numaplaced (it starts and stops its own)
  numad
)
# Debian 13 ships promtool as a package of its own (Debian 12's prometheus contains it); a
# testing or unstable system has no VERSION_ID.
# shellcheck source=/dev/null
debian_major=$(. /etc/os-release && echo "${VERSION_ID:-99}" | cut -d. -f1)
[ "$debian_major" -lt 13 ] || packages+=(promtool)

if [ "$(id -u)" != 0 ]; then
  echo "install-deps: must run as root (apt-get install)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Debian's slurm and munge packages try to start services; in containers without systemd that
# fails harmlessly, and tests start their own daemons in temporary directories anyway.
apt-get install -y -qq --no-install-recommends "${missing[@]}"
# numad's package enables its service; bench/fwq starts its own, and a numad running all the time
# would move processes and change khugepaged's scan interval on a developer's machine.
if [[ " ${missing[*]} " == *" numad "* ]] && [ -d /run/systemd/system ]; then
  systemctl disable --now numad.service || true
fi
