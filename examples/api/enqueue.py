#!/usr/bin/env python3
"""examples/api/enqueue.py — enqueue tasks through sked's JSON API from
Python with the standard library only, then retry the dead ones of that
kind: the count first, the change only with "confirm".

    SKED_API_URL=http://127.0.0.1:8420 SKED_API_TOKEN=... \\
        python3 enqueue.py report '{"day": "2026-03-08"}' '{"day": "2026-03-09"}'

The dashboard serves the API when started with --api-token (docs/api.md).
Exit 0, or 1 with the API's error message.
"""
import json
import os
import sys
import urllib.error
import urllib.request

BASE = os.environ.get("SKED_API_URL", "http://127.0.0.1:8420")
TOKEN = os.environ.get("SKED_API_TOKEN")


def api(method, path, body=None):
    req = urllib.request.Request(BASE + path, method=method)
    req.add_header("Authorization", "Bearer " + TOKEN)
    data = None
    if body is not None:
        req.add_header("Content-Type", "application/json")
        data = json.dumps(body).encode()
    try:
        with urllib.request.urlopen(req, data) as res:
            return json.load(res)
    except urllib.error.HTTPError as e:
        # every refusal: {"error": {"code": SYSEXITS, "message": "..."}}
        sys.exit("sked: " + json.load(e)["error"]["message"])


def main():
    if not TOKEN or len(sys.argv) < 3:
        sys.exit("usage: SKED_API_TOKEN=... enqueue.py KIND JSON...")
    kind = sys.argv[1]
    payloads = [json.loads(p) for p in sys.argv[2:]]
    # one transaction: all of them or none
    ids = api("POST", "/api/tasks/bulk",
              {"kind": kind, "payloads": payloads, "queue": "reports"})["ids"]
    print("enqueued", " ".join(map(str, ids)))
    dead = api("POST", "/api/tasks/retry", {"kind": kind})
    print("dead of this kind:", dead["matched"])
    if dead["matched"]:
        done = api("POST", "/api/tasks/retry", {"kind": kind, "confirm": True})
        print("retried:", done["changed"])


if __name__ == "__main__":
    main()
