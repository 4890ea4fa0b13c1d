#!/usr/bin/env python3
"""Record real sessions with real peers as test fixtures for acp-codec.

Two modes, stdlib only (asyncio, no third-party packages):

``acp``: a small ACP client. It spawns an agent command in its own process
group, records the exact bytes both ways, and drives ``initialize``,
``session/new`` (cwd = a scratch project), ``session/prompt``, answers
``session/request_permission`` with an allow option, serves
``fs/read_text_file`` / ``fs/write_text_file`` inside the scratch project, then
(when the agent advertises ``loadSession``) ``session/load`` of the same
session to record the history replay, and shuts the agent down: close stdin,
wait, then SIGTERM / SIGKILL its process group. Every wait is bounded.

Writes into ``--out``:

* ``agent.ndjson``: the agent's stdout, byte for byte as received;
* ``client.ndjson``: the bytes written to the agent's stdin;
* ``transcript.ndjson``: ``{"from":"client"|"agent","msg":...}`` in the order
  sent / received (a stdout line that is not JSON is kept as
  ``{"from":"agent","raw":"<text>"}``);
* ``agent.stderr.txt``: the agent's stderr (diagnostics, not protocol);
* ``meta.json``: peer, version, command line, date, what the session covers,
  and facts about the stdout bytes (line count, longest line, CRLF, blanks).

``headless``: runs ``gemini -p ... -o stream-json`` style commands and stores
their raw stdout as ``<out>.ndjson`` plus ``<out>.meta.json``.

With ``--fake-gemini SCRIPT`` a fake model backend
(``scripts/peers/fake_gemini.py``) is started first on a free loopback port;
``{PORT}`` in ``--env`` values is replaced by that port. ``--fake-backend
openai`` starts ``scripts/peers/fake_openai.py`` (an OpenAI chat-completions
backend, for Qwen Code) with that script instead; ``--home-file`` writes
files such as ``.qwen/settings.json`` into the scratch HOME.

The scratch directory (default /tmp/acp-codec-fixture) is recreated for each
recording so that paths in the fixtures stay the same from run to run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKES = {
    "gemini": Path(__file__).resolve().parent / "fake_gemini.py",
    "openai": Path(__file__).resolve().parent / "fake_openai.py",
}
LINE_LIMIT = 64 * 1024 * 1024  # our own StreamReader limit (asyncio's default is 64 KiB)
READ_CHUNK = 1 << 16

PROJECT_FILES = {
    "README.md": "# Demo project\n\nA tiny project used to record acp-codec fixtures. Héllo ✓\n",
    "VERSION": "1.2.3\n",
    "src/app.py": 'def greet():\n    return "hello"\n\n\ndef add(a, b):\n    return a + b\n',
    "src/util.py": "def shout(text):\n    return text.upper() + '!'\n",
}

# Settings for Gemini CLI in the scratch HOME: no folder-trust prompt, no
# telemetry or usage statistics, no update checks; --gemini-auth adds the auth
# type (gemini-api-key against the fake backend).
GEMINI_SETTINGS = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "security": {"folderTrust": {"enabled": False}},
}


def log(*a: object) -> None:
    print("record:", *a, file=sys.stderr, flush=True)


def rel(p: str) -> str:
    """A path relative to the repository root when it is inside it."""
    try:
        return str(Path(os.path.abspath(p)).relative_to(ROOT))
    except ValueError:
        return p


def make_scratch(scratch: Path, gemini_settings: bool, gemini_auth: str | None) -> tuple[Path, Path]:
    if scratch.exists():
        shutil.rmtree(scratch)
    project = scratch / "project"
    home = scratch / "home"
    for name, text in {**PROJECT_FILES, "data/log.txt": big_log()}.items():
        f = project / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    home.mkdir(parents=True)
    if gemini_settings:
        (home / ".gemini").mkdir()
        settings = json.loads(json.dumps(GEMINI_SETTINGS))
        if gemini_auth:
            settings["security"]["auth"] = {"selectedType": gemini_auth}
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    return project, home


def write_home_files(home: Path, items: list[str]) -> None:
    """--home-file REL=TEXT: write TEXT into HOME/REL."""
    for item in items:
        name, _, text = item.partition("=")
        f = home / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text + ("" if text.endswith("\n") else "\n"), encoding="utf-8")


def start_fake(script: str, idle: float, log_path: Path | None,
               backend: str = "gemini") -> tuple[subprocess.Popen, int]:
    cmd = [sys.executable, str(FAKES[backend]), "--script", script, "--idle", str(idle)]
    if log_path:
        cmd += ["--log", str(log_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.strip().isdigit():
        proc.kill()
        raise SystemExit(f"{FAKES[backend].name} did not print a port: {line!r}")
    return proc, int(line)


def build_env(home: Path, extra: list[str], port: int | None) -> tuple[dict, dict]:
    """The agent's environment: a minimal base plus --env KEY=VALUE items."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    shown = {}
    for item in extra:
        k, _, v = item.partition("=")
        shown[k] = v
        if port is not None:
            v = v.replace("{PORT}", str(port))
        env[k] = v
    return env, shown


