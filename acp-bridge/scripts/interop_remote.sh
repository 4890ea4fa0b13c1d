#!/usr/bin/env bash
# Interop proof for ACP's remote transport against the official TypeScript
# SDK 2.4.0, both ways, loopback only.
#
#   scripts/interop_remote.sh
#
# Starts acp-bridge (built-in mock agent, a 5 MB tool-output line) on a free
# loopback port and runs scripts/peers/ts_remote_client.mjs over each
# profile of /acp: `experimental/ws-client` (WebSocket) and
# `experimental/http-client` (Streamable HTTP). Each must finish a turn with
# end_turn, answer at least one permission request and receive the 5 MB
# update intact, then load the session on a new connection and have its
# whole history before the load's answer: compared by content, the
# history is the user's prompt and every update of the turn (the 5 MB one
# too), each equal as a JSON value to what the turn delivered. The bridge is then stopped and another started on the
# same agent state (the mock agent's --state-dir, as servers behind one
# address share it): each SDK client loads its session there, on a server
# that has never seen it, and must again have its whole history, by
# content, before the answer. Then `acp-client --connect` runs a full turn (with a
# permission request) against the SDK's own server (`experimental/server`,
# scripts/peers/ts_remote_server.mjs) hosting the SDK's example agent, over
# each profile it offers: http:// and ws://. Versions bridged by acp-bridge:
# the SDK's v1 client to the SDK's v2 agent (scripts/peers/ts_v2_agent.mjs),
# the SDK's v2 client (scripts/peers/ts_remote_client_v2.mjs, over each
# profile) to the v1 mock, each a turn with a permission; and v2 on both
# ends, untranslated: the SDK's v2 client to the v2 mock and to the SDK's
# v2 agent. Every run is bounded by
# `timeout`; the bridge and the server are stopped by process id on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PEERS_DIR="${PEERS_DIR:-$ROOT/target/peers}"

