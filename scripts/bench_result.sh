#!/usr/bin/env bash
# Runs one measuring command and writes its output to bench-results/NAME.md,
# under a first line naming the command, the date and the commit, which
# scripts/bench_report.py reads into BENCHMARKS.md (under NAME's area).
#
#   scripts/bench_result.sh NAME COMMAND [ARG ...]
#
# Examples:
#   scripts/bench_result.sh callgrind-rows scripts/callgrind_rows.sh
#   scripts/bench_result.sh callgrind-official scripts/callgrind_rows.sh --official
#   scripts/bench_result.sh dependent-build scripts/dependent_build.sh 3
#   scripts/bench_result.sh remote-transport acp-bridge/scripts/remote_bench.sh
#
# The output is kept as printed: a Markdown table, a tab-separated table
# (shown as a Markdown table) or plain lines (shown as a code block). The
# file is replaced only when the command succeeds.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: scripts/bench_result.sh NAME COMMAND [ARG ...]}"
shift
[ $# -gt 0 ] || { echo "bench_result: no command" >&2; exit 2; }
mkdir -p bench-results
out="bench-results/$name.md"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$@" >"$tmp"
{
  printf '<!-- written by: scripts/bench_result.sh %s %s; date: %s; commit: %s; machine: %s -->\n' \
    "$name" "$*" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(git rev-parse --short=8 HEAD)" \
    "$(uname -m), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores, Linux $(uname -r)"
  # A Markdown or tab-separated table as printed; other output as a block.
  if grep -q '^|' "$tmp" || grep -q "$(printf '\t')" "$tmp"; then
    cat "$tmp"
  else
    printf '```text\n'
    cat "$tmp"
    printf '```\n'
  fi
} >"$out"
echo "wrote $out" >&2
