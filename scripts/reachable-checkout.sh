# shellcheck shell=bash
# Sourced by test/run-all and scripts/main-job before they build anything.
#
# Jobs run as an unprivileged user, who must load the plugin built here, run the numaplace
# command and the test programs. A checkout under a directory other users cannot enter (/root is
# mode 0700) would leave them "Permission denied". Then this copies the checkout to a fresh
# directory under /var/tmp that every user can read, says so, and runs the same command there.
# When the command ends, the copy (sources, build trees, installs: hundreds of MB) is removed but
# for its output/ directory, where a command keeps what is worth reading afterwards (the main
# job's log and pictures, a fuzzer's crashing input); a copy with no file kept is removed whole.
#
# np_run_from_reachable_checkout TOP COMMAND [ARGS...]: returns when TOP is reachable; otherwise
# runs COMMAND (a path relative to TOP) in the copy and exits with its status.
np_run_from_reachable_checkout() {
  local top=$1 command=$2
  shift 2
  if [ -n "${NUMAPLACE_REACHABLE_COPY_OF:-}" ] ||
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$top/CMakeLists.txt" 2>/dev/null; then
    return 0
  fi
  local base copy rc=0
  base=$(mktemp -d /var/tmp/numaplace.XXXXXX)
  chmod 0755 "$base"
  copy=$base/$(basename "$top")
  mkdir -m 0755 "$copy"
  # Sources as they are in the work tree (uncommitted changes too); no build trees or installs.
  tar -C "$top" --exclude='./build*' --exclude='./_install' --exclude='./output' -cf - . |
    tar -C "$copy" -xf -
  chmod -R a+rX "$base"
  echo "numaplace: $top cannot be read by other users (jobs run as one), so this runs from a copy"
  echo "numaplace: readable by every user: $copy (removed afterwards but for $copy/output)"
  export NUMAPLACE_REACHABLE_COPY_OF=$top
  (cd "$copy" && exec bash "$copy/$command" "$@") || rc=$?
  np_prune_reachable_copy "$base" "$copy"
  exit "$rc"
}

# np_prune_reachable_copy BASE COPY: remove COPY but for COPY/output; BASE too when nothing is kept.
np_prune_reachable_copy() {
  local base=$1 copy=$2
  find "$copy" -mindepth 1 -maxdepth 1 ! -name output -exec rm -rf {} +
  if [ -n "$(find "$copy/output" -type f -print -quit 2>/dev/null)" ]; then
    echo "numaplace: kept $copy/output ($(du -sh "$copy/output" | cut -f1)); the rest of the copy is removed"
  else
    rm -rf "$base"
  fi
}
