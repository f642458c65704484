#!/bin/sh
# systemctl for the install test's Debian root, which has no systemd as PID 1: installed there as
# /usr/bin/systemctl, beside /run/systemd/system, so the packages' maintainer scripts
# (deb-systemd-invoke) take the paths they take on a systemd machine and their stop, start and
# try-restart happen. For numaplace's units only (others are left alone, as they would be by a
# site's consent): a service runs its unit's ExecStart in the background and stops with SIGTERM;
# a timer is a state file. Every call is logged in /run/np-systemctl/calls.
set -u
state=/run/np-systemctl
mkdir -p "$state"
echo "$*" >>"$state/calls"

unit_file() {
  for dir in /etc/systemd/system /usr/lib/systemd/system /lib/systemd/system; do
    [ -f "$dir/$1" ] && echo "$dir/$1" && return 0
  done
  return 1
}
# A process that ended but nobody reaped yet (a zombie) does not run.
running() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]; }
is_active() {
  case $1 in
    *.timer) [ -e "$state/$1.active" ] ;;
    *) [ -s "$state/$1.pid" ] && running "$(cat "$state/$1.pid")" ;;
  esac
}
start() {
  is_active "$1" && return 0
  file=$(unit_file "$1") || { echo "Unit $1 not found." >&2; return 5; }
  case $1 in
    *.timer) touch "$state/$1.active" ;;
    *)
      runtime=$(sed -n 's/^RuntimeDirectory=//p' "$file")
      [ -z "$runtime" ] || mkdir -p "/run/$runtime"
      command=$(sed -n 's/^ExecStart=//p' "$file" | head -1)
      # shellcheck disable=SC2086 # the unit's command line, split as systemd splits it here
      setsid $command </dev/null >>"$state/$1.out" 2>&1 &
      echo $! >"$state/$1.pid"
      ;;
  esac
}
stop() {
  case $1 in
    *.timer) rm -f "$state/$1.active" ;;
    *)
      is_active "$1" || return 0
      pid=$(cat "$state/$1.pid")
      kill "$pid"
      i=0
      while running "$pid" && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
      done
      rm -f "$state/$1.pid"
      ;;
  esac
}

action="" units=""
for arg in "$@"; do
  case $arg in
    --*) ;;
    *) if [ -z "$action" ]; then action=$arg; else units="$units $arg"; fi ;;
  esac
done
status=0
for unit in $units; do
  case $unit in
    numaplace*) ;;
    *) continue ;;
  esac
  case $action in
    start) start "$unit" || status=$? ;;
    stop) stop "$unit" ;;
    restart) stop "$unit" && start "$unit" || status=$? ;;
    try-restart) if is_active "$unit"; then stop "$unit" && start "$unit" || status=$?; fi ;;
    is-active) is_active "$unit" || status=3 ;;
    is-enabled) echo disabled; status=1 ;;
  esac
done
exit $status
