"""What the fake model backends share: their command-line options for the
port and their lifetime, and serving on 127.0.0.1 until they are no longer
needed (parent gone, idle, or too old), so that none outlives its test.

Used by fake_gemini.py, fake_openai.py and fake_anthropic.py (each run as
`python3 scripts/peers/fake_X.py`, so this directory is on sys.path).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Server(ThreadingHTTPServer):
    """A threaded HTTP server on loopback that does not print a traceback
    when a client drops its connection (a cancelled turn, keep-alive
    sockets at an agent's exit)."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def add_server_args(ap: argparse.ArgumentParser, event_delay: float) -> None:
    """The options every fake backend takes: port, lifetime, log, pacing."""
    ap.add_argument("--port", type=int, default=0, help="0 = a free port")
    ap.add_argument("--idle", type=float, default=60.0, help="exit after this many idle seconds")
    ap.add_argument("--max-lifetime", type=float, default=900.0, help="exit after this many seconds")
    ap.add_argument("--log", help="append one JSON summary line per request to this file")
    ap.add_argument("--event-delay", type=float, default=event_delay,
                    help="seconds between streamed events (long enough to cancel a turn mid-way)")


def serve(handler, state, args: argparse.Namespace) -> int:
    """Serves `handler` on 127.0.0.1:`args.port`, prints the port on stdout
    (the caller reads it), and returns once the parent process is gone,
    nothing arrived for `args.idle` seconds (`state.last_activity` under
    `state.lock`, kept by the handler) or `args.max_lifetime` passed."""
    server = Server(("127.0.0.1", args.port), handler)
    print(server.server_address[1], flush=True)
    parent = os.getppid()
    started = time.monotonic()

    def watchdog() -> None:
        while True:
            time.sleep(0.5)
            now = time.monotonic()
            with state.lock:
                idle = now - state.last_activity
            if os.getppid() != parent or idle > args.idle or now - started > args.max_lifetime:
                server.shutdown()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


class Activity:
    """A backend's state base: when it last served something (for the idle
    stop of `serve`), under `lock`, which subclasses also use."""

    def __init__(self, log) -> None:
        self.log = log
        self.last_activity = time.monotonic()
        self.lock = threading.Lock()

    def touch(self) -> None:
        with self.lock:
            self.last_activity = time.monotonic()


class JsonHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive, quiet unless the state has a log; reads a
    JSON object body and writes JSON answers. Subclasses set `state`."""

    protocol_version = "HTTP/1.1"
    state: Activity
    content_type = "application/json"

    def log_message(self, fmt, *args):
        if self.state.log:
            self.state.log.write("# " + (fmt % args) + "\n")
            self.state.log.flush()

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}

    def _json(self, obj: object, status: int = 200, headers: dict | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", self.content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def value_for_schema(schema: dict, name: str = "", strings: dict | None = None,
                     preferred: tuple = ()) -> object:
    """A plausible JSON value for a (subset of) JSON schema or OpenAPI
    schema, for the structured-output calls agents make beside their turn
    (titles, routing, next speaker). `strings` gives the text of a string
    member by its name ("ok" otherwise); `preferred` lists enum values to
    choose when allowed (the first value otherwise)."""
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if t is None and "properties" not in schema:
        t = "object" if not schema.get("enum") else "string"
    t = t.lower() if isinstance(t, str) else "object"
    if schema.get("enum"):
        enum = schema["enum"]
        return next((p for p in preferred if p in enum), enum[0])
    if t == "object":
        return {k: value_for_schema(v, k, strings, preferred)
                for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return schema.get("minimum", 1)
    if t == "boolean":
        return False
    return (strings or {}).get(name, "ok")
