#!/usr/bin/env python3
"""slow_clients.py PORT N SECONDS PATH [HOST]: a bounded slow-client load.

Holds N connections to 127.0.0.1:PORT that never finish their request:
each sends a request line, then one header line every 2 s (so that no
idle timeout closes it), and is opened again when the server closes it.
Meanwhile it asks for PATH on a fresh connection once a second (3 s to
answer). After SECONDS it prints "answered A of P, closed by the server
C" and exits 0; 1 when a probe went unanswered. Loopback only, and it
stops by itself.
"""
import socket
import sys
import time

port, n, secs, path = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
host = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"


def opened():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect((host, port))
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        s.setblocking(False)
        return s
    except OSError:
        s.close()
        return None


def probe():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                   % path).encode())
        data = s.recv(64)
        return data.startswith(b"HTTP/1.1 ") or data.startswith(b"HTTP/1.0 ")
    except OSError:
        return False
    finally:
        s.close()


conns = [opened() for _ in range(n)]
end = time.monotonic() + secs
probes = answered = closed = 0
tick = 0
while time.monotonic() < end:
    time.sleep(1)
    tick += 1
    for i, s in enumerate(conns):
        if s is not None:
            try:
                if s.recv(4096) == b"":
                    raise OSError("closed")
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                s = conns[i] = None
                closed += 1
        if s is not None and tick % 2 == 0:
            try:
                s.send(b"X-Slow: %d\r\n" % tick)
            except OSError:
                pass
        if s is None:
            conns[i] = opened()
    probes += 1
    if probe():
        answered += 1
for s in conns:
    if s is not None:
        s.close()
print("answered %d of %d, closed by the server %d" % (answered, probes, closed))
sys.exit(0 if answered == probes else 1)
