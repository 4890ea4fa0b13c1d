#!/usr/bin/env python3
"""A fake Gemini API backend on loopback, for recording Gemini CLI sessions.

Gemini CLI sends its model calls to ``GOOGLE_GEMINI_BASE_URL`` (with any
``GEMINI_API_KEY``). This server answers them with a fixed, deterministic
script, so a recorded session exercises real tools with real titles:

* ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``: the main
  turn, streamed as server-sent events. The step of the script is derived
  from the request alone (how many model turns follow the last user text), so
  the answers do not depend on timing or on earlier requests.
* ``POST /v1beta/models/<model>:generateContent``: helper calls (routing
  classifier, next-speaker check, loop check, summaries). JSON-mode requests
  get an object built from the requested schema; others get a short text.
* ``POST .../models/<model>:countTokens`` and ``:embedContent``,
  ``GET .../models`` : minimal answers.

Stdlib only. Binds 127.0.0.1 on a free port (or ``--port``), prints the port
as the first line of stdout, and exits by itself after ``--idle`` seconds
without a request, after ``--max-lifetime`` seconds, or when its parent dies.

    python3 scripts/peers/fake_gemini.py --script acp --idle 60
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import loopback_server
from loopback_server import Activity, JsonHandler, add_server_args, serve

MODEL_VERSION = "gemini-2.5-pro"

# Large shell output: `seq 1 40000` prints 228,894 bytes (well over the
# 64 KiB asyncio default line limit once it is embedded in a JSON line).
BIG_COMMAND = "seq 1 40000"


def model_of(path: str) -> str:
    """The model name in ``/v1beta/models/<model>:method``."""
    tail = path.split("?", 1)[0].rsplit("/models/", 1)[-1]
    return tail.split(":", 1)[0] or MODEL_VERSION


def usage(prompt_tokens: int = 1000, out_tokens: int = 50) -> dict:
    return {
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": out_tokens,
        "totalTokenCount": prompt_tokens + out_tokens,
    }


def fc(name: str, args: dict) -> dict:
    return {"functionCall": {"name": name, "args": args}}


# Each script is a list of model turns; each turn is a list of SSE events,
# each event a list of parts. A turn whose parts hold function calls is
# followed (after Gemini CLI runs them) by the next turn; the last turn is the
# final answer.
SCRIPTS: dict[str, list[list[list[dict]]]] = {
    # ACP turn: tools that need permission (shell, write, edit) and read-only
    # ones (read, glob, grep, ls), a shell call with a description and a
    # directory, one with neither, and one with a large output.
    "acp": [
        [
            [
                {
                    "text": "**Surveying the project**\n\nI should list the files, read the README "
                    "and look for functions before changing anything.",
                    "thought": True,
                }
            ],
            [{"text": "I'll start by looking around the project"}],
            [{"text": " to see what is there."}],
            [
                fc(
                    "run_shell_command",
                    {
                        "command": "ls -la && wc -l *.py",
                        "description": "List the source files (with sizes) and count lines",
                        "dir_path": "src",
                    },
                ),
                fc("read_file", {"file_path": "README.md"}),
                fc("list_directory", {"dir_path": "."}),
                fc("glob", {"pattern": "**/*.py"}),
                fc("grep_search", {"pattern": "def \\w+", "include_pattern": "*.py"}),
            ],
        ],
        [
            [
                {
                    "text": "**Making the change**\n\nThe greeting needs a name parameter; I will "
                    "edit app.py, write notes and run the checks.",
                    "thought": True,
                }
            ],
            [{"text": "Now I'll update `greet` and write some notes."}],
            [
                fc(
                    "replace",
                    {
                        "file_path": "src/app.py",
                        "instruction": "Make greet take a name argument.",
                        "old_string": 'def greet():\n    return "hello"',
                        "new_string": 'def greet(name):\n    return f"hello, {name}"',
                    },
                ),
                fc(
                    "write_file",
                    {
                        "file_path": "NOTES.md",
                        "content": "# Notes\n\n- greet() now takes a name.\n- Ünïcödé ✓ survives.\n",
                    },
                ),
                # An existing file: a "modify" diff. (NOTES.md above is new: Gemini
                # CLI asks the client for it first and gets RESOURCE_NOT_FOUND.)
                fc("write_file", {"file_path": "VERSION", "content": "1.2.4\n"}),
                # data/log.txt is ~68 KB (record.py writes it): the edit's
                # fs/read_text_file answer, fs/write_text_file and the diffs
                # are lines well over 64 KiB, both ways.
                fc(
                    "replace",
                    {
                        "file_path": "data/log.txt",
                        "instruction": "Mark entry 42 as checked.",
                        "old_string": '00042\tentry "42"',
                        "new_string": '00042\tentry "42" (checked)',
                    },
                ),
                fc(
                    "run_shell_command",
                    {
                        "command": "python3 -c 'import app; print(app.greet(\"world\"))'",
                        "description": "Check the new greeting (quick)",
                        "dir_path": "src",
                    },
                ),
                fc("run_shell_command", {"command": "echo $(cat VERSION) done"}),
                fc(
                    "run_shell_command",
                    {
                        "command": "sleep 0.2",
                        "description": "Wait in the background",
                        "is_background": True,
                    },
                ),
                fc(
                    "run_shell_command",
                    {
                        "command": BIG_COMMAND,
                        "description": "Print a long sequence (large output)",
                    },
                ),
            ],
        ],
        [
            [{"text": "Done. `greet` now takes a name, NOTES.md records the change,"}],
            [{"text": " and the checks ran fine (the long sequence printed 40000 lines)."}],
        ],
    ],
    # Headless stream-json: yolo mode runs everything; the large shell output
    # gives a tool_result over 64 KiB.
    "headless": [
        [
            [{"text": "**Checking the project**\n\nList, read, then run.", "thought": True}],
            [{"text": "Let me look at the project."}],
            [
                fc(
                    "run_shell_command",
                    {
                        "command": "ls -la",
                        "description": "List files in the source directory",
                        "dir_path": "src",
                    },
                ),
                fc("read_file", {"file_path": "README.md"}),
                fc("glob", {"pattern": "**/*.py"}),
                fc(
                    "run_shell_command",
                    {"command": BIG_COMMAND, "description": "Print a long sequence (large output)"},
                ),
            ],
        ],
        [
            [{"text": "Writing a note."}],
            [
                fc(
                    "write_file",
                    {"file_path": "NOTES.md", "content": "# Notes\n\nheadless run ✓\n"},
                ),
                fc("read_file", {"file_path": "does/not/exist.txt"}),
            ],
        ],
        [
            [{"text": "All done: the project has "}],
            [{"text": "one module and a README; the sequence had 40000 lines."}],
        ],
    ],
}


def has_user_text(content: dict) -> bool:
    if content.get("role") != "user":
        return False
    return any("text" in p and "functionResponse" not in p for p in content.get("parts", []))


def step_of(contents: list) -> int:
    """Number of model turns after the last user message that carries text."""
    last_user = -1
    for i, c in enumerate(contents):
        if has_user_text(c):
            last_user = i
    return sum(1 for c in contents[last_user + 1 :] if c.get("role") == "model")


def value_for_schema(schema: dict, name: str = "") -> object:
    """A plausible JSON value for a (subset of) JSON schema."""
    return loopback_server.value_for_schema(schema, name, SCHEMA_STRINGS, ("user", "flash", "FLASH", "SIMPLE", "simple"))


SCHEMA_STRINGS = {
    "next_speaker": "user",
    "model_choice": "flash",
    "reasoning": "Fake backend: the turn is complete.",
}


class State(Activity):
    def __init__(self, script: str, log, event_delay: float = 0.05) -> None:
        self.script = SCRIPTS[script]
        super().__init__(log)
        self.event_delay = event_delay


def make_handler(state: State):
    class Handler(JsonHandler):
        server_version = "fake-gemini/1"
        content_type = "application/json; charset=UTF-8"

        def _log_req(self, body: dict, note: str = "") -> None:
            if not state.log:
                return
            contents = body.get("contents", [])
            summary = {
                "method": self.command,
                "path": self.path,
                "contents": len(contents) if isinstance(contents, list) else None,
                "step": step_of(contents) if isinstance(contents, list) else None,
                "gen": body.get("generationConfig"),
                "note": note,
            }
            state.log.write(json.dumps(summary)[:2000] + "\n")
            state.log.flush()

        def do_GET(self):
            state.touch()
            self._log_req({})
            if "/models" in self.path:
                self._json({"models": [{"name": "models/" + MODEL_VERSION}]})
            else:
                self._json({"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}, 404)

        def do_POST(self):
            state.touch()
            body = self._body()
            path = self.path.split("?", 1)[0]
            if path.endswith(":streamGenerateContent"):
                self._log_req(body, "stream")
                self._stream(body)
            elif path.endswith(":generateContent"):
                self._log_req(body, "generate")
                self._generate(body)
            elif path.endswith(":countTokens"):
                self._log_req(body, "count")
                size = len(json.dumps(body.get("contents", [])))
                self._json({"totalTokens": max(1, size // 4)})
            elif path.endswith(":embedContent") or path.endswith(":batchEmbedContents"):
                self._log_req(body, "embed")
                self._json({"embedding": {"values": [0.0] * 8}})
            else:
                self._log_req(body, "unknown")
                self._json({"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}, 404)
            state.touch()

        def _generate(self, body: dict) -> None:
            gen = body.get("generationConfig") or {}
            schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
            if schema or gen.get("responseMimeType") == "application/json":
                text = json.dumps(value_for_schema(schema or {"type": "object"}))
            else:
                text = "Fake backend summary."
            self._json(
                {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP",
                            "index": 0,
                        }
                    ],
                    "usageMetadata": usage(),
                    "modelVersion": model_of(self.path),
                }
            )

        def _stream(self, body: dict) -> None:
            contents = body.get("contents", [])
            step = step_of(contents if isinstance(contents, list) else [])
            turns = state.script
            events = turns[min(step, len(turns) - 1)]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i, parts in enumerate(events):
                cand = {"content": {"role": "model", "parts": parts}, "index": 0}
                chunk = {"candidates": [cand], "modelVersion": model_of(self.path)}
                if i == len(events) - 1:
                    cand["finishReason"] = "STOP"
                    chunk["usageMetadata"] = usage(1000 + 100 * step, 40)
                data = ("data: " + json.dumps(chunk) + "\r\n\r\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                time.sleep(state.event_delay)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    Handler.state = state
    return Handler


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", choices=sorted(SCRIPTS), default="acp")
    add_server_args(ap, event_delay=0.05)
    args = ap.parse_args()
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    state = State(args.script, log, args.event_delay)
    return serve(make_handler(state), state, args)


if __name__ == "__main__":
    sys.exit(main())
