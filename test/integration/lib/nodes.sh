# shellcheck shell=bash
# shellcheck disable=SC2004,SC2034,SC2154 # its globals (associative arrays too) are declared in lib.sh
# numaplace test harness, part of test/integration/lib.sh (which sources it): several slurmd nodes
# (NP_NODES=N), each in its own mount and UTS namespace.
# The functions are listed, with their arguments, at the top of lib.sh.

# ---- nodes: each node's slurmd lives in its own mount and UTS namespace, held by a "holder"
# process (sleep) whose argv names the node's directory; np_on_node enters them with nsenter.
# nsenter --root keeps the holder's root: entering a mount namespace resets the caller's root to
# the namespace's, which inside a chroot (test/packaging/in_root.sh) is the host's, not the test's.
np_nodes_setup() {
  local node pid
  for node in "${np_nodes[@]}"; do
    # shellcheck disable=SC2016 # expanded by the inner bash
    unshare --mount --uts --propagation private -- bash -c '
      hostname "$1" && mount --bind "$2/node-$1/run" "$2/run" &&
        mount --bind "$2/node-$1/helper" "$2/helper" || exit 1
      exec -a "numaplace-node-holder $2/node-$1" sleep infinity' np-node "$node" "$np_dir" \
      >"$np_dir/node-$node/holder.out" 2>&1 &
    np_node_holder[$node]=$!
  done
  for node in "${np_nodes[@]}"; do
    pid=${np_node_holder[$node]}
    np_wait_for 10 grep -q "^numaplace-node-holder" "/proc/$pid/cmdline" ||
      np_die "namespaces of $node not set up: $(cat "$np_dir/node-$node/holder.out")"
  done
}

np_on_node() { # np_on_node NODE CMD...: CMD in NODE's mount and UTS namespaces, same directory
  local node=$1
  shift
  [ -n "${np_node_holder[$node]:-}" ] || np_die "np_on_node: no node '$node' (NP_NODES=N starts node1..nodeN)"
  nsenter -t "${np_node_holder[$node]}" -m -u --root --wd="$PWD" -- "$@"
}

# In the background, "np_on_node NODE CMD &" gives the pid of a subshell; daemons are started
# with nsenter itself (which execs CMD), so $! is the daemon.
np_node_nsenter() { # np_node_nsenter NODE: the nsenter command line, in the array np_nsenter
  [ -n "${np_node_holder[$1]:-}" ] || np_die "no node '$1' (NP_NODES=N starts node1..nodeN)"
  np_nsenter=(nsenter -t "${np_node_holder[$1]}" -m -u --root --wd="$PWD" --)
}

np_node_dir() {
  echo "$np_dir/node-$1"
}

# shellcheck disable=SC2120 # extra flags are optional
np_node_helper_start() { # np_node_helper_start NODE [FLAGS...]: same paths as np_helper_start
  local node=$1 h=$np_dir/helper
  shift
  [ -x "$NP_HELPER" ] || np_die "numaplaced not built at $NP_HELPER"
  [ -e "$np_dir/node-$node/helper/numaplaced.conf" ] ||
    echo "# flags from test/integration/lib.sh" >"$np_dir/node-$node/helper/numaplaced.conf"
  np_node_nsenter "$node"
  "${np_nsenter[@]}" "$NP_HELPER" --config="$h/numaplaced.conf" --socket="$h/numaplaced.sock" \
    --state_dir="$h/state" --spool_dir="$h/spool" --pid_file="$h/numaplaced.pid" \
    --log="$h/numaplaced.log" --log_level=debug --housekeeping_cpus=none "$@" \
    >>"$np_dir/node-$node/helper/numaplaced.out" 2>&1 &
  np_node_helper[$node]=$!
  np_wait_for 15 np_on_node "$node" "$NP_CLI" --socket "$h/numaplaced.sock" ping ||
    np_die "numaplaced on $node did not answer within $((15 * np_wait_scale)) s: $(tail -20 "$np_dir/node-$node/helper/numaplaced.log" 2>/dev/null)"
}

np_node_helpers_stop() {
  local node
  for node in "${!np_node_helper[@]}"; do
    np_kill_wait "${np_node_helper[$node]}"
    wait "${np_node_helper[$node]}" 2>/dev/null || true
  done
  np_node_helper=()
}
