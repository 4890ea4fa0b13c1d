#!/usr/bin/env python3
"""Check recorded ACP fixtures against the ACP JSON schema.

For every message in tests/fixtures/sessions/*/transcript.ndjson: checks the
JSON-RPC envelope, validates params / result against the schema definition
for its method (requests and responses are paired by direction and id), and
lists the fields that the schema does not declare (``_meta`` excepted).
Also checks that agent.ndjson holds exactly the agent messages of the
transcript, line for line.

    python3 scripts/peers/check_fixtures.py [--schema ../shared/acp/schema.json] [DIR...]
    python3 scripts/peers/check_fixtures.py --compare tests/fixtures /tmp/fx

Needs the ``jsonschema`` package for validation (``pip install jsonschema``);
without it only the envelope, the line check and the undeclared fields are
reported. Exits non-zero on envelope or line-check errors; schema findings are
reported, not fatal (real peers send fields the schema lacks).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# method -> (params definition, result definition)
METHODS = {
    "initialize": ("InitializeRequest", "InitializeResponse"),
    "authenticate": ("AuthenticateRequest", "AuthenticateResponse"),
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/load": ("LoadSessionRequest", "LoadSessionResponse"),
    "session/prompt": ("PromptRequest", "PromptResponse"),
    "session/set_mode": ("SetSessionModeRequest", "SetSessionModeResponse"),
    "session/cancel": ("CancelNotification", None),
    # unstable in ACP v1: not in schema.json
    "session/set_model": (None, None),
    "session/update": ("SessionNotification", None),
    "session/request_permission": ("RequestPermissionRequest", "RequestPermissionResponse"),
    "fs/read_text_file": ("ReadTextFileRequest", "ReadTextFileResponse"),
    "fs/write_text_file": ("WriteTextFileRequest", "WriteTextFileResponse"),
}


class Schema:
    def __init__(self, path: Path) -> None:
        self.doc = json.loads(path.read_text(encoding="utf-8"))
        self.defs = self.doc.get("$defs", {})
        try:
            import jsonschema  # type: ignore

            self.jsonschema = jsonschema
        except ImportError:
            self.jsonschema = None

    def resolve(self, s: dict) -> dict:
        while isinstance(s, dict) and "$ref" in s:
            s = self.defs[s["$ref"].rsplit("/", 1)[-1]]
        return s

    def valid(self, value: object, s: dict) -> bool:
        if self.jsonschema is None:
            return True
        wrapped = dict(s)
        wrapped["$defs"] = self.defs
        return self.jsonschema.Draft202012Validator(wrapped).is_valid(value)

    def errors(self, value: object, name: str) -> list[str]:
        if self.jsonschema is None:
            return []
        s = {"$ref": f"#/$defs/{name}", "$defs": self.defs}
        v = self.jsonschema.Draft202012Validator(s)
        return [f"{'/'.join(map(str, e.absolute_path)) or '.'}: {e.message[:200]}" for e in v.iter_errors(value)]

    def properties(self, s: dict) -> tuple[dict, object, bool]:
        """Declared properties of an object schema, its allOf parts included."""
        s = self.resolve(s)
        props = dict(s.get("properties", {}))
        extra = s.get("additionalProperties")
        typed = "properties" in s or s.get("type") == "object"
        for part in s.get("allOf", []):
            p, e, t = self.properties(part)
            props.update(p)
            extra = extra if extra is not None else e
            typed = typed or t
        return props, extra, typed

    def undeclared(self, value: object, s: dict, path: str, out: set[str]) -> None:
        s = self.resolve(s)
        if not isinstance(s, dict):
            return
        if "properties" not in s and len(s.get("allOf", [])) == 1:
            # {"description": ..., "allOf": [{"$ref": X}]}: just X
            self.undeclared(value, s["allOf"][0], path, out)
            return
        for key in ("anyOf", "oneOf"):
            if key in s:
                branches = [self.resolve(b) for b in s[key]]
                good = [b for b in branches if self.valid(value, b)]
                for b in good[:1] or branches[:0]:
                    self.undeclared(value, b, path, out)
                if not good:
                    out.add(f"{path} (matches no branch)")
        if isinstance(value, dict):
            props, extra, typed = self.properties(s)
            if props or typed:
                for k, v in value.items():
                    if k == "_meta":
                        continue
                    if k in props:
                        self.undeclared(v, props[k], f"{path}.{k}", out)
                    elif isinstance(extra, dict):
                        self.undeclared(v, extra, f"{path}.{k}", out)
                    elif props:
                        out.add(f"{path}.{k}")
        if isinstance(value, list) and "items" in s:
            for item in value:
                self.undeclared(item, s["items"], f"{path}[]", out)


def check_dir(d: Path, schema: Schema) -> tuple[int, list[str]]:
    fatal = 0
    notes: list[str] = []
    # split on "\n" only: str.splitlines() would also split on U+2028 etc.
    text = (d / "transcript.ndjson").read_text(encoding="utf-8")
    transcript = [json.loads(x) for x in text.split("\n") if x]
    agent_lines = (d / "agent.ndjson").read_bytes().split(b"\n")
    if agent_lines and agent_lines[-1] == b"":
        agent_lines.pop()
    agent_msgs = [t for t in transcript if t["from"] == "agent"]
    if len(agent_lines) != len(agent_msgs):
        fatal += 1
        notes.append(f"agent.ndjson has {len(agent_lines)} lines, transcript {len(agent_msgs)} agent items")
    for raw, t in zip(agent_lines, agent_msgs):
        if "msg" in t and json.loads(raw) != t["msg"]:
            fatal += 1
            notes.append("agent.ndjson and transcript differ")
            break
    pending: dict[tuple[str, object], str] = {}
    undeclared: dict[str, set[str]] = {}
    invalid: dict[str, list[str]] = {}
    for t in transcript:
        m = t.get("msg")
        if m is None:
            notes.append(f"non-JSON line from {t['from']}: {t.get('raw', '')[:80]!r}")
            continue
        if not isinstance(m, dict) or m.get("jsonrpc") != "2.0":
            fatal += 1
            notes.append(f"bad envelope: {json.dumps(m)[:120]}")
            continue
        if "method" in m:
            method = m["method"]
            if "id" in m:
                pending[(t["from"], m["id"])] = method
            kind, value = f"{method} params", m.get("params")
            name = METHODS.get(method, (None, None))[0]
        else:
            requester = "agent" if t["from"] == "client" else "client"
            method = pending.pop((requester, m.get("id")), None)
            if method is None:
                fatal += 1
                notes.append(f"response to unknown id {m.get('id')!r} from {t['from']}")
                continue
            if "error" in m:
                kind, value, name = f"{method} error", m["error"], "Error"
            else:
                kind, value = f"{method} result", m.get("result")
                name = METHODS.get(method, (None, None))[1]
        if name is None:
            notes.append(f"no schema definition known for {kind}")
            continue
        errs = schema.errors(value, name)
        if errs:
            invalid.setdefault(kind, []).extend(errs)
        schema.undeclared(value, {"$ref": f"#/$defs/{name}"}, kind, undeclared.setdefault(kind, set()))
    for kind, errs in sorted(invalid.items()):
        for e in sorted(set(errs)):
            notes.append(f"schema violation in {kind}: {e}")
    for kind, fields in sorted(undeclared.items()):
        for f in sorted(fields):
            notes.append(f"field not in schema: {f}")
    if pending:
        notes.append(f"requests never answered: {sorted(map(str, pending))}")
    return fatal, notes


def shape_acp(d: Path) -> list[str]:
    """The session as tokens: direction, method or response, update kind, status."""
    out = []
    text = (d / "transcript.ndjson").read_text(encoding="utf-8")
    for line in text.split("\n"):
        if not line:
            continue
        t = json.loads(line)
        m = t.get("msg")
        if not isinstance(m, dict):
            out.append(f"{t['from']} raw")
            continue
        if "method" in m:
            tok = f"{t['from']} {m['method']}"
            u = (m.get("params") or {}).get("update") or {}
            if u:
                tok += f" {u.get('sessionUpdate')} {u.get('status', '')}".rstrip()
        else:
            tok = f"{t['from']} {'error ' + str(m['error'].get('code')) if 'error' in m else 'result'}"
        out.append(tok)
    return out


def shape_stream(f: Path) -> list[str]:
    out = []
    for line in f.read_bytes().split(b"\n"):
        if not line:
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            out.append("raw")
            continue
        out.append(" ".join(str(ev.get(k, "")) for k in ("type", "role", "tool_name", "status")).rstrip())
    return out


def compare(a: Path, b: Path) -> int:
    """Compare the shapes of two fixture trees (e.g. committed vs re-recorded)."""
    import difflib

    differ = 0
    pairs = []
    for d in sorted((a / "sessions").iterdir()):
        pairs.append((d.name, shape_acp(d), shape_acp(b / "sessions" / d.name)
                      if (b / "sessions" / d.name).exists() else ["<missing>"]))
    for f in sorted((a / "stream_json").glob("*.ndjson")):
        other = b / "stream_json" / f.name
        pairs.append((f.name, shape_stream(f), shape_stream(other) if other.exists() else ["<missing>"]))
    for name, x, y in pairs:
        if x == y:
            print(f"== {name}: same shape ({len(x)} messages)")
            continue
        cx, cy = Counter(x), Counter(y)
        if cx == cy:
            # Same messages, other order: races between the two directions
            # (e.g. Gemini's available_commands_update vs the next request).
            print(f"== {name}: same messages, order differs (informational)")
        else:
            differ += 1
            print(f"== {name}: shape differs")
            for tok in sorted(set(cx) | set(cy)):
                if cx[tok] != cy[tok]:
                    print(f"  {tok!r}: {cx[tok]} vs {cy[tok]}")
        for line in difflib.unified_diff(x, y, str(a), str(b), lineterm="", n=1):
            print("  " + line)
    return differ


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schema", default=str(ROOT.parent / "shared" / "acp" / "schema.json"))
    ap.add_argument("--compare", nargs=2, metavar=("TREE_A", "TREE_B"),
                    help="compare the message shapes of two fixture trees instead (exit 1 if they differ)")
    ap.add_argument("dirs", nargs="*")
    args = ap.parse_args()
    if args.compare:
        return 1 if compare(Path(args.compare[0]), Path(args.compare[1])) else 0
    schema_path = Path(args.schema)
    if not schema_path.exists():
        schema_path = Path("/work/shared/acp/schema.json")
    schema = Schema(schema_path)
    if schema.jsonschema is None:
        print("note: jsonschema not installed; no validation, only undeclared fields", file=sys.stderr)
    dirs = [Path(d) for d in args.dirs] or sorted((ROOT.parent / "tests/fixtures/sessions").iterdir())
    total = 0
    for d in dirs:
        fatal, notes = check_dir(d, schema)
        total += fatal
        print(f"== {d.name} ({schema_path.name}): {'OK' if not fatal else f'{fatal} errors'}")
        for n in notes:
            print("  " + n)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
