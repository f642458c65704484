#!/usr/bin/env bash
# Hostile users against a real numaplaced on its real socket, host-only: who may do
# what is decided from SO_PEERCRED alone, so Slurm adds nothing. Each user is a real account and
# each request the numaplace command (or, for slurmstepd's requests, the protocol) run as them:
# - set-class and migrate: refused to a plain user and to the job's own user; allowed to root, to a
#   member of admin_group (supplementary group), to a process whose group is admin_group and to
#   one holding it as a supplementary group the group does not list;
#   refused to that member once admin_group is unset (SIGHUP);
# - status of another user's job: refused, and the job is not listed to them; an admin_group
#   member sees only their own jobs too (status is not an administrator's request);
# - status's counts: another user's step is not counted for a user, nor seen in the node
#   traffic estimated from the steps;
# - register and step_end by anyone but root: refused, and the step stays tracked;
# - applied for a task not the caller's own process: refused, the task's entry untouched;
#   applied repeated by the task itself: refused after the first, the journal not growing;
# - a protocol version of 2^32+1 (read as 1 once): refused;
# - a user holding every connection it can: another user and root still get in, the refusals
#   logged; a connection that never sends is dropped.
set -u
# shellcheck source=test/integration/lib.sh
source "$(dirname "$0")/lib.sh"

owner=nptest
other=nptest2
admin=nptestadm
group=npadmins
np_test_user_ensure "$owner"
np_test_user_ensure "$other"
np_test_user_ensure "$admin"
getent group "$group" >/dev/null || groupadd "$group" 2>/dev/null || getent group "$group" >/dev/null ||
  np_die "cannot create the group $group"
id -nG "$admin" | grep -qw "$group" || usermod -a -G "$group" "$admin" || np_die "cannot add $admin to $group"
owner_uid=$(id -u "$owner")
group_gid=$(getent group "$group" | cut -d: -f3)

np_helper_alone
mkdir -p "$np_dir/helper"
echo "admin_group = $group" >"$np_dir/helper/numaplaced.conf"
np_helper_start
sock="$np_dir/helper/numaplaced.sock"
log="$np_dir/helper/numaplaced.log"

# as USER ARGS...: the numaplace command as USER (their own uid and groups).
as() {
  local user=$1
  shift
  np_run_as "$user" "$NP_CLI" --socket "$sock" "$@"
}

# proto_as USER|root LINE: one raw request as that user; prints the reply.
proto_as() {
  local script='import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())'
  if [ "$1" = root ]; then
    python3 -c "$script" "$sock" "$2"
  else
    np_run_as "$1" python3 -c "$script" "$sock" "$2"
  fi
}

# The owner's step: one task, registered by root as slurmstepd would.
setpriv --reuid="$owner_uid" --regid="$owner_uid" --clear-groups sleep 600 &
task=$!
np_at_exit "kill $task 2>/dev/null"
job=4242
proto_as root "{\"v\":1,\"op\":\"register\",\"job\":$job,\"step\":0,\"uid\":$owner_uid,\"pid\":$task,\"task\":0,\"cpus\":\"0\",\"sensitivity\":\"low\"}" |
  grep -q '"ok": *true' || np_die "root could not register the owner's step"

class_of() { # the job's class as root sees it
  np_numaplace --json status "$job" | python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["class"])'
}

np_case "set-class: refused to a plain user and to the job's own user"
for u in "$other" "$owner"; do
  np_run as "$u" set-class "$job" high
  np_expect_fail
  np_expect_match "only root or members of admin_group $group may change a job's class; uid $(id -u "$u") may not"
done
np_expect_eq "$(class_of)" low "class after the refusals"
np_end_case

np_case "migrate: refused to a plain user and to the job's own user, dry run or not"
for u in "$other" "$owner"; do
  for dry in "" --dry-run; do
    np_run as "$u" migrate --from 0 --to 1 --pages 100 $dry
    np_expect_fail
    np_expect_match "only root or members of admin_group $group may request migrations; uid $(id -u "$u") may not"
  done
done
np_end_case

np_case "status: another user's job is refused and not listed, to a plain user and an admin alike"
for u in "$other" "$admin"; do
  np_run as "$u" status "$job"
  np_expect_fail
  np_expect_match "no job $job of yours is tracked on this node"
  other_answer=$np_out
  np_run as "$u" status 999999 # no such job: the very same answer
  np_expect_eq "${np_out//999999/$job}" "$other_answer" "answer for a job not tracked"
  np_run as "$u" status
  np_expect_rc 0
  np_expect_no_match "^$job "
