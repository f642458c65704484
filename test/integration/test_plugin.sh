#!/usr/bin/env bash
# The SPANK plugin on a real local Slurm: every policy with srun and sbatch, -n2 steps, help,
# invalid values, the environment route, site defaults and limits, high sensitivity claimed by a
# user who may not, --mem-bind together with --numa-policy, malformed plugstack arguments and
# the plugin's own trouble. Expected node sets are derived from this machine (sysfs), so the same
# suite runs unchanged inside the multi-NUMA guest.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"

user=nptest
np_test_user_ensure "$user"
out_dir=$(mktemp -d /tmp/numaplace-plugin.XXXXXX)
chmod 777 "$out_dir"

# nodes_of CPULIST: the NUMA nodes (with CPUs) holding those CPUs, as a list ("0-1").
nodes_of() {
  python3 - "$1" <<'PY'
import glob, re, sys
def parse(s):
    out = set()
    for part in filter(None, s.strip().split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out
def fmt(nodes):
    nodes, out, i = sorted(nodes), [], 0
    while i < len(nodes):
        j = i
        while j + 1 < len(nodes) and nodes[j + 1] == nodes[j] + 1:
            j += 1
        out.append(str(nodes[i]) if i == j else f"{nodes[i]}-{nodes[j]}")
        i = j + 1
    return ",".join(out) or "-"
want, nodes = parse(sys.argv[1]), set()
for path in glob.glob("/sys/devices/system/node/node*/cpulist"):
    if parse(open(path).read()) & want:
        nodes.add(int(re.search(r"node(\d+)", path).group(1)))
print(fmt(nodes))
PY
}

# memory_nodes_with_cpus: every node that has CPUs (interleave-all excludes CPU-less ones).
memory_nodes_with_cpus() {
  nodes_of "0-4095"
}

field() { # field NAME LINE
  sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"
}

# check_probe POLICY LINE [STEP_CPUS]: the probe line shows what POLICY should have applied.
check_probe() {
  local policy=$1 line=$2 step_cpus=${3:-} cpus mode nodes want_mode want_nodes
  cpus=$(field cpus "$line")
  mode=$(field mode "$line")
  nodes=$(field nodes "$line")
  case $policy in
    local)
      want_nodes=$(nodes_of "$cpus")
      if [[ $want_nodes == *[,-]* ]]; then want_mode="preferred(-many)?"; else want_mode=preferred; fi ;;
    local-strict) want_nodes=$(nodes_of "$cpus"); want_mode=bind ;;
    interleave) want_nodes=$(nodes_of "${step_cpus:-$cpus}"); want_mode=interleave ;;
    interleave-all) want_nodes=$(memory_nodes_with_cpus); want_mode=interleave ;;
    none) want_nodes=-; want_mode=default ;;
  esac
  [[ $mode =~ ^${want_mode}$ ]] || np_fail "$policy: mode '$mode', expected '$want_mode' ($line)"
  # Without PREFERRED_MANY, local over several nodes keeps the busiest one: a subset.
  if [ "$policy" = local ] && [ "$mode" = preferred ] && [[ $want_nodes == *[,-]* ]]; then
    return
  fi
  [ "$nodes" = "$want_nodes" ] || np_fail "$policy: nodes '$nodes', expected '$want_nodes' ($line)"
  [ "$(field env_policy "$line")" = "$policy" ] || np_fail "$policy: NUMAPLACE_POLICY is '$(field env_policy "$line")'"
  [ "$(field env_mode "$line")" = "$mode" ] || np_fail "$policy: NUMAPLACE_MODE disagrees with get_mempolicy"
}

all_cpus() { # the union of the cpus= fields of the probe lines in $np_out
  grep -o 'cpus=[^ ]*' <<<"$np_out" | cut -d= -f2 | paste -sd, -
}

job_count() {
  scontrol -o show jobs 2>/dev/null | grep -c JobId
}

np_case "the module exports only the SPANK entry points and plugin identification"
exported=$(nm -D --defined-only "$NP_PLUGIN" | awk '{ print $3 }' | sort)
np_out=$exported
np_expect_match "^slurm_spank_task_init$"
np_expect_match "^plugin_name$"
np_expect_no_match "^np_|^hwloc_|^json_"
others=$(grep -vE '^(slurm_spank_|plugin_)' <<<"$exported" | tr '\n' ' ')
[ -z "${others// /}" ] || np_fail "other symbols exported: $others"
np_end_case

