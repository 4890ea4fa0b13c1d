#!/usr/bin/env bash
# Re-record every peer fixture under tests/fixtures/ (see tests/fixtures/README.md).
#
#   scripts/peers/record_all.sh            # all
#   scripts/peers/record_all.sh gemini     # only names containing "gemini"
#   scripts/peers/record_all.sh claude     # only the Claude ACP adapter (needs root: unshare -n)
#   scripts/peers/record_all.sh qwen       # only the Qwen Code session
#   FIXTURES_DIR=/tmp/fx scripts/peers/record_all.sh   # record elsewhere (CI:
#       then python3 scripts/peers/check_fixtures.py --compare tests/fixtures /tmp/fx)
#
# Installs the pinned peers first (scripts/peers/install.sh). Needs node, npm,
# python3; no network except the npm registry (for the install). Uses the
# scratch dir /tmp/acp-codec-fixture (recreated for every recording) and a fake
# Gemini backend on 127.0.0.1 (scripts/peers/fake_gemini.py). Takes about two
# minutes: the Gemini ACP turn waits for the next UTC minute before
# session/load (a Gemini CLI 0.61 bug, see record.py --load-next-minute).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
FILTER="${1:-}"
PEERS="$(scripts/peers/install.sh)"
NM="$PEERS/node_modules"
ver() { node -p "require('$NM/$1/package.json').version"; }
SDK_V="$(ver sdk19)"
SDK24_V="$(ver sdk24)"
GEMINI_V="$(ver @google/gemini-cli)"
PYSDK_V="$(PYTHONPATH="$PEERS/pylib" python3 -c 'import importlib.metadata as m; print(m.version("agent-client-protocol"))')"
GEMINI="$NM/.bin/gemini"
FIXTURES="${FIXTURES_DIR:-../tests/fixtures}"
SESSIONS="$FIXTURES/sessions"
STREAM="$FIXTURES/stream_json"
RECORD=(python3 scripts/peers/record.py)
# A fake key for the fake backend; GEMINI_CLI_NO_RELAUNCH=1 keeps Gemini CLI
# from re-spawning itself (the child would outlive stdin EOF).
GEMINI_FAKE=(--gemini-settings --gemini-auth gemini-api-key
  --env GEMINI_CLI_NO_RELAUNCH=1 --env GEMINI_API_KEY=dummy-key-for-fake-backend
  --env 'GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:{PORT}')

# The Python SDK agent and the TS SDK client find their SDK through PEERS_DIR
# when it is not the default.
PY_AGENT_ENV=()
TS_CLIENT_ENV=()
if [[ -n "${PEERS_DIR:-}" ]]; then
  PY_AGENT_ENV=(--env "PEERS_DIR=$PEERS")
  TS_CLIENT_ENV=(--client-env "PEERS_DIR=$PEERS")
fi

want() { [[ -z "$FILTER" || "$1" == *"$FILTER"* ]]; }
fresh() { rm -rf "$1"; }

name="ts-sdk-$SDK_V-example-agent"
if want "$name"; then
  fresh "$SESSIONS/$name"
  "${RECORD[@]}" acp --out "$SESSIONS/$name" \
    --peer-name "TypeScript ACP SDK example agent" --peer-package @agentclientprotocol/sdk --peer-version "$SDK_V" \
    --covers "initialize (loadSession false), session/new, session/prompt with agent_message_chunk, tool_call, tool_call_update, session/request_permission (answered allow), end_turn; the agent numbers its own requests from 0 while the client's request 2 is pending" \
    -- node "$NM/sdk19/dist/examples/agent.js"
fi

name="py-sdk-$PYSDK_V-scripted-agent"
if want "$name"; then
  fresh "$SESSIONS/$name"
  "${RECORD[@]}" acp --out "$SESSIONS/$name" \
    --peer-name "Python ACP SDK, scripted agent (scripts/peers/py_sdk_agent.py)" --peer-package agent-client-protocol --peer-version "$PYSDK_V" \
    --covers "the Python SDK's own framing and serialization (pydantic, \\u escapes incl. surrogate pairs, sessionUpdate last): initialize (loadSession true), session/new, session/prompt with agent_thought_chunk, plan (twice), tool_call/tool_call_update (read via fs/read_text_file, an old-form shell title 'ls -la [in src] (List files (detailed))', an edit with a diff), session/request_permission (answered allow_once), fs/write_text_file, a ~300 KB agent_message_chunk line, end_turn; then session/load replaying user/agent message chunks. The turn's content is scripted by us; the bytes are the SDK's" \
    "${PY_AGENT_ENV[@]}" -- python3 scripts/peers/py_sdk_agent.py
fi

