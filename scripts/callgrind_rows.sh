#!/usr/bin/env bash
# Instructions per row of the recorded real traffic, decode and encode, from
# callgrind (counts that do not depend on the machine's load).
#
#   scripts/callgrind_rows.sh                  print the table (tab-separated)
#   scripts/callgrind_rows.sh --official       per row, the instructions of
#                                              the official types
#                                              (benches/official) and ours,
#                                              and their ratio
#   scripts/callgrind_rows.sh --compare OLD    the table beside OLD (a table
#                                              this script printed), with
#                                              the change in percent; exit
#                                              status 1 when a row's
#                                              instructions outside libc
#                                              or its copies grew by more
#                                              than 3%, or its allocations
#                                              grew
#
# Per row, decode and encode: all instructions; the instructions outside
# libc, the count to hold (libc's malloc and memcpy vary by a few percent
# from run to run with the state and alignment of the heap the setup
# leaves); the calls to malloc, realloc and calloc; the calls to memcpy and
# memmove from outside libc (a value moved whole shows there).
#
# Builds `benches/callgrind_rows.rs` with the bench profile (as the
# criterion benches are built) and runs it once under valgrind: only inside
# `counted` (which runs a row's decoding, then its encoding) are
# instructions counted, and the counts are dumped after each call, in the
# order of the rows the program prints.
set -euo pipefail
cd "$(dirname "$0")/.."

compare=""
official=""
if [ "${1:-}" = "--compare" ]; then
  compare="${2:?--compare needs a table}"
elif [ "${1:-}" = "--official" ]; then
  official=1
fi

# The program to run: benches/callgrind_rows.rs, or (--official)
# benches/official/callgrind_official.rs, built with the bench profile.
program=callgrind_rows
dir=.
if [ -n "$official" ]; then
  program=callgrind_official
  dir=benches/official
fi
bin=$(cd "$dir" && cargo bench --bench "$program" --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$program")
[ -n "$bin" ] || { echo "callgrind_rows: build failed (run cargo bench --bench $program --no-run in $dir)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# setarch -R: no address randomisation, so that what depends on where the
# heap lies varies as little as it can from run to run.
setarch "$(uname -m)" -R valgrind --tool=callgrind --callgrind-out-file="$work/out.%p" \
  --toggle-collect="$program::counted" --dump-after="$program::counted" \
  "$bin" >"$work/rows" 2>"$work/log" || { cat "$work/log" >&2; exit 2; }

python3 - "$work" "$compare" "$official" <<'PY'
import glob, os, re, sys
work, compare, official = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [l.rstrip('\n').split('\t') for l in open(os.path.join(work, 'rows')) if l.strip()]
ALLOC = {'malloc', 'realloc', 'calloc'}
COPY = {'memcpy', 'memmove', '__memcpy_avx_unaligned_erms', '__memmove_avx_unaligned_erms'}

def part(path):
    m = re.search(r'out\.\d+\.(\d+)$', path)
    return int(m.group(1)) if m else 0

def counts(path):
    """(instructions, instructions outside libc, calls to
    malloc/realloc/calloc, calls to memcpy/memmove from outside libc) of
    one dump."""
    names = {}
    def name(kind, text):
        m = re.match(r'\((\d+)\)(?: (.*))?', text)
        key = (kind, m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names.get(key, '')
    total = in_libc = allocs = copies = 0
    ob = ''
    after_call = False
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith(('summary:', 'totals:')):
            total = int(line.split()[1])
        elif line.startswith('ob='):
            ob = name('ob', line[3:])
        elif line.startswith('cob='):
            name('ob', line[4:])
        elif line.startswith(('fl=', 'fi=', 'fe=')):
            name('fl', line[3:])
        elif line.startswith('fn='):
            name('fn', line[3:])
        elif line.startswith(('cfi=', 'cfl=')):
            name('fl', line[4:])
        elif line.startswith('cfn='):
            callee = name('fn', line[4:])
        elif line.startswith('calls='):
            if callee in ALLOC:
                allocs += int(line[6:].split()[0])
            # Copies the program asks for (realloc's own vary).
            if callee in COPY and 'libc.so' not in ob:
                copies += int(line[6:].split()[0])
            after_call = True
        elif line[:1].isdigit() or line[:1] in '+-*':
            if after_call:
                after_call = False  # a call's inclusive cost, not self
            elif 'libc.so' in ob:
                f = line.split()
                if len(f) > 1:
                    in_libc += int(f[1])
    return total, total - in_libc, allocs, copies

dumps = sorted((p for p in glob.glob(os.path.join(work, 'out.*')) if part(p) > 0), key=part)
got = [counts(p) for p in dumps]
if len(got) < 2 * len(rows):
    sys.exit('callgrind_rows: %d dumps for %d rows' % (len(got), len(rows)))
table = [(name, int(n)) + got[2 * i] + got[2 * i + 1] for i, (name, n) in enumerate(rows)]
if official:
    # Per row: the official types' instructions, ours, and how many times
    # fewer ours are (all instructions: the allocator's and copies' work
    # is part of each side's cost).
    print('\t'.join(['row', 'lines', 'official Ir', 'acp_codec Ir', 'ratio',
                      'official allocs', 'acp_codec allocs']))
    for t in table:
        print('\t'.join(str(x) for x in [t[0], t[1], t[2], t[6], '%.2fx' % (t[2] / t[6]),
                                           t[4], t[8]]))
    sys.exit(0)
HEAD = ['decode Ir', 'decode Ir outside libc', 'decode allocs', 'decode memcpys',
        'encode Ir', 'encode Ir outside libc', 'encode allocs', 'encode memcpys']
N = len(HEAD)
if not compare:
    print('\t'.join(['row', 'lines'] + HEAD))
    for t in table:
        print('\t'.join(str(x) for x in t))
    sys.exit(0)
old = {}
for l in open(compare):
    f = l.rstrip('\n').split('\t')
    if len(f) == N + 2 and f[1].isdigit():
        old[f[0]] = [int(x) for x in f[2:]]
worse = []
pct = lambda new, was: 100.0 * (new - was) / was if was else 0.0
print('\t'.join(['row'] + ['%s %s' % (h, w) for h in HEAD for w in ('before', 'after', 'change')]))
for t in table:
    name, new = t[0], list(t[2:])
    was = old.get(name, [0] * N)
    cells = [name]
    for i in range(N):
        cells += [str(was[i]), str(new[i]), '%+.2f%%' % pct(new[i], was[i])]
    # Held: the instructions outside libc (whose malloc and memcpy vary
    # with the heap's state from run to run) within 3%, no more
    # allocations, and copies within 3%.
    if any(pct(new[i], was[i]) > 3.0 for i in (1, 3, 5, 7)) or new[2] > was[2] or new[6] > was[6]:
        worse.append(name)
    print('\t'.join(cells))
if worse:
    print('over 3%% (or more allocations): %s' % ', '.join(worse), file=sys.stderr)
sys.exit(1 if worse else 0)
PY
