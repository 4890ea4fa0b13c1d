#!/usr/bin/env python3
"""A small ACP agent built on the official Python SDK (PyPI ``agent-client-protocol``).

The Python SDK ships no runnable example agent, so this one exists to record
how the SDK itself frames and serializes messages (pydantic models, aliases,
``exclude_none``) and how it behaves as the agent side of a session. The turn
is scripted and deterministic apart from the session id:

* ``initialize``: ``loadSession`` true;
* ``session/new``: a uuid-like session id;
* ``session/prompt``: a thought, a plan, a read tool call that asks the client
  for README.md (``fs/read_text_file``), a shell-like tool call whose title uses
  the old Gemini form ``cmd [in DIR] (DESC)``, a permission request, an edit
  that writes NOTES.md through ``fs/write_text_file`` with a diff, a plan
  update, an agent message of about 100 KB (one line well over 64 KiB), and
  ``end_turn``;
* ``session/load``: replays the stored history as message chunks.

Run it after scripts/peers/install.sh (which puts the SDK in
target/peers/pylib): ``python3 scripts/peers/py_sdk_agent.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path
from typing import Any

# scripts/peers/install.sh installs the SDK into $PEERS_DIR/pylib
# (default target/peers/pylib).
_PYLIB = Path(os.environ.get("PEERS_DIR") or Path(__file__).resolve().parents[2] / "target" / "peers") / "pylib"
if _PYLIB.is_dir():
    sys.path.insert(0, str(_PYLIB))

import acp  # noqa: E402
from acp import (  # noqa: E402
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import AgentCapabilities, Implementation, PermissionOption, ToolCallLocation, ToolCallUpdate  # noqa: E402


def big_text() -> str:
    rows = (f"row {i:04d}: naïve café ✓ \"quoted\" \\ back\tslash 🦀\n" for i in range(1, 2001))
    return "Here is the full report:\n" + "".join(rows)


class ScriptedAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.history: dict[str, list[tuple[str, str]]] = {}
        self.cwd: dict[str, str] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities=None, client_info=None, **kw):
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
            agent_info=Implementation(name="py-sdk-scripted-agent", title="acp-codec fixture agent", version="0.1.0"),
        )

    async def new_session(self, cwd: str, mcp_servers=None, **kw):
        sid = "sess_" + uuid.uuid4().hex[:16]
        self.history[sid] = []
        self.cwd[sid] = cwd
        return NewSessionResponse(session_id=sid)

    async def load_session(self, cwd: str, session_id: str, mcp_servers=None, **kw):
        for role, text in self.history.get(session_id, []):
            update = update_user_message_text(text) if role == "user" else update_agent_message_text(text)
            await self.conn.session_update(session_id=session_id, update=update)
        return LoadSessionResponse()

    async def set_session_mode(self, session_id: str, mode_id: str, **kw):
        return None

    async def authenticate(self, method_id: str, **kw):
        return None

    async def cancel(self, session_id: str, **kw) -> None:
        return None

    async def say(self, sid: str, text: str) -> None:
        self.history[sid].append(("agent", text))
        await self.conn.session_update(session_id=sid, update=update_agent_message_text(text))

    async def prompt(self, session_id: str, prompt: list, **kw):
        sid = session_id
        cwd = self.cwd.get(sid, os.getcwd())
        user_text = " ".join(getattr(b, "text", "") for b in prompt if getattr(b, "type", "") == "text")
        self.history[sid].append(("user", user_text))
        up = self.conn.session_update
        await up(session_id=sid, update=update_agent_thought_text("Plan: read the README, list files, write notes."))
        entries = [
            plan_entry("Read README.md", priority="high", status="in_progress"),
            plan_entry("List the source files"),
            plan_entry("Write NOTES.md", priority="low"),
        ]
        await up(session_id=sid, update=update_plan(entries))
        await self.say(sid, "Let me read the README first.")

        readme = os.path.join(cwd, "README.md")
        await up(session_id=sid, update=start_tool_call(
            "call_read_1", f"Read {readme}", kind="read", status="in_progress",
            locations=[ToolCallLocation(path=readme)], raw_input={"path": readme}))
        got = await self.conn.read_text_file(session_id=sid, path=readme)
        await up(session_id=sid, update=update_tool_call(
            "call_read_1", status="completed", content=[tool_content(text_block(got.content))]))

        await up(session_id=sid, update=start_tool_call(
            "call_shell_2", "ls -la [in src] (List files (detailed))", kind="execute", status="pending",
            raw_input={"command": "ls -la", "dir_path": "src", "description": "List files (detailed)"}))
        await up(session_id=sid, update=update_tool_call(
            "call_shell_2", status="completed",
            content=[tool_content(text_block("app.py\nutil.py\n"))], raw_output={"exit_code": 0}))

        notes = os.path.join(cwd, "NOTES.md")
        new_text = "# Notes\n\nWritten by the Python SDK agent ✓\n"
        await up(session_id=sid, update=start_tool_call(
            "call_edit_3", f"Writing to {notes}", kind="edit", status="pending",
            locations=[ToolCallLocation(path=notes)], content=[tool_diff_content(notes, new_text)]))
        options = [
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="allow-always", name="Always allow", kind="allow_always"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        perm = await self.conn.request_permission(
            session_id=sid,
            tool_call=ToolCallUpdate(tool_call_id="call_edit_3", title=f"Writing to {notes}", kind="edit",
                                     status="pending"),
            options=options,
        )
        outcome = perm.outcome
        allowed = getattr(outcome, "outcome", "") == "selected" and getattr(outcome, "option_id", "") != "reject"
        if allowed:
            await self.conn.write_text_file(session_id=sid, path=notes, content=new_text)
            await up(session_id=sid, update=update_tool_call(
                "call_edit_3", status="completed", content=[tool_diff_content(notes, new_text)]))
        else:
            await up(session_id=sid, update=update_tool_call("call_edit_3", status="failed"))

        entries = [
            plan_entry("Read README.md", priority="high", status="completed"),
            plan_entry("List the source files", status="completed"),
            plan_entry("Write NOTES.md", priority="low", status="completed" if allowed else "pending"),
        ]
        await up(session_id=sid, update=update_plan(entries))
        await self.say(sid, big_text())
        await self.say(sid, "Done.")
        return PromptResponse(stop_reason="end_turn")


async def main() -> None:
    await acp.run_agent(ScriptedAgent())


if __name__ == "__main__":
    asyncio.run(main())
