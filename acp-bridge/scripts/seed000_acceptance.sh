#!/usr/bin/env bash
# The chunked protocol's acceptance, end to end (the failure that breaks
# asyncio bridges): a stream carrying a 20 MB tool_result (a recursive listing with non-ASCII names and control
# characters) goes through `acp-rechunk`; every output line is at most 32 KiB;
# a Python asyncio.StreamReader with its default 64 KiB limit reads every
# line without error and rebuilds the output with a small accumulator; and
# `acp-rechunk --join` restores the original stream byte-for-byte.
# Needs only cargo and python3 (stdlib).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The debug build (the test build's own when scripts/test runs this): a
# release build of the application's whole tree costs CI minutes, and the
# debug binary takes seconds on 20 MB.
bin="$(scripts/build_bins.sh)/acp-rechunk"

python3 - "$work" <<'PY'
import json, hashlib, sys, os
work = sys.argv[1]
# A recursive directory listing, `ls -R /` style, ~20 MB, with non-ASCII
# names, control characters, quotes, backslashes and U+2028.
names = ["bin", "données", "日本語", "emoji😀", "tab\there", "bell\x07", "q\"uote", "back\\slash", "ls\u2028sep", "x\x1f"]
parts, size, d = [], 0, 0
while size < 20_000_000:
    block = f"/srv/tree/{d}/{names[d % len(names)]}:\n" + "".join(
        f"{names[(d + i) % len(names)]}-{i:04d}.txt\n" for i in range(60)) + "\n"
    parts.append(block); size += len(block.encode()); d += 1
output = "".join(parts)
ts = "2025-10-01T12:00:00.000Z"
def line(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
events = [
    {"type": "init", "timestamp": ts, "session_id": "s-1", "model": "gemini-2.5-pro"},
    {"type": "tool_use", "timestamp": ts, "tool_name": "run_shell_command", "tool_id": "run_shell_command-1700000000000-0", "parameters": {"command": "ls -R /"}},
    {"type": "tool_result", "timestamp": ts, "tool_id": "run_shell_command-1700000000000-0", "status": "success", "output": output},
    {"type": "message", "timestamp": ts, "role": "assistant", "content": "Listed the tree.", "delta": True},
    {"type": "tool_result", "timestamp": ts, "tool_id": "read_file-1700000000001-1", "status": "success", "output": "small"},
    {"type": "result", "timestamp": ts, "status": "success", "stats": {"total_tokens": 10, "input_tokens": 7, "output_tokens": 3, "duration_ms": 5, "tool_calls": 2}},
]
with open(os.path.join(work, "in.jsonl"), "w", encoding="utf-8", newline="") as f:
    for e in events:
        f.write(line(e))
with open(os.path.join(work, "expected.sha256"), "w") as f:
    f.write(hashlib.sha256(output.encode()).hexdigest())
print(f"generated: tool output of {len(output.encode())} bytes")
PY

"$bin" < "$work/in.jsonl" > "$work/chunked.jsonl" 2> "$work/rechunk.err"
if [ -s "$work/rechunk.err" ]; then cat "$work/rechunk.err"; echo "FAIL: rechunk reported faults"; exit 1; fi

python3 - "$work" <<'PY'
import asyncio, hashlib, json, os, sys
work = sys.argv[1]
LIMIT = 32 * 1024

async def main():
    # A subprocess pipe read by a StreamReader with asyncio's default limit
    # (64 KiB): the reader that crashed with "Separator is not found, and
    # chunk exceed the limit" on the unchunked stream.
    proc = await asyncio.create_subprocess_exec(
        "cat", os.path.join(work, "chunked.jsonl"), stdout=asyncio.subprocess.PIPE)
    assert proc.stdout._limit == 2 ** 16, proc.stdout._limit
    lines = longest = 0
    pieces, result, total, expect_seq = None, None, None, 0
    while True:
        line = await proc.stdout.readline()   # raises ValueError past the limit
        if not line:
            break
        lines += 1
        longest = max(longest, len(line) - 1)
        assert len(line) - 1 <= LIMIT, f"line {lines} has {len(line) - 1} bytes"
        event = json.loads(line)
        kind = event["type"]
        if kind == "tool_result_start":
            pieces, total, expect_seq = [], event["total_bytes"], 0
        elif kind == "tool_result_chunk":
            assert event["seq"] == expect_seq
            expect_seq += 1
            pieces.append(event["data"])   # small accumulator: a list, joined once
        elif kind == "tool_result_end":
            result = "".join(pieces)
            assert event["chunks"] == expect_seq
            assert len(result.encode()) == total == event["total_bytes"]
    await proc.wait()
    want = open(os.path.join(work, "expected.sha256")).read()
    got = hashlib.sha256(result.encode()).hexdigest()
    assert got == want, "rebuilt output differs"
    print(f"asyncio reader: {lines} lines, longest {longest} bytes, output rebuilt ({expect_seq} chunks)")

asyncio.run(main())
PY

"$bin" --join < "$work/chunked.jsonl" > "$work/joined.jsonl" 2> "$work/join.err"
if [ -s "$work/join.err" ]; then cat "$work/join.err"; echo "FAIL: join reported faults"; exit 1; fi
cmp "$work/in.jsonl" "$work/joined.jsonl"
echo "join: byte-identical to the original stream"

# Control: the unchunked stream does crash the same reader.
python3 - "$work" <<'PY'
import asyncio, os, sys
async def main():
    proc = await asyncio.create_subprocess_exec("cat", os.path.join(sys.argv[1], "in.jsonl"), stdout=asyncio.subprocess.PIPE)
    try:
        while await proc.stdout.readline():
            pass
    except ValueError as e:
        print(f"control: the unchunked stream fails asyncio's reader ({e})")
        # Kill `cat` and drain the pipe to EOF: with unread data left in a
        # paused transport, Process.wait() can wait for the pipe forever.
        proc.kill()
        await asyncio.wait_for(proc.stdout.read(), 30)
        await asyncio.wait_for(proc.wait(), 30)
        return
    raise SystemExit("control: the original stream did not fail")
asyncio.run(main())
PY
echo "chunked 20 MB acceptance: OK"
