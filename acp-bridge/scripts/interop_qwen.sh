#!/usr/bin/env bash
# Interop proof: acp-client drives the real Qwen Code agent
# (`qwen --acp`, npm @qwen-code/qwen-code, pinned below) through full turns
# against a scripted fake OpenAI-compatible model backend on loopback
# (scripts/peers/fake_openai.py). No network, no real key.
#
#   scripts/interop_qwen.sh
#   scripts/interop_qwen.sh --install-only   # install, print the peers dir
#   INTEROP_QWEN_NETNS=0 scripts/interop_qwen.sh   # without unshare -n
#
# Installs Qwen Code into target/peers-qwen (a stamp makes re-runs a no-op;
# an install failure fails the script), builds acp-client, then re-runs
# itself inside a network namespace of its own (`unshare -n`, loopback
# only) when the machine allows it, else with loopback base URLs only.
# Every run has its own scratch HOME and session directory, its own fake
# backend and is bounded by `timeout`. Checks:
#   (1) a read (fs/read_text_file), (2) a NEW file written
#   (fs/write_text_file after a permission prompt; Qwen Code checks for the
#   file itself and never asks the client to read a missing one, so it needs
#   no quirk), (2b) a read of a missing file and a new file in a new
#   directory, (3) an edit of an existing file, (4) a shell command behind
#   a permission prompt, answered allow (runs) and reject (does not),
#   (4c) the TypeScript SDK's v2 client through acp-client --stdio (the
#   SDK from scripts/peers/install.sh), a full turn with that shell call,
#   (5) Ctrl-C mid-turn -> session/cancel
#   -> stop reason "cancelled", (6) all of it in one turn, (7) no key:
#   a clean session/new error, and (8) acp-client interactive in a
#   pseudo-terminal: two turns, permissions answered at the keyboard,
#   (9) the user's MCP server (npm @modelcontextprotocol/server-filesystem,
#   pinned below, reading a file of a directory only the user's side has)
#   offered with --mcp-config to Qwen Code as a local agent: Qwen starts it,
#   calls read_text_file, the file's text in the turn, and (10) the same
#   through the team server (acp-bridge, Qwen Code confined in ana's room):
#   Qwen takes no MCP over ACP, so the server gives it its relay in place
#   of the "acp" server acp-client offers, and the call reaches the server
#   acp-client started, over mcp/*.
# Prints PASS/FAIL per check and the wall time of one turn; exits non-zero
# on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
QWEN_VERSION="0.24.4"   # the latest on npm when pinned; change here and re-record
MCP_FS_VERSION="2026.8.31"   # @modelcontextprotocol/server-filesystem, for (9) and (10)
QWEN_PEERS_DIR="${QWEN_PEERS_DIR:-$ROOT/target/peers-qwen}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/../target}"
[[ "$TARGET_DIR" = /* ]] || TARGET_DIR="$ROOT/../$TARGET_DIR"
CLIENT="$TARGET_DIR/debug/acp-client"
QWEN="$QWEN_PEERS_DIR/node_modules/.bin/qwen"
MCP_FS="$QWEN_PEERS_DIR/node_modules/.bin/mcp-server-filesystem"
BRIDGE="$TARGET_DIR/debug/acp-bridge"

# --- phase 1 (with the registries): install, build, enter the namespace ----
if [[ -z "${INTEROP_QWEN_PHASE2:-}" ]]; then
  command -v node >/dev/null || { echo "interop_qwen: node not found" >&2; exit 1; }
  command -v npm >/dev/null || { echo "interop_qwen: npm not found" >&2; exit 1; }
  SPEC="@qwen-code/qwen-code@$QWEN_VERSION @modelcontextprotocol/server-filesystem@$MCP_FS_VERSION"
  STAMP="$QWEN_PEERS_DIR/.installed"
  if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$SPEC" && -x "$QWEN" && -x "$MCP_FS" ]]; then
    :
  else
    echo "interop_qwen: installing $SPEC into $QWEN_PEERS_DIR" >&2
    mkdir -p "$QWEN_PEERS_DIR"
    rm -f "$STAMP"
    [[ -f "$QWEN_PEERS_DIR/package.json" ]] || printf '{\n  "name": "acp-codec-peers-qwen",\n  "private": true\n}\n' >"$QWEN_PEERS_DIR/package.json"
    # --ignore-scripts: no postinstall downloads (only the registry is
    # reachable); the optional native modules are not needed in ACP mode.
    if ! (cd "$QWEN_PEERS_DIR" && npm install --no-audit --no-fund --save-exact --ignore-scripts \
          --loglevel=error $SPEC >&2); then
      echo "FAIL interop_qwen: npm install $SPEC failed" >&2; exit 1
    fi
    got="$(node -p "require('$QWEN_PEERS_DIR/node_modules/@qwen-code/qwen-code/package.json').version")"
    [[ "$got" == "$QWEN_VERSION" && -x "$QWEN" && -x "$MCP_FS" ]] \
      || { echo "FAIL interop_qwen: installed version '$got', want $QWEN_VERSION" >&2; exit 1; }
    echo "$SPEC" >"$STAMP"
  fi
  t0=$(date +%s)
  if [[ "${1:-}" == --install-only ]]; then echo "$QWEN_PEERS_DIR"; exit 0; fi
  "$ROOT/scripts/build_bins.sh" >/dev/null
  echo "interop_qwen: acp-client and acp-bridge built in $(( $(date +%s) - t0 ))s" >&2
  [[ -x "$CLIENT" && -x "$BRIDGE" ]] || { echo "FAIL interop_qwen: $CLIENT or $BRIDGE not built" >&2; exit 1; }
  export INTEROP_QWEN_PHASE2=loopback
  if [[ "${INTEROP_QWEN_NETNS:-1}" != 0 ]] && command -v unshare >/dev/null && command -v ip >/dev/null \
     && unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
    INTEROP_QWEN_PHASE2=netns exec unshare -n "$ROOT/scripts/interop_qwen.sh" "$@"
  fi
  echo "interop_qwen: no network namespace (unshare -n unavailable or INTEROP_QWEN_NETNS=0); loopback base URLs only" >&2
fi
if [[ "$INTEROP_QWEN_PHASE2" == netns ]]; then
  ip link set lo up
fi

# --- phase 2: the turns -------------------------------------------------------
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
# shellcheck source=peers/checks.sh
. scripts/peers/checks.sh
echo "interop_qwen: Qwen Code $QWEN_VERSION ($QWEN), node $(node --version), network: $INTEROP_QWEN_PHASE2"

# Settings for the scratch HOME: OpenAI auth (OPENAI_* from the environment),
# permission prompts for edits and shell ("default"; Qwen's own default,
# "auto", asks the model to classify each call), no folder-trust prompt,
# telemetry, usage statistics, update checks, follow-up suggestions or
# managed memory (the last two send extra model requests after a turn).
SETTINGS='{"security":{"auth":{"selectedType":"openai"},"folderTrust":{"enabled":false}},"tools":{"approvalMode":"default"},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"ui":{"enableFollowupSuggestions":false},"memory":{"enableManagedAutoMemory":false,"enableManagedAutoDream":false}}'

project() { # a fresh session directory and HOME: sets P and H
  P="$T/$1/project"; H="$T/$1/home"
  mkdir -p "$P/src" "$H/.qwen"
  printf '# Demo\n\nA tiny project.\n' >"$P/README.md"
  printf '1.2.3\n' >"$P/VERSION"
  printf 'def greet():\n    return "hello"\n\n\ndef add(a, b):\n    return a + b\n' >"$P/src/app.py"
  printf '%s\n' "$SETTINGS" >"$H/.qwen/settings.json"
}

start_fake() { # start_fake SCRIPT [ARGS...]: sets FAKE_PID and PORT
  coproc FAKE { exec python3 scripts/peers/fake_openai.py --script "$@" --cwd "$P" \
                  --log "$T/fake-$1.log" --idle 60 --max-lifetime 150; }
  read -r PORT <&"${FAKE[0]}"
}
stop_fake() { kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true; }

# The agent's environment: nothing of ours but PATH and the fake backend.
agent_env() {
  env -i PATH="$PATH" HOME="$H" LANG=C.UTF-8 TERM=dumb NO_COLOR=1 \
    OPENAI_API_KEY=dummy-key-for-fake-backend OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" \
    OPENAI_MODEL=fake-model "$@"
}

# turn NAME SCRIPT PERMISSION EXPR PROMPT: one acp-client run against a fresh
# Qwen Code with the fake backend playing SCRIPT.
turn() {
  local name="$1" script="$2" permission="$3" expr="$4" prompt="$5" t0 rc=0
  start_fake "$script"
  t0=$(date +%s.%N)
  agent_env timeout -k 5 120 "$CLIENT" --summary-json --agent "$QWEN --acp" --cwd "$P" \
    --permission "$permission" --timeout 60 "$prompt" </dev/null >"$T/out" 2>"$T/err" || rc=$?
  LAST_SECS="$(elapsed "$t0")"
  stop_fake
  check "$name" "$expr" "$rc" "$LAST_SECS"
}

OK='rc==0 and s["stopReason"]=="end_turn" and s["agent"]=="qwen-code '"$QWEN_VERSION"'" and s["badLines"]==0 and s["turnProblems"]==0 and "✗" not in out'

project read
turn "qwen (1) read a file: fs/read_text_file served" read allow \
  "$OK"' and s["fsReads"]>=1 and s["toolCalls"]>=1 and "ReadFile: README.md (completed)" in out and s["permissionRequests"]==0 and s["thoughtChunks"]>=1' \
  "What does the README say?"
READ_SECS="$LAST_SECS"; READ_MS="$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["elapsedMs"])' "$T/out" 2>/dev/null || echo '?')"

project write
turn "qwen (2) write a NEW file: NOTES.md lands" write allow \
  "$OK"' and s["permissionRequests"]==1 and s["permissionsAllowed"]==1 and s["fsWrites"]==1 and f("NOTES.md")=="# Notes\n\n- written by Qwen Code.\n- Ünïcödé ✓ survives.\n"' \
  "Write some notes."

project missing
turn "qwen (2b) missing file read fails cleanly; new file in a new dir lands" missing allow \
  'rc==0 and s["stopReason"]=="end_turn" and s["badLines"]==0 and s["turnProblems"]==0 and "File not found: " in out and "no such file" not in out and s["fsWrites"]==1 and f("docs/notes/NEW.md")=="new\n"' \
  "Is there a changelog? Then write docs/notes/NEW.md."

project edit
turn "qwen (3) edit an existing file: src/app.py changed" edit allow \
  "$OK"' and s["permissionRequests"]==1 and s["fsWrites"]==1 and "def greet(name):\n    return f\"hello, {name}\"" in f("src/app.py") and "def add(a, b):" in f("src/app.py")' \
  "Make greet take a name."

project shell
turn "qwen (4) shell behind a permission prompt, allowed: it ran" shell allow \
  "$OK"' and s["permissionRequests"]==1 and s["permissionsAllowed"]==1 and "[execute]" in out and f("CHECKED.txt")=="checked 1.2.3\n"' \
  "Run the check."

project shell-reject
turn "qwen (4b) the same shell prompt rejected: it did not run" shell reject \
  'rc==0 and s["stopReason"]=="end_turn" and s["permissionRequests"]==1 and s["permissionsAllowed"]==0 and f("CHECKED.txt")==""' \
  "Run the check."

# (4c) An editor speaking ACP v2: the TypeScript SDK 2.4.0's v2 client
# (scripts/peers/ts_v2_client.mjs; the SDK from scripts/peers/install.sh's
# directory) starts acp-client --stdio, which puts its v2 client's
# translator in front of Qwen Code (v1): the shell prompt answered, the
# command run, the idle state_update's stop reason, the streamed text.
project v2-editor
start_fake shell
t0=$(date +%s.%N); rc=0
agent_env PEERS_DIR="${PEERS_DIR:-$ROOT/target/peers}" timeout -k 5 120 \
  node scripts/peers/ts_v2_client.mjs --cwd "$P" --prompt "Run the check." \
  -- "$CLIENT" --stdio --agent "$QWEN --acp" --cwd "$P" </dev/null >"$T/out" 2>"$T/err" || rc=$?
stop_fake
check "qwen (4c) the SDK's v2 client through acp-client --stdio: full turn" \
  'rc==0 and s["protocolVersion"]==2 and s["agent"].startswith("qwen-code ") and s["stopReason"]=="end_turn" and s["permissions"]==1 and s["text"]!="" and s["error"] is None and f("CHECKED.txt")=="checked 1.2.3\n"' \
  "$rc" "$(elapsed "$t0")"

# (5) Cancelled mid-way: the fake streams slowly (1.5 s between events);
# once the turn streams ("Surveying"), Ctrl-C: acp-client sends
# session/cancel, Qwen ends the turn with "cancelled", acp-client exits 130.
# `timeout --foreground`: otherwise timeout passes the SIGINT on to its
# process group too, and a second press means "stop now" to acp-client.
project cancel
start_fake acp --event-delay 1.5
t0=$(date +%s.%N); rc=0
: >"$T/out" # an earlier check's output may say "Surveying" too
# (a simple command, not the agent_env function: $! must be env -> timeout,
# not a subshell, which would ignore the SIGINT)
env -i PATH="$PATH" HOME="$H" LANG=C.UTF-8 TERM=dumb NO_COLOR=1 \
  OPENAI_API_KEY=dummy-key-for-fake-backend OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" \
  OPENAI_MODEL=fake-model timeout --foreground -k 5 120 \
  "$CLIENT" --summary-json --agent "$QWEN --acp" --cwd "$P" \
  --permission allow --timeout 60 "Update greet, write notes and run the check." \
  </dev/null >"$T/out" 2>"$T/err" & cpid=$!
for _ in $(seq 1 600); do grep -q "Surveying" "$T/out" 2>/dev/null && break; sleep 0.1; done
kill -INT "$cpid"; wait "$cpid" || rc=$?
stop_fake
check "qwen (5) Ctrl-C mid-turn: session/cancel, stop reason cancelled" \
  'rc==130 and s["stopReason"]=="cancelled" and s["cancelledByUser"] and s["fsWrites"]==0 and f("NOTES.md")=="" and "Surveying" in out' \
  "$rc" "$(elapsed "$t0")"

project full
turn "qwen (6) one turn doing all of it: files land" acp allow \
  "$OK"' and s["permissionRequests"]==4 and s["permissionsAllowed"]==4 and s["fsReads"]>=3 and s["fsWrites"]==3 and s["thoughtChunks"]>=2 and "def greet(name):" in f("src/app.py") and f("NOTES.md").startswith("# Notes") and f("VERSION")=="1.2.4\n" and f("CHECKED.txt")=="checked 1.2.4\n"' \
  "Update greet, write notes and run the check."

# (9) and (10): the user's MCP server, on the user's side; the fake model
# calls its tool on secret.txt and quotes the result. Qwen Code discovers
# MCP servers in the background unless QWEN_CODE_LEGACY_MCP_BLOCKING=1
# (then during session/new, before it answers): set, so that the tools are
# there for the prompt (and the relay is reached before the session exists).
mcp_user_side() { # NAME COMMAND ARGS-JSON: the secret in $P, the config in $P.json
  printf 'only on the user side: %s\n' "$1-7f3a" >"$P/secret.txt"
  printf '{"mcpServers":{"files":{"command":"%s","args":%s}}}\n' "$2" "$3" >"$P.json"
}
MCP_OK='rc==0 and s["stopReason"]=="end_turn" and s["badLines"]==0 and s["turnProblems"]==0 and s["permissionRequests"]==1 and "file says: " in out'

# (9) server-filesystem serving the project, started by Qwen itself.
project mcp-local; mcp_user_side mcp-local "$MCP_FS" "[\"$P\"]"
start_fake mcp
t0=$(date +%s.%N); rc=0
agent_env QWEN_CODE_LEGACY_MCP_BLOCKING=1 timeout -k 5 120 "$CLIENT" --summary-json --agent "$QWEN --acp" --cwd "$P" \
  --mcp-config "$P.json" --permission allow --timeout 60 "Read my secret." </dev/null >"$T/out" 2>"$T/err" || rc=$?
stop_fake
check "qwen (9) local agent: --mcp-config server started by Qwen, tool result in the turn" \
  "$MCP_OK"' and "only on the user side: mcp-local-7f3a" in out and "mcp: offering files (command: " in out' \
  "$rc" "$(elapsed "$t0")"

# (10) Through the team server: Qwen Code as ana's agent, confined in her
# room when this kernel can (else --unconfined), TCP to the fake model only.
# The project is outside the room: the file is the user's alone. The user's
# server is server-filesystem, which serves the MCP roots its client names
# (Qwen's: its working directory, the room's) instead of its arguments;
# the model names the file in the room (the fake's cwd). The team server
# moves the room's paths in the agent's MCP messages to the session's
# --cwd: the roots and the path reach the server as the user's.
project mcp-remote
mcp_user_side mcp-remote "$MCP_FS" "[\"$P\"]"
confine=(); "$BRIDGE" --check-confinement >/dev/null 2>&1 || [[ $? == 3 ]] || confine=(--unconfined)
S="$T/mcp-remote/state"; mkdir -p "$S/ana/home/.qwen" "$S/ana/work"; printf '%s\n' "$SETTINGS" >"$S/ana/home/.qwen/settings.json"
coproc FAKE { exec python3 scripts/peers/fake_openai.py --script mcp --cwd "$S/ana/work" \
                --log "$T/fake-mcp-remote.log" --idle 60 --max-lifetime 150; }
read -r PORT <&"${FAKE[0]}"
ANA_TOKEN=ana-token-for-interop-qwen-mcp
printf '{"tokens":{"%s":{"userId":"ana","permissions":["read","write"],"env":{"OPENAI_API_KEY":"dummy-key-for-fake-backend","OPENAI_BASE_URL":"http://127.0.0.1:%s/v1","OPENAI_MODEL":"fake-model","QWEN_CODE_LEGACY_MCP_BLOCKING":"1"}}}}\n' \
  "$ANA_TOKEN" "$PORT" >"$T/mcp-remote/tokens.json"
"$BRIDGE" --port 0 --log-dir "$T/mcp-remote" --token-file "$T/mcp-remote/tokens.json" --state-dir "$S" \
  --agent "$QWEN --acp" --agent-net "$PORT" "${confine[@]}" </dev/null 2>"$T/mcp-remote/bridge.err" & bpid=$!
addr=""
for _ in $(seq 1 200); do
  addr="$(grep -m1 -o 'listening on ws://[^ ]*' "$T/mcp-remote/bridge.err" 2>/dev/null || true)"; [[ -n "$addr" ]] && break; sleep 0.05
done
t0=$(date +%s.%N); rc=0
env -i PATH="$PATH" HOME="$T/mcp-remote" ACP_BRIDGE_TOKEN="$ANA_TOKEN" timeout -k 5 120 \
  "$CLIENT" --summary-json --connect "${addr#listening on }/" --cwd "$P" --mcp-config "$P.json" \
  --permission allow --timeout 60 "Read my secret." </dev/null >"$T/out" 2>"$T/err" || rc=$?
kill -TERM "$bpid" 2>/dev/null || true; wait "$bpid" 2>/dev/null || true
stop_fake
check "qwen (10) through the team server: server-filesystem on the user's side serves the user's --cwd (roots and paths moved from the room), tool result in the turn" \
  "$MCP_OK"' and "only on the user side: mcp-remote-7f3a" in out and "mcp: offering files over ACP" in out' \
  "$rc" "$(elapsed "$t0")"
if [[ $FAILED != 0 ]]; then
  echo "  bridge:"; tail -c 2000 "$T/mcp-remote/bridge.err" | sed 's/^/    /'
  echo "  qwen's log:"; tail -c 3000 "$T/mcp-remote/gemini-acp.ana.log" 2>/dev/null | sed 's/^/    /' || true
fi

# (8) Interactive, at a terminal (a pseudo-terminal driven by
# scripts/peers/pty_session.py), no prompt given: two turns of one session,
# each permission question answered at the keyboard (allow once), the
# session's modes and options listed, then Ctrl-D quits (status 0).
project interactive
start_fake write
t0=$(date +%s.%N); rc=0
: >"$T/out"
agent_env timeout -k 5 200 python3 scripts/peers/pty_session.py --log "$T/out" --timeout 60 \
  'expect:\n> ' 'send:Write some notes.\r' 'expect:choose 1-' 'send:2\r' 'expect:stop reason: end_turn' \
  'expect:\n> ' 'send:/mode\r' 'expect:\n> ' 'send:/config\r' \
  'expect:\n> ' 'send:Write them again.\r' 'expect:choose 1-' 'send:2\r' 'expect:stop reason: end_turn' \
  'expect:\n> ' 'send:\x04' \
  -- "$CLIENT" --agent "$QWEN --acp" --cwd "$P" --timeout 60 >"$T/err" 2>&1 || rc=$?
stop_fake
check "qwen (8) interactive at a terminal: two turns, permissions at the keyboard" \
  'rc==0 and out.count("stop reason: end_turn")==2 and out.count("choose 1-3: 2")==2 and out.count("→ Allow (proceed_once)")==2 and out.count("fs: wrote ")==2 and "* default (Default)" in out and "mode = default" in out and f("NOTES.md").startswith("# Notes") and "acp-client: error" not in out' \
  "$rc" "$(elapsed "$t0")"

: initialize succeeds, session/new fails with
# Qwen's "Authentication required" error, acp-client reports it and exits 1.
project offline; rm "$H/.qwen/settings.json"; t0=$(date +%s.%N); rc=0
env -i PATH="$PATH" HOME="$H" LANG=C.UTF-8 TERM=dumb NO_COLOR=1 timeout -k 5 60 \
  "$CLIENT" --summary-json --agent "$QWEN --acp" --cwd "$P" --timeout 30 </dev/null >"$T/out" 2>"$T/err" || rc=$?
check "qwen (7) no key: clean session/new error (-32000 Authentication required)" \
  'rc==1 and s["agent"]=="qwen-code '"$QWEN_VERSION"'" and s["sessionId"] is None and "session/new" in s["error"] and "-32000" in s["error"] and "Authentication required" in s["error"]' \
  "$rc" "$(elapsed "$t0")"

# Nothing may outlive the checks: no process with its cwd in the scratch
# dir, right after the last acp-client returned. Qwen Code's launcher
# (cli-entry.js) runs the CLI as a child in the same process group and may
# exit first; acp-client returns only once the whole group is gone.
leftovers() { for p in /proc/[0-9]*; do [[ "$(readlink "$p/cwd" 2>/dev/null)" == "$T"* ]] && echo "${p#/proc/}"; done || true; }
t0=$(date +%s.%N)
left="$(leftovers)"
if [[ -n "$left" ]]; then
  fail "no process left running in the scratch dir" "$(elapsed "$t0")"
  ps -o pid,pgid,etime,args -p "$(echo $left | tr ' ' ,)" | cut -c1-200
  for g in $(ps -o pgid= -p "$(echo $left | tr ' ' ,)" | sort -u); do kill -KILL -- "-$g" 2>/dev/null || true; done
else
  pass "no process left running in the scratch dir" "$(elapsed "$t0")"
fi

printf 'interop_qwen: one turn (1, read) took %ss wall time: Qwen Code started, initialize, session/new, the prompt turn, shutdown (acp-client elapsedMs %s)\n' "$READ_SECS" "$READ_MS"
printf 'interop_qwen: total %.1fs, %s\n' "$(elapsed "$START_ALL")" "$([[ $FAILED == 0 ]] && echo 'all passed' || echo 'FAILED')"
exit "$FAILED"
