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
  cat "${existing[@]}" | sed "s/\b$host_suite\b/$suite/g" >"$file"
}
