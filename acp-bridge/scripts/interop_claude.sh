#!/usr/bin/env bash
# Interop proof: acp-client against the real Claude ACP adapter
# (npm @agentclientprotocol/claude-agent-acp, which runs Claude Code through
# the Claude Agent SDK) and a scripted fake Anthropic Messages API on
# loopback (scripts/peers/fake_anthropic.py).
#
#   scripts/interop_claude.sh
#
# Installs the pinned adapter into target/peers-claude
# (scripts/peers/install_claude.sh: a no-op when the stamp matches, a loud
# failure when npm cannot install it), builds acp-client, then
# re-runs itself in a network namespace of its own (`unshare -n`, needs root
# or user namespaces) where only loopback exists, and checks one turn each:
#   (1) read a file, (2) write a NEW file, (3) edit an existing file, all in
#   the session directory (--cwd); (4) a shell command behind a permission
#   prompt (allowed: it runs; rejected: it does not); (5) Ctrl-C mid-turn:
#   acp-client sends session/cancel, the stop reason is "cancelled" and the
#   scripted write after it never lands.
# Each run gets a scratch HOME whose ~/.claude/settings.json sets
# permissions.defaultMode "default": without it the adapter starts sessions
# in "auto" mode, where Claude Code asks no permission.
# Every run is bounded by `timeout`; no process is left behind.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [[ -z "${INTEROP_CLAUDE_INNER:-}" ]]; then
  # Outside the namespace: what needs the registries (npm, crates.io).
  CLAUDE_DIR="$(scripts/peers/install_claude.sh)" || { echo "FAIL installing the Claude ACP adapter (scripts/peers/install_claude.sh)"; exit 1; }
  "$ROOT/scripts/build_bins.sh" >/dev/null
  TARGET="${CARGO_TARGET_DIR:-$ROOT/../target}"
  [[ "$TARGET" = /* ]] || TARGET="$ROOT/../$TARGET"
  export CLAUDE_DIR CLIENT="$TARGET/debug/acp-client"
  if unshare -n true 2>/dev/null; then
    export INTEROP_CLAUDE_INNER=netns
    exec unshare -n bash -c 'ip link set lo up && exec "$0" "$@"' "$ROOT/scripts/interop_claude.sh" "$@"
  fi
  echo "note: unshare -n is not available here (needs root or user namespaces): running without network isolation" >&2
  export INTEROP_CLAUDE_INNER=host
fi

ADAPTER="$CLAUDE_DIR/node_modules/.bin/claude-agent-acp"
ACP_V="$(node -p "require('$CLAUDE_DIR/node_modules/@agentclientprotocol/claude-agent-acp/package.json').version")"
CC_V="$(node -p "require('$CLAUDE_DIR/node_modules/@anthropic-ai/claude-agent-sdk/package.json').claudeCodeVersion")"
echo "claude-agent-acp $ACP_V (Claude Code $CC_V), network: $INTEROP_CLAUDE_INNER"

T="$(mktemp -d)"
FAKE_PIDS=()
cleanup() {
  for p in "${FAKE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
# shellcheck source=peers/checks.sh
. scripts/peers/checks.sh

# fake [ARGS...]: starts a fake Anthropic API (it prints its port, then
# exits by itself when idle or when this shell is gone); sets PORT.
fake() {
  local f="$T/port.${#FAKE_PIDS[@]}"
  python3 scripts/peers/fake_anthropic.py --idle 60 --max-lifetime 240 "$@" >"$f" &
  FAKE_PIDS+=("$!")
  for _ in $(seq 1 100); do [[ -s "$f" ]] && break; sleep 0.05; done
  read -r PORT <"$f" || { echo "FAIL the fake Anthropic API did not start"; exit 1; }
}

# setup NAME: a fresh session directory $P and scratch HOME $H.
setup() {
  P="$T/$1/project"; H="$T/$1/home"
  mkdir -p "$P/src" "$H/.claude"
  printf '{"permissions":{"defaultMode":"default"}}\n' >"$H/.claude/settings.json"
  printf '# Demo\n\nA tiny demo project.\n' >"$P/README.md"
  printf '1.2.3\n' >"$P/VERSION"
  printf 'def greet():\n    return "hello"\n\n\ndef add(a, b):\n    return a + b\n' >"$P/src/app.py"
}

# client PERMISSION PROMPT: sets CMD, acp-client against the adapter (env -i:
# nothing of the caller's Anthropic / Claude settings leaks in). Run as
# "${CMD[@]}" directly, not from a function: a backgrounded function is a
# subshell that ignores SIGINT, and Ctrl-C would never reach acp-client.
client() {
  CMD=(env -i PATH="$PATH" HOME="$H" LANG=C.UTF-8 TERM=dumb
    ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=dummy
    DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
    timeout --foreground -k 5 120
    "$CLIENT" --summary-json --agent "$ADAPTER" --cwd "$P" --permission "$1" --timeout 60 "$2")
}

# turn NAME EXPR PERMISSION PROMPT: one bounded turn, then the check.
turn() {
  local name="$1" expr="$2" t0 rc=0
  t0=$(date +%s.%N)
  client "$3" "$4"
  "${CMD[@]}" >"$T/out" 2>"$T/err" || rc=$?
  check "$name" "$expr" "$rc" "$(elapsed "$t0")"
}

OK="rc==0 and s['stopReason']=='end_turn' and s['agent']=='@agentclientprotocol/claude-agent-acp $ACP_V' and s['badLines']==0 and s['turnProblems']==0"
fake --script read   # one server for turns 1-4: [fake:NAME] in the prompt picks the script

setup read
turn "(1) read README.md" \
  "$OK and s['toolCalls']==1 and 'Read README.md (completed)' in out and 'The README says: # Demo | A tiny demo project.' in out and s['permissionRequests']==0" \
  allow "[fake:read] What does the README say?"
READ_MS=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["elapsedMs"])' "$T/out" 2>/dev/null || echo "?")

setup write
turn "(2) write a NEW file NOTES.md (permission allowed)" \
  "$OK and s['permissionRequests']==1 and s['permissionsAllowed']==1 and f('NOTES.md')=='# Notes\n\n- greet() now takes a name.\n- Ünïcödé ✓ survives.\n'" \
  allow "[fake:write] Write some notes."

setup edit
turn "(3) edit src/app.py (read first, then Edit; permission allowed)" \
  "$OK and s['toolCalls']==2 and s['permissionRequests']==1 and f('src/app.py').startswith('def greet(name):\n    return f\"hello, {name}\"\n') and 'def add(a, b)' in f('src/app.py')" \
  allow "[fake:edit] Make greet take a name."

setup shell
turn "(4) shell command behind a permission prompt, allowed: it ran" \
  "$OK and s['permissionRequests']==1 and s['permissionsAllowed']==1 and f('CHECKS.txt')=='checks-ran\n' and 'The checks said: 1.2.3' in out" \
  allow "[fake:shell] Run the checks."
# Which path the command and the file tools take: Claude Code runs them
# itself (its own Bash, Read, Write, Edit); the adapter sends no fs/* and no
# terminal/* requests although acp-client offers both.
check "    the adapter used neither fs/* nor terminal/* (Claude Code ran it)" \
  "s.get('fsReads')==0 and s.get('fsWrites')==0 and s.get('terminals')==0" 0 0

setup shell-reject
turn "(4b) the same command, permission rejected: it did not run" \
  "$OK and s['permissionRequests']==1 and s['permissionsAllowed']==0 and f('CHECKS.txt') == ''" \
  reject "[fake:shell] Run the checks."

# (5) Cancelled mid-way: a slow fake model (0.4 s between streamed events of
# the main loop); Ctrl-C once the thought streams. The script's next step
# would write CANCELLED.txt. `timeout --foreground`: timeout passes the
# SIGINT on to acp-client only (not again to the process group).
fake --script slow --event-delay 0.4
setup cancel
t0=$(date +%s.%N); rc=0
: >"$T/out"
client allow "Survey the project slowly."
"${CMD[@]}" >"$T/out" 2>"$T/err" & cpid=$!
for _ in $(seq 1 300); do grep -q "Surveying" "$T/out" 2>/dev/null && break; sleep 0.1; done
kill -INT "$cpid"; wait "$cpid" || rc=$?
check "(5) Ctrl-C mid-turn: session/cancel, stop reason cancelled" \
  "rc==130 and s['stopReason']=='cancelled' and s['cancelledByUser'] and s['badLines']==0 and f('CANCELLED.txt') == '' and s['permissionRequests']==0" \
  "$rc" "$(elapsed "$t0")"
sleep 1
[[ ! -e "$P/CANCELLED.txt" ]] || { echo "FAIL (5) CANCELLED.txt landed after the cancel"; FAILED=1; }

for p in "${FAKE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
FAKE_PIDS=()
# Nothing may outlive the checks: no process with its cwd in the scratch dir.
sleep 0.2
left=$(for p in /proc/[0-9]*; do readlink "$p/cwd" 2>/dev/null || true; done | grep -c "^$T" || true)
if [[ "$left" != "0" ]]; then echo "FAIL $left process(es) left running in $T"; FAILED=1; fi

printf 'one turn (1, read): %s ms inside acp-client\n' "$READ_MS"
printf 'interop_claude: total %.1fs\n' "$(elapsed "$START_ALL")"
exit "$FAILED"
