#!/usr/bin/env python3
"""http_endpoint.py PORT_FILE LOG — an HTTP endpoint for handler tests.

Listens on 127.0.0.1 (a free port, written to PORT_FILE) and answers POSTs
by path:
  /ok      200
  /fail    500 Internal Server Error, body "it broke"
  /retry   the first request of each task id: 429 with Retry-After: 3600;
           any later one: 200
  /later   503 with Retry-After as an HTTP date 2 hours ahead
  /slow    sleeps 10 s, then 200
  /cut     200 with a valid UTF-8 body whose byte 4096 is inside a
           character (the worker keeps 4096 bytes of a body)
  /huge    429 with Retry-After: 10000000000000 (seconds)
  /max     429 with Retry-After: 9223372036854775807 (INT64_MAX seconds)
  /result  200 with the body "http result ID" (the task's result)
  /big     200 with a body of 65537 bytes (over a result's 64 KiB)
Every request is logged to LOG as one JSON line: path, the Sked-Task-*
headers, traceparent, Authorization, Content-Type and the body. Stops by itself after
10 minutes.
"""
import email.utils
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, log = sys.argv[1], sys.argv[2]
seen = set()
lock = threading.Lock()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode("utf-8", "replace")
        rec = {"path": self.path, "body": body,
               "auth": self.headers.get("Authorization"),
               "type": self.headers.get("Content-Type"),
               "conn": self.client_address[1]}
        for k, v in self.headers.items():
            if k.lower().startswith("sked-task-") or k.lower() == "traceparent":
                rec[k.lower()] = v
        with lock:
            with open(log, "a") as f:
                f.write(json.dumps(rec) + "\n")
        tid = self.headers.get("Sked-Task-Id")
        status, extra, out = 200, {}, b"fine"
        if self.path == "/fail":
            status, out = 500, b"it broke"
        elif self.path == "/retry":
            with lock:
                first = tid not in seen
                seen.add(tid)
            if first:
                status, extra = 429, {"Retry-After": "3600"}
        elif self.path == "/later":
            when = email.utils.formatdate(time.time() + 7200, usegmt=True)
            status, extra = 503, {"Retry-After": when}
        elif self.path == "/slow":
            time.sleep(10)
        elif self.path == "/cut":
            out = b"a" * 4095 + "\u00e9".encode() * 10
        elif self.path == "/huge":
            status, extra = 429, {"Retry-After": "10000000000000"}
        elif self.path == "/max":
            status, extra = 429, {"Retry-After": "9223372036854775807"}
        elif self.path == "/result":
            out = ("http result %s" % tid).encode()
        elif self.path == "/big":
            out = b"b" * 65537
        elif self.path == "/gone":
            status, out, extra = 410, b"no such account", {"Sked-Retry": "no"}
        elif self.path == "/invalid":
            status, out = 422, b"amount must be positive"
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
threading.Timer(600, srv.shutdown).start()
srv.serve_forever()
