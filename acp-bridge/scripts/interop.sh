#!/usr/bin/env bash
# Interop proof for the application (acp-client, acp-mock-agent), against real peers, loopback only.
#
#   scripts/interop.sh
#
# Builds the `acp-client` and `acp-mock-agent` binarys, installs the pinned
# peers (scripts/peers/install.sh, a no-op when present) and checks:
#   - the default mock turn (--summary-json: end_turn, counts > 0), the
#     client's terminal/* (--mock-terminal), permissions rejected by default
#     when no one can answer, a large
#     tool output, --permission reject, fs confinement (symlinks escaping the
#     session directory are refused), Ctrl-C -> session/cancel;
#   - a dead agent (`false`, one that exits mid-turn) and a hung one
#     (`sleep`) end with a clear error and a non-zero exit, quickly;
#   - acp-client against the TypeScript SDK 1.9.0 example agent, full turn;
#   - acp-client against a v2 agent on the TypeScript SDK 2.4.0's draft v2
#     API (scripts/peers/ts_v2_agent.mjs): v1 refused, v2 through the
#     translator, full turn;
#   - the TypeScript SDK 2.4.0 client against our mock_agent, full turn;
#     the same client through acp-client --stdio against the v2 agent;
#   - the SDK 2.4.0's v2 client (scripts/peers/ts_v2_client.mjs) against
#     the mock directly (the SDK's validation error) and through
#     acp-client --stdio (a full turn, translated), against the mock
#     speaking v2 itself (--protocol 2, nothing translated), and through
#     acp-client --stdio against Gemini CLI on the fake model backend;
#   - acp-client against Gemini CLI 0.61.0 offline (scratch HOME, no key):
#     initialize succeeds, session/new reports Gemini's error, non-zero exit;
#   - acp-client against Gemini CLI 0.61.0 with a fake model backend on
#     loopback: a full turn whose new and edited files land.
# Every run is bounded by `timeout`; no process is left behind.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PEERS_DIR="${PEERS_DIR:-$ROOT/target/peers}"

