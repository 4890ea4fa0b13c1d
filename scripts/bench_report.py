#!/usr/bin/env python3
"""Writes BENCHMARKS.md from the result files in bench-results/ and the
goals in README.md.

Usage:
    python3 scripts/bench_report.py            # write BENCHMARKS.md
    python3 scripts/bench_report.py --check    # exit 1 when BENCHMARKS.md is not what it would write
    python3 scripts/bench_report.py --goals    # exit 1 when a measured ratio misses its goal
    python3 scripts/bench_report.py --record LABEL [--criterion DIR ...]
        # after `cargo bench`: criterion's output (target/criterion and
        # benches/official/target/criterion) into bench-results/criterion-LABEL.md

BENCHMARKS.md is a function of files in the repository only (no clock, no
machine probe), so `--check` can tell whether it is stale. Every
`bench-results/*.md` starts with an HTML comment naming the command that
wrote it and its date; the report shows each under its area. The goals are
the table of README.md's "Performance" section that follows the
`<!-- goals: ...` comment, the one place they are written. A tool to run by
hand, never a timed test in CI.
"""
import argparse
import datetime
import difflib
import glob
import json
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = "bench-results"
# BENCHMARKS.md is the method and one current table per area: at most this
# many lines (`--check` fails past it; history lives in git).
MAX_LINES = 500
OURS = "acp_codec"
OFFICIAL = "agent-client-protocol-schema (anchor)"
VALUE = "serde_json::Value (anchor)"
VALUE_ORDERED = "serde_json::Value with preserve_order (anchor)"
TRAFFIC = "acp_traffic/"
TRAFFIC_ALL = "all session/update lines"
# The real-traffic rows whose lines average 1 KiB or more (the recorded
# sessions of tests/fixtures/sessions: escape-dense text, files, diffs);
# a goal marked "(lines under 1 KiB)" holds for the other rows.
LONG_ROWS = {
    "agent_message_chunk", "tool_call", "tool_call_update", TRAFFIC_ALL,
    "request fs/write_text_file", "result of fs/read_text_file",
    "request session/request_permission",
}

# Areas of the report: (title, file name prefixes of bench-results, text).
# A result file whose name matches no prefix goes under "Other results".
AREAS = [
    ("Instruction counts of the real-traffic rows", ("callgrind",), """\
`benches/callgrind_rows.rs` decodes each real-traffic row (lenient, a
result typed with its request pending) with `decode_line`, then encodes
the values again; `scripts/callgrind_rows.sh` runs it once under callgrind
(bench profile) and prints per row the instructions, those outside libc
(the count to hold: glibc's allocator and `memcpy` vary by a few percent
with the heap's state), the calls to `malloc`/`realloc`/`calloc` and to
`memcpy`/`memmove`. `--official` counts the official types on the same
lines (`benches/official/callgrind_official.rs`); `--compare OLD` holds a
change to within 3% (exit status 1 otherwise). Counts do not depend on
the machine's load. Needs valgrind."""),
    ("Unescaping", ("unescape",), None),
    ("The team server", ("load", "relay", "server", "resume", "agent-start", "bridge", "flood",
                         "operator", "remote", "client"), """\
The relay and load figures against a plain relay, the server core's
criterion benches, memory under a 64 MiB line and under a flood, the
cost of starting an agent, the remote transport end to end."""),
    ("Builds and the type layer", ("dependent-build", "build", "type"), """\
Dependent build: `/work/wt/base` is 3e790b99 (main when the compact type
layer was asked for), `/work/main` the commit named, `+v2` with feature
`v2`; the goals are the CPU medians (1.1x, and 1.3x with `v2`). A round
shared with other builds shows in its wall time; CPU holds better."""),
    ("ARM boards", ("arm",), """\
The crate has no architecture-specific code: `memchr` brings the newline
search (SSE2/AVX2 on x86_64, NEON on aarch64), `simdutf8` the UTF-8
validation, and the string scanner's 64-byte blocks use vector compares
where the target has them (SSE2, NEON; a word loop on 32-bit ARM). Compare
ratios on a board, not absolute throughput: the anchors run there too.
`scripts/arm_test.sh` builds and tests the crate for aarch64 and armv7
under qemu; `acp-bridge/scripts/arm_memory.sh` measures the table below."""),
]

CRITERION = "criterion-"


