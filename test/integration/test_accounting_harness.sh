#!/usr/bin/env bash
# The harness's accounting and two-node options (lib.sh: NP_ACCOUNTING=1, NP_NODES=2, NP_EPILOG)
# on a real local Slurm: a private MariaDB and slurmdbd account finished jobs of root and of an
# unprivileged user; an Epilog stores an exact 60000-byte AdminComment that sacct shows afterwards
# (and the ways that do not work: scontrol update from the Epilog, sacctmgr's lowercasing, values
# over 65535 bytes); two slurmd nodes, each in its own mount and UTS namespace, run srun -N2 and
# sbatch -N2 and each runs the Epilog in its own namespace; nothing is left after a stop.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"

user=nptest
np_test_user_ensure "$user"
out_dir=$(mktemp -d /tmp/numaplace-acct.XXXXXX)
chmod 755 "$out_dir"
# shellcheck disable=SC2016 # expanded at exit
np_at_exit 'rm -rf "$out_dir"'

# Run by each node's slurmd as root, in that node's namespaces, at the end of every job. It has
# SLURM_CONF, SLURM_JOB_ID, SLURMD_NODENAME, SLURM_NODELIST and SLURM_CLUSTER_NAME (not the job
# name). $np_dir/run is the node's own node-NAME/run there.
cat >"$out_dir/epilog.sh" <<EPILOG
#!/bin/bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
dir=\$(dirname "\$SLURM_CONF")
echo "\$SLURMD_NODENAME \$(hostname)" >"\$dir/run/epilog-\$SLURM_JOB_ID"
# What an Epilog cannot do, checked once per job by its first node when the job left a value:
value=$out_dir/ac-\$SLURM_JOB_ID
[ -f "\$value" ] || exit 0
[ "\$SLURMD_NODENAME" = "\$(scontrol show hostnames "\$SLURM_NODELIST" | head -1)" ] || exit 0
# Refused: the job is COMPLETING ("Job has already finished"); kept for the case below.
scontrol update job="\$SLURM_JOB_ID" AdminComment=from-scontrol >"\$value.scontrol" 2>&1
echo "rc=\$?" >>"\$value.scontrol"
exit 0
EPILOG
chmod 755 "$out_dir/epilog.sh"

t0=$SECONDS
NP_ACCOUNTING=1 NP_NODES=2 NP_EPILOG=$out_dir/epilog.sh np_cluster_start
echo "cluster with accounting and 2 nodes up in $((SECONDS - t0)) s"
np_admin_comment_tool >/dev/null
cp "$NP_ADMIN_COMMENT" "$out_dir/np-admin-comment"

# alive PID...: the pids among PID... that still exist (zombies count as gone).
alive() {
  local pid
  for pid in "$@"; do
    [ -e "/proc/$pid" ] && [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ] && echo "$pid"
  done
  return 0
}

# sacct_field JOB FIELD: one field of the job's allocation line.
sacct_field() {
  sacct -j "$1" -X -n -P -o "$2" 2>/dev/null | head -1
}

case_accounting_up() {
  np_expect_match '^AccountingStorageType=accounting_storage/slurmdbd$' "$(cat "$SLURM_CONF")"
  np_expect_eq "$(stat -c %a "$np_dir/slurmdbd.conf")" 600 "slurmdbd.conf mode"
  np_expect_eq "$(scontrol show config | sed -n 's/^AccountingStorageType *= *//p')" accounting_storage/slurmdbd
  np_run sacctmgr -n -P list cluster format=cluster
  np_expect_rc 0
  np_expect_match '^numaplace-test$'
  np_run sacctmgr -n -P list assoc format=cluster,account,user
  np_expect_match '^numaplace-test\|numaplace\|root$'
  np_expect_match "^numaplace-test\|numaplace\|$user\$"
  np_expect_eq "$(np_db_sql 'SELECT 1')" 1 "MariaDB answers"
}
np_case "accounting up: MariaDB, slurmdbd, the cluster and the associations registered" case_accounting_up

case_sacct_root() {
  local job t
  # shellcheck disable=SC2016 # expanded in the job
  np_run srun -N1 bash -c 'echo $SLURM_JOB_ID'
  np_expect_rc 0
  job=$np_out
  t=$SECONDS
  np_sacct_wait "$job" 30 || np_fail "sacct never showed job $job finished"
  echo "  sacct showed job $job finished $((SECONDS - t)) s after srun returned"
  np_expect_eq "$(sacct_field "$job" User)" root "user"
  np_expect_eq "$(sacct_field "$job" State)" COMPLETED "state"
  # sacctmgr's "add cluster" gives root the default account root.
  np_expect_eq "$(sacct_field "$job" Account)" root "account"
}
np_case "sacct shows a finished job with its user" case_sacct_root