def stdout_facts(data: bytes) -> dict:
    lines = data.split(b"\n")
    trailing_newline = data.endswith(b"\n")
    if trailing_newline:
        lines = lines[:-1]
    non_json = []
    for i, line in enumerate(lines):
        try:
            json.loads(line)
        except ValueError:
            non_json.append({"line": i + 1, "text": line[:200].decode("utf-8", "replace")})
    return {
        "bytes": len(data),
        "lines": len(lines),
        "longest_line_bytes": max((len(x) for x in lines), default=0),
        "ends_with_newline": trailing_newline,
        "crlf_lines": sum(1 for x in lines if x.endswith(b"\r")),
        "blank_lines": sum(1 for x in lines if not x.strip()),
        "non_json_lines": non_json,
    }


class MethodNotFound(Exception):
    pass


def big_log() -> str:
    """About 68 KB of text that needs JSON escaping: tabs, quotes, backslashes,
    non-ASCII and astral-plane characters (used to make lines > 64 KiB)."""
    return "".join(f'{i:05d}\tentry "{i}" at C:\\logs\\app – café ✓ 🦀\n' for i in range(1, 1301))


class Client:
    def __init__(self, proc: asyncio.subprocess.Process, project: Path, permission: str) -> None:
        self.proc = proc
        self.project = project.resolve()
        self.permission = permission
        self.agent_bytes = bytearray()
        self.client_bytes = bytearray()
        self.transcript: list[dict] = []
        self.pending: dict[object, asyncio.Future] = {}
        self.next_id = 0
        self.last_rx = time.monotonic()
        self.methods_from_agent: dict[str, int] = {}
        self.updates: dict[str, int] = {}
        self.eof = asyncio.Event()

    # -- sending ------------------------------------------------------------
    async def send(self, msg: dict) -> None:
        data = (json.dumps(msg, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        self.client_bytes += data
        self.transcript.append({"from": "client", "msg": msg})
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def request(self, method: str, params: dict, timeout: float) -> dict:
        rid = self.next_id
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        log(f"-> {method} (id {rid})")
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        eof = asyncio.ensure_future(self.eof.wait())
        done, _ = await asyncio.wait({fut, eof}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        eof.cancel()
        if fut not in done:
            self.pending.pop(rid, None)
            raise TimeoutError(f"{method}: no response within {timeout}s (or agent exited)")
        resp = fut.result()
        log(f"<- {method} (id {rid}): {'error' if 'error' in resp else 'ok'}")
        return resp

    # -- receiving ----------------------------------------------------------
    async def read_loop(self) -> None:
        assert self.proc.stdout is not None
        buf = bytearray()
        scan = 0  # bytes of buf already known to hold no newline: linear time
        while True:
            chunk = await self.proc.stdout.read(READ_CHUNK)
            if not chunk:
                break
            self.agent_bytes += chunk
            self.last_rx = time.monotonic()
            buf += chunk
            while True:
                nl = buf.find(b"\n", scan)
                if nl < 0:
                    scan = len(buf)
                    break
                line = bytes(buf[:nl])
                del buf[: nl + 1]
                scan = 0
                await self.on_line(line)
        if buf:
            await self.on_line(bytes(buf))
        self.eof.set()

    async def on_line(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            self.transcript.append({"from": "agent", "raw": line.decode("utf-8", "replace")})
            log(f"non-JSON stdout line: {line[:120]!r}")
            return
        self.transcript.append({"from": "agent", "msg": msg})
        if not isinstance(msg, dict):
            return
        method = msg.get("method")
        if method is None:
            fut = self.pending.pop(msg.get("id"), None)
            if fut and not fut.done():
                fut.set_result(msg)
            return
        self.methods_from_agent[method] = self.methods_from_agent.get(method, 0) + 1
        if method == "session/update":
            kind = (msg.get("params") or {}).get("update", {}).get("sessionUpdate", "?")
            self.updates[kind] = self.updates.get(kind, 0) + 1
        if "id" in msg:
            asyncio.ensure_future(self.answer(msg))

    async def answer(self, msg: dict) -> None:
        method, rid, params = msg["method"], msg["id"], msg.get("params") or {}
        log(f"<- agent request {method} (id {rid})")
        try:
            result = self.handle(method, params)
            reply = {"jsonrpc": "2.0", "id": rid, "result": result}
        except MethodNotFound as e:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": str(e)}}
        except FileNotFoundError as e:
            # ACP's RESOURCE_NOT_FOUND; Gemini CLI maps "Resource not found" to ENOENT.
            reply = {"jsonrpc": "2.0", "id": rid,
                     "error": {"code": -32002, "message": f"Resource not found: {e.filename}"}}
        except (OSError, ValueError) as e:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": str(e)}}
        await self.send(reply)

    def confined(self, path: str) -> Path:
        p = Path(path)
        if not p.is_absolute():
            raise ValueError(f"path must be absolute: {path}")
        real = p.resolve()
        if real != self.project and self.project not in real.parents:
            raise ValueError(f"path outside the session directory: {path}")
        return real

    def handle(self, method: str, params: dict) -> dict:
        if method == "session/request_permission":
            options = params.get("options") or []
            kinds = [self.permission, "allow_once", "allow_always"]
            for kind in kinds:
                for opt in options:
                    if opt.get("kind") == kind:
                        return {"outcome": {"outcome": "selected", "optionId": opt["optionId"]}}
            return {"outcome": {"outcome": "cancelled"}}
        if method == "fs/read_text_file":
            text = self.confined(params["path"]).read_text(encoding="utf-8")
            line, limit = params.get("line"), params.get("limit")
            if line is not None or limit is not None:
                lines = text.splitlines(keepends=True)
                start = max(0, (line or 1) - 1)
                end = len(lines) if limit is None else start + limit
                text = "".join(lines[start:end])
            return {"content": text}
        if method == "fs/write_text_file":
            target = self.confined(params["path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(params["content"], encoding="utf-8")
            return {}
        raise MethodNotFound(f"Method not found: {method}")

    async def quiet(self, seconds: float, cap: float) -> None:
        """Wait until nothing arrived for `seconds` (at most `cap` seconds)."""
        end = time.monotonic() + cap
        while time.monotonic() < end and not self.eof.is_set():
            if time.monotonic() - self.last_rx >= seconds:
                return
            await asyncio.sleep(0.05)


async def wait_for_next_minute(minute: str | None) -> None:
    """Gemini CLI 0.61 names a chat file session-<UTC minute>-<id8>.jsonl and,
    on session/load, first starts a fresh recording for the same id: in the
    same minute that appends to the session's own file and wipes its history
    ("No previous sessions found for this project."). Loading in a later minute
    avoids that."""
    if minute is None:
        return
    while time.strftime("%Y-%m-%dT%H:%M", time.gmtime()) == minute:
        await asyncio.sleep(0.5)
    await asyncio.sleep(1.0)


async def drive(client: Client, args: argparse.Namespace, project: Path, summary: dict) -> None:
    """initialize, session/new, set_mode, set_model, session/prompt, session/load
    (as --steps says)."""
    steps = args.steps.split(",")
    init = await client.request("initialize", {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": False},
        "clientInfo": {"name": "acp-codec-recorder", "title": "acp-codec fixture recorder", "version": "0.1.0"},
    }, args.timeout)
    summary["steps"]["initialize"] = init.get("error") or "ok"
    caps = (init.get("result") or {}).get("agentCapabilities") or {}
    session_id = args.session_id
    if "new" in steps:
        args.session_minute = time.strftime("%Y-%m-%dT%H:%M", time.gmtime())
        new = await client.request("session/new", {"cwd": str(project), "mcpServers": []}, args.timeout)
        summary["steps"]["session/new"] = new.get("error") or "ok"
        session_id = (new.get("result") or {}).get("sessionId")
        new_result = new.get("result") or {}
        # Re-select the current mode / model (no change in behaviour, but the
        # requests and their answers are recorded).
        modes, models = new_result.get("modes") or {}, new_result.get("models") or {}
        if session_id and "set_mode" in steps and modes.get("currentModeId"):
            resp = await client.request("session/set_mode", {"sessionId": session_id,
                                                             "modeId": modes["currentModeId"]}, args.timeout)
            summary["steps"]["session/set_mode"] = resp.get("error") or "ok"
        if session_id and "set_model" in steps and models.get("currentModelId"):
            resp = await client.request("session/set_model", {"sessionId": session_id,
                                                              "modelId": models["currentModelId"]}, args.timeout)
            summary["steps"]["session/set_model"] = resp.get("error") or "ok"
    summary["session_id"] = session_id
    if session_id and "prompt" in steps:
        prompt = [{"type": "text", "text": args.prompt}]
        if args.resource_link:
            readme = project / "README.md"
            prompt.append({"type": "resource_link", "uri": readme.as_uri(), "name": "README.md",
                           "mimeType": "text/markdown"})
        resp = await client.request("session/prompt", {"sessionId": session_id, "prompt": prompt}, args.timeout)
        summary["steps"]["session/prompt"] = resp.get("error") or (resp.get("result") or {}).get("stopReason")
        await client.quiet(1.0, 5.0)
    if session_id and "load" in steps:
        if caps.get("loadSession"):
            if args.load_next_minute:
                await wait_for_next_minute(args.session_minute)
            resp = await client.request("session/load", {"sessionId": session_id, "cwd": str(project),
                                                         "mcpServers": []}, args.timeout)
            summary["steps"]["session/load"] = resp.get("error") or "ok"
            await client.quiet(1.0, 5.0)
        else:
            summary["steps"]["session/load"] = "skipped: agent has no loadSession capability"


async def run_acp(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.load_from:
        prev = json.loads((Path(args.load_from) / "meta.json").read_text(encoding="utf-8"))
        args.session_id = prev["result"]["session_id"]
        project, home = Path(args.scratch) / "project", Path(args.scratch) / "home"
        if not project.is_dir():
            raise SystemExit(f"--load-from needs the scratch dir left by that recording: {project}")
    else:
        project, home = make_scratch(Path(args.scratch), args.gemini_settings, args.gemini_auth)
        write_home_files(home, args.home_file)
    fake = port = None
    if args.fake_gemini:
        fake, port = start_fake(args.fake_gemini, args.timeout + 30, Path(args.fake_log) if args.fake_log else None,
                                args.fake_backend)
        log(f"fake {args.fake_backend} backend on 127.0.0.1:{port}")
    env, shown_env = build_env(home, args.env, port)
    stderr_path = out / "agent.stderr.txt"
    stderr_f = open(stderr_path, "wb")
    started = dt.datetime.now(dt.timezone.utc)
    proc = await asyncio.create_subprocess_exec(
        *args.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=stderr_f, cwd=project, env=env, limit=LINE_LIMIT, start_new_session=True,
    )
    client = Client(proc, project, args.permission)
    reader = asyncio.ensure_future(client.read_loop())
    summary: dict = {"steps": {}}
    args.session_minute = None
    failure = None
    try:
        await drive(client, args, project, summary)
    except (TimeoutError, OSError, KeyError) as e:
        failure = f"{type(e).__name__}: {e}"
        log("FAILED:", failure)
    finally:
        # Shut down: close stdin, wait for exit, then the process group.
        exit_how = "stdin closed"
        if proc.stdin and not proc.stdin.is_closing():
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), args.exit_timeout)
        except asyncio.TimeoutError:
            exit_how = "SIGTERM to process group"
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(proc.wait(), 3)
            except asyncio.TimeoutError:
                exit_how = "SIGKILL to process group"
                os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        try:  # leftovers (grandchildren) in the group
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            await asyncio.wait_for(reader, 5)
        except asyncio.TimeoutError:
            reader.cancel()
        stderr_f.close()
        if fake:
            fake.terminate()
            fake.wait(5)

    (out / "agent.ndjson").write_bytes(bytes(client.agent_bytes))
    (out / "client.ndjson").write_bytes(bytes(client.client_bytes))
    with open(out / "transcript.ndjson", "w", encoding="utf-8") as f:
        for item in client.transcript:
            f.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")
    meta = {
        "name": out.name,
        "kind": "acp",
        "peer": {"name": args.peer_name, "package": args.peer_package, "version": args.peer_version},
        "command": [rel(c) for c in args.command],
        "env": shown_env,
        "fake_gemini_script": args.fake_gemini,
        "gemini_settings": args.gemini_settings,
        "gemini_auth": args.gemini_auth,
        **({"fake_backend": args.fake_backend} if args.fake_backend != "gemini" else {}),
        **({"home_files": args.home_file} if args.home_file else {}),
        "recorded_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "recorder": "scripts/peers/record.py acp",
        "scratch_project": str(project),
        "covers": args.covers,
        "loads_session_of": Path(args.load_from).name if args.load_from else None,
        "result": summary,
        "failure": failure,
        "agent_exit": {"code": proc.returncode, "how": exit_how},
        "methods_from_agent": dict(sorted(client.methods_from_agent.items())),
        "session_updates": dict(sorted(client.updates.items())),
        "agent_stdout": stdout_facts(bytes(client.agent_bytes)),
        "client_stdin_bytes": len(client.client_bytes),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {out}: {len(client.agent_bytes)} bytes from the agent, steps {summary['steps']}")
    unexpected = [k for k, v in summary["steps"].items()
                  if isinstance(v, dict) and k not in args.expect_error]
    unexpected += [k for k in args.expect_error if not isinstance(summary["steps"].get(k), dict)]
    if unexpected:
        log(f"FAILED: unexpected outcome of {unexpected} (see --expect-error)")
    return 1 if failure or unexpected else 0


class LineTap:
    """Splits a byte stream into lines (linear time) and records each one."""

    def __init__(self, who: str, transcript: list[dict]) -> None:
        self.who = who
        self.transcript = transcript
        self.buf = bytearray()
        self.scan = 0
        self.data = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.data += chunk
        self.buf += chunk
        while True:
            nl = self.buf.find(b"\n", self.scan)
            if nl < 0:
                self.scan = len(self.buf)
                return
            self.line(bytes(self.buf[:nl]))
            del self.buf[: nl + 1]
            self.scan = 0

    def close(self) -> None:
        if self.buf:
            self.line(bytes(self.buf))
            self.buf.clear()

    def line(self, line: bytes) -> None:
        try:
            self.transcript.append({"from": self.who, "msg": json.loads(line)})
        except ValueError:
            self.transcript.append({"from": self.who, "raw": line.decode("utf-8", "replace")})


def count_methods(transcript: list[dict], who: str) -> tuple[dict, dict]:
    methods: dict[str, int] = {}
    updates: dict[str, int] = {}
    for t in transcript:
        m = t.get("msg")
        if t["from"] != who or not isinstance(m, dict) or "method" not in m:
            continue
        methods[m["method"]] = methods.get(m["method"], 0) + 1
        if m["method"] == "session/update":
            kind = ((m.get("params") or {}).get("update") or {}).get("sessionUpdate", "?")
            updates[kind] = updates.get(kind, 0) + 1
    return dict(sorted(methods.items())), dict(sorted(updates.items()))


async def stop_group(proc: asyncio.subprocess.Process, grace: float) -> str:
    """Close stdin, wait `grace` seconds, then SIGTERM / SIGKILL the group."""
    how = "exited"
    if proc.stdin and not proc.stdin.is_closing():
        proc.stdin.close()
        how = "stdin closed"
    try:
        await asyncio.wait_for(proc.wait(), grace)
    except asyncio.TimeoutError:
        how = "SIGTERM to process group"
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 3)
        except asyncio.TimeoutError:
            how = "SIGKILL to process group"
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return how


async def run_proxy(args: argparse.Namespace) -> int:
    """Run a client command and an agent command wired to each other through
    us, recording the bytes both ways (the client is a real SDK client)."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    project, home = make_scratch(Path(args.scratch), args.gemini_settings, args.gemini_auth)
    fake = port = None
    if args.fake_gemini:
        fake, port = start_fake(args.fake_gemini, args.timeout + 30, Path(args.fake_log) if args.fake_log else None)
        log(f"fake gemini backend on 127.0.0.1:{port}")
    env, shown_env = build_env(home, args.env, port)
    client_env, shown_client_env = build_env(home, args.client_env, port)
    client_cmd = [os.path.abspath(c) if os.sep in c and Path(c).exists() else c
                  for c in shlex.split(args.client_cmd)]
    started = dt.datetime.now(dt.timezone.utc)
    agent_err = open(out / "agent.stderr.txt", "wb")
    client_err = open(out / "client.stderr.txt", "wb")
    agent = await asyncio.create_subprocess_exec(
        *args.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=agent_err, cwd=project, env=env, limit=LINE_LIMIT, start_new_session=True)
    client = await asyncio.create_subprocess_exec(
        *client_cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=client_err, cwd=project, env=client_env, limit=LINE_LIMIT, start_new_session=True)
    transcript: list[dict] = []
    taps = {"client": LineTap("client", transcript), "agent": LineTap("agent", transcript)}

    async def pump(src, dst, tap: LineTap) -> None:
        while True:
            chunk = await src.read(READ_CHUNK)
            if not chunk:
                break
            tap.feed(chunk)
            with contextlib.suppress(ConnectionError):
                dst.write(chunk)
                await dst.drain()
        tap.close()
        with contextlib.suppress(ConnectionError, OSError):
            dst.close()

    pumps = [asyncio.ensure_future(pump(client.stdout, agent.stdin, taps["client"])),
             asyncio.ensure_future(pump(agent.stdout, client.stdin, taps["agent"]))]
    failure = None
    try:
        await asyncio.wait_for(client.wait(), args.timeout)
    except asyncio.TimeoutError:
        failure = f"client did not finish within {args.timeout}s"
        log("FAILED:", failure)
    client_exit = await stop_group(client, 3)
    await asyncio.wait([pumps[0]], timeout=5)  # the client's last bytes reach the agent
    agent_exit = await stop_group(agent, args.exit_timeout)
    await asyncio.wait(pumps, timeout=5)
    for p in pumps:
        p.cancel()
    agent_err.close()
    client_err.close()
    if fake:
        fake.terminate()
        fake.wait(5)
    if client.returncode != 0 and failure is None:
        failure = f"client exited with {client.returncode}"
        log("FAILED:", failure)

    (out / "agent.ndjson").write_bytes(bytes(taps["agent"].data))
    (out / "client.ndjson").write_bytes(bytes(taps["client"].data))
    with open(out / "transcript.ndjson", "w", encoding="utf-8") as f:
        for item in transcript:
            f.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")
    methods_a, updates = count_methods(transcript, "agent")
    methods_c, _ = count_methods(transcript, "client")
    meta = {
        "name": out.name,
        "kind": "acp-proxy",
        "peer": {"name": args.peer_name, "package": args.peer_package, "version": args.peer_version},
        "client_peer": {"name": args.client_name, "package": args.client_package, "version": args.client_version},
        "command": [rel(c) for c in args.command],
        "client_command": [rel(c) for c in client_cmd],
        "env": shown_env,
        "client_env": shown_client_env,
        "fake_gemini_script": args.fake_gemini,
        "gemini_settings": args.gemini_settings,
        "gemini_auth": args.gemini_auth,
        "recorded_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "recorder": "scripts/peers/record.py proxy",
        "scratch_project": str(project),
        "covers": args.covers,
        "failure": failure,
        "agent_exit": {"code": agent.returncode, "how": agent_exit},
        "client_exit": {"code": client.returncode, "how": client_exit},
        "methods_from_client": methods_c,
        "methods_from_agent": methods_a,
        "session_updates": updates,
        "agent_stdout": stdout_facts(bytes(taps["agent"].data)),
        "client_stdout": stdout_facts(bytes(taps["client"].data)),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {out}: {len(taps['agent'].data)} bytes from the agent, {len(taps['client'].data)} from the client")
    return 1 if failure else 0


def run_headless(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    project, home = make_scratch(Path(args.scratch), args.gemini_settings, args.gemini_auth)
    fake = port = None
    if args.fake_gemini:
        fake, port = start_fake(args.fake_gemini, args.timeout + 30, Path(args.fake_log) if args.fake_log else None)
    env, shown_env = build_env(home, args.env, port)
    started = dt.datetime.now(dt.timezone.utc)
    proc = subprocess.Popen(args.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=project, env=env, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if fake:
            fake.terminate()
            fake.wait(5)
    Path(str(out) + ".ndjson").write_bytes(stdout)
    Path(str(out) + ".stderr.txt").write_bytes(stderr)
    events: dict[str, int] = {}
    biggest = 0
    for line in stdout.split(b"\n"):
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict):
            events[ev.get("type", "?")] = events.get(ev.get("type", "?"), 0) + 1
            if ev.get("type") == "tool_result":
                biggest = max(biggest, len((ev.get("output") or "").encode()))
    meta = {
        "name": out.name,
        "kind": "stream-json",
        "peer": {"name": args.peer_name, "package": args.peer_package, "version": args.peer_version},
        "command": [rel(c) for c in args.command],
        "env": shown_env,
        "fake_gemini_script": args.fake_gemini,
        "gemini_settings": args.gemini_settings,
        "gemini_auth": args.gemini_auth,
        "recorded_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "recorder": "scripts/peers/record.py headless",
        "scratch_project": str(project),
        "covers": args.covers,
        "exit_code": proc.returncode,
        "events": dict(sorted(events.items())),
        "largest_tool_result_output_bytes": biggest,
        "stdout": stdout_facts(stdout),
    }
    Path(str(out) + ".meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {out}.ndjson: {len(stdout)} bytes, exit {proc.returncode}, events {events}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Record ACP / stream-json sessions with real peers.",
        usage="%(prog)s {acp,headless,proxy} --out OUT --peer-name N --peer-version V [options] -- COMMAND...",
    )
    ap.add_argument("mode", choices=["acp", "headless", "proxy"])
    ap.add_argument("--client-cmd", help="proxy: the client command (one string, shell-split)")
    ap.add_argument("--client-env", action="append", default=[], help="proxy: KEY=VALUE for the client")
    ap.add_argument("--client-name", default="", help="proxy: the client peer's name")
    ap.add_argument("--client-package", default="")
    ap.add_argument("--client-version", default="")
    ap.add_argument("--out", required=True, help="acp: a directory; headless: a path without extension")
    ap.add_argument("--peer-name", required=True)
    ap.add_argument("--peer-package", default="")
    ap.add_argument("--peer-version", required=True)
    ap.add_argument("--covers", default="", help="what the session covers (goes into meta.json)")
    ap.add_argument("--scratch", default="/tmp/acp-codec-fixture")
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the agent ({PORT} = fake port)")
    ap.add_argument("--gemini-settings", action="store_true", help="write Gemini CLI settings into the scratch HOME")
    ap.add_argument("--gemini-auth", help="with --gemini-settings: security.auth.selectedType")
    ap.add_argument("--fake-gemini", help="start fake_gemini.py with this script first")
    ap.add_argument("--fake-backend", choices=sorted(FAKES), default="gemini",
                    help="acp: the fake --fake-gemini starts (openai: fake_openai.py)")
    ap.add_argument("--home-file", action="append", default=[], metavar="REL=TEXT",
                    help="acp: write TEXT into the scratch HOME at REL (e.g. .qwen/settings.json)")
    ap.add_argument("--fake-log", help="fake_gemini.py request log (debugging)")
    ap.add_argument("--steps", default="initialize,new,set_mode,set_model,prompt,load",
                    help="comma list of initialize,new,set_mode,set_model,prompt,load "
                    "(set_* re-select the current mode / model when session/new offers them)")
    ap.add_argument("--load-next-minute", action="store_true",
                    help="wait for the UTC minute to change before session/load (Gemini CLI 0.61 bug)")
    ap.add_argument("--expect-error", action="append", default=[], metavar="METHOD",
                    help="this step must answer with an error (others must succeed)")
    ap.add_argument("--session-id", help="session to prompt / load when 'new' is not a step")
    ap.add_argument("--load-from", help="a fixture dir recorded just before: reuse its scratch dir and session id")
    ap.add_argument("--prompt", default="Look at this project, make greet take a name, and write notes.")
    ap.add_argument("--resource-link", action="store_true", help="add a resource_link to README.md to the prompt")
    ap.add_argument("--permission", default="allow_once", help="preferred permission option kind")
    ap.add_argument("--timeout", type=float, default=120.0, help="per request (acp) or whole run (headless)")
    ap.add_argument("--exit-timeout", type=float, default=10.0, help="wait after closing stdin")
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("missing '-- COMMAND...' (the agent command)")
    cut = argv.index("--")
    args = ap.parse_args(argv[:cut])
    # Paths given relative to where we were started: make them absolute, the
    # agent runs in the scratch project.
    args.command = [os.path.abspath(c) if os.sep in c and Path(c).exists() else c
                    for c in argv[cut + 1 :]]
    if not args.command:
        ap.error("missing agent command after --")
    if args.mode == "acp":
        return asyncio.run(run_acp(args))
    if args.mode == "proxy":
        if not args.client_cmd:
            ap.error("proxy needs --client-cmd")
        return asyncio.run(run_proxy(args))
    return run_headless(args)


if __name__ == "__main__":
    sys.exit(main())
