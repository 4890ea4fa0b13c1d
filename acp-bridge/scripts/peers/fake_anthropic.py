#!/usr/bin/env python3
"""A fake Anthropic Messages API on loopback, for driving Claude Code.

The Claude ACP adapter (npm ``@agentclientprotocol/claude-agent-acp``) runs
Claude Code, which sends its model calls to ``ANTHROPIC_BASE_URL`` (with any
``ANTHROPIC_API_KEY``). This server answers them with fixed, deterministic
scripts, so a turn exercises Claude Code's real tools (Read, Write, Edit,
Bash) and the adapter's real ACP messages:

* ``POST /v1/messages`` with ``"stream": true``: server-sent events
  (``message_start``, ``content_block_start`` / ``_delta`` / ``_stop`` for
  thinking, text and ``tool_use`` blocks, ``message_delta``,
  ``message_stop``). A main-loop request (one that offers the tools of the
  script) gets the next step of its script; the step is derived from the
  request alone (how many assistant messages follow the last user message
  that carries text), so the answers do not depend on timing.
* ``POST /v1/messages`` without ``stream``: the same answer as one message.
* Requests that are not the main loop: the session title (a request with no tools whose
  ``output_config.format`` is a JSON schema: answered with a matching
  object), the prompt suggestion Claude Code asks for after a turn (a fork of
  the conversation with the same tools: answered with empty text), and any
  other helper call (a short text).
* ``POST /v1/messages/count_tokens``: an estimate from the body size.
* ``GET /v1/models``: a short list. Anything else: 404 in the API's shape.
  (With the environment scripts/interop_claude.sh sets, Claude Code 2.1.318
  sends only ``POST /v1/messages?beta=true``.)

The script is chosen by ``--script``, or per request by a marker
``[fake:NAME]`` in the user's text (so one server serves several turns).

Stdlib only. Binds 127.0.0.1 on a free port (or ``--port``), prints the port
as the first line of stdout, and exits by itself after ``--idle`` seconds
without a request, after ``--max-lifetime`` seconds, or when its parent dies.

    python3 scripts/peers/fake_anthropic.py --script read --idle 60
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
import time
import loopback_server
from loopback_server import Activity, JsonHandler, add_server_args, serve

MODEL = "claude-sonnet-4-5-20250929"
_ids = itertools.count(1)


def thinking(text: str) -> dict:
    return {"type": "thinking", "thinking": text}


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool(name: str, **inp: object) -> dict:
    return {"type": "tool_use", "name": name, "input": inp}


# Each script is a list of model answers (one per main-loop request of a
# turn); each answer is a list of content blocks. An answer with tool_use
# blocks is followed (after Claude Code runs them and sends the results) by
# the next; the last answer ends the turn. "{cwd}" in a string is replaced by
# the session directory (Claude Code's tools want absolute paths), read from
# the request; "{result}" by the text of the last tool result in the request
# (line numbers of a Read dropped, blank lines out, joined by " | "), so an
# answer shows what really came back from the tool.
SCRIPTS: dict[str, list[list[dict]]] = {
    # (1) read a file.
    "read": [
        [
            thinking("The user wants to know what the README says; I'll read it."),
            text("Let me read the README."),
            tool("Read", file_path="{cwd}/README.md"),
        ],
        [text("The README says: {result} (Héllo ✓)")],
    ],
    # (2) write a NEW file.
    "write": [
        [
            text("I'll write the notes file."),
            tool("Write", file_path="{cwd}/NOTES.md",
                 content="# Notes\n\n- greet() now takes a name.\n- Ünïcödé ✓ survives.\n"),
        ],
        [text("NOTES.md is written.")],
    ],
    # (3) edit an existing file (Claude Code edits only files read first).
    "edit": [
        [
            text("I'll look at app.py first."),
            tool("Read", file_path="{cwd}/src/app.py"),
        ],
        [
            text("Now I'll make greet take a name."),
            tool("Edit", file_path="{cwd}/src/app.py",
                 old_string='def greet():\n    return "hello"',
                 new_string='def greet(name):\n    return f"hello, {name}"'),
        ],
        [text("Done: greet now takes a name.")],
    ],
    # (4) a shell command (Claude Code asks permission for it).
    "shell": [
        [
            text("I'll run the checks."),
            tool("Bash", command="echo checks-ran > CHECKS.txt && cat VERSION",
                 description="Record that the checks ran and print the version"),
        ],
        [text("The checks said: {result}")],
    ],
    # (5) a turn slow enough to be cancelled: a long thought streamed in many
    # events (with --event-delay), then a write that must never happen.
    "slow": [
        [
            thinking("Surveying the project. " * 3),
            text("Surveying the project, slowly"),
            text(" before changing anything."),
            tool("Write", file_path="{cwd}/CANCELLED.txt", content="this must not land\n"),
        ],
        [text("Done.")],
    ],
    # One turn of Claude Code's own tools for a room (scripts/interop_rooms.sh):
    # read, edit, write, then a shell command that needs only the system's
    # programs and writes a file of its own.
    "room": [
        [
            text("I'll read app.py first."),
            tool("Read", file_path="{cwd}/src/app.py"),
        ],
        [
            text("Now I'll update `greet` and write some notes."),
            tool("Edit", file_path="{cwd}/src/app.py",
                 old_string='def greet():\n    return "hello"',
                 new_string='def greet(name):\n    return f"hello, {name}"'),
            tool("Write", file_path="{cwd}/NOTES.md",
                 content="# Notes\n\n- greet() now takes a name.\n"),
        ],
        [
            text("Let me record the check."),
            tool("Bash", command="echo \"checked $(cat VERSION)\" > CHECKED.txt && cat CHECKED.txt",
                 description="Record the version checked"),
        ],
        [text("Done; the check said: {result}")],
    ],
    # The recorded fixture: all of the above in one turn.
    "fixture": [
        [
            thinking("I should read the README and the code before changing anything."),
            text("I'll start by reading the README and app.py."),
            tool("Read", file_path="{cwd}/README.md"),
            tool("Read", file_path="{cwd}/src/app.py"),
        ],
        [
            text("Now I'll update `greet` and write some notes."),
            tool("Edit", file_path="{cwd}/src/app.py",
                 old_string='def greet():\n    return "hello"',
                 new_string='def greet(name):\n    return f"hello, {name}"'),
            tool("Write", file_path="{cwd}/NOTES.md",
                 content="# Notes\n\n- greet() now takes a name.\n- Ünïcödé ✓ survives.\n"),
        ],
        [
            text("Let me run a quick check."),
            # Not read-only (Claude Code runs `cat`, `ls` and the like without
            # asking): this one goes through session/request_permission.
            tool("Bash", command="python3 -c 'import sys; sys.path.insert(0, \"src\"); "
                 "import app; print(app.greet(\"world\"))' && cat VERSION",
                 description="Check the new greeting and print the version"),
        ],
        [text("Done. `greet` now takes a name, NOTES.md records the change,"),
         text(" and the check printed: {result}")],
    ],
}


def user_has_text(msg: dict) -> bool:
    if msg.get("role") != "user":
        return False
    content = msg.get("content")
    if isinstance(content, str):
        return True
    return any(isinstance(b, dict) and b.get("type") == "text" for b in content or []) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content or [])


def step_of(messages: list) -> int:
    """Number of assistant messages after the last user message with text."""
    last = -1
    for i, m in enumerate(messages):
        if isinstance(m, dict) and user_has_text(m):
            last = i
    return sum(1 for m in messages[last + 1:] if isinstance(m, dict) and m.get("role") == "assistant")


def all_text(obj: object) -> str:
    """Every string inside a request part, joined (to look for markers)."""
    if isinstance(obj, str):
        return obj
    if isinstance(obj, list):
        return "\n".join(all_text(x) for x in obj)
    if isinstance(obj, dict):
        return "\n".join(all_text(v) for k, v in obj.items() if k in ("text", "content", "system"))
    return ""


CWD_RE = re.compile(r"Primary working directory: (\S+)|Working directory: (\S+)")


def cwd_of(body: dict) -> str:
    m = CWD_RE.search(all_text(body.get("system", "")) + "\n" + all_text(body.get("messages", [])))
    if not m:
        return os.getcwd()
    return m.group(1) or m.group(2)


LINE_NO_RE = re.compile(r"^\s*\d+\t", re.M)


def last_tool_result(messages: list) -> str:
    """The text of the last tool_result block in the request, on one line."""
    for m in reversed(messages):
        if not isinstance(m, dict) or m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for b in reversed(m["content"]):
            if isinstance(b, dict) and b.get("type") == "tool_result":
                content = b.get("content")
                raw = content if isinstance(content, str) else all_text(content)
                raw = LINE_NO_RE.sub("", raw)
                return " | ".join(x.strip() for x in raw.splitlines() if x.strip())[:300]
    return ""


def fill(value: object, cwd: str, result: str = "") -> object:
    if isinstance(value, str):
        return value.replace("{cwd}", cwd).replace("{result}", result)
    if isinstance(value, dict):
        return {k: fill(v, cwd, result) for k, v in value.items()}
    return value


class State(Activity):
    def __init__(self, script: str, log, event_delay: float, log_bodies: bool = False) -> None:
        self.script = script
        super().__init__(log)
        self.log_bodies = log_bodies
        self.event_delay = event_delay


def usage(inp: int, out: int) -> dict:
    return {"input_tokens": inp, "output_tokens": out,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def make_handler(state: State):
    class Handler(JsonHandler):
        server_version = "fake-anthropic/1"

        def _json_id(self, obj: object, status: int = 200) -> None:
            self._json(obj, status, {"request-id": f"req_fake_{next(_ids)}"})

        def _note(self, body: dict, note: str) -> None:
            if not state.log:
                return
            msgs = body.get("messages")
            summary = {
                "method": self.command, "path": self.path, "note": note,
                "model": body.get("model"), "stream": body.get("stream"),
                "messages": len(msgs) if isinstance(msgs, list) else None,
                "step": step_of(msgs) if isinstance(msgs, list) else None,
                "tools": [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)][:40],
                "system": all_text(body.get("system", ""))[:300],
                "last": all_text(msgs[-1:])[-300:] if isinstance(msgs, list) else None,
            }
            if state.log_bodies:
                summary["body"] = body
            state.log.write(json.dumps(summary, ensure_ascii=False) + "\n")
            state.log.flush()

        def _not_found(self) -> None:
            self._json_id({"type": "error", "error": {"type": "not_found_error", "message": "not found"}}, 404)

        def do_GET(self):
            state.touch()
            self._note({}, "get")
            if self.path.split("?", 1)[0].rstrip("/").endswith("/v1/models"):
                self._json_id({"data": [{"type": "model", "id": MODEL, "display_name": "Fake Sonnet",
                                      "created_at": "2025-09-29T00:00:00Z"}],
                            "has_more": False, "first_id": MODEL, "last_id": MODEL})
            else:
                self._not_found()

        def do_HEAD(self):
            state.touch()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            state.touch()
            body = self._body()
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.endswith("/v1/messages/count_tokens"):
                self._note(body, "count_tokens")
                self._json_id({"input_tokens": max(1, len(json.dumps(body)) // 4)})
            elif path.endswith("/v1/messages"):
                script = self._script_for(body)
                self._note(body, f"messages script={script}")
                if script:
                    blocks = self._main_answer(body, script)
                else:
                    blocks = [text(self._side_text(body))]
                if body.get("stream"):
                    self._stream(body, blocks, script is not None)
                else:
                    self._whole(body, blocks)
            else:
                self._note(body, "unknown")
                self._not_found()
            state.touch()

        # -- answers --------------------------------------------------------
        def _script_for(self, body: dict) -> str | None:
            """The script of a main-loop request, None for a side request.

            A main-loop request offers Claude Code's file tools, and no
            assistant message comes before its last user text: each session
            here gets one prompt, so a user text after an answer is one of
            Claude Code's forks of the conversation (the prompt suggestion
            after a turn), which gets a side answer."""
            names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
            if not names & {"Read", "Write", "Edit", "Bash"}:
                return None
            msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
            last = max((i for i, m in enumerate(msgs) if user_has_text(m)), default=-1)
            if any(m.get("role") == "assistant" for m in msgs[:last]):
                return None
            m = re.search(r"\[fake:(\w+)\]", all_text(msgs))
            return m.group(1) if m and m.group(1) in SCRIPTS else state.script

        def _main_answer(self, body: dict, script: str) -> list[dict]:
            turns = SCRIPTS[script]
            step = step_of(body.get("messages") or [])
            msgs = body.get("messages") or []
            result = last_tool_result(msgs)
            return [fill(b, cwd_of(body), result) for b in turns[min(step, len(turns) - 1)]]

        def _side_text(self, body: dict) -> str:
            """Titles (a JSON schema in output_config.format), prompt
            suggestions (nothing) and any other helper call (a short text)."""
            fmt = (body.get("output_config") or {}).get("format") or {}
            if fmt.get("type") == "json_schema":
                return json.dumps(value_for_schema(fmt.get("schema") or {}))
            if "suggestion" in all_text((body.get("messages") or [])[-1:]):
                return ""
            return "Fake backend answer."

        def _whole(self, body: dict, blocks: list[dict]) -> None:
            content = []
            for b in blocks:
                if b["type"] == "tool_use":
                    content.append({**b, "id": f"toolu_fake{next(_ids):04d}"})
                elif b["type"] == "thinking":
                    content.append({**b, "signature": "fake-signature"})
                else:
                    content.append(b)
            stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
            self._json_id({"id": f"msg_fake{next(_ids):04d}", "type": "message", "role": "assistant",
                        "model": body.get("model") or MODEL, "content": content,
                        "stop_reason": stop, "stop_sequence": None, "usage": usage(1000, 20)})

        def _stream(self, body: dict, blocks: list[dict], main: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("request-id", f"req_fake_{next(_ids)}")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            delay = state.event_delay if main else 0.0

            def send(event: str, data: dict) -> None:
                raw = f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(raw), raw))
                self.wfile.flush()
                if delay:
                    time.sleep(delay)

            model = body.get("model") or MODEL
            step = step_of(body.get("messages") or [])
            send("message_start", {"type": "message_start", "message": {
                "id": f"msg_fake{next(_ids):04d}", "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": usage(1000 + 100 * step, 1)}})
            send("ping", {"type": "ping"})
            for i, b in enumerate(blocks):
                if b["type"] == "thinking":
                    send("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "thinking", "thinking": "",
                                                                   "signature": ""}})
                    for piece in chunks(b["thinking"], 40):
                        send("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "thinking_delta", "thinking": piece}})
                    send("content_block_delta", {"type": "content_block_delta", "index": i,
                                                 "delta": {"type": "signature_delta",
                                                           "signature": "fake-signature"}})
                elif b["type"] == "text":
                    send("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "text", "text": ""}})
                    for piece in chunks(b["text"], 24):
                        send("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "text_delta", "text": piece}})
                else:
                    send("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "tool_use",
                                                                   "id": f"toolu_fake{next(_ids):04d}",
                                                                   "name": b["name"], "input": {}}})
                    raw = json.dumps(b["input"], ensure_ascii=False)
                    for piece in chunks(raw, 64):
                        send("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "input_json_delta",
                                                               "partial_json": piece}})
                send("content_block_stop", {"type": "content_block_stop", "index": i})
            stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
            send("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 40}})
            send("message_stop", {"type": "message_stop"})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    Handler.state = state
    return Handler


def value_for_schema(schema: dict, name: str = "") -> object:
    """A plausible JSON value for a (subset of) JSON schema."""
    return loopback_server.value_for_schema(schema, name, SCHEMA_STRINGS, ())


SCHEMA_STRINGS = {"title": "Fake session title"}


def chunks(s: str, n: int) -> list[str]:
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", choices=sorted(SCRIPTS), default="fixture",
                    help="the default script ([fake:NAME] in the prompt overrides it)")
    ap.add_argument("--log-bodies", action="store_true", help="with --log: the whole request bodies too")
    add_server_args(ap, event_delay=0.0)
    args = ap.parse_args()
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    state = State(args.script, log, args.event_delay, args.log_bodies)
    return serve(make_handler(state), state, args)


if __name__ == "__main__":
    sys.exit(main())