done
np_run as "$other" status "$job"
np_expect_no_match "uid|$owner_uid|$owner" # who owns it is not their business
np_run as "$owner" status "$job"
np_expect_rc 0
np_expect_match "^$job +0 "
np_end_case

np_case "status: a user counts only their own steps, and no node traffic estimated from others'"
# helper_view USER|root: the helper's step count and each memory node's source, as USER sees them
helper_view() {
  local out
  if [ "$1" = root ]; then out=$(np_numaplace --json status); else out=$(as "$1" --json status); fi
  python3 -c 'import json, sys
r = json.load(sys.stdin)
print(r["helper"]["jobs"], " ".join(n["source"] + ("" if n["source"] in ("uncore", "unavailable") else "!") for n in r["memory_nodes"]))' <<<"$out"
}
np_run helper_view "$other"
np_expect_rc 0
np_expect_match "^0( |$)"      # the owner's step runs, and is not counted for another user
np_expect_no_match "!"        # no source but the controllers' counts (or none)
np_run helper_view "$owner"
np_expect_match "^1( |$)"
np_run helper_view root
np_expect_match "^1( |$)"
np_end_case

np_case "register and step_end: refused to everyone but root; the step stays tracked"
for u in "$other" "$owner" "$admin"; do
  np_run proto_as "$u" "{\"v\":1,\"op\":\"register\",\"job\":$job,\"step\":1,\"uid\":$owner_uid,\"pid\":$task,\"sensitivity\":\"high\"}"
  np_expect_match "only root \(slurmstepd\) may register tasks; uid $(id -u "$u") may not"
  np_run proto_as "$u" "{\"v\":1,\"op\":\"step_end\",\"job\":$job,\"step\":0}"
  np_expect_match "only root \(slurmstepd\) may end steps; uid $(id -u "$u") may not"
done
np_run np_numaplace status
np_expect_match "^$job +0 "
np_expect_no_match "^$job +1 "
np_end_case

np_case "applied: only the task itself, for itself"
for u in "$other" "$owner"; do
  np_run proto_as "$u" "{\"v\":1,\"op\":\"applied\",\"job\":$job,\"step\":0,\"pid\":$task,\"policy\":\"local\",\"mode\":\"bind\",\"nodes\":\"0\",\"cpus\":\"0\"}"
  np_expect_match "a task may report only itself \(peer pid [0-9]+, claimed $task\)"
done
np_run np_numaplace --json status "$job"
np_expect_no_match '"mode": "bind"'
np_end_case

np_case "applied with terminal escapes: refused, and nothing of it reaches root's terminal"
# The task is a python of the owner's that root registers, then says what it "applied".
esc_dir=$(mktemp -d)
chmod 777 "$esc_dir"
np_run_as "$owner" python3 -c 'import os, socket, sys, time
d = sys.argv[2]
open(d + "/pid", "w").write(str(os.getpid()))
while not os.path.exists(d + "/go"):
    time.sleep(0.05)
for field, value in (("policy", "\x1b]0;owned\x07"), ("mode", "bind\x1b[2J"), ("nodes", "0\u009b2J")):
    req = {"v": 1, "op": "applied", "job": 4343, "step": 0, "pid": os.getpid(), "policy": "local",
           "mode": "bind", "nodes": "0", "cpus": "0"}
    req[field] = value
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sys.argv[1])
    import json
    s.sendall(json.dumps(req).encode() + b"\n")
    print(s.makefile().readline().strip())' "$sock" "$esc_dir" >"$esc_dir/out" 2>&1 &
esc_holder=$!
np_wait_for 10 test -s "$esc_dir/pid" || np_fail "the task did not start"
proto_as root "{\"v\":1,\"op\":\"register\",\"job\":4343,\"step\":0,\"uid\":$owner_uid,\"pid\":$(cat "$esc_dir/pid"),\"task\":0,\"cpus\":\"0\",\"sensitivity\":\"low\"}" |
  grep -q '"ok": *true' || np_fail "root could not register the task"
touch "$esc_dir/go"
wait "$esc_holder"
np_out=$(cat "$esc_dir/out")
np_expect_match 'request field \\"policy\\" is not a policy'
np_expect_match 'request field \\"mode\\" is not a mode'
np_expect_match 'request field \\"nodes\\" is not a list of numbers'
# (the task has exited since: its step is gone, so every step's status is what root reads)
np_run np_numaplace status
np_expect_rc 0
if printf '%s' "$np_out" | grep -q $'\x1b'; then np_fail "an ESC reached root's status output"; fi
rm -rf "$esc_dir"
np_end_case

