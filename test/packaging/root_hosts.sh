# shellcheck shell=bash
# Sourced by the packaging tests that run Slurm in a clean Debian root (in_root.sh,
# test_install.sh).
#
# np_root_add_host ROOT: the machine's own name resolves in ROOT as on the host. An installed
# Debian lists it in /etc/hosts, mmdebstrap's root does not, and DNS answers it with EAI_AGAIN. srun
# sends that name as its host, and at a job's end slurmctld 24.11 looked it up, Debian's Slurm
# retrying 10 times a second apart: 10 s in which the step's own completion message could time out
# (MessageTimeout 10 s; 2 runs in 3), slurmstepd resent it only 60 s later, and the node stayed
# COMPLETING.
np_root_add_host() {
  local root=$1 host_name host_addr
  host_name=$(hostname)
  host_addr=$(getent ahosts "$host_name" | awk 'NR == 1 { print $1 }')
  printf '%s\t%s\n' "${host_addr:-127.0.1.1}" "$host_name" >>"$root/etc/hosts"
}
