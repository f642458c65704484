# shellcheck shell=bash
# Sourced by in_root.sh for a root of another architecture (bookworm-arm64).
#
# np_root_foreign_arch ARCH: this machine runs ARCH's binaries, as a chroot into ARCH's root
# needs: qemu-user-static's interpreter registered with binfmt_misc (its "F" flag opens the
# interpreter at registration, so it works inside the chroot). binfmt-support registers it at
# boot where systemd runs; a container has neither the service nor, often, binfmt_misc mounted.
# 1, with the reason, when it cannot be done.
np_root_foreign_arch() {
  local arch=$1 qemu_name
  case $arch in
    arm64) qemu_name=aarch64 ;;
    *) qemu_name=$arch ;;
  esac
  [ -e "/proc/sys/fs/binfmt_misc/qemu-$qemu_name" ] && return 0
  if ! command -v update-binfmts >/dev/null || [ ! -e "/usr/bin/qemu-$qemu_name-static" ]; then
    echo "np_root_foreign_arch: $arch binaries need qemu-user-static and binfmt-support (scripts/install-deps.sh)" >&2
    return 1
  fi
  [ -e /proc/sys/fs/binfmt_misc/register ] ||
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || {
    echo "np_root_foreign_arch: binfmt_misc cannot be mounted here" >&2
    return 1
  }
  update-binfmts --enable "qemu-$qemu_name" >/dev/null 2>&1 || true
  if [ ! -e "/proc/sys/fs/binfmt_misc/qemu-$qemu_name" ]; then
    echo "np_root_foreign_arch: qemu-$qemu_name is not registered with binfmt_misc" >&2
    return 1
  fi
}
