#!/usr/bin/env bash
# Peak memory on a small board, measured on armv7 under qemu-user next to
# x86_64 (release builds; armv7 with Debian's Rust 1.85, x86_64 with this
# machine's toolchain):
#
#   1. `rechunk --join` rebuilding one 50 MiB tool result from its 32 KiB
#      chunk frames (peak RSS from `/usr/bin/time -v`);
#   2. `acp-bridge` relaying one 6 MB agent line (the built-in mock agent's
#      `--big-bytes 6000000` tool output) to one WebSocket client (the
#      bridge process's own high-water mark, VmHWM in /proc, read after the
#      turn; `time -v` would report the larger of the bridge and its agent).
#
# Under qemu the figure is the emulator's RSS: the program's memory plus
# qemu's own (its code cache and the guest's loaded libraries), so an idle
# run of each program is measured too, and the difference is what the work
# itself costs. Prints a Markdown table.
#
#   scripts/arm_memory.sh
#   ARM_PROFILE=test scripts/arm_memory.sh   # armv7: the test build, see below
#   ARM_MEMORY_TARGET=aarch64-unknown-linux-gnu scripts/arm_memory.sh
#
# Needs root (binfmt_misc, as scripts/arm_test.sh), python3 and GNU time
# (fetched from Debian into the toolchain tree when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/arm_env.sh
source scripts/arm_env.sh
trap 'exit 143' TERM INT
trap 'arm_cleanup; [ -n "${bridge_pgid:-}" ] && kill -TERM -- "-$bridge_pgid" 2>/dev/null; rm -rf "$tmp"' EXIT
tmp=$(mktemp -d)
# The application's binaries (acp-rechunk, acp-bridge, acp-client).
app=(-p acp-bridge --bins)
# x86_64: this machine's own toolchain (its release build is shared with
# `cargo bench`); armv7: Debian's Rust 1.85 and the cross tools.
cargo build --quiet --release "${app[@]}"
host=$(rustc -vV | sed -n 's/^host: //p')
host_dir=$(pwd)/target/release
arm_setup
arm_env
arm_binfmt
export CARGO_TARGET_DIR="${ARM_TARGET_DIR:-$arm_work/build}" CARGO_TERM_COLOR=never
unset CARGO_BUILD_TARGET
arm=${ARM_MEMORY_TARGET:-armv7-unknown-linux-gnueabihf}
# ARM_PROFILE=test measures the armv7 examples as scripts/arm_test.sh builds
# them (opt-level 1, debug assertions on), which spares a release build of
# every dependency for armv7; allocation sizes are the same.
case "${ARM_PROFILE:-release}" in
release) arm_profile=(--release) arm_dir=release ;;
test) export CARGO_PROFILE_DEV_OPT_LEVEL=1; arm_profile=() arm_dir=debug ;;
*) echo "ARM_PROFILE is release or test" >&2; exit 2 ;;
esac
CARGO_BUILD_TARGET=$arm cargo build --quiet "${arm_profile[@]}" "${app[@]}"
client="$host_dir/acp-client"

