#!/bin/sh
# numaplaced under Type=notify: systemd is told READY=1 only once the socket answers (so
# Before=slurmd.service means a helper that answers), and STOPPING=1 when it stops. A Unix
# datagram socket stands in for systemd's NOTIFY_SOCKET.
#   daemon_notify.sh NUMAPLACED NUMAPLACE
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$1" "$2" "$dir" <<'PY'
import os, signal, socket, subprocess, sys
numaplaced, numaplace, d = sys.argv[1:4]
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
notify.bind(f"{d}/notify")
notify.settimeout(30)
open(f"{d}/numaplaced.conf", "w").write("# daemon_notify.sh\n")
helper = subprocess.Popen(
    [numaplaced, f"--config={d}/numaplaced.conf", f"--socket={d}/numaplaced.sock",
     f"--state_dir={d}/state", f"--spool_dir={d}/spool", f"--pid_file={d}/numaplaced.pid",
     f"--log={d}/numaplaced.log", "--housekeeping_cpus=none"],
    env=dict(os.environ, NOTIFY_SOCKET=f"{d}/notify"))
try:
    try:
        message = notify.recv(4096).decode()
    except socket.timeout:
        sys.exit("FAIL: no notification within 30 s (numaplaced never said READY=1)")
    assert message.split("\n")[0] == "READY=1", f"FAIL: first notification {message!r}"
    # Answered at once: the notification came after the socket listened.
    ping = subprocess.run([numaplace, "--socket", f"{d}/numaplaced.sock", "ping"],
                          capture_output=True, text=True, timeout=10)
    assert ping.returncode == 0, f"FAIL: READY=1 but ping failed: {ping.stdout}{ping.stderr}"
    print("PASS READY=1 sent once the socket answers")
    helper.send_signal(signal.SIGTERM)
    message = notify.recv(4096).decode()
    assert "STOPPING=1" in message, f"FAIL: on SIGTERM {message!r}"
    assert helper.wait(timeout=30) == 0, "FAIL: numaplaced exit status"
    print("PASS STOPPING=1 on SIGTERM, clean exit")
finally:
    if helper.poll() is None:
        helper.kill()
PY
