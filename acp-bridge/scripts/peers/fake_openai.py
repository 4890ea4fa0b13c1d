#!/usr/bin/env python3
"""A fake OpenAI-compatible chat-completions backend on loopback, for driving
Qwen Code (and other OpenAI-API agents) through real turns.

Qwen Code sends its model calls to ``OPENAI_BASE_URL`` (with any
``OPENAI_API_KEY`` and the model ``OPENAI_MODEL``). This server answers them
with a fixed, deterministic script, so a turn exercises the agent's real
tools:

* ``POST <base>/chat/completions`` with ``"stream": true`` and tools: the main
  turn, streamed as server-sent ``chat.completion.chunk`` events (reasoning,
  text and ``tool_calls`` deltas, then ``data: [DONE]``). The step of the
  script is derived from the request alone (how many assistant messages follow
  the last user message that is not a tool result), so the answers do not
  depend on timing or on earlier requests.
* the same without tools, or not streamed: helper calls (titles, summaries,
  classifiers). A JSON response format or a forced function gets a value
  built from the requested schema; anything else gets a short text.
* ``GET <base>/models``: one model.

Stdlib only. Binds 127.0.0.1 on a free port (or ``--port``), prints the port
as the first line of stdout, and exits by itself after ``--idle`` seconds
without a request, after ``--max-lifetime`` seconds, or when its parent dies.

    python3 scripts/peers/fake_openai.py --script acp --idle 60
    # then OPENAI_BASE_URL=http://127.0.0.1:<port>/v1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import loopback_server
from loopback_server import Activity, JsonHandler, add_server_args, serve

MODEL = "fake-model"


def call(name: str, args: dict) -> dict:
    return {"tool_call": {"name": name, "arguments": args}}


def text(t: str) -> dict:
    return {"content": t}


def think(t: str) -> dict:
    return {"reasoning_content": t}


# Each script is a list of model turns; each turn is a list of stream events
# (one delta each). A turn with tool calls is followed, once the agent has
# run them, by the next turn; the last turn is the final answer. Paths are
# relative to the session directory; the agent's tools take absolute paths,
# so `{cwd}` is replaced by the directory named in the request's system
# prompt or environment context (see `cwd_of`).
SCRIPTS: dict[str, list[list[dict]]] = {
    # (1) read a file
    "read": [
        [
            think("The user wants to know what the README says; read it."),
            text("Let me read the README."),
            call("read_file", {"file_path": "{cwd}/README.md"}),
        ],
        [text("The README says this is a tiny project."), text(" Nothing else to do.")],
    ],
    # (2) write a NEW file
    "write": [
        [
            text("I'll write the notes file."),
            call("write_file", {"file_path": "{cwd}/NOTES.md",
                                "content": "# Notes\n\n- written by Qwen Code.\n- Ünïcödé ✓ survives.\n"}),
        ],
        [text("NOTES.md is written.")],
    ],
    # (3) edit an existing file (Qwen Code's edit needs a read of the file
    # earlier in the session)
    "edit": [
        [
            text("Let me look at app.py first."),
            call("read_file", {"file_path": "{cwd}/src/app.py"}),
        ],
        [
            text("I'll make greet take a name."),
            call("edit", {"file_path": "{cwd}/src/app.py",
                          "old_string": 'def greet():\n    return "hello"',
                          "new_string": 'def greet(name):\n    return f"hello, {name}"'}),
        ],
        [text("greet() now takes a name.")],
    ],
    # (4) a shell command (behind a permission prompt)
    "shell": [
        [
            text("I'll run the check."),
            call("run_shell_command", {"command": "printf 'checked %s\\n' \"$(cat VERSION)\" > CHECKED.txt && cat CHECKED.txt",
                                       "description": "Record the checked version",
                                       "is_background": False}),
        ],
        [text("The check ran.")],
    ],
    # (9) and (10): a tool of the user's MCP server (server-filesystem's
    # read_text_file, of the server named "files"), called as the agent
    # offers it (see `tool_call_of`); the answer quotes the tool's result
    # ("{tool_result}").
    "mcp": [
        [
            text("Let me read it with the user's own tool."),
            call("mcp:files:read_text_file", {"path": "{cwd}/secret.txt"}),
        ],
        [text("The user's file says: {tool_result}")],
    ],
    # A read of a missing file and a new file in a new directory.
    "missing": [
        [
            text("Is there a changelog?"),
            call("read_file", {"file_path": "{cwd}/CHANGELOG.md"}),
            call("write_file", {"file_path": "{cwd}/docs/notes/NEW.md", "content": "new\n"}),
        ],
        [text("There is no changelog; docs/notes/NEW.md is written.")],
    ],
    # All of it in one turn (the recorded fixture; the Ctrl-C check runs it
    # slowly and cancels it during the first streamed events).
    "acp": [
        [
            think("**Surveying the project**\n\nI should read the README "),
            think("before changing anything."),
            text("Surveying the project first:"),
            text(" reading the README."),
            call("read_file", {"file_path": "{cwd}/README.md"}),
            call("read_file", {"file_path": "{cwd}/src/app.py"}),
            call("read_file", {"file_path": "{cwd}/VERSION"}),
            call("glob", {"pattern": "**/*.py"}),
        ],
        [
            think("The greeting needs a name; edit app.py, write notes, run the check."),
            text("Now I'll update `greet`, write notes and run the check."),
            call("edit", {"file_path": "{cwd}/src/app.py",
                          "old_string": 'def greet():\n    return "hello"',
                          "new_string": 'def greet(name):\n    return f"hello, {name}"'}),
            call("write_file", {"file_path": "{cwd}/NOTES.md",
                                "content": "# Notes\n\n- greet() now takes a name.\n- Ünïcödé ✓ survives.\n"}),
            call("write_file", {"file_path": "{cwd}/VERSION", "content": "1.2.4\n"}),
            call("run_shell_command", {"command": "printf 'checked %s\\n' \"$(cat VERSION)\" > CHECKED.txt && cat CHECKED.txt",
                                       "description": "Record the checked version",
                                       "is_background": False}),
        ],
        [text("Done. `greet` now takes a name, NOTES.md records the change,"),
         text(" VERSION is 1.2.4 and the check ran.")],
    ],
}


def content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def step_of(messages: list) -> int:
    """Number of assistant messages after the last user message (tool results
    are role "tool", so they do not count as user messages)."""
    last_user = -1
    for i, m in enumerate(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            last_user = i
    return sum(1 for m in messages[last_user + 1:] if isinstance(m, dict) and m.get("role") == "assistant")


# Side requests that come with the full tool list but are not the scripted
# turn (Qwen Code's follow-up suggestion and its memory-extraction subagent;
# interop_qwen.sh turns both off in settings, this is the safety net): they
# get a short text answer.
HELPER_MARKERS = ("[SUGGESTION MODE", "You are now acting as")


def is_side_request(body: dict) -> bool:
    if not body.get("tools") or body.get("tool_choice") not in (None, "auto"):
        return True
    msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = next((content_text(m.get("content")) for m in msgs if m.get("role") == "system"), "")
    last_user = next((content_text(m.get("content")) for m in reversed(msgs) if m.get("role") == "user"), "")
    return any(system.startswith(k) or last_user.startswith(k) for k in HELPER_MARKERS)


def cwd_of(body: dict, default: str) -> str:
    """The session directory: Qwen Code names it in a context message ("I'm
    currently working in the directory: /path")."""
    for m in body.get("messages", []):
        t = content_text(m.get("content") if isinstance(m, dict) else None)
        for pat in (r"currently working in the directory:\s*(/\S+)",
                    r"current working directory(?: is|:)\s*[`'\"]?(/[^\s`'\"]+)",
                    r"working directory(?: is|:)\s*[`'\"]?(/[^\s`'\"]+)",
                    r"<cwd>\s*(/[^<\s]+)\s*</cwd>"):
            hit = re.search(pat, t, re.IGNORECASE)
            if hit:
                return hit.group(1).rstrip(".,)")
    return default


def fill(value: object, cwd: str) -> object:
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, dict):
        return {k: fill(v, cwd) for k, v in value.items()}
    return value


