#!/usr/bin/env bash
# Where the load bench's server CPU goes: the load runs of
# examples/load_bench.rs (300 users at once, one agent each started on
# demand) under `perf record` (the CPU clock, DWARF call stacks), for
# acp-bridge as started by default and for the plain relay (8 KiB reads),
# each once with 0 turns (connect, start the agent, close) and once with
# 3 turns. Prints a Markdown table: the server's own CPU (its threads,
# not its agents') in ms per user for the start and per turn (the 3-turn
# run less the 0-turn run, over 3), split by where it was spent
# (acp-bridge/scripts/load_profile.py says how a sample is placed).
#
# Sampled, and one run of each: over three runs on a shared 2-core VM
# the bridge's start total ranged from 0.78 to 1.09 ms a user, the plain
# relay's from 0.48 to 0.53; compare the places of one run, not runs.
# The figures are perf's samples, not the bench's CPU clock.
# Needs perf (Debian: linux-perf) allowed to sample the kernel (root, or
# kernel.perf_event_paranoid at most 1) and python3. A few minutes;
# everything on 127.0.0.1, stopped at the end.
#
#   acp-bridge/scripts/load_profile.sh
#   LOAD_PROFILE_DIR=/tmp/profile acp-bridge/scripts/load_profile.sh   # keep the samples
#   LOAD_PROFILE_USERS=100 acp-bridge/scripts/load_profile.sh           # fewer users (300)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v perf >/dev/null || { echo "load_profile: needs perf (Debian: linux-perf)" >&2; exit 2; }
cargo build --quiet --release -p acp-bridge --bin acp-bridge --bin acp-mock-agent \
    --example plain_relay --example load_bench
bin=target/release
# LOAD_PROFILE_DIR: keep the samples there (perf's files, perf script's
# text) for a closer look; otherwise a temporary directory, removed.
if [ -n "${LOAD_PROFILE_DIR:-}" ]; then
    dir=$LOAD_PROFILE_DIR
    mkdir -p "$dir"
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi
users=${LOAD_PROFILE_USERS:-300}
turns=3
hz=4000

# The wrapper load_bench runs each server with: perf records the plain
# relay with the server's buffers and acp-bridge as started by default
# (the other servers of a load run start unprofiled); the server's pid
# goes to a file beside its samples.
cat >"$dir/wrap" <<'EOF'
#!/bin/sh
case "$*" in
  *plain_relay*--stack-defaults*|*acp-bridge*--metrics-addr*|*acp-bridge*--log-level\ off*) exec "$@" ;;
  *plain_relay*) kind=plain ;;
  *acp-bridge*) kind=bridge ;;
  *) exec "$@" ;;
esac
out="$PROFILE_DIR/$PROFILE_RUN-$kind"
exec perf record -q -e cpu-clock -F "$PROFILE_HZ" --call-graph dwarf,16384 -o "$out.data" -- \
  sh -c 'echo $$ >"$0"; exec "$@"' "$out.pid" "$@"
EOF
chmod +x "$dir/wrap"

for run in 0 "$turns"; do
    PROFILE_DIR=$dir PROFILE_RUN=$run PROFILE_HZ=$hz timeout 900 "$bin/examples/load_bench" \
        --bridge "$bin/acp-bridge" --relay "$bin/examples/plain_relay" \
        --agent "$bin/acp-mock-agent" --only load --load-reps 1 \
        --users "$users" --turns "$run" --wrap "$dir/wrap" >"$dir/bench-$run.txt"
    for kind in plain bridge; do
        perf script -i "$dir/$run-$kind.data" --pid "$(cat "$dir/$run-$kind.pid")" \
            -F tid,ip,sym 2>/dev/null >"$dir/$run-$kind.txt"
    done
done
python3 acp-bridge/scripts/load_profile.py --users "$users" --turns "$turns" --hz "$hz" "$dir"