"$ROOT/scripts/build_bins.sh" >/dev/null
TARGET="${CARGO_TARGET_DIR:-$ROOT/../target}"
[[ "$TARGET" = /* ]] || TARGET="$ROOT/../$TARGET"
CLIENT="$TARGET/debug/acp-client"
MOCK="$TARGET/debug/acp-mock-agent"
scripts/peers/install.sh >/dev/null

T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
# shellcheck source=peers/checks.sh
. scripts/peers/checks.sh

# run NAME EXPR -- ARGS...: runs acp-client with ARGS (bounded) and checks.
run() {
  local name="$1" expr="$2"; shift 3
  local t0 rc=0; t0=$(date +%s.%N)
  timeout -k 5 120 "$CLIENT" --summary-json "$@" >"$T/out" 2>"$T/err" || rc=$?
  check "$name" "$expr" "$rc" "$(elapsed "$t0")"
}

project() { # a fresh session directory
  local d="$T/$1"; mkdir -p "$d"; printf '# Demo\n\nA tiny project.\n' >"$d/README.md"; echo "$d"
}

# --- the built-in mock agent -------------------------------------------------
run "mock: default turn" \
  's["stopReason"]=="end_turn" and rc==0 and s["messageChunks"]>0 and s["thoughtChunks"]>0 and s["toolCalls"]>=4 and s["permissionRequests"]==2 and s["fsReads"]>=1 and s["fsWrites"]==1 and s["plans"]>0 and s["badLines"]==0 and s["turnProblems"]==0' --
run "mock: terminal/* (bounded output, exit status, killed process group)" \
  's["stopReason"]=="end_turn" and rc==0 and s["terminals"]==2 and "terminal: exit 3, truncated true, kept 1000 bytes" in out and "killed: signal \"SIGKILL\"" in out' -- --mock-terminal
P=$(project default-permission); t0=$(date +%s.%N); rc=0
timeout -k 5 60 "$CLIENT" --summary-json --mock-terminal --cwd "$P" </dev/null >"$T/out" 2>"$T/err" || rc=$?
check "mock in the user's directory, no terminal: permissions rejected by default" \
  's["stopReason"]=="end_turn" and rc==0 and s["permissionRequests"]==3 and s["permissionsAllowed"]==0 and s["terminals"]==0 and s["fsWrites"]==0' \
  "$rc" "$(elapsed "$t0")"
P=$(project big)
run "mock: --big-bytes 2000000 (one 2 MB line)" \
  's["stopReason"]=="end_turn" and rc==0 and s["largestLineBytes"]>2000000' -- --cwd "$P" --big-bytes 2000000
P=$(project reject)
run "mock: --permission reject" \
  's["stopReason"]=="end_turn" and rc==0 and s["permissionRequests"]==2 and s["permissionsAllowed"]==0 and s["fsWrites"]==0' \
  -- --cwd "$P" --permission reject
[[ ! -e "$P/NOTES.md" ]] || { echo "FAIL reject: NOTES.md was written"; FAILED=1; }

t0=$(date +%s.%N); rc=0
printf '2\n3\n' | timeout -k 5 60 "$CLIENT" --summary-json --permission ask >"$T/out" 2>"$T/err" || rc=$?
check "mock: --permission ask (allow once, then reject)" \
  's["stopReason"]=="end_turn" and rc==0 and s["permissionRequests"]==2 and s["permissionsAllowed"]==1 and s["fsWrites"]==0 and "choose 1-3" in out' \
  "$rc" "$(elapsed "$t0")"
t0=$(date +%s.%N); rc=0
timeout -k 5 60 "$CLIENT" --summary-json --permission ask </dev/null >"$T/out" 2>"$T/err" || rc=$?
check "mock: --permission ask, stdin closed: rejects" \
  's["stopReason"]=="end_turn" and rc==0 and s["permissionRequests"]==2 and s["permissionsAllowed"]==0' \
  "$rc" "$(elapsed "$t0")"

P=$(project confined); mkdir -p "$T/outside"
echo "secret" >"$T/outside/secret.txt"; echo "keep" >"$T/outside/victim.txt"
rm "$P/README.md"; ln -s "$T/outside/secret.txt" "$P/README.md"   # read escapes
ln -s "$T/outside/victim.txt" "$P/NOTES.md"                         # write escapes
run "mock: fs confined (symlinks out of the session dir refused)" \
  's["stopReason"]=="end_turn" and rc==0 and s["fsRefused"]>=2 and s["fsWrites"]==0 and "secret" not in out' \
  -- --cwd "$P" --permission allow
[[ "$(cat "$T/outside/victim.txt")" == "keep" ]] || { echo "FAIL confined: the file outside was written"; FAILED=1; }

# Ctrl-C once the turn streams. $T/out is emptied first: the last check's
# output also says "Surveying", and a SIGINT that reaches the forked shell
# before it has exec'd the client kills the shell (and runs its copy of
# this script's EXIT trap, which deletes $T).
t0=$(date +%s.%N); rc=0
: >"$T/out"
"$CLIENT" --summary-json --mock-delay-ms 200 >"$T/out" 2>"$T/err" & pid=$!
for _ in $(seq 1 300); do grep -q "Surveying" "$T/out" 2>/dev/null && break; sleep 0.1; done
kill -INT "$pid"; wait "$pid" || rc=$?
check "mock: Ctrl-C sends session/cancel" 's["stopReason"]=="cancelled" and rc==130 and s["cancelledByUser"]' "$rc" "$(elapsed "$t0")"

# --- dead and hung agents ----------------------------------------------------
run "dead agent (false): quick non-zero exit" \
  'rc!=0 and secs<5 and "initialize" in s["error"] and "exit" in s["error"]' -- --agent false
cat >"$T/dying.sh" <<'EOF'
#!/bin/sh
read -r l; echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'
read -r l; echo '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}'
read -r l; echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"about to crash"}}}}'
echo "dying agent: bye" >&2
exit 3
EOF
chmod +x "$T/dying.sh"
run "agent exiting mid-turn: quick non-zero exit" \
  'rc!=0 and secs<5 and "session/prompt" in s["error"] and "exit status: 3" in s["error"] and s["messageChunks"]==1 and "dying agent: bye" in err' \
  -- --agent "$T/dying.sh" --cwd "$(project dying)"
run "hung agent (sleep): --timeout 2 error" \
  'rc!=0 and secs<10 and "timed out" in s["error"]' -- --agent "sleep 1000.4242" --timeout 2
if pgrep -f "sleep 1000.4242" >/dev/null; then echo "FAIL hung agent left running"; FAILED=1; fi

# --- real peers --------------------------------------------------------------
P=$(project sdk19)
run "acp-client vs TS SDK 1.9.0 example agent: full turn" \
  's["stopReason"]=="end_turn" and rc==0 and s["messageChunks"]>0 and s["toolCalls"]>0 and s["permissionRequests"]>0 and s["badLines"]==0 and s["turnProblems"]==0' \
  -- --agent "node $PEERS_DIR/node_modules/sdk19/dist/examples/agent.js" --cwd "$P" --timeout 30 --permission allow

P=$(project sdk24-v2)
run "acp-client vs a TS SDK 2.4.0 v2 agent (translated): full turn" \
  's["stopReason"]=="end_turn" and rc==0 and s["agent"]=="ts-v2-agent 2.4.0" and "protocol v2, translated" in out and s["messageChunks"]==3 and s["thoughtChunks"]==1 and s["toolCalls"]==1 and s["plans"]==3 and s["permissionsAllowed"]==1 and s["badLines"]==0 and s["turnProblems"]==0 and "rror" not in err' \
  -- --agent "node $ROOT/scripts/peers/ts_v2_agent.mjs" --cwd "$P" --timeout 30 --permission allow

# The SDK's v2 agent withdraws its unanswered permission request
# ($/cancel_request, the SDK's own for a request whose cancellation signal
# aborts) while acp-client asks the user (stdin held open, no answer):
# acp-client dismisses the question and answers `cancelled`; the turn ends
# cancelled, not by the user.
P=$(project sdk24-v2-withdraw); t0=$(date +%s.%N); rc=0
mkfifo "$T/ask"
TS_V2_AGENT_WITHDRAW_MS=700 timeout -k 5 60 "$CLIENT" --summary-json --agent "node $ROOT/scripts/peers/ts_v2_agent.mjs" \
  --cwd "$P" --timeout 30 --permission ask <"$T/ask" >"$T/out" 2>"$T/err" & pid=$!
exec 7>"$T/ask"
wait "$pid" || rc=$?
exec 7>&-
check "acp-client vs a TS SDK 2.4.0 v2 agent: its \$/cancel_request withdraws the question, answered cancelled" \
  's["stopReason"]=="cancelled" and not s["cancelledByUser"] and s["permissionRequests"]==1 and "withdrawn by the agent" in out and "permission request withdrawn, answered cancelled" in err' \
  "$rc" "$(elapsed "$t0")"

P=$(project sdk24); t0=$(date +%s.%N); rc=0
mkfifo "$T/to_agent" "$T/to_client"
# Open order matters (opening a FIFO blocks until its other end is opened):
# the agent opens to_client first, and so does the client.
timeout -k 5 60 "$MOCK" >"$T/to_client" <"$T/to_agent" 2>"$T/agent.err" & apid=$!
timeout -k 5 60 node scripts/peers/ts_sdk_client.mjs "$P" "Write some notes." <"$T/to_client" >"$T/to_agent" 2>"$T/err" || rc=$?
wait "$apid" || rc=$((rc + 100))
echo '{}' >"$T/out"
check "TS SDK 2.4.0 client vs mock_agent: full turn, no errors" \
  'rc==0 and "stop end_turn" in err and "rror" not in err and open("'"$T/agent.err"'").read()=="" and open("'"$P/NOTES.md"'").read().startswith("# Notes")' \
  "$rc" "$(elapsed "$t0")"

# The SDK's v1 client as an editor on acp-client --stdio, in front of the
# SDK's v2 agent: acp-client puts the v1 client's translator between.
P=$(project sdk24-stdio-v2); t0=$(date +%s.%N); rc=0
mkfifo "$T/to_relay" "$T/from_relay"
timeout -k 5 60 "$CLIENT" --stdio --agent "node $ROOT/scripts/peers/ts_v2_agent.mjs" --cwd "$P" \
  >"$T/from_relay" <"$T/to_relay" 2>"$T/relay.err" & apid=$!
timeout -k 5 60 node scripts/peers/ts_sdk_client.mjs "$P" "Write some notes." <"$T/from_relay" >"$T/to_relay" 2>"$T/err" || rc=$?
wait "$apid" || rc=$((rc + 100))
echo '{}' >"$T/out"
check "TS SDK 2.4.0 v1 client via acp-client --stdio vs a TS SDK v2 agent: full turn" \
  'rc==0 and "initialized ts-v2-agent" in err and "stop end_turn" in err and "rror" not in err and open("'"$T/relay.err"'").read()==""' \
  "$rc" "$(elapsed "$t0")"

# The SDK's v2 client (scripts/peers/ts_v2_client.mjs, an editor speaking
# ACP v2) and our v1 mock: directly, the SDK refuses the v1 initialize
# answer with a raw validation error (no JSON-RPC code); through
# acp-client --stdio, whose v2 client translator sits between, a full turn.
P=$(project sdk24-v2-client-direct); t0=$(date +%s.%N); rc=0
timeout -k 5 60 node scripts/peers/ts_v2_client.mjs --cwd "$P" -- "$MOCK" >"$T/out" 2>"$T/err" || rc=$?
check "TS SDK 2.4.0 v2 client vs the v1 mock directly: the SDK's validation error" \
  'rc==1 and s["stopReason"] is None and "info" in s["error"] and "expected object" in s["error"] and "(no code)" in s["error"]' \
  "$rc" "$(elapsed "$t0")"
P=$(project sdk24-v2-client); t0=$(date +%s.%N); rc=0
timeout -k 5 60 node scripts/peers/ts_v2_client.mjs --cwd "$P" -- "$CLIENT" --stdio --agent "$MOCK" --cwd "$P" \
  >"$T/out" 2>"$T/err" || rc=$?
check "TS SDK 2.4.0 v2 client via acp-client --stdio vs the v1 mock: full turn" \
  'rc==0 and s["protocolVersion"]==2 and s["agent"].startswith("acp-codec-mock-agent ") and s["stopReason"]=="end_turn" and s["permissions"]==2 and "wrote NOTES.md" in s["text"] and s["error"] is None and "user_message" in s["kinds"] and "plan_update" in s["kinds"]' \
  "$rc" "$(elapsed "$t0")"

# The same SDK v2 client and our mock speaking v2 itself (--protocol 2):
# v2 on both ends, nothing translated.
P=$(project sdk24-v2-client-v2-mock); t0=$(date +%s.%N); rc=0
timeout -k 5 60 node scripts/peers/ts_v2_client.mjs --cwd "$P" -- "$MOCK" --protocol 2 \
  >"$T/out" 2>"$T/err" || rc=$?
check "TS SDK 2.4.0 v2 client vs the v2 mock (--protocol 2): full turn" \
  'rc==0 and s["protocolVersion"]==2 and s["agent"].startswith("acp-codec-mock-agent ") and s["stopReason"]=="end_turn" and s["permissions"]>=1 and s["error"] is None' \
  "$rc" "$(elapsed "$t0")"

H="$T/gemini-home"; mkdir -p "$H"; P=$(project gemini); t0=$(date +%s.%N); rc=0
env -u GEMINI_API_KEY -u GOOGLE_API_KEY -u GOOGLE_GENAI_USE_VERTEXAI -u GOOGLE_CLOUD_PROJECT \
  HOME="$H" GEMINI_CLI_NO_RELAUNCH=1 timeout -k 5 120 \
  "$CLIENT" --summary-json --agent "$PEERS_DIR/node_modules/.bin/gemini --acp" --cwd "$P" --timeout 60 \
  >"$T/out" 2>"$T/err" || rc=$?
check "acp-client vs Gemini CLI 0.61.0 offline: clean session/new error" \
  'rc==1 and s["agent"]=="gemini-cli 0.61.0" and s["sessionId"] is None and "session/new" in s["error"] and "-32000" in s["error"] and "API key" in s["error"]' \
  "$rc" "$(elapsed "$t0")"

# A real turn with Gemini CLI against the fake model backend on loopback
# (scripts/peers/fake_gemini.py, script "acp"): it reads README.md, edits
# src/app.py and a 68 KB file, writes the NEW file NOTES.md and the existing
# VERSION, and runs shell commands, each behind a permission prompt. The
# new file lands only because acp-client answers Gemini's read of a missing
# file by the crate's quirks table (acp_codec::acp::quirks).
H="$T/gemini-turn-home"; mkdir -p "$H/.gemini"; P=$(project gemini-turn)
printf '{"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"security":{"folderTrust":{"enabled":false},"auth":{"selectedType":"gemini-api-key"}}}\n' >"$H/.gemini/settings.json"
printf '1.2.3\n' >"$P/VERSION"; mkdir -p "$P/src" "$P/data"
printf 'def greet():\n    return "hello"\n\n\ndef add(a, b):\n    return a + b\n' >"$P/src/app.py"
python3 -c 'import sys; sys.path.insert(0, "scripts/peers"); import record; sys.stdout.write(record.big_log())' >"$P/data/log.txt"
coproc FAKE { exec python3 scripts/peers/fake_gemini.py --script acp --idle 60 --max-lifetime 150; }
read -r PORT <&"${FAKE[0]}"
t0=$(date +%s.%N); rc=0
env -u GOOGLE_API_KEY -u GOOGLE_GENAI_USE_VERTEXAI -u GOOGLE_CLOUD_PROJECT \
  HOME="$H" GEMINI_CLI_NO_RELAUNCH=1 GEMINI_API_KEY=dummy-key-for-fake-backend \
  GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" timeout -k 5 150 \
  "$CLIENT" --summary-json --agent "$PEERS_DIR/node_modules/.bin/gemini --acp" --cwd "$P" \
  --permission allow --timeout 60 "Update greet, write notes and run the checks." \
  >"$T/out" 2>"$T/err" || rc=$?
kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true
check "acp-client vs Gemini CLI 0.61.0 (fake model): full turn, files land" \
  'rc==0 and s["stopReason"]=="end_turn" and s["agent"]=="gemini-cli 0.61.0" and s["permissionRequests"]>=3 and s["fsWrites"]>=3 and s["badLines"]==0 and s["turnProblems"]==0 and "answered empty text" in out and "Error checking existing file" not in out' \
  "$rc" "$(elapsed "$t0")"
grep -q "greet() now takes a name" "$P/NOTES.md" 2>/dev/null || { echo "FAIL gemini turn: NOTES.md (a new file) did not land"; FAILED=1; }
grep -q '^1.2.4$' "$P/VERSION" || { echo "FAIL gemini turn: VERSION was not rewritten"; FAILED=1; }
grep -q 'def greet(name):' "$P/src/app.py" || { echo "FAIL gemini turn: src/app.py was not edited"; FAILED=1; }
grep -q '00042	entry "42" (checked)' "$P/data/log.txt" || { echo "FAIL gemini turn: data/log.txt was not edited"; FAILED=1; }
# The same scripted turn from the SDK's v2 client (ts_v2_client.mjs)
# through acp-client --stdio: Gemini CLI speaks v1, acp-client translates;
# every permission answered, the files Gemini writes itself (a v2 client
# offers no fs/*) land.
H="$T/gemini-v2-home"; mkdir -p "$H"; cp -r "$T/gemini-turn-home/.gemini" "$H/"
P=$(project gemini-v2); printf '1.2.3\n' >"$P/VERSION"; mkdir -p "$P/src" "$P/data"
printf 'def greet():\n    return "hello"\n\n\ndef add(a, b):\n    return a + b\n' >"$P/src/app.py"
python3 -c 'import sys; sys.path.insert(0, "scripts/peers"); import record; sys.stdout.write(record.big_log())' >"$P/data/log.txt"
coproc FAKE { exec python3 scripts/peers/fake_gemini.py --script acp --idle 60 --max-lifetime 150; }
read -r PORT <&"${FAKE[0]}"
t0=$(date +%s.%N); rc=0
env -u GOOGLE_API_KEY -u GOOGLE_GENAI_USE_VERTEXAI -u GOOGLE_CLOUD_PROJECT \
  HOME="$H" GEMINI_CLI_NO_RELAUNCH=1 GEMINI_API_KEY=dummy-key-for-fake-backend \
  GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" timeout -k 5 150 \
  node scripts/peers/ts_v2_client.mjs --cwd "$P" --prompt "Update greet, write notes and run the checks." \
  -- "$CLIENT" --stdio --agent "$PEERS_DIR/node_modules/.bin/gemini --acp" --cwd "$P" \
  >"$T/out" 2>"$T/err" || rc=$?
kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true
check "TS SDK 2.4.0 v2 client via acp-client --stdio vs Gemini CLI 0.61.0 (fake model): full turn" \
  'rc==0 and s["protocolVersion"]==2 and s["agent"]=="gemini-cli 0.61.0" and s["stopReason"]=="end_turn" and s["permissions"]>=3 and "greet" in s["text"] and s["error"] is None and "greet() now takes a name" in f("NOTES.md") and f("VERSION")=="1.2.4\n"' \
  "$rc" "$(elapsed "$t0")"
# Cancelled mid-way: a slow fake model (1.5 s between streamed events);
# Ctrl-C once the turn streams sends session/cancel, Gemini ends the turn
# with stopReason "cancelled", acp-client exits 130. `timeout --foreground`:
# without it, timeout passes a SIGINT on to acp-client and then again to its
# whole process group, so acp-client sometimes saw two presses (the second
# means "stop now") and the check failed about one run in four.
H="$T/gemini-cancel-home"; mkdir -p "$H"; cp -r "$T/gemini-turn-home/.gemini" "$H/"
P=$(project gemini-cancel)
coproc FAKE { exec python3 scripts/peers/fake_gemini.py --script acp --event-delay 1.5 --idle 60 --max-lifetime 150; }
read -r PORT <&"${FAKE[0]}"
t0=$(date +%s.%N); rc=0
: >"$T/out" # the last check's output says "Surveying" too
env -u GOOGLE_API_KEY -u GOOGLE_GENAI_USE_VERTEXAI -u GOOGLE_CLOUD_PROJECT \
  HOME="$H" GEMINI_CLI_NO_RELAUNCH=1 GEMINI_API_KEY=dummy-key-for-fake-backend \
  GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" timeout --foreground -k 5 150 \
  "$CLIENT" --summary-json --agent "$PEERS_DIR/node_modules/.bin/gemini --acp" --cwd "$P" \
  --permission allow --timeout 60 "Update greet, write notes and run the checks." \
  >"$T/out" 2>"$T/err" & cpid=$!
for _ in $(seq 1 300); do grep -q "Surveying" "$T/out" 2>/dev/null && break; sleep 0.1; done
kill -INT "$cpid"; wait "$cpid" || rc=$?
kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true
check "acp-client vs Gemini CLI 0.61.0: Ctrl-C mid-turn, stop reason cancelled" \
  'rc==130 and s["stopReason"]=="cancelled" and s["cancelledByUser"] and s["fsWrites"]==0' \
  "$rc" "$(elapsed "$t0")"
# Nothing may outlive the checks: no process with its cwd in the scratch dir.
sleep 0.2
left=$(for p in /proc/[0-9]*; do readlink "$p/cwd" 2>/dev/null || true; done | grep -c "^$T" || true)
if [[ "$left" != "0" ]]; then echo "FAIL $left process(es) left running in $T"; FAILED=1; fi

printf 'interop: total %.1fs\n' "$(elapsed "$START_ALL")"
exit "$FAILED"
