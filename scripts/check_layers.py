#!/usr/bin/env python3
"""Checks the crate's module graph against the layer table of ARCHITECTURE.md.

Reads every `crate::<module>` path in src/ (imports and paths in code,
comments and doc text skipped), groups them by top-level module, and fails
when a module uses one the table does not allow, or when two modules of
`acp` import each other. Run from the crate root; CI runs it.
"""
import os
import re
import sys

# Which top-level modules each module may use (besides itself).
ALLOWED = {
    "limits": set(),
    "error_code": set(),
    "json": set(),
    "tally": set(),
    "title": set(),
    "framing": {"json", "limits", "error_code"},
    "stream_json": {"framing", "json", "error_code"},
    "chunk": {"stream_json", "json", "limits", "error_code", "framing", "tally"},
    "acp": {"framing", "json", "error_code", "limits"},
    "turn": {"acp", "title", "error_code", "tally"},
    "remote": {"acp", "framing", "json", "error_code", "tally"},
    "codec": {"acp", "framing", "limits", "error", "error_code"},
    "error": {"framing", "acp", "stream_json", "chunk", "turn", "error_code"},
    "fuzzing": {"acp", "chunk", "stream_json", "framing", "json", "limits", "error_code"},
    "lib": None,  # the crate root re-exports everything
}
# Paths through the crate root that name a module's item (`crate::ErrorCode`,
# `crate::Limits`, ...) count as that module.
ROOT_ITEMS = {
    "ErrorCode": "error_code", "Limits": "limits", "PeekedId": "framing",
    "LineSplitter": "framing", "encode_line": "framing", "encode_raw_line": "framing",
    "FrameError": "framing", "EncodeError": "framing", "Error": "error",
    "TurnView": "turn", "Title": "title", "ChunkError": "chunk", "MessageError": "acp",
    "Event": "stream_json", "Reassembler": "chunk", "ChunkEncoder": "chunk",
}

def code_lines(text):
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        yield re.sub(r'"(?:\\.|[^"\\])*"', '""', line)

def module_of(path):
    rel = os.path.relpath(path, "src")
    top = rel.split(os.sep)[0]
    return top[:-3] if top.endswith(".rs") else top

def main():
    uses = {}
    acp_edges = set()
    for root, _, files in os.walk("src"):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            mod = module_of(path)
            text = open(path, encoding="utf-8").read()
            # Unit tests may reach anywhere.
            text = text.split("#[cfg(test)]\nmod tests")[0]
            for line in code_lines(text):
                for m in re.findall(r"\bcrate::([A-Za-z_]+)", line):
                    target = ROOT_ITEMS.get(m, m)
                    if target != mod:
                        uses.setdefault(mod, set()).add(target)
                if mod == "acp" and root.startswith(os.path.join("src", "acp")):
                    here = os.path.relpath(path, os.path.join("src", "acp")).split(os.sep)[0].removesuffix(".rs")
                    for m in re.findall(r"\buse super::([a-z_]+)", line):
                        if m != here:
                            acp_edges.add((here, m))
    bad = []
    for mod, targets in sorted(uses.items()):
        allowed = ALLOWED.get(mod, set())
        if allowed is None:
            continue
        for t in sorted(targets - allowed):
            bad.append(f"{mod} uses {t}, which its layer may not import")
    for a, b in sorted(acp_edges):
        if (b, a) in acp_edges and a < b:
            bad.append(f"acp::{a} and acp::{b} import each other")
    for line in bad:
        print("check_layers:", line)
    if bad:
        return 1
    print(f"check_layers: {len(uses)} modules, no import the layer table forbids, no cycle in acp")
    return 0

if __name__ == "__main__":
    sys.exit(main())
