# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # the globals it shares are declared in lib.sh, which sources it
# numaplace test harness, part of test/integration/lib.sh (which sources it): unprivileged test
# users; the daemons' logs.
# The functions are listed, with their arguments, at the top of lib.sh.

np_test_user_ensure() {
  id "$1" >/dev/null 2>&1 && return 0
  # Another suite may create it at the same moment: only fail if it still does not exist.
  useradd --create-home --shell /bin/bash "$1" 2>/dev/null || id "$1" >/dev/null 2>&1 ||
    np_die "cannot create the test user '$1'"
}

# Runs in the user's home when the current directory is not theirs to enter (slurmstepd
# changes into the submitter's directory as that user). Without a cluster (np_helper_alone) there
# is no SLURM_CONF to pass.
np_run_as() {
  local user=$1 dir=$PWD
  local conf=()
  shift
  [ -z "${SLURM_CONF:-}" ] || conf=(SLURM_CONF="$SLURM_CONF")
  runuser -u "$user" -- test -x "$dir" 2>/dev/null || dir=$(getent passwd "$user" | cut -d: -f6)
  (cd "${dir:-/tmp}" && runuser -u "$user" -- env "${conf[@]}" PATH="$PATH" "$@")
}

# With NP_NODES=N the slurmd logs are node-NAME/slurmd.log (all of them are searched).
np_slurmd_logs() {
  local f
  for f in "$np_dir/slurmd.log" "$np_dir"/node-*/slurmd.log; do
    [ -e "$f" ] && echo "$f"
  done
  return 0
}

np_slurmd_log_grep() {
  local logs
  mapfile -t logs < <(np_slurmd_logs)
  grep -h -E -- "$1" "${logs[@]}" /dev/null 2>/dev/null
}

np_log_grep() {
  local logs
  mapfile -t logs < <(np_slurmd_logs)
  grep -h -E -- "$1" "${logs[@]}" "$np_dir/slurmctld.log" 2>/dev/null
}
