# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # the globals it shares are declared in lib.sh, which sources it
# numaplace test harness, part of test/integration/lib.sh (which sources it): numaplaced for the
# cluster, and the numaplace command pointed at it.
# The functions are listed, with their arguments, at the top of lib.sh.

# shellcheck disable=SC2120 # extra plugstack arguments are optional
np_helper_plugstack() {
  [ -n "$np_dir" ] || np_die "np_helper_plugstack: start the cluster first (the socket lives in it)"
  echo "optional $NP_PLUGIN helper_socket=$np_dir/helper/numaplaced.sock helper_timeout_ms=500 $*"
}

np_numaplace() {
  "$NP_CLI" --socket "$np_dir/helper/numaplaced.sock" --spool "$np_dir/helper/spool" "$@"
}

np_helper_answers() {
  "$NP_CLI" --socket "$np_dir/helper/numaplaced.sock" ping
}

# np_helper_command [--KEY=VALUE...]: the command line np_helper_start runs, in np_helper_cmd
# (for a suite that starts and kills numaplaced itself).
np_helper_command() {
  [ -n "$np_dir" ] || np_die "no cluster: call np_cluster_start (or np_helper_alone) first"
  [ -x "$NP_HELPER" ] || np_die "numaplaced not built at $NP_HELPER"
  mkdir -p "$np_dir/helper"
  [ -e "$np_dir/helper/numaplaced.conf" ] || echo "# flags from test/integration/lib.sh" >"$np_dir/helper/numaplaced.conf"
  np_helper_cmd=("$NP_HELPER" --config="$np_dir/helper/numaplaced.conf" --socket="$np_dir/helper/numaplaced.sock"
    --state_dir="$np_dir/helper/state" --spool_dir="$np_dir/helper/spool"
    --pid_file="$np_dir/helper/numaplaced.pid" --log="$np_dir/helper/numaplaced.log"
    --log_level=debug --housekeeping_cpus=none "$@")
}

# A directory for numaplaced without a cluster, for host-only suites: np_dir in a new temporary
# directory, the helper stopped and the directory removed on exit like a cluster's.
np_helper_alone() {
  [ -z "$np_dir" ] || np_die "np_helper_alone: $np_dir is in use already"
  np_dir=$(mktemp -d /tmp/numaplace-helper.XXXXXX)
  np_dir_owned=1
  chmod 755 "$np_dir"
  trap np_on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# shellcheck disable=SC2120 # extra flags are optional
np_helper_start() {
  np_helper_command "$@"
  "${np_helper_cmd[@]}" >>"$np_dir/helper/numaplaced.out" 2>&1 &
  np_helper_pid=$!
  np_wait_for 15 np_helper_answers ||
    np_die "numaplaced did not answer within $((15 * np_wait_scale)) s: $(tail -20 "$np_dir/helper/numaplaced.log" "$np_dir/helper/numaplaced.out" 2>/dev/null)"
}

np_helper_stop() {
  [ -n "$np_helper_pid" ] || return 0
  np_kill_wait "$np_helper_pid"
  wait "$np_helper_pid" 2>/dev/null || true
  np_helper_pid=""
}

np_no_jobs() {
  [ -z "$(squeue -h -o %i 2>/dev/null)" ]
}
