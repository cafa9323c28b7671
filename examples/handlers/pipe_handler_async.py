#!/usr/bin/env python3
"""A sked pipe: handler in Python that runs several tasks at once (asyncio).

Run it as
`sked worker --concurrency 8 --handler email=pipe:examples/handlers/pipe_handler_async.py`.
Its hello announces a window: sked then keeps up to that many tasks in
flight on this one process (instead of one process per slot) and matches
the answers by id, in any order. When a task times out, is cancelled or
loses its lease, sked sends {"cancel": ID}: stop that task and answer it
(the answer is ignored) within 2 s, or the process is killed with every
task it has in flight. Standard library only; put your work in handle().
"""
import asyncio
import json
import os
import sys

WINDOW = int(os.environ.get("PIPE_WINDOW", "8"))


async def handle(task):
    """Do the work (await, never block); raise to fail the attempt."""
    if task["payload"] == "fail":
        raise RuntimeError("asked to fail")
    await asyncio.sleep(0.01)  # an HTTP call, a query, …
    print(f"task {task['id']} attempt {task['attempt']}", file=sys.stderr)
    return None  # or a result: a string, or any JSON value


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


async def run(task, running):
    try:
        result = await handle(task)
        answer = {"id": task["id"], "ok": True}
        if result is not None:
            answer["result"] = result
    except asyncio.CancelledError:
        answer = {"id": task["id"], "ok": False, "error": "cancelled"}
    except Exception as e:  # every failure is an answer, never a crash
        answer = {"id": task["id"], "ok": False, "error": str(e)}
    running.pop(task["id"], None)
    send(answer)


async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    send({"hello": "pipe_handler_async.py", "version": 1, "window": WINDOW})
    running = {}
    while line := await reader.readline():
        msg = json.loads(line)
        if "cancel" in msg:
            t = running.get(msg["cancel"])
            if t:
                t.cancel()
            continue
        if "id" not in msg:  # sked's hello, or a message from later
            continue
        running[msg["id"]] = asyncio.create_task(run(msg, running))
    if running:
        await asyncio.wait(list(running.values()))


asyncio.run(main())