def tool_call_of(name: str, args: dict, body: dict) -> tuple[str, dict]:
    """A script's tool call as the agent offers the tool. "mcp:SERVER:TOOL"
    is an MCP server's tool, which Qwen Code names mcp__SERVER__TOOL and
    keeps behind its tool_search/tool_call bridge unless the tool's schema
    fits its budget: called directly when offered, else through tool_call,
    else as TOOL."""
    if not name.startswith("mcp:"):
        return name, args
    server, _, tool = name[4:].partition(":")
    offered = {t.get("function", {}).get("name", "") for t in body.get("tools") or []}
    direct = f"mcp__{server}__{tool}"
    if direct in offered:
        return direct, args
    if "tool_call" in offered:
        return "tool_call", {"name": direct, "arguments": args}
    return tool, args


def last_tool_result(messages: list) -> str:
    return next((content_text(m.get("content")) for m in reversed(messages)
                 if isinstance(m, dict) and m.get("role") == "tool"), "")


def value_for_schema(schema: dict, name: str = "") -> object:
    """A plausible JSON value for a (subset of) JSON schema."""
    return loopback_server.value_for_schema(schema, name, SCHEMA_STRINGS, ())


SCHEMA_STRINGS = {"title": "Fake backend session", "reasoning": "Fake backend."}