case_sacct_user() {
  local job
  # shellcheck disable=SC2016 # expanded in the job
  np_run np_run_as "$user" srun -N1 bash -c 'echo $SLURM_JOB_ID'
  np_expect_rc 0
  job=$np_out
  np_sacct_wait "$job" 30 || np_fail "sacct never showed job $job finished"
  np_expect_eq "$(sacct_field "$job" User)" "$user" "user"
  np_expect_eq "$(sacct_field "$job" Account)" numaplace "account"
  np_expect_eq "$(sacct_field "$job" State)" COMPLETED "state"
  # The user sees their own job in sacct too.
  np_run np_run_as "$user" sacct -j "$job" -X -n -P -o User
  np_expect_eq "$np_out" "$user" "sacct as $user"
}
np_case "an unprivileged user's job is accounted" case_sacct_user

case_admin_comment() {
  local job value=$out_dir/value60k got t
  # 'NPS1:' + base64 (with + / and = padding), 60000 bytes in all.
  { printf 'NPS1:'; head -c 60000 /dev/urandom | base64 -w0 | head -c 59993; printf '=='; } >"$value"
  np_expect_eq "$(wc -c <"$value")" 60000 "value size"
  # The job leaves the value for the Epilog under its id.
  # shellcheck disable=SC2016 # expanded in the job
  np_run srun -N1 bash -c 'cp "$1" "$2/ac-$SLURM_JOB_ID" && echo $SLURM_JOB_ID' _ "$value" "$out_dir"
  np_expect_rc 0
  job=$np_out
  # Written after the job: the write waits for the job's own record in slurmdbd, as numaplace's
  # epilog's store does (test/integration/README.md).
  np_sacct_wait "$job" 60 || np_fail "sacct never showed job $job finished"
  "$out_dir/np-admin-comment" "$job" <"$value" >"$out_dir/ac-$job.out" 2>&1
  echo "rc=$?" >>"$out_dir/ac-$job.out"
  t=$SECONDS
  np_sacct_wait "$job" 60 AdminComment '^NPS1:' ||
    np_fail "sacct never showed job $job's AdminComment; the tool said: $(cat "$out_dir/ac-$job.out" 2>&1)"
  echo "  sacct showed job $job's AdminComment $((SECONDS - t)) s after srun returned"
  got=$(sacct_field "$job" AdminComment)
  np_expect_eq "${#got}" 60000 "AdminComment length"
  [ "$got" = "$(cat "$value")" ] || np_fail "AdminComment differs from the value the Epilog stored"
  np_expect_match '^rc=0$' "$(cat "$out_dir/ac-$job.out" 2>&1)"
  # slurmctld keeps none of it (the tool writes to slurmdbd only).
  np_expect_no_match 'AdminComment=NPS1' "$(scontrol show job "$job")"
  # What the Epilog could not do: scontrol update on a COMPLETING job.
  np_expect_match 'Job has already finished' "$(cat "$out_dir/ac-$job.scontrol" 2>&1)"
  np_expect_match '^rc=1$' "$(cat "$out_dir/ac-$job.scontrol" 2>&1)"
  admin_job=$job
}
np_case "a 60000-byte AdminComment written to slurmdbd after the job shows in sacct exactly" case_admin_comment

