# shellcheck shell=bash
# Sourced by the packaging tests that make a clean Debian root with mmdebstrap (in_root.sh,
# test_install.sh).
#
# np_root_sources SUITE FILE: the host's own apt sources with its suite names replaced by SUITE,
# written to FILE (the same mirror; no host named here). A Debian 12 machine may list them in
# deb822 form (/etc/apt/sources.list.d/*.sources: containers, cloud images) or in one-line form
# (/etc/apt/sources.list: the installer's), and mmdebstrap takes one form per file: the deb822
# files when there are any, else the one-line lists. 1, with a message, when there are none.
np_root_sources() {
  local suite=$1 file=$2 host_suite
  local lists=()
  host_suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  shopt -s nullglob
  lists=(/etc/apt/sources.list.d/*.sources)
  [ ${#lists[@]} -gt 0 ] || lists=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list)
  shopt -u nullglob
  # Only what exists and names a source (a one-line list may be comments only).
  local existing=() f
  for f in "${lists[@]}"; do [ -s "$f" ] && existing+=("$f"); done
  if [ ${#existing[@]} -eq 0 ] || ! grep -qE '^(deb|Types:)' "${existing[@]}"; then
    echo "np_root_sources: no apt sources on this machine (/etc/apt/sources.list{,.d/})" >&2
    return 1
  fi
  cat "${existing[@]}" | sed "s/\b$host_suite\b/$suite/g" | np_root_sources_unstable "$suite" >"$file"
}

# Unstable ("sid") has no -updates or -security suites: left out of the sources (stdin to stdout)
# for it, in either form; other suites' pass unchanged.
np_root_sources_unstable() {
  if [ "$1" != sid ]; then
    cat
    return
  fi
  awk -v RS= -v ORS='\n\n' '!/Suites:[^\n]*sid-security/' |
    sed -E '/^Suites:/s/ sid-[a-z]+//g; /^deb(-src)? .* sid-[a-z]+ /d'
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
