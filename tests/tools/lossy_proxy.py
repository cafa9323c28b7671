#!/usr/bin/env python3
"""lossy_proxy.py — a TCP proxy that loses one reply, for fault tests.

    lossy_proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT MARKER MODE READY_FILE

Forwards every connection made to 127.0.0.1:LISTEN_PORT to the target.
The first time a reply from the server holds MARKER (bytes, e.g. a task
payload), the proxy makes the client lose a reply, once:

  this   the reply holding MARKER is swallowed;
  next   that reply is forwarded, then the client's next request is
         forwarded to the server and the server's answer to it swallowed
         (a claim that reads its rows back before COMMIT: the COMMIT's
         answer is lost);
  commit the same, but the request whose answer is swallowed is the
         first one after it that holds COMMIT (a claim that reads its
         rows while it locks, then claims them, then commits).

The server's side is read for a moment longer (so that the server is never
blocked writing, and commits what it was doing), then both sides of that
connection are closed, as a network failure would leave them. Later
connections pass unharmed. Prints "fired" when it has lost the reply.
Writes READY_FILE once it listens. Stops by itself after 10 minutes.
"""
import socket
import sys
import threading
import time

listen_port, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
marker, mode, ready = sys.argv[4].encode(), sys.argv[5], sys.argv[6]
assert mode in ("this", "next", "commit")

lock = threading.Lock()
armed = [True]


def close(*socks):
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass


def drain_then_close(srv, cli):
    """Keep reading the server for a moment so that it finishes, then
    close both sides."""
    print("fired", flush=True)
    close(cli)
    srv.settimeout(0.2)
    end = time.time() + 1.0
    while time.time() < end:
        try:
            if not srv.recv(65536):
                break
        except socket.timeout:
            continue
        except OSError:
            break
    close(srv)


def handle(cli):
    try:
        srv = socket.create_connection((host, port))
    except OSError:
        close(cli)
        return
    state = {"next": False, "drop": False}

    def up():  # client -> server
        try:
            while True:
                data = cli.recv(65536)
                if not data:
                    break
                if state["next"] and (mode != "commit" or b"COMMIT" in data):
                    state["next"] = False
                    state["drop"] = True
                srv.sendall(data)
        except OSError:
            pass
        if not state["drop"]:
            close(srv)

    def down():  # server -> client
        tail = b""
        try:
            while True:
                data = srv.recv(65536)
                if not data:
                    break
                if state["drop"]:
                    drain_then_close(srv, cli)
                    return
                seen = tail + data
                tail = seen[-len(marker):]
                if marker in seen:
                    with lock:
                        fire = armed[0]
                        armed[0] = False
                    if fire and mode == "this":
                        drain_then_close(srv, cli)
                        return
                    if fire:
                        state["next"] = True
                cli.sendall(data)
        except OSError:
            pass
        close(cli)

    threading.Thread(target=up, daemon=True).start()
    threading.Thread(target=down, daemon=True).start()


ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", listen_port))
ls.listen(64)
ls.settimeout(1.0)
open(ready, "w").close()
stop = time.time() + 600
while time.time() < stop:
    try:
        c, _ = ls.accept()
    except socket.timeout:
        continue
    handle(c)