name="gemini-cli-$GEMINI_V-acp-turn"
if want "$name"; then
  fresh "$SESSIONS/$name"
  "${RECORD[@]}" acp --out "$SESSIONS/$name" \
    --peer-name "Gemini CLI" --peer-package @google/gemini-cli --peer-version "$GEMINI_V" \
    --fake-gemini acp "${GEMINI_FAKE[@]}" --resource-link --load-next-minute --exit-timeout 5 \
    --covers "gemini --acp against the fake backend: initialize, session/new (modes, models), session/set_mode and session/set_model (re-selecting the current ones), prompt with a resource_link; agent_thought_chunk, agent_message_chunk, available_commands_update; tool calls run_shell_command (with description + dir_path, with neither, with is_background, a blocked command substitution, a 229 KB output that ACP does not carry), read_file, list_directory, glob, grep_search, replace (small and on a 78 KB file: fs/read_text_file answers and diffs over 64 KiB, both ways), write_file (new file: RESOURCE_NOT_FOUND from the client makes it fail; existing file: succeeds); session/request_permission answered allow_once; fs/read_text_file, fs/write_text_file; end_turn with _meta.quota; then session/load of the same session (history replay with user_message_chunk and tool_call titles like Shell/Edit); the agent ignores stdin EOF after a background shell and is ended with SIGTERM to its process group" \
    -- "$GEMINI" --acp
fi

name="ts-sdk-$SDK24_V-client-gemini-cli-$GEMINI_V-acp-turn"
if want "$name"; then
  fresh "$SESSIONS/$name"
  "${RECORD[@]}" proxy --out "$SESSIONS/$name" \
    --peer-name "Gemini CLI" --peer-package @google/gemini-cli --peer-version "$GEMINI_V" \
    --client-name "TypeScript ACP SDK client app (scripts/peers/ts_sdk_client.mjs)" \
    --client-package @agentclientprotocol/sdk --client-version "$SDK24_V" \
    --client-cmd "node scripts/peers/ts_sdk_client.mjs" "${TS_CLIENT_ENV[@]}" \
    --fake-gemini acp "${GEMINI_FAKE[@]}" --exit-timeout 5 \
    --covers "the same Gemini turn as gemini-cli-$GEMINI_V-acp-turn (no session/load), but the client is the official TypeScript SDK $SDK24_V client() app and record.py only relays and records the bytes: client.ndjson is what the SDK writes (its answers to fs/read_text_file, lines over 64 KiB; RESOURCE_NOT_FOUND errors with data.uri; permission outcomes)" \
    -- "$GEMINI" --acp
fi

