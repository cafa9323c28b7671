#!/usr/bin/env python3
"""free_ports.py [N] -- print N distinct free TCP ports on 127.0.0.1.

Tests start private servers (PostgreSQL, MariaDB, Galera nodes, HTTP
endpoints) on ports they choose before the server binds. Two rules keep
that choice from colliding:

* The N ports of one call are distinct: every candidate stays bound until
  all N are chosen. (Asking the kernel for port 0 N times in a row can
  hand out the same port twice: a Galera cluster once got one group port
  for two of its nodes.)
* The ports lie below the kernel's ephemeral range
  (/proc/sys/net/ipv4/ip_local_port_range), which the kernel never hands
  to an outgoing connection: the hundreds of client connections a suite
  opens cannot take a port between this choice and the server's bind.

Candidates are drawn at random, so parallel tests seldom try the same
one, and a candidate that is bound (or in TIME_WAIT) is skipped.
"""
import random
import socket
import sys

LOW = 20000  # below this live well-known services; keep clear of them


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    if n < 1 or n > 100:
        sys.exit("free_ports.py: N must be 1..100")
    high = ephemeral_low()
    held = []
    if high - LOW >= 1000:
        rng = random.SystemRandom()
        tries = 0
        while len(held) < n and tries < 10000:
            tries += 1
            port = rng.randrange(LOW, high)
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            held.append(s)
    # a machine whose ephemeral range starts low: let the kernel choose,
    # still holding each port until all are chosen
    while len(held) < n:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        held.append(s)
    print(" ".join(str(s.getsockname()[1]) for s in held))
    for s in held:
        s.close()


if __name__ == "__main__":
    main()
