#!/usr/bin/env bash
# Interop proof for each user's room: real agents from npm complete full
# turns as a user's own agent of `acp-bridge` with a token file, confined
# (Landlock, a PID namespace of their own, `--agent-net` to the fake
# model's port only), their secrets from the token file only. Loopback only.
#
#   scripts/interop_rooms.sh
#
# Installs the pinned peers (scripts/peers/install.sh for Gemini CLI,
# scripts/interop_qwen.sh --install-only for Qwen Code,
# scripts/peers/install_claude.sh for Claude's ACP adapter; no-ops when
# present), builds acp-bridge and acp-client, checks the kernel
# (`acp-bridge --check-confinement`; a kernel that cannot confine fails
# this script, it never skips), then for each agent:
#   - a token file of two users; ana's entry gives her agent its key and
#     its fake model's base URL (`env`), nothing else of ours reaches it;
#   - acp-bridge in front of `gemini --acp` / `qwen --acp` /
#     `claude-agent-acp`, the agent's
#     HOME, working and temp directories under the state directory;
#   - acp-client, as ana, over WebSocket, from a project directory of
#     its own (the user's machine, outside the room): one turn that reads,
#     edits and writes files and runs shell commands. The agent is told
#     the room's working directory as its cwd (it holds a copy of the
#     project, as an operator's checkout would); what it writes through
#     fs/* lands in the client's --cwd, what its shell writes lands in the
#     room (Claude Code writes every file itself: all in the room, the
#     tool calls naming the client's paths);
#   - the bridge stopped: nothing the agent started is left running.
# Every run is bounded by `timeout`; no process is left behind.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PEERS_DIR="${PEERS_DIR:-$ROOT/target/peers}"
scripts/peers/install.sh >/dev/null
QWEN_PEERS_DIR="$(scripts/interop_qwen.sh --install-only 2>/dev/null | tail -1)"
"$ROOT/scripts/build_bins.sh" >/dev/null
TARGET="${CARGO_TARGET_DIR:-$ROOT/../target}"
[[ "$TARGET" = /* ]] || TARGET="$ROOT/../$TARGET"
BRIDGE="$TARGET/debug/acp-bridge"
CLIENT="$TARGET/debug/acp-client"
GEMINI="$PEERS_DIR/node_modules/.bin/gemini"
QWEN="$QWEN_PEERS_DIR/node_modules/.bin/qwen"
CLAUDE="$(scripts/peers/install_claude.sh)/node_modules/.bin/claude-agent-acp"

T="$(mktemp -d)"
BRIDGE_PID=""
FAKE_PID=""
cleanup() {
  [[ -n "$BRIDGE_PID" ]] && kill -KILL "$BRIDGE_PID" 2>/dev/null || true
  [[ -n "$FAKE_PID" ]] && kill "$FAKE_PID" 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT
# shellcheck source=peers/checks.sh
. scripts/peers/checks.sh

ANA=ana-0123456789abcdef-token
BO=bo-0123456789abcdef-token

echo "interop_rooms: what this kernel enforces (acp-bridge --check-confinement):"
# Exit 0: fully confined; 3: partly (agents still run confined); 1: not.
rc=0
"$BRIDGE" --check-confinement | sed 's/^/  /' || true
"$BRIDGE" --check-confinement >/dev/null || rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
  fail "the kernel confines agents (Landlock ABI 3, user and PID namespaces)" 0
  exit 1
fi

# start_bridge NAME AGENT PORT: acp-bridge for the users of $T/NAME/tokens.json,
# agents confined, TCP to PORT only; sets BRIDGE_PID and ADDR.
start_bridge() {
  local dir="$T/$1" line=""
  mkdir -p "$dir/logs"
  "$BRIDGE" --port 0 --log-dir "$dir/logs" --token-file "$dir/tokens.json" \
    --state-dir "$dir/state" --agent "$2" --agent-net "$3" --agent-idle-secs 600 \
    </dev/null 2>"$dir/bridge.err" &
  BRIDGE_PID=$!
  for _ in $(seq 1 200); do
    line="$(grep -m1 -o 'listening on ws://[^ ]*' "$dir/bridge.err" 2>/dev/null || true)"
    [[ -n "$line" ]] && break
    sleep 0.05
  done
  ADDR="${line#listening on ws://}"
  [[ -n "$ADDR" ]] || { echo "acp-bridge did not start:"; cat "$dir/bridge.err"; exit 1; }
}

# stop_bridge NAME: SIGTERM, then checks no process of the agent's room
# (its cwd under the state directory) is left.
stop_bridge() {
  local dir="$T/$1" t0 left
  t0=$(date +%s.%N)
  kill -TERM "$BRIDGE_PID" 2>/dev/null || true
  wait "$BRIDGE_PID" 2>/dev/null || true
  BRIDGE_PID=""
  for _ in $(seq 1 50); do
    left="$(for p in /proc/[0-9]*; do [[ "$(readlink "$p/cwd" 2>/dev/null)" == "$dir/state"* ]] && echo "${p#/proc/}"; done || true)"
    [[ -z "$left" ]] && break
    sleep 0.1
  done
  if [[ -n "$left" ]]; then
    fail "$1: nothing the agent started outlives the bridge's SIGTERM" "$(elapsed "$t0")"
    ps -o pid,args -p "$(echo $left | tr ' ' ,)" | cut -c1-200
    for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
  else
    pass "$1: nothing the agent started outlives the bridge's SIGTERM" "$(elapsed "$t0")"
  fi
}

# tokens NAME ENV-JSON: the token file, ana's agent with ENV-JSON.
tokens() {
  printf '{"tokens":{"%s":{"userId":"ana","permissions":["read","write"],"env":%s},"%s":{"userId":"bo","permissions":["read"],"env":{"BO_ONLY":"x"}}}}\n' \
    "$ANA" "$2" "$BO" >"$T/$1/tokens.json"
}

# --- Gemini CLI ---------------------------------------------------------------
# The turn of scripts/interop.sh against scripts/peers/fake_gemini.py: reads
# README.md, edits src/app.py and a 68 KB file, writes NOTES.md and VERSION,
# runs shell commands, each behind a permission prompt.
N=gemini; H="$T/$N/state/ana/home"; W="$T/$N/state/ana/work"; P="$T/$N/client/project"
mkdir -p "$H/.gemini" "$P/src" "$P/data" "$W"
printf '{"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"security":{"folderTrust":{"enabled":false},"auth":{"selectedType":"gemini-api-key"}}}\n' >"$H/.gemini/settings.json"
printf '# Demo\n\nA tiny project.\n' >"$P/README.md"
printf '1.2.3\n' >"$P/VERSION"
printf 'def greet():\n    return "hello"\n\n\ndef add(a, b):\n    return a + b\n' >"$P/src/app.py"
python3 -c 'import sys; sys.path.insert(0, "scripts/peers"); import record; sys.stdout.write(record.big_log())' >"$P/data/log.txt"
cp -a "$P/." "$W/"
coproc FAKE { exec python3 scripts/peers/fake_gemini.py --script acp --idle 60 --max-lifetime 150; }
read -r PORT <&"${FAKE[0]}"
tokens "$N" '{"GEMINI_API_KEY":"dummy-key-for-fake-backend","GOOGLE_GEMINI_BASE_URL":"http://127.0.0.1:'"$PORT"'","GEMINI_CLI_NO_RELAUNCH":"1"}'
start_bridge "$N" "$GEMINI --acp" "$PORT"
t0=$(date +%s.%N); rc=0
env -u GEMINI_API_KEY -u GOOGLE_API_KEY ACP_BRIDGE_TOKEN="$ANA" timeout -k 5 150 \
  "$CLIENT" --summary-json --connect "ws://$ADDR/" --cwd "$P" --permission allow --timeout 90 \
  "Update greet, write notes and run the checks." </dev/null >"$T/out" 2>"$T/err" || rc=$?
check "gemini confined in ana's room (fake model): full turn, files land" \
  'rc==0 and s["stopReason"]=="end_turn" and s["agent"]=="gemini-cli 0.61.0" and s["permissionRequests"]>=3 and s["fsWrites"]>=3 and s["badLines"]==0 and s["turnProblems"]==0' \
  "$rc" "$(elapsed "$t0")"
grep -q "greet() now takes a name" "$P/NOTES.md" 2>/dev/null || { echo "FAIL gemini confined: NOTES.md did not land"; FAILED=1; }
grep -q 'def greet(name):' "$P/src/app.py" || { echo "FAIL gemini confined: src/app.py was not edited"; FAILED=1; }
t0=$(date +%s.%N)
if grep -q "fs: wrote $P/NOTES.md" "$T/out" && [[ ! -e "$W/NOTES.md" ]] && grep -q 'def greet():' "$W/src/app.py"; then
  pass "gemini: fs/* writes land in the client's --cwd, not the room" "$(elapsed "$t0")"
else
  fail "gemini: fs/* writes land in the client's --cwd, not the room" "$(elapsed "$t0")"
  grep '^fs: ' "$T/out" | head -5; ls -la "$W"
fi
stop_bridge "$N"
kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true; FAKE_PID=""
if [[ $FAILED != 0 ]]; then
  echo "  gemini agent log:"; tail -c 3000 "$T/$N/logs/gemini-acp.ana.log" 2>/dev/null | sed 's/^/    /' || true
fi

# --- Qwen Code ------------------------------------------------------------------
# Turn (6) of scripts/interop_qwen.sh against scripts/peers/fake_openai.py:
# reads, edits src/app.py, writes NOTES.md and VERSION, runs the check.
N=qwen; H="$T/$N/state/ana/home"; W="$T/$N/state/ana/work"; P="$T/$N/client/project"
mkdir -p "$H/.qwen" "$P/src" "$W"
printf '%s\n' '{"security":{"auth":{"selectedType":"openai"},"folderTrust":{"enabled":false}},"tools":{"approvalMode":"default"},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"ui":{"enableFollowupSuggestions":false},"memory":{"enableManagedAutoMemory":false,"enableManagedAutoDream":false}}' >"$H/.qwen/settings.json"
printf '# Demo\n\nA tiny project.\n' >"$P/README.md"
printf '1.2.3\n' >"$P/VERSION"
printf 'def greet():\n    return "hello"\n\n\ndef add(a, b):\n    return a + b\n' >"$P/src/app.py"
cp -a "$P/." "$W/"
coproc FAKE { exec python3 scripts/peers/fake_openai.py --script acp --cwd "$W" --log "$T/fake-qwen.log" --idle 60 --max-lifetime 150; }
read -r PORT <&"${FAKE[0]}"
tokens "$N" '{"OPENAI_API_KEY":"dummy-key-for-fake-backend","OPENAI_BASE_URL":"http://127.0.0.1:'"$PORT"'/v1","OPENAI_MODEL":"fake-model"}'
start_bridge "$N" "$QWEN --acp" "$PORT"
t0=$(date +%s.%N); rc=0
env -u OPENAI_API_KEY ACP_BRIDGE_TOKEN="$ANA" timeout -k 5 150 \
  "$CLIENT" --summary-json --connect "ws://$ADDR/" --cwd "$P" --permission allow --timeout 90 \
  "Update greet, write notes and run the check." </dev/null >"$T/out" 2>"$T/err" || rc=$?
check "qwen confined in ana's room (fake model): full turn, files land" \
  'rc==0 and s["stopReason"]=="end_turn" and s["agent"].startswith("qwen-code ") and s["permissionsAllowed"]==4 and s["fsWrites"]==3 and "def greet(name):" in f("src/app.py") and f("NOTES.md").startswith("# Notes") and f("VERSION")=="1.2.4\n" and f("CHECKED.txt")==""' \
  "$rc" "$(elapsed "$t0")"
# Its shell ran in the room: the room's VERSION (1.2.3, fs/* changed the
# client's), its CHECKED.txt in the room.
t0=$(date +%s.%N)
if [[ "$(cat "$W/CHECKED.txt" 2>/dev/null)" == "checked 1.2.3" && "$(cat "$W/VERSION")" == "1.2.3" ]]; then
  pass "qwen: its own shell's file lands in the room's session directory" "$(elapsed "$t0")"
else
  fail "qwen: its own shell's file lands in the room's session directory" "$(elapsed "$t0")"
  ls -la "$W"; cat "$W/CHECKED.txt" 2>/dev/null || true
fi
stop_bridge "$N"
kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true; FAKE_PID=""
if [[ $FAILED != 0 ]]; then
  echo "  qwen agent log:"; tail -c 3000 "$T/$N/logs/gemini-acp.ana.log" 2>/dev/null | sed 's/^/    /' || true
fi

# --- Claude's ACP adapter ---------------------------------------------------------
# The "room" script of scripts/peers/fake_anthropic.py: Claude Code reads
# src/app.py, edits it, writes NOTES.md and runs a shell command that writes
# CHECKED.txt, all with its own tools (Read, Edit, Write, Bash: the adapter
# sends no fs/* and no terminal/*) in the cwd it was told, the room's work
# directory; a permission prompt for each change ("default" mode in its
# settings). Its install: scripts/peers/install_claude.sh.
N=claude; H="$T/$N/state/ana/home"; W="$T/$N/state/ana/work"; P="$T/$N/client/project"
mkdir -p "$H/.claude" "$P/src" "$W"
printf '{"permissions":{"defaultMode":"default"}}\n' >"$H/.claude/settings.json"
printf '# Demo\n\nA tiny project.\n' >"$P/README.md"
printf '1.2.3\n' >"$P/VERSION"
printf 'def greet():\n    return "hello"\n\n\ndef add(a, b):\n    return a + b\n' >"$P/src/app.py"
cp -a "$P/." "$W/"
coproc FAKE { exec python3 scripts/peers/fake_anthropic.py --script room --idle 60 --max-lifetime 150; }
read -r PORT <&"${FAKE[0]}"
tokens "$N" '{"ANTHROPIC_API_KEY":"dummy","ANTHROPIC_BASE_URL":"http://127.0.0.1:'"$PORT"'","DISABLE_TELEMETRY":"1","CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC":"1","DISABLE_AUTOUPDATER":"1"}'
start_bridge "$N" "$CLAUDE" "$PORT"
t0=$(date +%s.%N); rc=0
env -u ANTHROPIC_API_KEY ACP_BRIDGE_TOKEN="$ANA" timeout -k 5 150 \
  "$CLIENT" --summary-json --connect "ws://$ADDR/" --cwd "$P" --permission allow --timeout 90 \
  "Update greet, write notes and record the check." </dev/null >"$T/out" 2>"$T/err" || rc=$?
check "claude's adapter confined in ana's room (fake model): full turn, its own tools ran" \
  'rc==0 and s["stopReason"]=="end_turn" and s["agent"].startswith("@agentclientprotocol/claude-agent-acp ") and s["permissionsAllowed"]==3 and s["fsWrites"]==0 and s["terminals"]==0 and s["badLines"]==0 and s["turnProblems"]==0 and "the check said: checked 1.2.3" in out' \
  "$rc" "$(elapsed "$t0")"
# Its files in the room, the client's project untouched; the tool calls
# name the client's paths (the room's moved to --cwd).
t0=$(date +%s.%N)
if [[ "$(head -1 "$W/NOTES.md" 2>/dev/null)" == "# Notes" ]] && grep -q 'def greet(name):' "$W/src/app.py" \
   && [[ "$(cat "$W/CHECKED.txt" 2>/dev/null)" == "checked 1.2.3" ]] && [[ ! -e "$P/NOTES.md" && ! -e "$P/CHECKED.txt" ]] && grep -q 'def greet():' "$P/src/app.py" \
   && grep -q "$P/NOTES.md" "$T/out" && ! grep -q "$W" "$T/out"; then
  pass "claude: its own tools' files land in the room's session directory, paths shown as the client's" "$(elapsed "$t0")"
else
  fail "claude: its own tools' files land in the room's session directory, paths shown as the client's" "$(elapsed "$t0")"
  ls -la "$W" "$P"; grep -n "NOTES\|$W" "$T/out" | head -10
fi
stop_bridge "$N"
kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true; FAKE_PID=""
if [[ $FAILED != 0 ]]; then
  echo "  claude agent log:"; tail -c 3000 "$T/$N/logs/"*.ana.log 2>/dev/null | sed 's/^/    /' || true
fi

printf 'interop_rooms: total %.1fs, %s\n' "$(elapsed "$START_ALL")" "$([[ $FAILED == 0 ]] && echo 'all passed' || echo 'FAILED')"
exit "$FAILED"