# Qwen Code (a Gemini CLI fork) against the fake OpenAI backend
# (scripts/peers/fake_openai.py, script "acp"). It is installed into
# target/peers-qwen by scripts/interop_qwen.sh (pinned there); the recording
# runs in a network namespace of its own (loopback only) when the machine
# allows `unshare -n`.
QWEN_V="$(sed -n 's/^QWEN_VERSION="\([^"]*\)".*/\1/p' scripts/interop_qwen.sh)"
name="qwen-code-$QWEN_V-acp-turn"
if want "$name"; then
  QWEN_DIR="$(scripts/interop_qwen.sh --install-only)"
  NETNS=()
  if command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
    NETNS=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
  fi
  QWEN_SETTINGS='{"security":{"auth":{"selectedType":"openai"},"folderTrust":{"enabled":false}},"tools":{"approvalMode":"default"},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"ui":{"enableFollowupSuggestions":false},"memory":{"enableManagedAutoMemory":false,"enableManagedAutoDream":false}}'
  fresh "$SESSIONS/$name"
  "${NETNS[@]}" "${RECORD[@]}" acp --out "$SESSIONS/$name" \
    --peer-name "Qwen Code" --peer-package @qwen-code/qwen-code --peer-version "$QWEN_V" \
    --fake-gemini acp --fake-backend openai --home-file ".qwen/settings.json=$QWEN_SETTINGS" \
    --env OPENAI_API_KEY=dummy-key-for-fake-backend --env 'OPENAI_BASE_URL=http://127.0.0.1:{PORT}/v1' \
    --env OPENAI_MODEL=fake-model --resource-link --exit-timeout 5 \
    --covers "qwen --acp against the fake OpenAI backend (auth type openai, approval mode default): initialize (agentInfo qwen-code, authMethods, loadSession, sessionCapabilities), session/new (modes, models, configOptions), session/set_mode and session/set_model (re-selecting the current ones), prompt with a resource_link; agent_thought_chunk (reasoning_content), agent_message_chunk, available_commands_update (a line over 500 KB); tool calls read_file (fs/read_text_file), glob, edit (permission, fs/read_text_file, fs/write_text_file, a diff), write_file of a new file (no read of the missing file) and of an existing one, run_shell_command run by the agent itself; session/request_permission answered allow_once; end_turn; then session/load of the same session (history replay)" \
    -- "$QWEN_DIR/node_modules/.bin/qwen" --acp
fi

name="gemini-cli-$GEMINI_V-acp-offline"
if want "$name"; then
  fresh "$SESSIONS/$name"
  "${RECORD[@]}" acp --out "$SESSIONS/$name" --steps initialize,new --expect-error session/new \
    --peer-name "Gemini CLI" --peer-package @google/gemini-cli --peer-version "$GEMINI_V" \
    --gemini-settings --env GEMINI_CLI_NO_RELAUNCH=1 \
    --covers "gemini --acp with no API key and no auth type configured: initialize succeeds (authMethods, agentInfo, capabilities), session/new fails with the error Gemini returns; then stdin EOF" \
    -- "$GEMINI" --acp
fi

name="gemini-cli-$GEMINI_V-headless"
if want "$name"; then
  mkdir -p "$STREAM"
  "${RECORD[@]}" headless --out "$STREAM/$name" \
    --peer-name "Gemini CLI" --peer-package @google/gemini-cli --peer-version "$GEMINI_V" \
    --fake-gemini headless "${GEMINI_FAKE[@]}" --timeout 180 \
    --covers "gemini -p -o stream-json --yolo against the fake backend: init, user and delta assistant messages, tool_use/tool_result for run_shell_command (one with dir_path; one whose output is 228,893 bytes, a tool_result line over 64 KiB), read_file, glob, write_file, a failing read_file (status error with an error object), result with stats" \
    -- "$GEMINI" -p "Look at this project and write a note." -o stream-json --yolo
fi
# The Claude ACP adapter (its own install: scripts/peers/install_claude.sh)
# against the fake Anthropic API (scripts/peers/fake_anthropic.py, script
# "fixture"). Recorded in a network namespace of its own (unshare -n, as
# root): only loopback exists there, so the fake backend can take a fixed
# port and Claude Code cannot reach anything else. CLAUDE_CONFIG_DIR holds
# permissions.defaultMode "default" (without it the adapter starts in "auto"
# mode and asks no permission) and Claude Code's session files.
if want "claude-agent-acp"; then
  unshare -n true 2>/dev/null || { echo "record_all.sh: recording the Claude adapter needs unshare -n (root or user namespaces)" >&2; exit 1; }
  CLAUDE_DIR="$(scripts/peers/install_claude.sh)"
  CLAUDE_V="$(node -p "require('$CLAUDE_DIR/node_modules/@agentclientprotocol/claude-agent-acp/package.json').version")"
  CLAUDE_CODE_V="$(node -p "require('$CLAUDE_DIR/node_modules/@anthropic-ai/claude-agent-sdk/package.json').claudeCodeVersion || ''")"
  name="claude-agent-acp-$CLAUDE_V-acp-turn"
  fresh "$SESSIONS/$name"
  CONF=/tmp/acp-codec-fixture-claude
  rm -rf "$CONF"; mkdir -p "$CONF"
  printf '{"permissions":{"defaultMode":"default"}}\n' >"$CONF/settings.json"
  unshare -n bash -c 'ip link set lo up || exit 1
    python3 scripts/peers/fake_anthropic.py --port 18765 --script fixture --idle 60 --max-lifetime 300 >"$0/port" &
    for _ in $(seq 1 100); do [[ -s "$0/port" ]] && break; sleep 0.1; done
    exec "$@"' "$CONF" "${RECORD[@]}" acp --out "$SESSIONS/$name" \
    --peer-name "Claude ACP adapter (Claude Code ${CLAUDE_CODE_V:-?})" --peer-package @agentclientprotocol/claude-agent-acp --peer-version "$CLAUDE_V" \
    --env ANTHROPIC_BASE_URL=http://127.0.0.1:18765 --env ANTHROPIC_API_KEY=dummy \
    --env DISABLE_TELEMETRY=1 --env CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 --env DISABLE_AUTOUPDATER=1 \
    --env "CLAUDE_CONFIG_DIR=$CONF" --exit-timeout 5 \
    --covers "claude-agent-acp (Claude Agent SDK, Claude Code ${CLAUDE_CODE_V:-?}) against the fake Anthropic API: initialize (agentInfo, loadSession, sessionCapabilities, empty authMethods), the _auth/status_update extension notification, session/new (modes and configOptions: mode, model, effort, fast, ultracode; no models field, so no set_model), session/set_mode re-selecting default (a config_option_update follows); session/prompt: available_commands_update, session_info_update (the title from the small-model call), usage_update (used/size, cost at the end), agent_thought_chunk and agent_message_chunk with messageId, tool calls Read (twice), Edit, Write (a new file) and Bash (a command that is not read-only), the Edit, the Write and the Bash behind session/request_permission (options allow-once, allow-with-updates, reject; answered allow-once); Claude Code reads, writes and runs by itself (no fs/* and no terminal/* requests, although fs is offered); end_turn with usage; then session/load of the same session (history replay, then available_commands_update); stdin closed, the agent exits" \
    -- "$CLAUDE_DIR/node_modules/.bin/claude-agent-acp"
  rm -rf "$CONF"
fi
echo "recorded into $FIXTURES/"
