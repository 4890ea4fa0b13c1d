#!/usr/bin/env python3
"""Checks the crate's module graph against the layer table of ARCHITECTURE.md.

Reads every `crate::<module>` path in src/ (imports and paths in code,
comments and doc text skipped), groups them by top-level module, and fails
when a module uses one the table does not allow, or when the submodules of
any module import each other in a cycle (of any length: `a` uses `b` uses
`a`, or longer). Run from the crate root; CI runs it.
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
    "error": {"framing", "acp", "stream_json", "chunk", "turn", "remote", "error_code"},
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

def module_path(path):
    """`src/a/b/c.rs` is `a::b::c`; `src/a/b/mod.rs` is `a::b`."""
    parts = os.path.relpath(path, "src").removesuffix(".rs").split(os.sep)
    return parts[:-1] if parts[-1] == "mod" else parts

def sibling_edges(path, line):
    """Edges between the children of one module that a line of `path` makes:
    (parent, child of `path`, sibling it uses)."""
    here = module_path(path)
    found = []
    for m in re.finditer(r"\b((?:super::)+)(\{[^}]*\}|[a-z_]+)", line):
        up = m.group(1).count("super::")
        parent = here[:-up] if up <= len(here) else []
        if not parent or len(here) <= len(parent):
            continue
        items = m.group(2).strip("{}").split(",")
        names = [n.group(1) for n in (re.match(r"\s*([a-z_]+)", i) for i in items) if n]
        found += [(tuple(parent), here[len(parent)], n) for n in names]
    for m in re.finditer(r"\bcrate::([a-z_]+)::([a-z_]+)", line):
        top, name = m.group(1), m.group(2)
        if len(here) > 1 and here[0] == top:
            found.append(((top,), here[1], name))
    return found

def cycles(edges):
    """Every cycle among the nodes of `edges` ({node: set of nodes}), each
    once, as a list starting at its smallest node."""
    out = set()
    def walk(start, node, path, seen):
        for nxt in edges.get(node, ()):
            if nxt == start:
                out.add(tuple(path))
            elif nxt not in seen and nxt > start:
                walk(start, nxt, path + [nxt], seen | {nxt})
    for start in sorted(edges):
        walk(start, start, [start], {start})
    return sorted(out)

def main():
    uses = {}
    inner = {}  # parent module -> {child: set of siblings it uses}
    for root, _, files in os.walk("src"):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            mod = module_of(path)
            text = open(path, encoding="utf-8").read()
            # Unit tests may reach anywhere.
            text = text.split("#[cfg(test)]\nmod tests")[0]
            test_file = f == "tests.rs"
            for line in code_lines(text):
                for m in re.findall(r"\bcrate::([A-Za-z_]+)", line):
                    target = ROOT_ITEMS.get(m, m)
                    if target != mod:
                        uses.setdefault(mod, set()).add(target)
                if test_file:
                    continue
                for parent, child, sibling in sibling_edges(path, line):
                    if sibling != child:
                        inner.setdefault(parent, {}).setdefault(child, set()).add(sibling)
    bad = []
    for mod, targets in sorted(uses.items()):
        allowed = ALLOWED.get(mod, set())
        if allowed is None:
            continue
        for t in sorted(targets - allowed):
            bad.append(f"{mod} uses {t}, which its layer may not import")
    for parent, edges in sorted(inner.items()):
        for cycle in cycles(edges):
            name = "::".join(parent)
            bad.append(f"import cycle in {name}: " + " -> ".join(cycle + (cycle[0],)))
    for line in bad:
        print("check_layers:", line)
    if bad:
        return 1
    print(f"check_layers: {len(uses)} modules, no import the layer table forbids, "
          f"no import cycle inside {len(inner)} modules")
    return 0

if __name__ == "__main__":
    sys.exit(main())
