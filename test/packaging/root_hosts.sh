# shellcheck shell=bash
# Sourced by the packaging tests that make and run Slurm in a clean Debian root (in_root.sh,
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

# np_root_sources SUITE: the host's Debian apt sources (deb822) with its suite names replaced by
# SUITE's: the same mirror, no host named here. Unstable ("sid") has no -updates or -security
# suites: those are left out for it.
np_root_sources() {
  local suite=$1 host_suite
  host_suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed "s/\b$host_suite\b/$suite/g" |
    if [ "$suite" = sid ]; then
      awk -v RS= -v ORS='\n\n' '!/Suites:[^\n]*-security/' | sed '/^Suites:/s/ sid-[a-z]*//g'
    else
      cat
    fi
}

# np_root_aptopts: mmdebstrap options that give the root's apt this host's view of the mirror.
# A host whose mirror is a dated snapshot turns off apt's Valid-Until check (unstable's Release
# file expires within a week); the root's apt has to do the same.
np_root_aptopts() {
  local check
  check=$(apt-config dump Acquire::Check-Valid-Until | sed -n 's/^Acquire::Check-Valid-Until "\(.*\)";$/\1/p')
  case $check in
    false | no | 0) echo '--aptopt=Acquire::Check-Valid-Until "false"' ;;
  esac
}
