#!/usr/bin/env python3
"""Checks the crate's module graph against the layer table of ARCHITECTURE.md.

Reads the table under "## Layers" in ARCHITECTURE.md (the one source of
what may import what: its "module" and "may import" columns; "every
layer" in "may import" allows anything, and a module whose row says "any
layer may import it" may be imported by every module), then every
`crate::<module>` path in src/ (imports and paths in code, comments and doc
text skipped), groups them by top-level module, and fails when a module
uses one the table does not allow, when a module of src/ has no row, or
when the submodules of any module import each other in a cycle (of any
length: `a` uses `b` uses `a`, or longer). The workspace's other crates
(acp-bridge's library, and its server binary's modules) have no layer
table but are held to the same rule: no import cycle among their modules,
at any level; and acp-bridge's `serve` (the team server binary's parts)
is imported by no other module of the library. Run from the workspace root; CI runs it.
"""
import os
import re
import sys


def layer_table(path="ARCHITECTURE.md"):
    """{module: set of modules it may import, or None for any} from the
    table under "## Layers", and the modules any layer may import."""
    lines = open(path, encoding="utf-8").read().splitlines()
    start = lines.index("## Layers")
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    header = [h.lower() for h in rows[0]]
    col_module, col_imports = header.index("module"), header.index("may import")
    allowed, universal = {}, set()
    for cells in rows[2:]:  # the header and its `|---|` line
        names = re.findall(r"`([a-z_]+)`", cells[col_module])
        if not names:
            sys.exit(f"check_layers: no module in the layer table row {cells}")
        module = names[0]
        imports = cells[col_imports]
        if imports.startswith("every layer"):
            allowed[module] = None
        else:
            allowed[module] = set(re.findall(r"`([a-z_]+)`", imports))
        if "any layer may import it" in " ".join(cells):
            universal.add(module)
    return allowed, universal


ALLOWED, UNIVERSAL = layer_table()
# The crate root re-exports everything; it is not a layer.
ALLOWED["lib"] = None
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

def module_of(path, root="src"):
    rel = os.path.relpath(path, root)
    top = rel.split(os.sep)[0]
    return top[:-3] if top.endswith(".rs") else top

def module_path(path, root="src"):
    """`src/a/b/c.rs` is `a::b::c`; `src/a/b/mod.rs` is `a::b`."""
    parts = os.path.relpath(path, root).removesuffix(".rs").split(os.sep)
    return parts[:-1] if parts[-1] == "mod" else parts

def sibling_edges(path, line, root="src"):
    """Edges between the children of one module that a line of `path` makes:
    (parent, child of `path`, sibling it uses)."""
    here = module_path(path, root)
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

def crate_graph(src, skip=(), root_items=None):
    """The module graph of the crate whose sources are under `src` (its
    root file's directory; directories in `skip` are other crates):
    ({top-level module: modules it uses}, {parent: {child: siblings}})."""
    uses = {}
    inner = {}  # parent module -> {child: set of siblings it uses}
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            mod = module_of(path, src)
            text = open(path, encoding="utf-8").read()
            # Unit tests may reach anywhere.
            text = text.split("#[cfg(test)]\nmod tests")[0]
            test_file = f == "tests.rs"
            for line in code_lines(text):
                for m in re.findall(r"\bcrate::([A-Za-z_]+)", line):
                    target = (root_items or {}).get(m, m)
                    if target != mod:
                        uses.setdefault(mod, set()).add(target)
                if test_file:
                    continue
                for parent, child, sibling in sibling_edges(path, line, src):
                    if sibling != child:
                        inner.setdefault(parent, {}).setdefault(child, set()).add(sibling)
    return uses, inner


# The other crates of the workspace: no layer table, but no import cycle
# among their modules either (the server binary's modules included).
OTHER_CRATES = [
    ("acp-bridge (library)", "acp-bridge/src", ("acp-bridge/src/bin",)),
    ("acp-bridge (the acp-bridge binary)", "acp-bridge/src/bin/acp-bridge", ()),
]
# Modules of those crates that only their binaries may import: acp-bridge's
# `serve` is the team server's parts that are not sockets, for the
# `acp-bridge` binary alone; no other module of the library names it.
BINARY_ONLY = {"acp-bridge (library)": ("serve",)}


def top_cycles(name, uses):
    """Cycles among a crate's top-level modules (`lib`/`main` excluded:
    the root declares every module)."""
    edges = {m: {t for t in ts if t in uses or t in {u for v in uses.values() for u in v}}
             for m, ts in uses.items() if m not in ("lib", "main")}
    return [f"import cycle in {name}: " + " -> ".join(c + (c[0],)) for c in cycles(edges)]


def main():
    uses, inner = crate_graph("src", root_items=ROOT_ITEMS)
    bad = top_cycles("acp-codec", uses)
    checked = []
    for name, src, skip in OTHER_CRATES:
        if not os.path.isdir(src):
            continue
        other_uses, other_inner = crate_graph(src, skip)
        bad += top_cycles(name, other_uses)
        for only in BINARY_ONLY.get(name, ()):
            for mod, targets in sorted(other_uses.items()):
                if only in targets and mod not in (only, "lib"):
                    bad.append(f"{name}: {mod} uses {only}, which only the binaries may import")
        for parent, edges in sorted(other_inner.items()):
            for cycle in cycles(edges):
                bad.append(f"import cycle in {name} {'::'.join(parent)}: " + " -> ".join(cycle + (cycle[0],)))
        checked.append(name)
    for mod in sorted(set(uses) - set(ALLOWED)):
        bad.append(f"{mod} has no row in the layer table of ARCHITECTURE.md")
    for mod, targets in sorted(uses.items()):
        allowed = ALLOWED.get(mod, set())
        if allowed is None:
            continue
        for t in sorted(targets - allowed - UNIVERSAL):
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
          f"no import cycle inside {len(inner)} modules; no import cycle in "
          + ", ".join(checked))
    return 0

if __name__ == "__main__":
    sys.exit(main())