np_case "a task repeating applied: the first accepted, the rest refused, the state files small"
# The plugin sends applied once per task, before exec; here the task's own program floods it,
# alternating a 500-byte reason, each change of which once journalled the whole step.
flood_dir=$(mktemp -d)
chmod 777 "$flood_dir"
np_run_as "$owner" python3 -c 'import json, os, socket, sys, time
d = sys.argv[2]
open(d + "/pid", "w").write(str(os.getpid()))
while not os.path.exists(d + "/go"):
    time.sleep(0.05)
ok = refused = 0
for i in range(2000):
    req = {"v": 1, "op": "applied", "job": 4444, "step": 0, "pid": os.getpid(),
           "policy": "local" if i % 2 else "interleave", "reason": ("ab"[i % 2]) * 500}
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sys.argv[1])
    s.sendall(json.dumps(req).encode() + b"\n")
    r = json.loads(s.makefile().readline())
    s.close()
    ok += r["ok"]
    refused += not r["ok"] and "said what it applied already" in r.get("error", "")
print(ok, refused)' "$sock" "$flood_dir" >"$flood_dir/out" 2>&1 &
flood_task=$!
np_wait_for 10 test -s "$flood_dir/pid" || np_fail "the task did not start"
proto_as root "{\"v\":1,\"op\":\"register\",\"job\":4444,\"step\":0,\"uid\":$owner_uid,\"pid\":$(cat "$flood_dir/pid"),\"task\":0,\"cpus\":\"0\",\"sensitivity\":\"low\"}" |
  grep -q '"ok": *true' || np_fail "root could not register the task"
journal_before=$(stat -c %s "$np_dir/helper/state/registry.journal" 2>/dev/null || echo 0)
touch "$flood_dir/go"
wait "$flood_task"
np_out=$(cat "$flood_dir/out")
np_expect_eq "$np_out" "1 1999" "applied accepted, refused as repeated"
journal_after=$(stat -c %s "$np_dir/helper/state/registry.journal" 2>/dev/null || echo 0)
registry_size=$(stat -c %s "$np_dir/helper/state/registry.json" 2>/dev/null || echo 0)
# One task's entry journalled (about 700 bytes), not 2,000: the journal grew by less than 4 KiB
# (a tick's snapshot may have folded it meanwhile: then it shrank), registry.json holds two steps.
[ $((journal_after - journal_before)) -lt 4096 ] ||
  np_fail "the journal grew by $((journal_after - journal_before)) bytes under the flood"
[ "$registry_size" -lt 65536 ] || np_fail "registry.json is $registry_size bytes"
np_run proto_as root '{"v":1,"op":"ping"}'
np_expect_match '"ok": *true'
rm -rf "$flood_dir"
np_end_case

np_case "a task forking 1,000 children: every process is sampled"
# A parent's children past its 256th were once left out, silently.
wide_dir=$(mktemp -d)
chmod 777 "$wide_dir"
setpriv --reuid="$owner_uid" --regid="$owner_uid" --clear-groups /usr/bin/python3 -c 'import os, signal, sys, time
os.setpgid(0, 0)
for _ in range(1000):
    if os.fork() == 0:
        signal.pause()
        os._exit(0)
open(sys.argv[1] + "/ready", "w").write("1")
signal.pause()' "$wide_dir" &
wide=$!
np_at_exit "kill -KILL -- -$wide 2>/dev/null"
np_wait_for 180 test -s "$wide_dir/ready" || np_fail "the task did not fork its children within $((180 * np_wait_scale)) s"
proto_as root "{\"v\":1,\"op\":\"register\",\"job\":4344,\"step\":0,\"uid\":$owner_uid,\"pid\":$wide,\"task\":0,\"cpus\":\"0\",\"sensitivity\":\"low\"}" |
  grep -q '"ok": *true' || np_fail "root could not register the wide step"
wide_processes() {
  np_numaplace --json status 4344 | python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["latest"]["processes"])'
}
wide_seen() { [ "$(wide_processes)" -ge 1001 ] 2>/dev/null; }
np_wait_for 20 wide_seen || np_fail "status counts $(wide_processes) processes, not 1,001"
np_run np_numaplace status 4344
np_expect_no_match "processes left out"
kill -KILL -- -"$wide" 2>/dev/null
rm -rf "$wide_dir"
np_end_case

np_case "a protocol version of 2^32+1 is not version 1"
np_run proto_as "$other" '{"v":4294967297,"op":"ping"}'
np_expect_match "request speaks protocol version 4294967297; this side speaks 1"
np_end_case