# ----- reading result files -------------------------------------------------

def read_result(path):
    """(header comment's text, body) of a result file; the header is the
    HTML comment the file starts with."""
    text = open(path, encoding="utf-8").read()
    m = re.match(r"\s*<!--(.*?)-->\n?", text, re.S)
    if not m:
        sys.exit(f"{path}: does not start with an HTML comment naming its command and date")
    return " ".join(m.group(1).split()), text[m.end():].strip("\n")


def header_date(header):
    m = re.search(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?", header)
    return m.group(0) if m else ""


def table_rows(body):
    """The rows of the first Markdown table of `body` as dicts by header."""
    lines = [l for l in body.split("\n") if l.startswith("|")]
    if len(lines) < 2:
        return []
    cells = lambda l: [c.strip() for c in l.strip().strip("|").split("|")]
    head = cells(lines[0])
    return [dict(zip(head, cells(l))) for l in lines[2:]]


UNITS = {"ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}


def parse_time(text):
    m = re.fullmatch(r"([0-9.]+) (ns|µs|us|ms|s)", text.strip())
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def load_criterion_records(root):
    """Every criterion record: {(group, bench): {mean_ns, throughput,
    lines, file, date}}, and the records in file order."""
    files = sorted(glob.glob(os.path.join(root, RESULTS, CRITERION + "*.md")))
    records = []
    for path in files:
        header, body = read_result(path)
        rows = {}
        for r in table_rows(body):
            mean = parse_time(r.get("mean", ""))
            if mean is None:
                continue
            rows[(r["group"], r["bench"])] = {
                "mean_ns": mean, "throughput": r.get("throughput", ""),
                "lines": int(r["lines"]) if r.get("lines", "").isdigit() else None,
            }
        records.append({"file": os.path.relpath(path, root), "header": header,
                         "date": header_date(header), "body": body, "rows": rows})
    return records


def pair(records, group, ours, anchor):
    """Our bench and its anchor from the newest record holding both (one
    run), with that record."""
    for rec in sorted(records, key=lambda r: r["date"], reverse=True):
        a, b = rec["rows"].get((group, ours)), rec["rows"].get((group, anchor))
        if a and b:
            return a, b, rec
    return None, None, None


# ----- goals ---------------------------------------------------------------

def read_goals(root):
    """The README's goal table: [(what, group, ours, anchor, op, goal, short_only)]."""
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    at = readme.find("<!-- goals:")
    if at < 0:
        sys.exit("README.md: no `<!-- goals:` table")
    body = readme[readme.index("\n", at) + 1:]
    body = body[:body.find("\n\n")] if "\n\n" in body else body
    goals = []
    for r in table_rows(body):
        m = re.fullmatch(r"(≥|≤) ([0-9.]+)x(?: \((time|lines under 1 KiB)\))?", r["goal"])
        if not m:
            sys.exit(f"README.md goal table: cannot read the goal {r['goal']!r}")
        tick = lambda s: s.strip("`")
        goals.append((r["what"], tick(r["group"]), tick(r["ours"]), tick(r["anchor"]),
                      m.group(1), float(m.group(2)), m.group(3)))
    return goals


def ratio_of(a, b, op):
    """Throughput ratio ours/anchor for ≥ goals (anchor time / our time);
    time ratio for ≤ goals."""
    return b["mean_ns"] / a["mean_ns"] if op == "≥" else a["mean_ns"] / b["mean_ns"]


def meets(ratio, op, goal):
    return ratio >= goal if op == "≥" else ratio <= goal


def traffic_rows(records):
    names = set()
    for rec in records:
        for group, _ in rec["rows"]:
            if group.startswith(TRAFFIC):
                names.add(group[len(TRAFFIC):].removesuffix(" vs official"))
    kind = lambda n: 2 if n.startswith(("request ", "result of ")) else 1 if n == TRAFFIC_ALL else 0
    return sorted(names, key=lambda n: (kind(n), n.split(" ")[-1] if kind(n) == 2 else n, n))


def evaluate(goals, records):
    """[(goal, [(row label, ratio or None, ok, record)])]: one entry per
    measured group a goal covers (several for a `*` group)."""
    out = []
    for g in goals:
        what, group, ours, anchor, op, goal, qual = g
        groups = [group]
        if "*" in group:
            prefix, suffix = group.split("*", 1)
            groups = [prefix + row + suffix for row in traffic_rows(records)
                      if qual != "lines under 1 KiB" or row not in LONG_ROWS]
            groups = [x for x in groups if any((x, ours) in r["rows"] for r in records)]
        results = []
        for grp in groups:
            a, b, rec = pair(records, grp, ours, anchor)
            if not a:
                results.append((grp, None, None, None))
                continue
            ratio = ratio_of(a, b, op)
            results.append((grp, ratio, meets(ratio, op, goal), rec))
        out.append((g, results))
    return out


# ----- the report ----------------------------------------------------------

def fmt_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def cite(rec):
    """A record's label (criterion-LABEL.md), linked to its file."""
    name = os.path.basename(rec["file"])
    return f"[{name[len(CRITERION):-3]}]({RESULTS}/{name})"


def goals_section(evaluated):
    lines = ["## Goals", "",
             "The goals of README.md's \"Performance\" table, each with the ratio of its",
             "newest run that measured both benches of the group (the file named).",
             "A `*` goal lists its worst row; the real-traffic table below has every row.", "",
             "| what | ratio | goal | | run |", "|---|---:|---|---|---|"]
    missed = 0
    for (what, group, ours, anchor, op, goal, qual), results in evaluated:
        goal_text = f"{op} {goal:g}x" + (f" ({qual})" if qual else "")
        measured = [r for r in results if r[1] is not None]
        if not measured:
            lines.append(f"| {what} | not run | {goal_text} | | |")
            continue
        worst = min(measured, key=lambda r: r[1] if op == "≥" else -r[1])
        bad = [r for r in measured if not r[2]]
        missed += len(bad)
        label = ""
        if len(results) > 1:
            label = f" (worst: {worst[0][len(TRAFFIC):].removesuffix(' vs official')})"
        mark = "ok" if not bad else f"**missed** ({len(bad)} of {len(measured)})" if len(measured) > 1 else "**missed**"
        runs = sorted({cite(r[3]) for r in measured})
        lines.append(f"| {what}{label} | {worst[1]:.2f}x | {goal_text} | {mark} | {', '.join(runs)} |")
    return lines, missed


def traffic_section(records, evaluated):
    rows = traffic_rows(records)
    if not rows:
        return []
    marks = {}
    for (_, _, _, _, op, goal, qual), results in evaluated:
        for grp, ratio, ok, _ in results:
            if ratio is not None and grp.startswith(TRAFFIC):
                row = grp[len(TRAFFIC):].removesuffix(" vs official")
                marks.setdefault(row, []).append(f"{'ok' if ok else '**missed**'} {op} {goal:g}x")
    columns = [("vs official", " vs official", OFFICIAL), ("vs plain Value", "", VALUE),
               ("vs Value (preserve_order)", " vs official", VALUE_ORDERED)]
    shown = [c for c in columns if any(pair(records, TRAFFIC + r + c[1], OURS, c[2])[0] for r in rows)]
    lines = ["## Real traffic", "",
             "Every `session/update` line of the recorded peer sessions",
             "(`tests/fixtures/sessions`: Claude's ACP adapter, Qwen Code, Gemini CLI, the",
             "TypeScript and Python SDKs), one row per shape (the updates that carry",
             "`_meta` in a row of their own), all of them together (by bytes), and the",
             "requests and results of `session/prompt`, `fs/*` and",
             "`session/request_permission`. Ours: `acp::decode_line`, one pass (a",
             "result with a `Tracker` that has its request pending). Anchors in the",
             "same group: the official `agent-client-protocol-schema` types and",
             "`serde_json::Value` with `preserve_order` (`benches/official/traffic.rs`),",
             "plain `Value` (`benches/acp_traffic.rs`). Ratios are our throughput over",
             "the anchor's; each cell comes from one run (the file named).", "",
             "| row | lines | acp_codec per line | " + " | ".join(c[0] for c in shown) + " | goals | run |",
             "|---|---:|---:|" + "---:|" * len(shown) + "---|---|"]
    for row in rows:
        cells, runs, ours_row = [], set(), None
        for _, suffix, anchor in shown:
            a, b, rec = pair(records, TRAFFIC + row + suffix, OURS, anchor)
            cells.append(f"{b['mean_ns'] / a['mean_ns']:.2f}x" if a else "not run")
            if a:
                runs.add(cite(rec))
                ours_row = ours_row or a
        count = ours_row and ours_row["lines"]
        per_line = fmt_time(ours_row["mean_ns"] / count) if count else (ours_row["throughput"] or fmt_time(ours_row["mean_ns"]) + " (all)" if ours_row else "")
        lines.append(f"| {row} | {count or 'by bytes'} | {per_line} | {' | '.join(cells)} | "
                     f"{'; '.join(marks.get(row, []))} | {', '.join(sorted(runs))} |")
    return lines


def tsv_to_table(body):
    rows = [l.split("\t") for l in body.split("\n") if l.strip()]
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return out + ["| " + " | ".join(r) + " |" for r in rows[1:]]


def result_section(root, path):
    header, body = read_result(path)
    name = os.path.relpath(path, root)
    lines = [f"### {name}", "", f"Source: {header}", ""]
    if "\t" in body and not any(l.startswith("|") for l in body.split("\n")):
        lines += tsv_to_table(body)
    else:
        lines.append(body)
    return lines + [""]


def method_section(records):
    lines = ["## Method", "",
             "Each figure below comes from a command in this repository; its file",
             "(`bench-results/*.md`) starts with that command, the date and the machine",
             "(older files: a 2-core x86_64 VM, AMD EPYC, Linux 6.18, rustc 1.95.0).",
             "Ratios compare two benches of one run. History: `git log -p bench-results/`.", "",
             "To measure again and rewrite this file:", "",
             "```sh",
             "# the codec's criterion benches, then the official-crate anchor",
             "cargo bench --all-features --benches -- --warm-up-time 1 --measurement-time 3",
             "(cd benches/official && cargo bench -- --warm-up-time 1 --measurement-time 3)",
             "python3 scripts/bench_report.py --record codec      # -> bench-results/criterion-codec.md",
             "# (a subset is its own record: --record traffic after the traffic benches)",
             "# commands that print their own tables, each into bench-results/NAME.md",
             "scripts/bench_result.sh callgrind-compare scripts/callgrind_rows.sh --compare OLD  # OLD: its output on the old checkout",
             "scripts/bench_result.sh callgrind-official scripts/callgrind_rows.sh --official",
             "scripts/bench_result.sh dependent-build scripts/dependent_build.sh 3",
             "scripts/bench_result.sh remote-transport acp-bridge/scripts/remote_bench.sh",
             "scripts/bench_result.sh arm-memory acp-bridge/scripts/arm_memory.sh",
             "# then",
             "python3 scripts/bench_report.py            # writes BENCHMARKS.md",
             "python3 scripts/bench_report.py --check    # exit 1 if BENCHMARKS.md is stale",
             "python3 scripts/bench_report.py --goals    # exit 1 if a ratio misses its goal",
             "```", "",
             "The other result files name their own command. Speed targets live in",
             "benches and README.md's goal table, never in timed tests.", "",
             "Criterion records (`bench-results/criterion-*.md`: the mean of every bench",
             "of the run, from which the goals' and real traffic's ratios below are",
             "computed; the `run` columns name them):", ""]
    for rec in records:
        lines.append(f"- {cite(rec)}: {rec['header']}")
    return lines


def report(root):
    records = load_criterion_records(root)
    goals = read_goals(root)
    evaluated = evaluate(goals, records)
    lines = ["# Benchmarks", "",
             "Written by `scripts/bench_report.py` from `bench-results/*.md` and the",
             "goals of README.md; do not edit by hand.", ""]
    lines += method_section(records) + [""]
    goal_lines, missed = goals_section(evaluated)
    lines += goal_lines + [""]
    traffic = traffic_section(records, evaluated)
    if traffic:
        lines += traffic + [""]
    files = sorted(glob.glob(os.path.join(root, RESULTS, "*.md")))
    others = [f for f in files if not os.path.basename(f).startswith(CRITERION)]
    placed = set()
    for title, prefixes, text in AREAS:
        mine = [f for f in others if os.path.basename(f).startswith(prefixes) and f not in placed]
        # In the order of the area's prefixes (the relay and load first).
        rank = lambda f: next(i for i, p in enumerate(prefixes) if os.path.basename(f).startswith(p))
        mine.sort(key=lambda f: (rank(f), f))
        if not mine and not text:
            continue
        placed.update(mine)
        lines += [f"## {title}", ""] + ([text, ""] if text else [])
        for f in mine:
            lines += result_section(root, f)
    rest = [f for f in others if f not in placed]
    if rest:
        lines += ["## Other results", ""]
        for f in rest:
            lines += result_section(root, f)
    text = "\n".join(lines).rstrip("\n") + "\n"
    return text, evaluated, missed


# ----- recording criterion's output ----------------------------------------

def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    return f"{platform.machine()}, {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; {rustc}"


def record(root, label, dirs):
    rows, stamps = [], []
    for d in dirs:
        for dirpath, _dirs, files in os.walk(os.path.join(root, d)):
            if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
                continue
            bench = json.load(open(os.path.join(dirpath, "benchmark.json")))
            est_path = os.path.join(dirpath, "estimates.json")
            est = json.load(open(est_path))
            stamps.append(os.path.getmtime(est_path))
            name = bench["function_id"] or ""
            if bench.get("value_str"):
                name = f"{name}/{bench['value_str']}" if name else bench["value_str"]
            tp = bench.get("throughput") or {}
            mean = est["mean"]["point_estimate"]
            size = tp.get("Bytes") or tp.get("BytesDecimal")
            throughput = ""
            if size:
                gib = size / (mean / 1e9) / 2**30
                throughput = f"{gib:.2f} GiB/s" if gib >= 1 else f"{gib * 1024:.0f} MiB/s"
            rows.append((bench["group_id"], name, f"{mean:.1f} ns", throughput, str(tp.get("Elements") or "")))
    if not rows:
        sys.exit(f"no criterion results under {dirs}: run `cargo bench` first")
    when = lambda t: datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], capture_output=True, text=True, cwd=root).stdout.strip()
    out = [f"<!-- written by: python3 scripts/bench_report.py --record {label} (criterion's output of cargo bench); "
           f"date: {when(max(stamps))}; commit: {commit} -->",
           f"Machine: {machine()}. The benches ran between {when(min(stamps))} and {when(max(stamps))}.", "",
           "| group | bench | mean | throughput | lines |", "|---|---|---|---|---|"]
    out += [f"| {' | '.join(r)} |" for r in sorted(rows)]
    path = os.path.join(root, RESULTS, f"{CRITERION}{label}.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {os.path.relpath(path, root)} ({len(rows)} benches)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="BENCHMARKS.md")
    ap.add_argument("--check", action="store_true", help="exit 1 when --out is not what this would write")
    ap.add_argument("--goals", action="store_true", help="exit 1 when a measured ratio misses its goal")
    ap.add_argument("--record", metavar="LABEL", help="write criterion's output to bench-results/criterion-LABEL.md")
    ap.add_argument("--criterion", action="append",
                    help="with --record: criterion output folder (repeatable); default: target/criterion "
                         "and benches/official/target/criterion")
    args = ap.parse_args()
    if args.record:
        if not re.fullmatch(r"[a-z0-9-]+", args.record):
            sys.exit("--record LABEL: lowercase letters, digits and dashes")
        record(ROOT, args.record, args.criterion or ["target/criterion", "benches/official/target/criterion"])
        return
    text, evaluated, missed = report(ROOT)
    out = os.path.join(ROOT, args.out)
    if args.check:
        try:
            old = open(out, encoding="utf-8").read()
        except FileNotFoundError:
            old = ""
        if text.count("\n") > MAX_LINES:
            sys.exit(f"{args.out} would be {text.count(chr(10))} lines, over {MAX_LINES}: "
                     "keep one current table per area")
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       args.out, "what bench_report.py writes", n=1))
            sys.exit(f"{args.out} is stale: run python3 scripts/bench_report.py")
        print(f"{args.out} is what bench_report.py writes")
    elif not args.goals:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.out} ({text.count(chr(10))} lines)")
        if text.count("\n") > MAX_LINES:
            print(f"warning: over {MAX_LINES} lines: keep one current table per area", file=sys.stderr)
    for (what, group, *_rest), results in evaluated:
        for grp, ratio, ok, _rec in results:
            if ratio is not None and (args.goals or not ok):
                print(f"{'ok    ' if ok else 'MISSED'} {grp}: {ratio:.2f}x ({what})")
    print(f"{missed} goal(s) missed")
    if args.goals and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
