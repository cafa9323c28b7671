#!/usr/bin/env python3
"""A sked pipe: handler in Python, standard library only.

Run it as `sked worker --handler email=pipe:examples/handlers/pipe_handler.py`.
sked writes one task per line on stdin (JSON with "id", "kind", "queue",
"attempt", "payload" as a string, …) and reads one answer per line on
stdout. Lines without "id" (sked's hello) are ignored. Write logs to
stderr: sked logs them under the task's id and keeps their tail in the
run record. Put your work in handle().
"""
import json
import sys


def handle(task):
    """Do the work; raise to fail the attempt (it is retried later)."""
    if task["payload"] == "fail":
        raise RuntimeError("asked to fail")
    print(f"task {task['id']} attempt {task['attempt']}", file=sys.stderr)


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    try:
        handle(msg)
        answer = {"id": msg["id"], "ok": True}
    except Exception as e:  # every failure is an answer, never a crash
        answer = {"id": msg["id"], "ok": False, "error": str(e)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