np_case "srun, sbatch and salloc load no hwloc, libnuma or jansson; the step module exports one table"
needed=$(readelf -d "$NP_PLUGIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
np_expect_match "^libc\.so" "$needed"
np_expect_no_match "hwloc|numa|jansson|pfm|cairo" "$needed"
task_module=$(dirname "$NP_PLUGIN")/numaplace_task.so
[ -f "$task_module" ] || np_fail "no $task_module beside the plugin"
np_expect_eq "$(nm -D --defined-only "$task_module" | awk '{ print $3 }' | tr '\n' ' ')" "numaplace_task_ops " \
  "numaplace_task.so's exports"
np_expect_match "hwloc" "$(readelf -d "$task_module" | grep NEEDED)"
np_end_case

np_cluster_start "optional $NP_PLUGIN"

for policy in none local local-strict interleave interleave-all; do
  np_case "srun -n2 --numa-policy=$policy"
  np_run srun -n2 --numa-policy="$policy" "$NP_PROBE"
  np_expect_rc 0
  [ "$(grep -c '^rank=' <<<"$np_out")" = 2 ] || np_fail "expected two probe lines"
  step_cpus=$(all_cpus)
  while read -r line; do check_probe "$policy" "$line" "$step_cpus"; done < <(grep '^rank=' <<<"$np_out")
  np_end_case

  np_case "sbatch --numa-policy=$policy (batch step and a step inside)"
  job=$(sbatch --parsable --numa-policy="$policy" -n1 -o "$out_dir/sbatch-$policy.out" \
    --wrap "$NP_PROBE; srun $NP_PROBE")
  np_wait_for 60 bash -c "[ \$(grep -c '^rank=' '$out_dir/sbatch-$policy.out' 2>/dev/null) -ge 2 ]" ||
    np_fail "job $job produced no two probe lines"
  np_out=$(cat "$out_dir/sbatch-$policy.out" 2>/dev/null)
  while read -r line; do check_probe "$policy" "$line"; done < <(grep '^rank=' <<<"$np_out")
  np_end_case
done

np_case "verbose prints one line per task with what it got and the plugin's time"
np_run srun -n2 --numa-policy=verbose,local "$NP_PROBE"
np_expect_rc 0
[ "$(grep -cE '^numaplace: task [01] on [^ ]+: policy=local mode=(preferred|preferred-many) nodes=[0-9,-]+ cpus=[0-9,-]+ sensitivity=low took=[0-9]+us \(local: preferred' <<<"$np_out")" = 2 ] ||
  np_fail "expected two verbose lines in the documented format"
np_end_case

np_case "--numa-policy=help lists the choices and exits 0"
np_run srun -n1 --numa-policy=help true
np_expect_rc 0
for p in none local local-strict interleave interleave-all auto fast-tier fast-tier-strict weighted-interleave; do np_expect_match "^  $p +"; done
np_end_case

# This node has one kind of memory: fast-tier finds nothing faster and is local, saying why.
np_case "srun --numa-policy=verbose,fast-tier on a node without faster memory: local, with the reason"
np_run srun -n1 --numa-policy=verbose,fast-tier "$NP_PROBE"
np_expect_rc 0
np_expect_match "^numaplace: task 0 on [^ ]+: policy=fast-tier mode=preferred nodes=[0-9]+ .*\(fast-tier: no faster memory than the task's node\(s\) it may use: local instead; local: preferred node"
np_expect_match "env_policy=local .*env_reason=fast-tier: no faster memory"
np_end_case

# Debian 12's 6.1 has no weighted interleave (6.9): plain interleave, saying so.
np_case "srun --numa-policy=verbose,weighted-interleave on a kernel without it: plain interleave, with the reason"
np_run srun -n1 --numa-policy=verbose,weighted-interleave "$NP_PROBE"
np_expect_rc 0
if [ -d /sys/kernel/mm/mempolicy/weighted_interleave ]; then
  np_expect_match "^numaplace: task 0 on [^ ]+: policy=weighted-interleave mode=weighted-interleave .*the kernel's weights"
else
  np_expect_match "^numaplace: task 0 on [^ ]+: policy=weighted-interleave mode=interleave .*this kernel has no weighted interleave \(Linux 6.9\+\): plain interleave"
  np_expect_match "mode=interleave .*env_policy=weighted-interleave "
fi
np_end_case

# No numaplaced answers here (the default socket has no helper behind it): auto's static choice,
# and every task says why (docs/auto.md).
np_case "srun --numa-policy=verbose,auto with the helper down: local, with the reason"
np_run srun -n2 --numa-sensitivity=high --numa-policy=verbose,auto "$NP_PROBE"
np_expect_rc 0
[ "$(grep -cE "^numaplace: task [01] on [^ ]+: policy=local \(auto\) mode=(preferred|preferred-many) .*\(auto: (local: sensitivity high \(user\), node [0-9]+'s load unknown \(numaplaced did not answer: |interleave: sensitivity high \(user\), CPUs span nodes)" <<<"$np_out")" = 2 ] ||
  np_fail "expected two verbose lines with auto's static choice and its reason"
while read -r line; do
  np_expect_match "env_reason=auto: " "$line"
  case $line in
    *"env_policy=local "*) check_probe local "$line" ;;
    *"env_policy=interleave "*) check_probe interleave "$line" "$(all_cpus)" ;;
    *) np_fail "auto applied neither local nor interleave: $line" ;;
  esac
done < <(grep '^rank=' <<<"$np_out")
np_end_case

np_case "an invalid value fails before anything is submitted"
before=$(job_count)
np_run srun -n1 --numa-policy=interleaf true
np_expect_fail
np_expect_match "invalid --numa-policy value 'interleaf': accepted values are \[verbose,\]none\|local\|local-strict\|interleave\|interleave-all\|auto"
np_expect_eq "$(job_count)" "$before" "jobs known to slurmctld"
np_run sbatch --numa-sensitivity=medium --wrap true
np_expect_fail
np_expect_match "invalid --numa-sensitivity value 'medium': accepted values are high, low"
np_expect_eq "$(job_count)" "$before" "jobs known to slurmctld after sbatch"
np_end_case

np_case "the SLURM_SPANK_ environment route sets the policy"
np_run env SLURM_SPANK__SLURM_SPANK_OPTION_numaplace_numa_policy=interleave srun -n1 "$NP_PROBE"
np_expect_rc 0
check_probe interleave "$(grep '^rank=' <<<"$np_out")"
np_end_case

np_cluster_set_plugstack "optional $NP_PLUGIN default_policy=local allowed_policies=none,local,local-strict"

np_case "the site default applies when the user gives nothing"
np_run srun -n1 "$NP_PROBE"
np_expect_rc 0
check_probe local "$(grep '^rank=' <<<"$np_out")"
np_end_case

np_case "a policy the site does not allow is refused with the allowed list"
before=$(job_count)
np_run srun -n1 --numa-policy=interleave true
np_expect_fail
np_expect_match "--numa-policy=interleave is not allowed on this cluster; allowed: none,local,local-strict"
np_expect_eq "$(job_count)" "$before" "jobs known to slurmctld"
np_end_case

np_case "--mem-bind with only the site default: the user's binding is respected"
np_run srun -n1 --mem-bind=local "$NP_PROBE"
np_expect_rc 0
np_expect_match "env_policy=none env_mode=default"
np_expect_no_match "mode=default nodes=-.*env_policy" # Slurm's binding is in place, not the default
np_end_case

np_case "--mem-bind with an explicit --numa-policy: numaplace wins, with a warning"
np_run srun -n1 --mem-bind=local --numa-policy=local-strict "$NP_PROBE"
np_expect_rc 0
np_expect_match "warning: --numa-policy=local-strict replaces the memory binding of --mem-bind"
check_probe local-strict "$(grep '^rank=' <<<"$np_out")"
np_end_case

# A user can run srun/sbatch with a configuration of their own, so the local check is only a
# courtesy: this one loads the plugin without the site's restrictions.
sed "s|^PlugStackConfig=.*|PlugStackConfig=$out_dir/user-plugstack.conf|" "$SLURM_CONF" >"$out_dir/user-slurm.conf"
echo "optional $NP_PLUGIN" >"$out_dir/user-plugstack.conf"
chmod 644 "$out_dir/user-slurm.conf" "$out_dir/user-plugstack.conf"

for choice in refuse downgrade; do
  # `required`: Slurm honours a plugin's refusal in slurmstepd only for required plugins.
  np_cluster_set_plugstack "required $NP_PLUGIN high_users=root high_unauthorized=$choice"
  np_case "high claimed by a user who may not, high_unauthorized=$choice (srun)"
  np_run np_run_as "$user" srun -n1 --numa-sensitivity=high "$NP_PROBE"
  if [ "$choice" = refuse ]; then
    np_expect_fail
    np_expect_match "numa-sensitivity=high is reserved on this cluster"
  else
    np_expect_rc 0
    np_expect_match "warning: --numa-sensitivity=high is reserved"
    np_expect_match "env_sensitivity=low"
  fi
  np_end_case

  # The remote side enforces it from the job's real uid, whatever the submitter's config said.
  np_case "high enforced in slurmstepd, high_unauthorized=$choice (batch, local check bypassed)"
  rm -f "$out_dir/high-$choice.out"
  job=$(runuser -u "$user" -- env SLURM_CONF="$out_dir/user-slurm.conf" \
    sbatch --parsable -n1 --numa-sensitivity=high -o "$out_dir/high-$choice.out" \
    --wrap "$NP_PROBE" 2>&1 | tail -1)
  np_wait_for 60 bash -c "scontrol show job $job | grep -qE 'JobState=(COMPLETED|FAILED)'" ||
    np_fail "job $job did not finish"
  np_out=$(cat "$out_dir/high-$choice.out" 2>/dev/null; scontrol show job "$job")
  if [ "$choice" = refuse ]; then
    np_expect_match "refusing this job: user [0-9]+ may not claim --numa-sensitivity=high"
    np_expect_match "JobState=FAILED"
  else
    np_expect_match "warning: user [0-9]+ may not claim --numa-sensitivity=high on this cluster; running as low"
    np_expect_match "env_sensitivity=low"
    np_expect_match "JobState=COMPLETED"
  fi
  np_expect_match "State=IDLE|State=MIXED|State=ALLOCATED" "$(scontrol show node "$(hostname -s)")"
  np_end_case
done

np_cluster_set_plugstack "optional $NP_PLUGIN high_users=root"
np_case "an allowed user (root) may claim high"
np_run srun -n1 --numa-sensitivity=high "$NP_PROBE"
np_expect_rc 0
np_expect_match "env_sensitivity=high"
np_end_case

np_cluster_set_plugstack "optional $NP_PLUGIN colour=blue default_policy=interleaf"
np_case "malformed plugstack arguments: clear errors naming them, jobs still run"
np_run srun -n1 --numa-policy=local "$NP_PROBE"
np_expect_rc 0
np_expect_match "unknown plugstack argument 'colour=blue'; accepted keys are default_policy"
np_expect_match "invalid plugstack argument 'default_policy=interleaf': accepted values are none, local"
check_probe local "$(grep '^rank=' <<<"$np_out")"
np_log_grep "unknown plugstack argument 'colour=blue'" >/dev/null || np_fail "slurmd/slurmstepd log lacks the error"
np_end_case

np_cluster_set_plugstack "optional $NP_PLUGIN topology_xml=/nonexistent/topology.xml"
np_case "the plugin's own trouble: the job runs with the kernel default, one log line"
np_run srun -n1 --numa-policy=verbose,local "$NP_PROBE"
np_expect_rc 0
np_expect_match "env_policy=none env_mode=default"
np_expect_match "topology unavailable \(cannot load topology XML '/nonexistent/topology.xml'"
np_log_grep "numaplace: cannot load topology XML '/nonexistent/topology.xml'" >/dev/null ||
  np_fail "slurmstepd log lacks the error"
np_expect_match "State=IDLE" "$(scontrol show node "$(hostname -s)")"
np_end_case

lonely=$(mktemp -d)
cp "$NP_PLUGIN" "$lonely/numaplace.so"
np_cluster_set_plugstack "optional $lonely/numaplace.so default_policy=local"
np_case "the step module missing: the job runs with the kernel default, one log line"
np_run srun -n1 --numa-policy=verbose,local "$NP_PROBE"
np_expect_rc 0
np_expect_match "mode=default"
np_expect_no_match "env_policy=local"
np_log_grep "numaplace: cannot load $lonely/numaplace_task.so" >/dev/null ||
  np_fail "slurmstepd log lacks the error naming the module"
np_expect_match "State=IDLE" "$(scontrol show node "$(hostname -s)")"
np_end_case
rm -rf "$lonely"

np_cluster_set_plugstack "required $NP_PLUGIN topology_xml=/nonexistent/topology.xml on_error=fail"
np_case "on_error=fail: the site chose to fail the task over the plugin's trouble"
np_run srun -n1 --numa-policy=local "$NP_PROBE"
np_expect_fail
np_expect_no_match "^rank="
np_end_case

rm -rf "$out_dir"
np_cluster_stop
np_finish
