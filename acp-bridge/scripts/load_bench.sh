#!/usr/bin/env bash
# The relay and load bench: acp-bridge (WebSocket, a token file, one
# agent per user started on demand, confined as by default) against a
# plain WebSocket-to-stdio relay on the same stack (examples/plain_relay.rs),
# the same agent (acp-mock-agent), in one run on a release build:
#   - relay: the server's CPU per MB for 10 turns of 8 MB lines, each way;
#   - load: 300 users at once, 3 turns each: the server's CPU per user to
#     start, per turn, per turn with the start included, its peak RSS;
#   - acp-bridge three times: as started by default, with --metrics-addr
#     scraped once a second, and with --log-level off;
#   - the load runs against a second anchor too: the plain relay with the
#     stack's default WebSocket buffers (plain_relay --stack-defaults).
# Prints a Markdown table (examples/load_bench.rs says how each figure is
# taken). A few minutes; everything on 127.0.0.1, stopped at the end.
#
#   acp-bridge/scripts/load_bench.sh                          # print the table
#   acp-bridge/scripts/load_bench.sh --out bench-results/load.md
#   LOAD_BENCH_ARGS="--users 100 --relay-reps 5" acp-bridge/scripts/load_bench.sh
#   # a change against its base (build against build: the base's release
#   # binary copied outside /tmp, which its confined agents may read):
#   LOAD_BENCH_ARGS="--only load --against /srv/base/acp-bridge" acp-bridge/scripts/load_bench.sh
#   # a runtime setting against none: OTHER (or --bridge) may be a script
#   # that sets the environment and `exec`s the binary (the server's pid
#   # stays the one measured), e.g. /srv/try/acp-bridge holding
#   #   #!/bin/sh
#   #   MALLOC_ARENA_MAX=1 exec /srv/base/acp-bridge "$@"
#   # Without --only load, the relay runs are compared too: a setting that
#   # helps the starts can hurt the long lines (glibc settings that fixed
#   # the mmap threshold at 4 MiB took the 8 MB relay from 1.21x to 1.93x
#   # the plain relay). Per-turn ratios move 5 to 10% between runs of 11
#   # reps on a shared 2-core host: use --load-reps 21 or 41.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=""
if [ "${1:-}" = "--out" ] && [ -n "${2:-}" ]; then
    out=$2
elif [ $# -gt 0 ]; then
    echo "usage: $0 [--out FILE]" >&2
    exit 2
fi
cargo build --quiet --release -p acp-bridge --bin acp-bridge --bin acp-mock-agent \
    --example plain_relay --example load_bench
bin=target/release
# shellcheck disable=SC2086
table=$(timeout 900 "$bin/examples/load_bench" --bridge "$bin/acp-bridge" \
    --relay "$bin/examples/plain_relay" --agent "$bin/acp-mock-agent" ${LOAD_BENCH_ARGS:-})
printf '%s\n' "$table"
if [ -n "$out" ]; then
    mkdir -p "$(dirname "$out")"
    {
        printf '<!-- acp-bridge/scripts/load_bench.sh --out %s%s, %s, %s cores, Linux %s -->\n' \
            "$out" "${LOAD_BENCH_ARGS:+ (LOAD_BENCH_ARGS=$LOAD_BENCH_ARGS)}" \
            "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" "$(uname -r)"
        printf '%s\n' "$table"
    } > "$out"
fi