"$ROOT/scripts/build_bins.sh" >/dev/null
TARGET="${CARGO_TARGET_DIR:-$ROOT/../target}"
[[ "$TARGET" = /* ]] || TARGET="$ROOT/../$TARGET"
BRIDGE="$TARGET/debug/acp-bridge"
CLIENT="$TARGET/debug/acp-client"
MOCK="$TARGET/debug/acp-mock-agent"
scripts/peers/install.sh >/dev/null

T="$(mktemp -d)"
BRIDGE_PID=""
SERVER_PID=""
cleanup() {
  for pid in $BRIDGE_PID $SERVER_PID; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
BIG=5000000

# A bridge on the mock agent keeping its sessions in $T/state (or on the
# agent command $1); sets BRIDGE_PID and ADDR.
start_bridge() {
  : >"$T/bridge.err"
  timeout -k 5 300 "$BRIDGE" --port 0 --log-dir "$T" --agent "${1:-$MOCK --big-bytes $BIG --state-dir $T/state}" 2>"$T/bridge.err" &
  BRIDGE_PID=$!
  ADDR=""
  for _ in $(seq 1 100); do
    ADDR="$(grep -o 'listening on ws://[^ ]*' "$T/bridge.err" | sed 's|.*ws://||' || true)"
    [[ -n "$ADDR" ]] && break
    sleep 0.1
  done
  [[ -n "$ADDR" ]] || { echo "interop_remote: acp-bridge did not start"; cat "$T/bridge.err"; exit 1; }
}
start_bridge

# The history a load replayed ($2, the updates as a JSON list) against the
# turn ($1): the user's prompt once, as a `user_message_chunk`, and
# besides it the turn's updates, each equal as a JSON value to what the
# client got during the turn, in order, nothing else.
PROMPT="Run the tool, please."
same_history() {
  python3 - "$1" "$2" "$PROMPT" <<'PY'
import json, sys
turn = json.load(open(sys.argv[1]))
history = json.load(open(sys.argv[2]))
said = {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": sys.argv[3]}}
if history.count(said) != 1 or said in turn:
    print(f"the prompt is in the history {history.count(said)} times, in the turn {turn.count(said)}")
    sys.exit(1)
history = [u for u in history if u != said]
want = turn
if history != want:
    n = next((i for i, (a, b) in enumerate(zip(history, want)) if a != b), min(len(history), len(want)))
    show = lambda v: json.dumps(v)[:300]
    print(f"history (the prompt aside) differs from the turn at update {n} of {len(history)} (want {len(want)}):")
    print("  got  " + (show(history[n]) if n < len(history) else "(nothing)"))
    print("  want " + (show(want[n]) if n < len(want) else "(nothing)"))
    sys.exit(1)
PY
}

FAILED=0
run() {
  local profile="$1" url="$2"; shift 2
  local start rc=0 secs
  start=$(date +%s.%N)
  DUMP="$T/dump.$profile" timeout -k 5 60 node "$@" scripts/peers/ts_remote_client.mjs "$profile" "$url" "$T" >"$T/out" 2>"$T/err" || rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  if [[ $rc -eq 0 ]] && python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
ok = s["stopReason"] == "end_turn" and s["permissions"] >= 1 and s["largest"] >= int(sys.argv[2]) \
    and s["history"] == s["updates"] + 1
sys.exit(0 if ok else 1)' "$T/out" "$BIG" && same_history "$T/dump.$profile.turn.json" "$T/dump.$profile.history.json" >"$T/same" 2>&1; then
    printf 'ok   %-58s %6.2fs  %s\n' "TS SDK 2.4.0 $profile client through acp-bridge" "$secs" "$(tail -1 "$T/out")"
    tail -1 "$T/out" >"$T/turn.$profile"
  else
    printf 'FAIL %-58s %6.2fs (exit %s)\n' "TS SDK 2.4.0 $profile client through acp-bridge" "$secs" "$rc"
    cat "$T/same" "$T/err" 2>/dev/null || true
    tail -c 2000 "$T/out"
    FAILED=1
  fi
}
# Node 20 has WebSocket behind a flag; later versions have it built in.
WS_FLAG=()
if node -e 'process.exit(typeof WebSocket === "function" ? 1 : 0)'; then WS_FLAG=(--experimental-websocket); fi
run ws "ws://$ADDR/acp" "${WS_FLAG[@]}"
run http "http://$ADDR/acp"
kill "$BRIDGE_PID" 2>/dev/null || true
wait "$BRIDGE_PID" 2>/dev/null || true
BRIDGE_PID=""

# Another bridge on the same agent state: each client's session loaded
# there (on Streamable HTTP the SDK's client opens the session's stream
# before it sends the load).
start_bridge
load_elsewhere() {
  local profile="$1" url="$2"; shift 2
  local name="TS SDK 2.4.0 $profile client loads its session on another bridge"
  if [[ ! -f "$T/turn.$profile" ]]; then
    printf 'FAIL %-58s (no session: its turn failed)\n' "$name"
    FAILED=1
    return
  fi
  local session rc=0
  session="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sessionId"])' "$T/turn.$profile")"
  DUMP="$T/dump.$profile.elsewhere" timeout -k 5 60 node "$@" scripts/peers/ts_remote_client.mjs "$profile" "$url" "$T" "$session" >"$T/out" 2>"$T/err" || rc=$?
  if [[ $rc -eq 0 ]] \
    && same_history "$T/dump.$profile.turn.json" "$T/dump.$profile.elsewhere.history.json" >"$T/same" 2>&1; then
    printf 'ok   %-58s %s\n' "$name" "$(tail -1 "$T/out")"
  else
    printf 'FAIL %-58s (exit %s)\n' "$name" "$rc"
    cat "$T/same" "$T/out" "$T/err" 2>/dev/null || true
    FAILED=1
  fi
}
load_elsewhere ws "ws://$ADDR/acp" "${WS_FLAG[@]}"
load_elsewhere http "http://$ADDR/acp"
kill "$BRIDGE_PID" 2>/dev/null || true
wait "$BRIDGE_PID" 2>/dev/null || true
BRIDGE_PID=""

# Versions bridged by the server: the SDK's v1 client (ws-client) to the
# SDK's v2 agent (scripts/peers/ts_v2_agent.mjs, which refuses v1: the
# server asks again in v2 through its translator), and the SDK's v2 client
# (experimental/v2, scripts/peers/ts_remote_client_v2.mjs) over each
# profile to the v1 mock (which answers v2 with version 1: the server asks
# again in v1). Each a full turn, end_turn, a permission allowed, and the
# server's log saying it bridged (@ADDR@ in the command: the bridge's
# address). The SDK's v2 agent takes one `initialize` per process once a
# session ran, so it serves one client here.
bridged() {
  local name="$1" agent="$2"; shift 2
  local start rc=0 secs
  start_bridge "$agent"
  start=$(date +%s.%N)
  timeout -k 5 60 "${@//@ADDR@/$ADDR}" >"$T/out" 2>"$T/err" || rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  local said=0; grep -q 'bridged to v' "$T/bridge.err" && said=1
  if [[ $rc -eq 0 ]] && [[ $said -eq ${EXPECT_BRIDGED:-1} ]] && python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
sys.exit(0 if s["stopReason"] == "end_turn" and s["permissions"] >= 1 else 1)' "$T/out"; then
    printf 'ok   %-58s %6.2fs  %s\n' "$name" "$secs" "$(tail -1 "$T/out")"
  else
    printf 'FAIL %-58s %6.2fs (exit %s)\n' "$name" "$secs" "$rc"
    tail -c 2000 "$T/out"; cat "$T/err"; tail -20 "$T/bridge.err"
    FAILED=1
  fi
  kill "$BRIDGE_PID" 2>/dev/null || true
  wait "$BRIDGE_PID" 2>/dev/null || true
  BRIDGE_PID=""
}
bridged "TS SDK 2.4.0 v1 ws client -> acp-bridge -> TS SDK v2 agent" "node $ROOT/scripts/peers/ts_v2_agent.mjs" \
  env TURN_ONLY=1 node "${WS_FLAG[@]}" scripts/peers/ts_remote_client.mjs ws "ws://@ADDR@/acp" "$T"
for profile in ws http; do
  bridged "TS SDK 2.4.0 v2 $profile client -> acp-bridge -> v1 mock agent" "$MOCK" \
    node "${WS_FLAG[@]}" scripts/peers/ts_remote_client_v2.mjs "$profile" "$profile://@ADDR@/acp" "$T"
done
# v2 on both ends through the server, nothing translated (the log must
# not say bridged): the SDK's v2 client to our mock speaking v2, and to
# the SDK's own v2 agent.
EXPECT_BRIDGED=0 bridged "TS SDK 2.4.0 v2 ws client -> acp-bridge -> v2 mock agent" "$MOCK --protocol 2" \
  node "${WS_FLAG[@]}" scripts/peers/ts_remote_client_v2.mjs ws "ws://@ADDR@/acp" "$T"
EXPECT_BRIDGED=0 bridged "TS SDK 2.4.0 v2 ws client -> acp-bridge -> TS SDK v2 agent" "node $ROOT/scripts/peers/ts_v2_agent.mjs" \
  node "${WS_FLAG[@]}" scripts/peers/ts_remote_client_v2.mjs ws "ws://@ADDR@/acp" "$T"

timeout -k 5 120 node scripts/peers/ts_remote_server.mjs 110 >"$T/server.out" 2>"$T/server.err" &
SERVER_PID=$!
URL=""
for _ in $(seq 1 100); do
  URL="$(grep -o 'http://[^ ]*' "$T/server.out" || true)"
  [[ -n "$URL" ]] && break
  sleep 0.1
done
[[ -n "$URL" ]] || { echo "interop_remote: the SDK server did not start"; cat "$T/server.err"; exit 1; }
for url in "$URL" "${URL/http:/ws:}"; do
  start=$(date +%s.%N)
  rc=0
  timeout -k 5 60 "$CLIENT" --connect "$url" --cwd "$T" --permission allow --summary-json >"$T/out" 2>"$T/err" || rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  name="acp-client --connect ${url%%:*}:// against the SDK 2.4.0 server"
  if [[ $rc -eq 0 ]] && python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
sys.exit(0 if s["stopReason"] == "end_turn" and s["permissionRequests"] >= 1 and s["toolCalls"] >= 1 else 1)' "$T/out"; then
    printf 'ok   %-58s %6.2fs\n' "$name" "$secs"
  else
    printf 'FAIL %-58s %6.2fs (exit %s)\n' "$name" "$secs" "$rc"
    tail -3 "$T/out" "$T/err"
    FAILED=1
  fi
done
exit "$FAILED"
