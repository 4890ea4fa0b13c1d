# Shared by the interop scripts (sourced): a PASS/FAIL line per check, the
# time since a start, and `check`, which judges one acp-client run by its
# summary JSON. Set T (the scratch directory holding $T/out and $T/err)
# before calling `check`; P (the session directory) when EXPR reads files.
# FAILED ends up 1 when any check failed; exit with it.

FAILED=0
START_ALL=$(date +%s.%N)

pass() { printf 'PASS %-64s %6.2fs\n' "$1" "$2"; }
fail() { printf 'FAIL %-64s %6.2fs\n' "$1" "$2"; FAILED=1; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

# check NAME PYTHON-EXPR RC SECS: evaluates EXPR with `s` = the summary JSON
# (the last stdout line of $T/out, {} when it is not JSON), `rc`, `secs`,
# `out` = stdout, `err` = stderr, and `f(PATH)` = the text of a file in the
# session directory $P ("" when it is missing). On failure prints the
# summary and the ends of stdout and stderr.
check() {
  local name="$1" expr="$2" rc="$3" secs="$4"
  if python3 - "$T/out" "$T/err" "$rc" "$secs" "${P:-}" "$expr" <<'PY'
import json, os, sys
out, err, rc, secs, proj, expr = sys.argv[1:]
lines = open(out, encoding="utf-8").read().splitlines()
try:
    s = json.loads(lines[-1]) if lines else {}
except ValueError:
    s = {}
err = open(err, encoding="utf-8").read()
def f(rel):
    p = os.path.join(proj, rel)
    return open(p, encoding="utf-8").read() if proj and os.path.exists(p) else ""
ok = eval(expr, {"s": s, "rc": int(rc), "secs": float(secs), "err": err, "out": "\n".join(lines), "f": f})
if not ok:
    print("  summary:", lines[-1] if lines else "(no output)")
    print("  stdout:", "\n".join(l[:300] for l in lines[:-1] if not l.startswith("commands:"))[-3000:])
    print("  stderr:", err[-2000:])
sys.exit(0 if ok else 1)
PY
  then pass "$name" "$secs"; else fail "$name (rc=$rc)" "$secs"; fi
}
