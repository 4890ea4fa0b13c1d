#!/usr/bin/env bash
# Throughput and latency of one ACP turn carrying a 6 MB line, in every
# transport acp-client has, measured in one run on a release build:
#   embedded (in-process pipe), local process (stdio), ws:// bridge,
#   http:// bridge (Streamable HTTP), wss:// bridge (rustls), wss://
#   through nginx to ws:// bridges; then 50 concurrent clients through one
#   bridge per profile, with the bridge's peak memory.
#
#   scripts/remote_bench.sh                 # 7 runs per cell after a warm-up
#   REMOTE_BENCH_REPS=15 REMOTE_BENCH_BYTES=6000000 scripts/remote_bench.sh
#
# Everything runs on 127.0.0.1 and stops by itself. nginx is used when
# installed (apt-get install nginx); the row is left out otherwise. The
# harness is tests/integration/remote.rs (`remote_bench`, ignored in normal test runs).
# Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --release -p acp-bridge --bins
cargo test --quiet --release -p acp-bridge --test integration -- --ignored --exact remote::remote_bench --nocapture
# Load: 50 concurrent clients (REMOTE_LOAD_CLIENTS) through one bridge, per
# profile, with the bridge's peak memory.
exec cargo test --quiet --release -p acp-bridge --test integration -- --ignored --exact remote::remote_load --nocapture