class State(Activity):
    def __init__(self, script: str, log, event_delay: float, cwd: str) -> None:
        self.script = SCRIPTS[script]
        super().__init__(log)
        self.event_delay = event_delay
        self.cwd = cwd
        self.calls = 0
        self.dump: str | None = None
        self.dumped = 0

    def next_call_id(self) -> str:
        with self.lock:
            self.calls += 1
            return f"call_fake_{self.calls:04d}"


def usage(prompt_tokens: int = 1000, out_tokens: int = 40) -> dict:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": out_tokens,
            "total_tokens": prompt_tokens + out_tokens}


def make_handler(state: State):
    class Handler(JsonHandler):
        server_version = "fake-openai/1"

        def _log_req(self, body: dict, note: str) -> None:
            if state.dump:
                with state.lock:
                    state.dumped += 1
                    n = state.dumped
                with open(os.path.join(state.dump, f"{n:03d}-{note}.json"), "w", encoding="utf-8") as f:
                    json.dump(body, f, indent=1, ensure_ascii=False)
            if not state.log:
                return
            msgs = body.get("messages") if isinstance(body.get("messages"), list) else []
            summary = {
                "method": self.command, "path": self.path, "note": note,
                "stream": body.get("stream"), "model": body.get("model"),
                "messages": [(m.get("role"), content_text(m.get("content"))[:160],
                              [c.get("function", {}).get("name") for c in m.get("tool_calls") or []])
                             for m in msgs if isinstance(m, dict)],
                "step": step_of(msgs),
                "tools": [t.get("function", {}).get("name") for t in body.get("tools") or []],
                "tool_choice": body.get("tool_choice"),
                "response_format": body.get("response_format"),
            }
            state.log.write(json.dumps(summary, ensure_ascii=False)[:6000] + "\n")
            state.log.flush()

        def do_GET(self):
            state.touch()
            self._log_req({}, "get")
            if self.path.split("?", 1)[0].rstrip("/").endswith("/models"):
                self._json({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "fake"}]})
            else:
                self._json({"error": {"message": "not found", "type": "invalid_request_error"}}, 404)

        def do_POST(self):
            state.touch()
            body = self._body()
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.endswith("/chat/completions"):
                helper = is_side_request(body)
                self._log_req(body, "helper" if helper else "turn")
                if helper:
                    self._helper(body)
                else:
                    self._turn(body)
            else:
                self._log_req(body, "unknown")
                self._json({"error": {"message": "not found", "type": "invalid_request_error"}}, 404)
            state.touch()

        # -- helper calls ---------------------------------------------------
        def _helper(self, body: dict) -> None:
            model = body.get("model") or MODEL
            message: dict = {"role": "assistant", "content": None}
            finish = "stop"
            choice = body.get("tool_choice")
            fmt = body.get("response_format") or {}
            if isinstance(choice, dict) and choice.get("function", {}).get("name"):
                name = choice["function"]["name"]
                params = next((t["function"].get("parameters") or {} for t in body.get("tools") or []
                               if t.get("function", {}).get("name") == name), {})
                message["tool_calls"] = [{"id": state.next_call_id(), "type": "function",
                                          "function": {"name": name,
                                                       "arguments": json.dumps(value_for_schema(params))}}]
                finish = "tool_calls"
            elif fmt.get("type") in ("json_schema", "json_object"):
                schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
                message["content"] = json.dumps(value_for_schema(schema))
            else:
                message["content"] = "Fake backend summary."
            if body.get("stream"):
                self._sse_start()
                delta = dict(message)
                if "tool_calls" in delta:
                    delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
                self._sse(self._chunk(model, delta, None))
                self._sse(self._chunk(model, {}, finish, usage()))
                self._sse_end()
            else:
                self._json({"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                            "model": model,
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                            "usage": usage()})

        # -- the main turn --------------------------------------------------
        def _chunk(self, model: str, delta: dict, finish, use: dict | None = None) -> dict:
            chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                     "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if use:
                chunk["usage"] = use
            return chunk

        def _sse_start(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

        def _sse(self, obj) -> None:
            payload = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
            data = ("data: " + payload + "\n\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _sse_end(self) -> None:
            self._sse("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _turn(self, body: dict) -> None:
            msgs = body.get("messages") if isinstance(body.get("messages"), list) else []
            step = step_of(msgs)
            turns = state.script
            events = turns[min(step, len(turns) - 1)]
            model = body.get("model") or MODEL
            cwd = cwd_of(body, state.cwd)
            self._sse_start()
            first = True
            n_calls = 0
            try:
                for ev in events:
                    if "tool_call" in ev:
                        name, args = tool_call_of(ev["tool_call"]["name"], ev["tool_call"]["arguments"], body)
                        delta = {"tool_calls": [{"index": n_calls, "id": state.next_call_id(), "type": "function",
                                                 "function": {"name": name,
                                                              "arguments": json.dumps(fill(args, cwd),
                                                                                      ensure_ascii=False)}}]}
                        n_calls += 1
                    else:
                        delta = dict(ev)
                        if isinstance(delta.get("content"), str) and "{tool_result}" in delta["content"]:
                            delta["content"] = delta["content"].replace("{tool_result}", last_tool_result(msgs))
                    if first:
                        delta = {"role": "assistant", **delta}
                        first = False
                    self._sse(self._chunk(model, delta, None))
                    time.sleep(state.event_delay)
                self._sse(self._chunk(model, {}, "tool_calls" if n_calls else "stop",
                                      usage(1000 + 100 * step)))
                self._sse_end()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the agent cancelled the request

    Handler.state = state
    return Handler


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", choices=sorted(SCRIPTS), default="acp")
    ap.add_argument("--cwd", default=os.getcwd(),
                    help="the session directory, when the request does not name one")
    ap.add_argument("--dump", help="write each request body into this directory (debugging)")
    add_server_args(ap, event_delay=0.02)
    args = ap.parse_args()
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    state = State(args.script, log, args.event_delay, args.cwd)
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
        state.dump = args.dump
    return serve(make_handler(state), state, args)


if __name__ == "__main__":
    sys.exit(main())
