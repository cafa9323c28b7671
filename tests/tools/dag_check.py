#!/usr/bin/env python3
"""dag_check.py LOG EDGES N VICTIM: check a drained task graph from the
handlers' own records. LOG has lines "S|E id ns worker-pid" written by
each handler at its start and end; EDGES has "parent child" lines (the
database's edge table). Fails (exit 1, one line per fault) unless every
one of the N tasks ended, each exactly once (a second end is allowed
only when another came from the worker killed with -9, VICTIM: its
finish may have been lost with it), and no task started before each of
its parents ended."""
import sys
from collections import defaultdict

log, edges, n, victim = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
starts, ends = defaultdict(list), defaultdict(list)
for line in open(log):
    f = line.split()
    if len(f) != 4:
        continue
    (starts if f[0] == "S" else ends)[int(f[1])].append((int(f[2]), f[3]))
faults = []
if len(ends) != n:
    faults.append(f"{len(ends)} tasks ended, expected {n}")
for t, e in ends.items():
    if len(e) > 1 and not any(w == victim for _, w in e[:-1]):
        faults.append(f"task {t} ended {len(e)} times: {e}")
npairs = 0
for line in open(edges):
    f = line.split()
    if len(f) != 2:
        continue
    p, c = int(f[0]), int(f[1])
    npairs += 1
    if not ends[p]:
        faults.append(f"parent {p} of {c} never ended")
        continue
    last_end = max(ns for ns, _ in ends[p])
    first_start = min(ns for ns, _ in starts[c]) if starts[c] else None
    if first_start is None or first_start < last_end:
        faults.append(f"task {c} started at {first_start}, before its "
                      f"parent {p} ended at {last_end}")
for x in faults[:20]:
    print("FAULT:", x)
print(f"checked {len(ends)} tasks, {npairs} edges, {len(faults)} faults")
sys.exit(1 if faults else 0)