case_admin_comment_limits() {
  local got lowered
  [ -n "${admin_job:-}" ] || { np_fail "no job from the previous case"; return; }
  # Over 65535 bytes (MySQL TEXT) slurmdbd cuts the value without an error.
  { printf 'NPS1:'; head -c 60000 /dev/urandom | base64 -w0 | head -c 69995; } >"$out_dir/value70k"
  np_run "$out_dir/np-admin-comment" "$admin_job" <"$out_dir/value70k"
  np_expect_rc 0
  got=$(sacct_field "$admin_job" AdminComment)
  np_expect_eq "${#got}" 65535 "stored length of a 70000-byte value"
  [ "$got" = "$(head -c 65535 "$out_dir/value70k")" ] || np_fail "the stored value is not the first 65535 bytes"
  # sacctmgr 22.05 lowercases AdminComment, which would break base64 (24.11 keeps its case; the
  # releases between were not tried): the tool writes through libslurm on every release.
  np_run sacctmgr -i modify job where jobid="$admin_job" set AdminComment=NPS1:MiXeD+/Case==
  np_expect_rc 0
  if [ "$(np_slurm_version)" -ge 2411 ]; then lowered='NPS1:MiXeD+/Case=='; else lowered='nps1:mixed+/case=='; fi
  np_expect_eq "$(sacct_field "$admin_job" AdminComment)" "$lowered" "after sacctmgr"
  # The tool writes through slurmdbd alone: it works with slurmctld's view of the job gone.
  printf 'NPS1:Again+/==' | "$out_dir/np-admin-comment" "$admin_job" >/dev/null 2>&1 || np_fail "tool failed"
  np_expect_eq "$(sacct_field "$admin_job" AdminComment)" 'NPS1:Again+/==' "after the tool"
  np_run scontrol update job=999999 AdminComment=x
  np_expect_match 'Invalid job id specified'
}
np_case "AdminComment limits: cut at 65535 bytes; sacctmgr lowercases (22.05); scontrol needs a live job" case_admin_comment_limits

case_two_nodes() {
  local node
  np_expect_eq "$(sinfo -h -N -o '%N %T' | sort | paste -sd,)" "node1 idle,node2 idle" "nodes"
  for node in node1 node2; do
    np_expect_eq "$(np_on_node "$node" hostname)" "$node" "hostname on $node"
    echo "$node" >"$np_dir/node-$node/run/marker"
    np_expect_eq "$(np_on_node "$node" cat "$np_dir/run/marker")" "$node" "$node's \$np_dir/run"
    np_on_node "$node" mountpoint -q "$np_dir/helper" || np_fail "$np_dir/helper is not a mount on $node"
    [ -s "$np_dir/node-$node/slurmd.log" ] || np_fail "no $np_dir/node-$node/slurmd.log"
    [ -d "$np_dir/node-$node/spool" ] || np_fail "no $np_dir/node-$node/spool"
    np_expect_eq "$(cat "$np_dir/node-$node/slurmd.pid" 2>&1)" "${np_node_slurmd[$node]}" "$node's slurmd pid"
  done
  # Outside, the common paths are plain empty directories.
  [ ! -e "$np_dir/run/marker" ] || np_fail "the marker is visible outside the nodes"
  np_expect_eq "$(readlink "/proc/${np_node_holder[node1]}/ns/mnt")" \
    "$(readlink "/proc/${np_node_slurmd[node1]}/ns/mnt")" "node1 slurmd's mount namespace"
  [ "$(readlink "/proc/${np_node_holder[node1]}/ns/mnt")" != "$(readlink "/proc/${np_node_holder[node2]}/ns/mnt")" ] ||
    np_fail "both nodes share a mount namespace"
  [ "$(readlink /proc/$$/ns/mnt)" != "$(readlink "/proc/${np_node_holder[node1]}/ns/mnt")" ] ||
    np_fail "node1 is in the harness's mount namespace"
}
np_case "two nodes idle, each with its own hostname, mounts, spool and log" case_two_nodes

case_srun_n2() {
  np_run srun -N2 hostname
  np_expect_rc 0
  np_expect_eq "$(sort <<<"$np_out" | paste -sd,)" "node1,node2" "hostnames"
}
np_case "srun -N2 hostname prints both node names" case_srun_n2

case_sbatch_n2() {
  local job node
  job=$(sbatch --parsable -N2 -o "$out_dir/sbatch-%j.out" --wrap 'srun hostname')
  np_expect_match '^[0-9]+$' "$job"
  np_wait_for 60 np_sacct_finished "$job" || np_fail "job $job never finished"
  np_expect_eq "$(sacct_field "$job" State)" COMPLETED "state"
  np_expect_eq "$(sacct_field "$job" NodeList)" "node[1-2]" "nodes"
  np_expect_eq "$(sort "$out_dir/sbatch-$job.out" 2>&1 | paste -sd,)" "node1,node2" "hostnames"
  # Each node's Epilog wrote its name (and the hostname it saw) under its own run/ directory.
  for node in node1 node2; do
    np_wait_for 20 test -s "$np_dir/node-$node/run/epilog-$job" || np_fail "no Epilog file on $node"
    np_expect_eq "$(cat "$np_dir/node-$node/run/epilog-$job" 2>&1)" "$node $node" "$node's Epilog"
  done
  [ ! -e "$np_dir/run/epilog-$job" ] || np_fail "an Epilog wrote outside its node's namespace"
}
np_case "sbatch -N2 runs on both nodes; the Epilog ran on each in its own namespace" case_sbatch_n2

