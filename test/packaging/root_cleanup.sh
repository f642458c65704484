# shellcheck shell=bash
# Sourced by the scripts that chroot into a release's root (test/packaging/in_root.sh,
# test/fuzz/in_root.sh).
#
# np_root_cleanup WORK: kill what still runs in WORK/root, detach its mounts and remove WORK.
# Detached at once even when busy (a process just killed may not be gone yet), and the removal
# never crosses into a file system of its own: with /dev or /sys bound in, a plain rm -rf after
# a failed umount deletes the host's device nodes.
np_root_cleanup() {
  local work=$1 p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$work/root" ] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  umount -R -l "$work/root" 2>/dev/null || true
  if findmnt -rn -o TARGET | grep -q "^$work/"; then
    echo "left $work in place: something is still mounted under it" >&2
  else
    rm -rf --one-file-system "$work"
  fi
}
