# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # the globals it shares are declared in lib.sh, which sources it
# numaplace test harness, part of test/integration/lib.sh (which sources it): shared by the other
# parts: dying with the daemons' logs, waiting, free ports, exit hooks.
# The functions are listed, with their arguments, at the top of lib.sh.

np_die() {
  printf '\n!!!! numaplace test harness: %s\n\n' "$*" >&2
  exit 1
}

np_require() {
  local prog
  for prog in "$@"; do
    command -v "$prog" >/dev/null 2>&1 ||
      np_die "required program '$prog' is not installed: run scripts/install-deps.sh as root (not skipping)"
  done
}

np_require munged slurmctld slurmd srun sbatch sinfo squeue scontrol scancel python3 runuser useradd
[ "$(id -u)" = 0 ] || np_die "must run as root (it starts munged, slurmctld and slurmd)"

# np_free_ports N: N distinct unused TCP ports, held open together while they are picked.
np_free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# Every wait stretches by NUMAPLACE_TEST_WAIT_SCALE (default 1): an emulated guest sets it
# (test/vm/run), where daemons start several times slower than on the host, more so while CI
# runs other guests beside it (seen: slurmctld silent for 20 s in a TCG guest).
np_wait_scale=${NUMAPLACE_TEST_WAIT_SCALE:-1}
[[ "$np_wait_scale" =~ ^[1-9][0-9]?$ ]] ||
  np_die "NUMAPLACE_TEST_WAIT_SCALE is '$np_wait_scale'; accepted: a whole number from 1 to 99"

np_wait_for() { # np_wait_for SECONDS CMD...: poll until CMD succeeds; 1 if it never did
  local deadline=$((SECONDS + $1 * np_wait_scale))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

np_slurm_version() { # the running Slurm's release as a number: 2205 for 22.05.8, 2411 for 24.11.5
  sinfo --version | sed -n 's/^[^ ]* \([0-9]*\)\.\([0-9]*\)\..*/\1\2/p'
}

np_tails() { # the last lines of the daemons' logs, for error messages
  local f
  for f in "$np_dir"/slurmctld.log "$np_dir"/slurmctld.out "$np_dir"/slurmd.log \
    "$np_dir"/slurmd.out "$np_dir"/munge/munged.log "$np_dir"/slurmdbd.log "$np_dir"/slurmdbd.out \
    "$np_dir"/db/mariadb.err "$np_dir"/node-*/slurmd.log "$np_dir"/node-*/slurmd.out; do
    [ -s "$f" ] && printf '\n--- %s\n%s\n' "$f" "$(tail -15 "$f")"
  done
}

np_on_exit() {
  local rc=$? cmd
  trap - EXIT INT TERM
  for cmd in "${np_exit_cmds[@]}"; do eval "$cmd" || true; done
  np_cluster_stop
  exit "$rc"
}

np_at_exit() {
  np_exit_cmds+=("$1")
}

np_kill_wait() { # np_kill_wait PID...: TERM, up to 5 s, then KILL
  local pid
  for pid in "$@"; do
    [ -n "$pid" ] || continue
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
