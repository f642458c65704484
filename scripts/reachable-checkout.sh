# shellcheck shell=bash
# Sourced by test/run-all and scripts/main-job before they build anything.
#
# Jobs run as an unprivileged user, who must load the plugin built here, run the numaplace
# command and the test programs. A checkout under a directory other users cannot enter (/root is
# mode 0700) would leave them "Permission denied". Then this copies the checkout to a fresh
# directory under /var/tmp that every user can read, says so, and runs the same command from there.
# The copy is kept for its logs and pictures.
#
# np_run_from_reachable_checkout TOP COMMAND [ARGS...]: returns when TOP is reachable; otherwise
# execs COMMAND (a path relative to TOP) in the copy and never returns.
np_run_from_reachable_checkout() {
  local top=$1 command=$2
  shift 2
  if [ -n "${NUMAPLACE_REACHABLE_COPY_OF:-}" ] ||
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$top/CMakeLists.txt" 2>/dev/null; then
    return 0
  fi
  local base copy
  base=$(mktemp -d /var/tmp/numaplace.XXXXXX)
  chmod 0755 "$base"
  copy=$base/$(basename "$top")
  mkdir -m 0755 "$copy"
  # Sources as they are in the work tree (uncommitted changes too); no build trees or installs.
  tar -C "$top" --exclude='./build*' --exclude='./_install' -cf - . | tar -C "$copy" -xf -
  chmod -R a+rX "$base"
  echo "numaplace: $top cannot be read by other users (jobs run as one), so this runs from a copy"
  echo "numaplace: readable by every user: $copy (kept afterwards for its logs)"
  export NUMAPLACE_REACHABLE_COPY_OF=$top
  cd "$copy" && exec bash "$copy/$command" "$@"
}
