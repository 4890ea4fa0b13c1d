#!/usr/bin/env python3
"""Run a program in a pseudo-terminal, as a person at a terminal would, and
play a script of steps against it: wait for some text, type some text.

    pty_session.py --log OUT [--timeout SECS] STEP... -- CMD [ARGS...]

Each STEP is ``expect:TEXT`` (wait until TEXT appears after the previous
match; escape codes are stripped from the output first) or ``send:TEXT``
(typed; Python escapes work: ``\\r`` is Enter, ``\\x03`` Ctrl-C, ``\\x04``
Ctrl-D). The pty is the program's controlling terminal, so Ctrl-C there is
SIGINT. A cursor-position query (``ESC [6n``, which line editors send) is
answered as a terminal would. After the last step, waits for the program
to exit. Writes everything printed, escape codes stripped, to OUT; prints
the program's exit status. Exits 1 when a step times out (each step, and
the exit, wait at most SECS), else with the program's status.
"""

from __future__ import annotations

import argparse
import codecs
import os
import pty
import re
import select
import signal
import sys
import time

CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z~]|\r")


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        print("usage: pty_session.py --log OUT [--timeout SECS] STEP... -- CMD [ARGS...]", file=sys.stderr)
        return 2
    split = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("steps", nargs="*")
    args = ap.parse_args(argv[:split])
    cmd = argv[split + 1:]

    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm"
        os.execvp(cmd[0], cmd)
    raw = b""
    text = ""
    cursor = 0
    log = open(args.log, "w", encoding="utf-8")

    def pump(wait: float) -> bool:
        """Reads what is there within `wait` seconds; False at the end."""
        nonlocal raw, text
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        raw += chunk
        while b"\x1b[6n" in raw:
            raw = raw.replace(b"\x1b[6n", b"", 1)
            os.write(fd, b"\x1b[1;1R")
        # Keep a partial escape sequence or character for the next read.
        cut = len(raw)
        esc = raw.rfind(b"\x1b")
        if esc >= 0 and not re.search(rb"[A-Za-z~]", raw[esc + 2:]):
            cut = esc
        decoded = raw[:cut].decode("utf-8", errors="ignore")
        if len(decoded.encode("utf-8")) < cut:
            cut = len(decoded.encode("utf-8"))
        clean = CSI.sub("", decoded)
        text += clean
        log.write(clean)
        log.flush()
        raw = raw[cut:]
        return True

    alive = True
    for step in args.steps:
        kind, _, value = step.partition(":")
        value = codecs.decode(value, "unicode_escape").encode("latin-1").decode("utf-8")
        if kind == "send":
            time.sleep(0.05)  # let the editor finish drawing its prompt
            os.write(fd, value.encode("utf-8"))
            continue
        deadline = time.monotonic() + args.timeout
        while True:
            at = text.find(value, cursor)
            if at >= 0:
                cursor = at + len(value)
                break
            if not alive or time.monotonic() > deadline:
                print(f"pty_session: no {value!r} within {args.timeout:.0f} s", file=sys.stderr)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return 1
            alive = pump(0.1)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            while pump(0.05):
                pass
            code = os.waitstatus_to_exitcode(status)
            print(f"pty_session: exit status {code}")
            return code if code >= 0 else 128 - code
        if not pump(0.1):
            time.sleep(0.05)
    print(f"pty_session: still running after {args.timeout:.0f} s", file=sys.stderr)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return 1


if __name__ == "__main__":
    sys.exit(main())