# A second cluster with both options, in a child script that gets SIGTERM while a job runs on
# both nodes: the trap must stop MariaDB, slurmdbd and the nodes too.
case_child_term() {
  local dir=$out_dir/child-cluster pid rc=0 pids ns p left=""
  cat >"$out_dir/child.sh" <<EOF
source '$NUMAPLACE_SOURCE/test/integration/lib.sh'
NUMAPLACE_CLUSTER_DIR='$dir' NP_ACCOUNTING=1 NP_NODES=2 np_cluster_start
sbatch -N2 -o /dev/null --wrap 'srun sleep 300' >/dev/null
np_wait_for 30 bash -c '[ -n "\$(squeue -h -t R)" ]'
for p in "\${np_node_holder[@]}"; do readlink "/proc/\$p/ns/mnt"; done >'$out_dir/child.ns'
touch '$out_dir/child.up'
for _ in \$(seq 600); do sleep 0.1; done
EOF
  bash "$out_dir/child.sh" >"$out_dir/child.out" 2>&1 &
  pid=$!
  np_wait_for 60 test -e "$out_dir/child.up" || np_fail "the child's cluster never came up"
  pids=$(pgrep -f -- "$dir/")
  for p in $(pgrep -x slurmdbd); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$dir/slurm.conf" && pids+=" $p"
  done
  np_expect_match 'mariadbd' "$(pgrep -af -- "$dir/")"
  np_expect_match 'numaplace-node-holder' "$(pgrep -af -- "$dir/")"
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  np_out=$(cat "$out_dir/child.out")
  np_expect_eq "$rc" 143 "child exit status"
  # shellcheck disable=SC2086 # one argument per pid
  np_expect_eq "$(alive $pids | paste -sd' ')" "" "daemons still alive"
  np_expect_eq "$(pgrep -f -- "$dir/" | paste -sd' ')" "" "processes naming the child's dir"
  ns=$(cat "$out_dir/child.ns")
  np_expect_eq "$(wc -l <<<"$ns")" 2 "namespaces recorded"
  for p in /proc/[0-9]*; do
    grep -qxF -- "$(readlink "$p/ns/mnt" 2>/dev/null)" <<<"$ns" && left+=" ${p#/proc/}"
  done
  np_expect_eq "$left" "" "processes in the child's node namespaces"
  [ ! -e "$dir" ] || np_fail "$dir still exists"
}
np_case "SIGTERM to a script with accounting and two nodes leaves nothing running" case_child_term

case_stop() {
  local dir=$np_dir pids ns pid left=""
  pids="$np_db_pid $np_dbd_pid $np_ctld_pid ${np_node_slurmd[*]} ${np_node_holder[*]} $(cat "$dir/munge/munged.pid")"
  ns=$(for pid in "${np_node_holder[@]}"; do readlink "/proc/$pid/ns/mnt" "/proc/$pid/ns/uts"; done)
  np_expect_eq "$(wc -w <<<"$pids")" 8 "daemons before the stop"
  np_cluster_stop
  # shellcheck disable=SC2086 # one argument per pid
  np_expect_eq "$(alive $pids | paste -sd' ')" "" "still alive"
  for pid in /proc/[0-9]*; do
    grep -qxF -- "$(readlink "$pid/ns/mnt" 2>/dev/null)" <<<"$ns" && left+=" ${pid#/proc/}"
    grep -qxF -- "$(readlink "$pid/ns/uts" 2>/dev/null)" <<<"$ns" && left+=" ${pid#/proc/}"
  done
  np_expect_eq "$left" "" "processes in the nodes' namespaces"
  np_expect_eq "$(pgrep -f -- "$dir/" | paste -sd' ')" "" "processes naming $dir"
  for pid in $(pgrep -x slurmdbd); do
    ! tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$dir/slurm.conf" ||
      np_fail "slurmdbd $pid of this cluster still runs"
  done
  [ ! -e "$dir" ] || np_fail "$dir still exists"
}
np_case "np_cluster_stop leaves no MariaDB, slurmdbd, slurmd, namespace or directory" case_stop

echo "suite took $((SECONDS - t0)) s"
np_finish
