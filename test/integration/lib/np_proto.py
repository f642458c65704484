"""numaplaced's protocol for the suites' Python drivers: one request, one reply line.

Imported from the drivers' heredocs through $NUMAPLACE_SOURCE/test/integration/lib.
"""
import json
import socket


def call(sock, req, timeout=10.0):
    """Send REQ (a dict; protocol version 1 added) to numaplaced's socket SOCK and return its
    reply as a dict, or None when it did not answer a whole JSON line within TIMEOUT seconds."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(timeout)
            s.connect(sock)
            s.sendall((json.dumps(dict(v=1, **req)) + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
        return json.loads(buf)
    except (OSError, ValueError):
        return None