gnu_time=/usr/bin/time
if [ ! -x "$gnu_time" ]; then
  gnu_time="$ARM_ROOT/usr/bin/time"
  if [ ! -x "$gnu_time" ]; then
    (cd "$tmp" && apt-get -q -o Dir::Etc::SourceList="$arm_apt/etc/sources.list" \
      -o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$arm_apt/lists" \
      -o Dir::Cache="$arm_apt/cache" -o APT::Sandbox::User=root -o Debug::NoLocking=1 \
      download time >/dev/null && dpkg-deb -x time_*.deb "$ARM_ROOT")
  fi
fi

# A built example's path; ARM binaries start under qemu through binfmt_misc
# (QEMU_LD_PREFIX tells it where the target's libraries are).
exe() {
  if [ "$1" = "$host" ]; then
    dir=$host_dir
  else
    dir=$CARGO_TARGET_DIR/$1/$arm_dir
  fi
  # Examples sit in examples/, the application's binaries at the top.
  if [ -x "$dir/$2" ]; then
    echo "$dir/$2"
  else
    echo "$dir/examples/$2"
  fi
}
export QEMU_LD_PREFIX
QEMU_LD_PREFIX=$(arm_sysroot "$arm")
peak_kib() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# One 50 MiB tool result in a stream-json stream, and its chunked form.
python3 - "$tmp/legacy.jsonl" <<'PY'
import json, sys
size = 50 * 1024 * 1024
row = "drwxr-xr-x 2 root root 4096 Jan  1 00:00 répertoire \"q\" \\ 日本\n"
out = (row * (size // len(row.encode()) + 1)).encode()[:size].decode("utf-8", "ignore")
ts = "2025-10-01T12:00:00.000Z"
with open(sys.argv[1], "w", encoding="utf-8", newline="") as f:
    for e in [
        {"type": "tool_use", "timestamp": ts, "tool_name": "run_shell_command", "tool_id": "t-1", "parameters": {"command": "ls -lR /"}},
        {"type": "tool_result", "timestamp": ts, "tool_id": "t-1", "status": "success", "output": out},
    ]:
        f.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")
PY
"$(exe "$host" acp-rechunk)" <"$tmp/legacy.jsonl" >"$tmp/chunked.jsonl"

rows=()
for t in "$host" "$arm"; do
  if [ "$t" = "$host" ]; then build=release; else build=${ARM_PROFILE:-release}; fi
  # rechunk --join: idle (an empty stream), then the 50 MiB result.
  "$gnu_time" -v -o "$tmp/idle.time" "$(exe "$t" acp-rechunk)" --join </dev/null >/dev/null
  "$gnu_time" -v -o "$tmp/join.time" "$(exe "$t" acp-rechunk)" --join <"$tmp/chunked.jsonl" >"$tmp/joined.jsonl"
  cmp -s "$tmp/legacy.jsonl" "$tmp/joined.jsonl" || { echo "rechunk --join on $t did not restore the stream" >&2; exit 1; }
  rows+=("| \`rechunk --join\`, 50 MiB result | $t ($build build) | $(mib "$(peak_kib "$tmp/join.time")") | $(mib "$(peak_kib "$tmp/idle.time")") |")

  # acp-bridge relaying one 6 MB line; idle = after start-up, before a client.
  for phase in idle relay; do
    rm -f "$tmp/bridge.err"
    setsid "$(exe "$t" acp-bridge)" --port 0 --log-dir "$tmp" --mock-args "--big-bytes 6000000" \
      2>"$tmp/bridge.err" &
    bridge_pgid=$!
    url=
    for _ in $(seq 600); do
      url=$(sed -n 's/.*listening on \(ws:\/\/[^ ]*\).*/\1/p' "$tmp/bridge.err" | head -1)
      [ -n "$url" ] && break
      sleep 0.1
    done
    [ -n "$url" ] || { cat "$tmp/bridge.err" >&2; echo "acp-bridge on $t did not start" >&2; exit 1; }
    if [ "$phase" = relay ]; then
      timeout 300 "$client" --connect "$url/" --cwd "$tmp" --timeout 240 --permission allow --summary-json "print a long sequence" >"$tmp/client.out" 2>&1 ||
        { tail -20 "$tmp/client.out" >&2; echo "the turn through acp-bridge on $t failed" >&2; exit 1; }
    fi
    hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$bridge_pgid/status")
    [ -n "$hwm" ] || { echo "no VmHWM for acp-bridge (pid $bridge_pgid)" >&2; exit 1; }
    kill -TERM -- "-$bridge_pgid" 2>/dev/null || true
    wait "$bridge_pgid" 2>/dev/null || true
    bridge_pgid=
    eval "bridge_$phase=$hwm"
  done
  largest=$(tail -1 "$tmp/client.out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["largestLineBytes"])')
  [ "$largest" -gt 6000000 ] || { echo "the largest line the client saw was $largest bytes" >&2; exit 1; }
  rows+=("| \`acp-bridge\`, one 6 MB line | $t ($build build) | $(mib "$bridge_relay") | $(mib "$bridge_idle") |")
done

echo "| work | target | peak RSS (MiB) | idle RSS (MiB) |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