np_case "a user holding every connection it can: another user and root still get in"
# The holder says when it holds them and lets go when told (or after a minute), not after a
# guessed time: a slow start must not leave the checks below to run before the hold.
hold_dir=$(mktemp -d)
chmod 777 "$hold_dir"
np_run_as "$other" python3 -c 'import os, socket, sys, time
held = []
for _ in range(40):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    held.append(s)
open(sys.argv[2] + "/held", "w").close()
for _ in range(600):
    if os.path.exists(sys.argv[2] + "/release"):
        break
    time.sleep(0.1)' "$sock" "$hold_dir" &
holder=$!
np_wait_for 30 test -e "$hold_dir/held" || np_fail "the holder never held its connections"
np_run as "$owner" ping
np_expect_rc 0
np_run np_numaplace status
np_expect_match "^$job +0 "
touch "$hold_dir/release"
wait "$holder"
rm -rf "$hold_dir"
np_out=$(cat "$log")
np_expect_match "refused [0-9]+ connection\(s\) \(the last from uid $(id -u "$other")\)"
# a connection that never sends is dropped after 2 s: not much sooner (the clock starts at the
# connect, numaplaced's at its accept), and at all (within a minute)
np_run np_run_as "$other" python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(60)
t = time.monotonic()
print("closed after %.1f s" % (time.monotonic() - t) if s.recv(1) == b"" else "got data")' "$sock"
np_expect_match "closed after (1\.[5-9]|[2-9]\.[0-9]|[1-5][0-9]\.[0-9]) s"
# root's may wait longer: slurmstepd connects a socket per task before the fork and sends the
# task's registration after it, which a busy node delays past a user's 2 s
np_run python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
time.sleep(3)
s.sendall(b"{\"v\":1,\"op\":\"ping\"}\n")
s.settimeout(60)
print("answer:", s.makefile().readline().strip())' "$sock"
np_expect_match '^answer: \{"v":1,"ok":true'
np_end_case

np_case "an admin_group member (supplementary group) may set-class and migrate"
np_run as "$admin" set-class "$job" high
np_expect_rc 0
np_expect_eq "$(class_of)" high "class set by the admin"
np_out=$(cat "$log")
np_expect_match "job $job.0: class low -> high \(set by uid $(id -u "$admin")\)"
# One NUMA node here: past the check of who asks, the request is refused for what it asks.
np_run as "$admin" migrate --from 0 --to 1 --pages 100 --dry-run
np_expect_no_match "only root or members of admin_group"
np_expect_match "two different NUMA nodes|migration is off"
np_end_case

np_case "a process whose own group is admin_group may set-class"
np_run setpriv --reuid="$(id -u "$other")" --regid="$group_gid" --clear-groups \
  "$NP_CLI" --socket "$sock" set-class "$job" low
np_expect_rc 0
np_expect_eq "$(class_of)" low "class set by a process of group $group"
np_end_case

# A member the group does not list (sssd with ignore_group_members, or any name service whose
# member lists are partial): its process holds the group as a supplementary group, which the
# socket says (SO_PEERGROUPS); no name is looked up.
np_case "a process holding admin_group as a supplementary group the group does not list may set-class; one without may not"
! getent group "$group" | cut -d: -f4 | tr , '\n' | grep -qx "$other" || np_die "$other is listed in $group"
np_run setpriv --reuid="$(id -u "$other")" --regid="$(id -g "$other")" --groups="$group_gid" \
  "$NP_CLI" --socket "$sock" set-class "$job" high
np_expect_rc 0
np_expect_eq "$(class_of)" high "class set by a process holding $group as a supplementary group"
np_run setpriv --reuid="$(id -u "$other")" --regid="$(id -g "$other")" --clear-groups \
  "$NP_CLI" --socket "$sock" set-class "$job" low
np_expect_fail
np_expect_match "only root or members of admin_group $group may change a job's class; uid $(id -u "$other") may not"
np_expect_eq "$(class_of)" high "class kept"
np_run setpriv --reuid="$(id -u "$other")" --regid="$group_gid" --clear-groups \
  "$NP_CLI" --socket "$sock" set-class "$job" low
np_expect_rc 0
np_end_case

np_case "admin_group unset (SIGHUP): the member is refused again; root still may"
echo "admin_group =" >"$np_dir/helper/numaplaced.conf"
kill -HUP "$np_helper_pid"
np_wait_for 10 grep -q "reloaded" "$log" || np_fail "no reload line in the log"
np_run as "$admin" set-class "$job" high
np_expect_fail
np_expect_match "only root or members of admin_group may change a job's class"
np_run np_numaplace set-class "$job" high
np_expect_rc 0
np_expect_eq "$(class_of)" high "class set by root"
np_end_case

np_finish
