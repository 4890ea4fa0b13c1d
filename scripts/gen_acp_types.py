#!/usr/bin/env python3
"""Generates the typed ACP structs (src/acp/{content,update,init,session,client,unstable}.rs),
their `arbitrary::Arbitrary` impls (src/acp/arbitrary.rs, feature
`arbitrary`) and their proptest strategies (tests/acp_support/arb.rs) from the compact
spec below, with docs taken from the official schemas (copies in the repo).

Run from the crate root: python3 scripts/gen_acp_types.py [--check] [SCHEMA_DIR]
(default: tests/fixtures/acp, the schema copies committed with the crate).
It also writes the explicit re-export list of src/acp/mod.rs (between the
`generated exports` markers). The output is committed, formatted: run
`cargo fmt --all` afterwards.

With --check nothing in the repo is written: the files are generated into a
copy of src/ and tests/acp_support/ in a temporary directory, formatted with
rustfmt, and compared with the committed ones; the exit status is 1 (and
the differences are printed) when they differ. CI runs it.

The schemas: `schema-crate-1.20.0.json` and `schema-crate-1.20.0.unstable.json`
are what `agent-client-protocol-schema` 1.20.0 derives (stable, and with its
`unstable` feature; emitted by scripts/schema_export). The older copies
(`schema.json`, the npm SDK 2.4.0 ones) only supply docs for what the newer
ones no longer describe.
"""
import difflib, json, re, shutil, subprocess, sys, os, tempfile

ARGS = [a for a in sys.argv[1:] if a != '--check']
CHECK = '--check' in sys.argv[1:]
SCHEMA_DIR = ARGS[0] if ARGS else 'tests/fixtures/acp'
SCHEMA_VERSION = '1.20.0'
def load_defs(name):
    return json.load(open(os.path.join(SCHEMA_DIR, name)))['$defs']
# The stable schema, then the unstable one of the same version: what
# feature `unstable` adds; then the older copies.
defs = load_defs('schema-crate-%s.json' % SCHEMA_VERSION)
defs_u = load_defs('schema-crate-%s.unstable.json' % SCHEMA_VERSION)
defs1 = load_defs('schema-npm-sdk-2.4.0.json')
defs0 = load_defs('schema.json')

# Where the files are written: the crate root, or with --check a copy.
ROOT = '.'
if CHECK:
    ROOT = tempfile.mkdtemp(prefix='gen_acp_types.')
    shutil.copytree('src', os.path.join(ROOT, 'src'))
    shutil.copytree('tests/acp_support', os.path.join(ROOT, 'tests', 'acp_support'))
WRITTEN = []

def out_path(path):
    return os.path.join(ROOT, path)

def write(path, text):
    WRITTEN.append(path)
    with open(out_path(path), 'w') as f:
        f.write(text)

UNSTABLE_CFG = '#[cfg(feature = "unstable")]'

def first_par(text):
    if not text:
        return None
    pars = [p for p in text.strip().split('\n\n')
            if p.strip() != '**UNSTABLE**' and not p.startswith('This capability is not part of the spec yet')]
    if not pars:
        return None
    par = pars[0].replace('\n', ' ').strip()
    if par.startswith('**UNSTABLE** '):
        par = par[len('**UNSTABLE** '):]
    par = re.sub(r'\[([^\]]+)\]\([^)]+\)', r'\1', par)
    par = par.replace('[', '\\[').replace(']', '\\]')
    if not par.endswith('.'):
        par += '.'
    return par

def def_doc(name):
    d = defs.get(name) or defs_u.get(name) or defs1.get(name) or defs0.get(name) or {}
    return first_par(d.get('description'))

def prop_doc(name, prop):
    for src in (defs, defs_u, defs1, defs0):
        d = src.get(name) or {}
        p = (d.get('properties') or {}).get(prop)
        if p and p.get('description'):
            return first_par(p['description'])
        for sub in d.get('allOf', []) + d.get('anyOf', []) + d.get('oneOf', []):
            ref = sub.get('$ref') or (sub.get('allOf') or [{}])[0].get('$ref')
            if ref:
                r = ref.split('/')[-1]
                dd = prop_doc(r, prop) if r != name else None
                if dd:
                    return dd
    return None

# ---------------------------------------------------------------- spec
# struct: (Name, schema def for docs or None, doc override or None, [fields])
# field: "wireName:type" with "?" after the name for optional; types:
#   str raw id bool u16 u32 u64 i64 f64 [T] TypeName
# A field ending in "!u" (and a union variant with a fourth element 'u')
# exists only with feature `unstable` (schema.unstable.json): without it the
# member lands in `extra`, the variant decodes as `Unknown`. Types of module
# 'unstable' go to src/acp/unstable.rs, a module of that feature.
STRUCTS = {}
ORDER = {}
def S(module, name, fields, docdef=None, doc=None):
    STRUCTS[name] = dict(module=module, name=name, fields=fields, docdef=docdef or name, doc=doc)
    ORDER.setdefault(module, []).append(('struct', name))

ENUMS = {}
def E(module, name, values, doc=None, docdef=None):
    ENUMS[name] = dict(module=module, name=name, values=values, doc=doc, docdef=docdef or name)
    ORDER.setdefault(module, []).append(('enum', name))

TAGGED = {}
def T(module, name, tag, variants, doc=None, absent=None):
    # variants: [(wire, Variant, Type)]; absent: Variant used when the tag is missing
    TAGGED[name] = dict(module=module, name=name, tag=tag, variants=variants, doc=doc, absent=absent)
    ORDER.setdefault(module, []).append(('tagged', name))

TRIED = {}
def U(module, name, variants, doc=None):
    # untagged: tried in order; [(Variant, Type)]
    TRIED[name] = dict(module=module, name=name, variants=variants, doc=doc)
    ORDER.setdefault(module, []).append(('tried', name))

M = '_meta?:raw'
# content.rs
E('content', 'Role', ['assistant', 'user'])
S('content', 'Annotations', ['audience?:[Role]', 'lastModified?:str', 'priority?:f64', M])
S('content', 'TextContent', ['annotations?:Annotations', 'text:str', M])
S('content', 'ImageContent', ['annotations?:Annotations', 'data:str', 'mimeType:str', 'uri?:str', M])
S('content', 'AudioContent', ['annotations?:Annotations', 'data:str', 'mimeType:str', M])
S('content', 'ResourceLink', ['annotations?:Annotations', 'description?:str', 'mimeType?:str', 'name:str', 'size?:i64', 'title?:str', 'uri:str', M])
S('content', 'EmbeddedResource', ['annotations?:Annotations', 'resource:EmbeddedResourceResource', M])
S('content', 'TextResourceContents', ['mimeType?:str', 'text:str', 'uri:str', M])
S('content', 'BlobResourceContents', ['blob:str', 'mimeType?:str', 'uri:str', M])
U('content', 'EmbeddedResourceResource', [('Text', 'TextResourceContents'), ('Blob', 'BlobResourceContents')])
T('content', 'ContentBlock', 'type', [('text', 'Text', 'TextContent'), ('image', 'Image', 'ImageContent'), ('audio', 'Audio', 'AudioContent'), ('resource_link', 'ResourceLink', 'ResourceLink'), ('resource', 'Resource', 'EmbeddedResource')])
S('content', 'MetaOnly', [M], doc='An object with no fields of its own but `_meta`: the empty results (`{}`), `logout` params and the capability markers.')

# update.rs
S('update', 'SessionNotification', ['sessionId:str', 'update:SessionUpdate', M])
S('update', 'ContentChunk', ['content:ContentBlock', 'messageId?:str', M])
E('update', 'ToolKind', ['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other'])
E('update', 'ToolCallStatus', ['pending', 'in_progress', 'completed', 'failed'])
S('update', 'ToolCall', ['toolCallId:str', 'title:str', 'name?:str', 'kind?:ToolKind', 'status?:ToolCallStatus', 'content?:[ToolCallContent]', 'locations?:[ToolCallLocation]', 'rawInput?:raw', 'rawOutput?:raw', M])
S('update', 'ToolCallUpdate', ['toolCallId:str', 'kind?:ToolKind', 'status?:ToolCallStatus', 'title?:str', 'name?:str', 'content?:[ToolCallContent]', 'locations?:[ToolCallLocation]', 'rawInput?:raw', 'rawOutput?:raw', M])
S('update', 'ToolCallLocation', ['path:str', 'line?:u32', M])
S('update', 'Content', ['content:ContentBlock', M])
S('update', 'Diff', ['path:str', 'oldText?:str', 'newText:str', M])
S('update', 'Terminal', ['terminalId:str', M])
# `session` (a SessionReference, in the stable schema since 1.20.0) is not
# typed yet: it decodes as `Unknown`, losslessly.
T('update', 'ToolCallContent', 'type', [('content', 'Content', 'Content'), ('diff', 'Diff', 'Diff'), ('terminal', 'Terminal', 'Terminal')])
E('update', 'PlanEntryPriority', ['high', 'medium', 'low'])
E('update', 'PlanEntryStatus', ['pending', 'in_progress', 'completed'])
S('update', 'Plan', ['entries:[PlanEntry]', M])
S('update', 'PlanEntry', ['content:str', 'priority:PlanEntryPriority', 'status:PlanEntryStatus', M])
S('update', 'AvailableCommandsUpdate', ['availableCommands:[AvailableCommand]', M])
S('update', 'AvailableCommand', ['name:str', 'description:str', 'input?:AvailableCommandInput', M])
S('update', 'UnstructuredCommandInput', ['hint:str', M])
U('update', 'AvailableCommandInput', [('Unstructured', 'UnstructuredCommandInput')])
S('update', 'CurrentModeUpdate', ['currentModeId:str', M])
S('update', 'ConfigOptionUpdate', ['configOptions:[SessionConfigOption]', M])
S('update', 'SessionInfoUpdate', ['title?:str', 'updatedAt?:str', M])
S('update', 'UsageUpdate', ['used:u64', 'size:u64', 'cost?:Cost', M])
S('update', 'Cost', ['amount:f64', 'currency:str', M])
E('update', 'NoticeSeverity', ['info', 'warning', 'error'])
S('update', 'Notice', ['severity:NoticeSeverity', 'title:str', 'description?:str', M])
E('update', 'CompactionStatus', ['in_progress', 'completed', 'failed', 'cancelled'])
S('update', 'CompactionUpdate', ['compactionId:str', 'status:CompactionStatus', 'summary?:[ContentBlock]', 'error?:str', M])
S('update', 'CompactionSummaryChunk', ['compactionId:str', 'content:ContentBlock', M])
T('update', 'SessionUpdate', 'sessionUpdate', [
    ('user_message_chunk', 'UserMessageChunk', 'ContentChunk'),
    ('agent_message_chunk', 'AgentMessageChunk', 'ContentChunk'),
    ('agent_thought_chunk', 'AgentThoughtChunk', 'ContentChunk'),
    ('tool_call', 'ToolCall', 'ToolCall'),
    ('tool_call_update', 'ToolCallUpdate', 'ToolCallUpdate'),
    ('plan', 'Plan', 'Plan'),
    ('available_commands_update', 'AvailableCommandsUpdate', 'AvailableCommandsUpdate'),
    ('current_mode_update', 'CurrentModeUpdate', 'CurrentModeUpdate'),
    ('config_option_update', 'ConfigOptionUpdate', 'ConfigOptionUpdate'),
    ('session_info_update', 'SessionInfoUpdate', 'SessionInfoUpdate'),
    ('usage_update', 'UsageUpdate', 'UsageUpdate'),
    ('notice', 'Notice', 'Notice'),
    ('compaction_update', 'CompactionUpdate', 'CompactionUpdate'),
    ('compaction_summary_chunk', 'CompactionSummaryChunk', 'CompactionSummaryChunk'),
    ('plan_update', 'PlanUpdate', 'PlanUpdate'),
    ('plan_removed', 'PlanRemoved', 'PlanRemoved'),
    ('subagent_update', 'SubagentUpdate', 'SubagentUpdate'),
    ('session_message', 'SessionMessage', 'SessionMessage'),
    ('session_message_chunk', 'SessionMessageChunk', 'SessionMessageChunk'),
    ('cursor_update', 'CursorUpdate', 'CursorUpdate', 'u'),
    ('prompt_suggestions_update', 'PromptSuggestionsUpdate', 'PromptSuggestionsUpdate', 'u'),
])
# Plans, subagents and session messages (stable since schema 1.20.0).
S('update', 'PlanUpdate', ['plan:PlanUpdateContent', M])
T('update', 'PlanUpdateContent', 'type', [('items', 'Items', 'PlanItems'), ('markdown', 'Markdown', 'PlanMarkdown')])
S('update', 'PlanItems', ['planId:str', 'entries:[PlanEntry]', M])
S('update', 'PlanMarkdown', ['planId:str', 'content:str', 'path?:str', M])
S('update', 'PlanRemoved', ['planId:str', M])
S('update', 'SubagentUpdate', ['sessionId:str', 'title?:str', 'description?:str', 'capabilities?:SubagentSessionCapabilities', 'state?:StateUpdate', 'cwd?:str', 'additionalDirectories?:[str]', M])
S('update', 'SubagentSessionCapabilities', ['cancel?:SessionCancelCapabilities', M])
S('update', 'SessionCancelCapabilities', [M])
T('update', 'StateUpdate', 'state', [('running', 'Running', 'RunningStateUpdate'), ('idle', 'Idle', 'IdleStateUpdate'), ('requires_action', 'RequiresAction', 'RequiresActionStateUpdate'), ('unknown', 'UnknownState', 'UnknownStateUpdate')])
S('update', 'RunningStateUpdate', [M])
# The `stopReason` tags of IdleStateUpdate (not a $def); `error` (the
# JSON-RPC error object of ErrorStopReason) is kept raw.
E('update', 'IdleStopReason', ['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled', 'error'], doc='Why a subagent\'s foreground work stopped (the `stopReason` of an idle state).')
S('update', 'IdleStateUpdate', ['stopReason?:IdleStopReason', 'error?:raw', 'usage?:Usage!u', M])
S('update', 'ErrorStopReason', ['error?:raw'])
S('update', 'RequiresActionStateUpdate', [M])
S('update', 'UnknownStateUpdate', [M])
S('update', 'SessionMessage', ['messageId:str', 'senderSessionId?:str', 'recipientSessionId?:str', 'senderMessageId?:str', 'recipientMessageId?:str', 'content?:[ContentBlock]', M])
S('update', 'SessionMessageChunk', ['messageId:str', 'content:ContentBlock', M])

# session.rs
S('init', 'Implementation', ['name:str', 'title?:str', 'version:str', M])
S('init', 'FileSystemCapabilities', ['readTextFile?:bool', 'writeTextFile?:bool', M])
S('init', 'SessionConfigOptionsCapabilities', ['boolean?:MetaOnly', M])
S('init', 'ClientSessionCapabilities', ['compaction?:MetaOnly', 'configOptions?:SessionConfigOptionsCapabilities', 'notices?:MetaOnly', 'promptSuggestions?:PromptSuggestionsCapabilities!u', 'cursors?:SessionCursorsCapabilities!u', M])
S('init', 'AuthCapabilities', ['terminal?:bool', M])
S('init', 'ElicitationCapabilities', ['form?:MetaOnly', 'url?:MetaOnly', M])
S('init', 'ClientCapabilities', ['fs?:FileSystemCapabilities', 'terminal?:bool', 'session?:ClientSessionCapabilities', 'subagents?:SubagentCapabilities', 'plan?:PlanCapabilities', 'auth?:AuthCapabilities', 'elicitation?:ElicitationCapabilities', M])
S('init', 'InitializeRequest', ['protocolVersion:u16', 'clientCapabilities?:ClientCapabilities', 'clientInfo?:Implementation', M])
S('init', 'PromptCapabilities', ['image?:bool', 'audio?:bool', 'embeddedContext?:bool', M])
S('init', 'McpCapabilities', ['http?:bool', 'sse?:bool', 'acp?:bool!u', M])
S('init', 'SessionCapabilities', ['list?:MetaOnly', 'delete?:MetaOnly', 'additionalDirectories?:MetaOnly', 'systemPrompt?:SessionSystemPromptCapabilities', 'fork?:SessionForkCapabilities!u', 'archive?:SessionArchiveCapabilities!u', 'status?:SessionStatusCapabilities!u', 'title?:SessionTitleCapabilities!u', 'options?:SessionOptionsCapabilities!u', 'resume?:MetaOnly', 'close?:MetaOnly', M])
S('init', 'AgentAuthCapabilities', ['status?:AuthStatusCapabilities!u', 'logout?:MetaOnly', M])
S('init', 'PlanCapabilities', [M])
S('init', 'SubagentCapabilities', [M])
S('init', 'SessionSystemPromptCapabilities', ['mode?:SessionSystemPromptModeCapabilities', M])
S('init', 'SessionSystemPromptModeCapabilities', ['override?:SessionSystemPromptOverrideCapabilities', M])
S('init', 'SessionSystemPromptOverrideCapabilities', [M])
S('init', 'AgentCapabilities', ['loadSession?:bool', 'promptCapabilities?:PromptCapabilities', 'mcpCapabilities?:McpCapabilities', 'sessionCapabilities?:SessionCapabilities', 'auth?:AgentAuthCapabilities', 'providers?:ProvidersCapabilities!u', M])
S('init', 'AuthMethodAgent', ['id:str', 'name:str', 'description?:str', M])
S('init', 'AuthMethodTerminal', ['id:str', 'name:str', 'description?:str', 'args?:[str]', 'env?:raw', M])
T('init', 'AuthMethod', 'type', [('terminal', 'Terminal', 'AuthMethodTerminal')], absent=('Agent', 'AuthMethodAgent'))
S('init', 'InitializeResponse', ['protocolVersion:u16', 'agentCapabilities?:AgentCapabilities', 'authMethods?:[AuthMethod]', 'agentInfo?:Implementation', M])
S('init', 'AuthenticateRequest', ['methodId:str', M])
S('session', 'HttpHeader', ['name:str', 'value:str', M])
S('session', 'EnvVariable', ['name:str', 'value:str', M])
S('session', 'McpServerHttp', ['name:str', 'url:str', 'headers:[HttpHeader]', M])
S('session', 'McpServerSse', ['name:str', 'url:str', 'headers:[HttpHeader]', M])
S('session', 'McpServerStdio', ['name:str', 'command:str', 'args:[str]', 'env:[EnvVariable]', M])
T('session', 'McpServer', 'type', [('http', 'Http', 'McpServerHttp'), ('sse', 'Sse', 'McpServerSse'), ('acp', 'Acp', 'McpServerAcp', 'u')], absent=('Stdio', 'McpServerStdio'))
S('session', 'SessionMode', ['id:str', 'name:str', 'description?:str', M])
S('session', 'SessionModeState', ['currentModeId:str', 'availableModes:[SessionMode]', M])
S('session', 'ModelInfo', ['modelId:str', 'name:str', 'description?:str', M], doc='A model the agent can switch to (Gemini CLI\'s `models`, not in the v1 schema).')
S('session', 'SessionModelState', ['currentModelId:str', 'availableModels:[ModelInfo]', M], doc='The models of a session and the current one (Gemini CLI sends it in `session/new`; not in the v1 schema).')
E('session', 'SessionConfigOptionCategory', ['mode', 'model', 'model_config', 'speed!u', 'thought_level'])
S('session', 'SessionConfigSelectOption', ['value:str', 'name:str', 'description?:str', M])
S('session', 'SessionConfigSelectGroup', ['group:str', 'name:str', 'options:[SessionConfigSelectOption]', M])
U('session', 'SessionConfigSelectOptions', [('Ungrouped', '[SessionConfigSelectOption]'), ('Grouped', '[SessionConfigSelectGroup]')])
S('session', 'SessionConfigSelect', ['id:str', 'name:str', 'description?:str', 'category?:SessionConfigOptionCategory', 'currentValue:str', 'options:SessionConfigSelectOptions', M], doc='A `select` session configuration option: one value out of a list.')
S('session', 'SessionConfigBoolean', ['id:str', 'name:str', 'description?:str', 'category?:SessionConfigOptionCategory', 'currentValue:bool', M], doc='A `boolean` session configuration option.')
T('session', 'SessionConfigOption', 'type', [('select', 'Select', 'SessionConfigSelect'), ('boolean', 'Boolean', 'SessionConfigBoolean')])
S('session', 'SystemPrompt', ['mode:SystemPromptMode', 'content:[ContentBlock]', M])
E('session', 'SystemPromptMode', ['append', 'override'])
S('session', 'NewSessionRequest', ['cwd:str', 'additionalDirectories?:[str]', 'mcpServers:[McpServer]', 'systemPrompt?:SystemPrompt', 'configOptions?:[InitialSessionConfigOption]!u', M])
S('session', 'NewSessionResponse', ['sessionId:str', 'modes?:SessionModeState', 'configOptions?:[SessionConfigOption]', 'models?:SessionModelState', M])
S('session', 'LoadSessionRequest', ['mcpServers:[McpServer]', 'cwd:str', 'additionalDirectories?:[str]', 'sessionId:str', 'systemPrompt?:SystemPrompt', 'configOptions?:[InitialSessionConfigOption]!u', M])
S('session', 'LoadSessionResponse', ['modes?:SessionModeState', 'configOptions?:[SessionConfigOption]', 'models?:SessionModelState', M])
S('session', 'ListSessionsRequest', ['cwd?:str', 'cursor?:str', 'archived?:SessionArchiveFilter!u', M])
S('session', 'SessionInfo', ['sessionId:str', 'cwd:str', 'additionalDirectories?:[str]', 'title?:str', 'updatedAt?:str', 'archived?:bool!u', M])
S('session', 'ListSessionsResponse', ['sessions:[SessionInfo]', 'nextCursor?:str', M])
S('session', 'SessionIdRequest', ['sessionId:str', M], doc='Params that name only a session: `session/delete`, `session/close` and the `session/cancel` notification.')
S('session', 'ResumeSessionRequest', ['sessionId:str', 'cwd:str', 'additionalDirectories?:[str]', 'mcpServers?:[McpServer]', 'systemPrompt?:SystemPrompt', 'configOptions?:[InitialSessionConfigOption]!u', M])
S('session', 'ResumeSessionResponse', ['modes?:SessionModeState', 'configOptions?:[SessionConfigOption]', 'models?:SessionModelState', M])
S('session', 'SetSessionModeRequest', ['sessionId:str', 'modeId:str', M])
S('session', 'SetSessionConfigOptionRequest', ['sessionId:str', 'configId:str', 'type?:str', 'value:ConfigValue', M])
S('session', 'SetSessionConfigOptionResponse', ['configOptions:[SessionConfigOption]', M])
S('session', 'SetSessionModelRequest', ['sessionId:str', 'modelId:str', M], doc='Params of `session/set_model` (Gemini CLI; not in the v1 schema): switch the session\'s model.')
S('session', 'PromptRequest', ['sessionId:str', 'prompt:[ContentBlock]', M])
E('session', 'StopReason', ['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled'])
S('session', 'PromptResponse', ['stopReason:StopReason', 'usage?:Usage!u', M])
S('session', 'CancelRequestNotification', ['requestId:id', M])

# client.rs
S('client', 'ReadTextFileRequest', ['sessionId:str', 'path:str', 'line?:u32', 'limit?:u32', M])
S('client', 'ReadTextFileResponse', ['content:str', M])
S('client', 'WriteTextFileRequest', ['sessionId:str', 'path:str', 'content:str', M])
E('client', 'PermissionOptionKind', ['allow_once', 'allow_always', 'reject_once', 'reject_always'])
S('client', 'PermissionOption', ['optionId:str', 'name:str', 'kind:PermissionOptionKind', M])
S('client', 'RequestPermissionRequest', ['sessionId:str', 'toolCall:ToolCallUpdate', 'options:[PermissionOption]', M])
S('client', 'SelectedPermissionOutcome', ['optionId:str', M])
T('client', 'RequestPermissionOutcome', 'outcome', [('cancelled', 'Cancelled', 'MetaOnly'), ('selected', 'Selected', 'SelectedPermissionOutcome')])
S('client', 'RequestPermissionResponse', ['outcome:RequestPermissionOutcome', M])
S('client', 'CreateTerminalRequest', ['sessionId:str', 'command:str', 'args?:[str]', 'env?:[EnvVariable]', 'cwd?:str', 'outputByteLimit?:u64', M])
S('client', 'CreateTerminalResponse', ['terminalId:str', M])
S('client', 'TerminalRequest', ['sessionId:str', 'terminalId:str', M], docdef='TerminalOutputRequest', doc='Params that name a terminal of a session: `terminal/output`, `terminal/release`, `terminal/wait_for_exit`, `terminal/kill`.')
S('client', 'TerminalExitStatus', ['exitCode?:u32', 'signal?:str', M])
S('client', 'TerminalOutputResponse', ['output:str', 'truncated:bool', 'exitStatus?:TerminalExitStatus', M])
E('client', 'ElicitationMode', ['form', 'url'], doc='How an elicitation asks the user: a form, or a URL to open.')
S('client', 'CreateElicitationRequest', ['message:str', 'mode:ElicitationMode', 'requestedSchema?:raw', 'elicitationId?:str', 'url?:str', 'sessionId?:str', 'toolCallId?:str', 'requestId?:id', M], doc='Params of `elicitation/create`: ask the user for input, by a form (`requestedSchema`, a JSON Schema kept raw) or a URL (`elicitationId`, `url`), scoped to a session (`sessionId`, `toolCallId`) or a request (`requestId`).')
E('client', 'ElicitationAction', ['accept', 'decline', 'cancel'], doc='The user\'s answer to an elicitation.')
S('client', 'CreateElicitationResponse', ['action:ElicitationAction', 'content?:raw', M], doc='Result of `elicitation/create`: the action, and for `accept` of a form the values entered (`content`, kept raw).')
S('client', 'CompleteElicitationNotification', ['elicitationId:str', M])

# unstable.rs (feature `unstable`): what the unstable schema of
# agent-client-protocol-schema 1.20.0 adds over its stable one (not
# `proxy/*`). String aliases (ProviderId, CursorId, McpServerAcpId,
# McpRequestId) are `str`.
S('unstable', 'ListProvidersRequest', [M])
S('unstable', 'ListProvidersResponse', ['providers:[ProviderInfo]', M])
S('unstable', 'ProviderInfo', ['providerId:str', 'supported:[LlmProtocol]', 'required:bool', 'current?:ProviderCurrentConfig', M])
S('unstable', 'ProviderCurrentConfig', ['apiType:LlmProtocol', 'baseUrl:str', M])
E('unstable', 'LlmProtocol', ['anthropic', 'openai', 'azure', 'vertex', 'bedrock'])
S('unstable', 'SetProviderRequest', ['providerId:str', 'apiType:LlmProtocol', 'baseUrl:str', 'headers?:raw', M])
S('unstable', 'SetProviderResponse', [M])
S('unstable', 'DisableProviderRequest', ['providerId:str', M])
S('unstable', 'DisableProviderResponse', [M])
S('unstable', 'ProvidersCapabilities', [M])
S('unstable', 'AuthStatusRequest', [M])
S('unstable', 'AuthStatusResponse', ['state:AuthState', 'accounts?:[AuthAccount]', M])
S('unstable', 'AuthStatusUpdateNotification', ['state:AuthState', 'accounts?:[AuthAccount]', M])
S('unstable', 'AuthAccount', ['label:str', 'description?:str', 'active?:bool', 'name?:str', 'email?:str', 'organization?:str', M])
E('unstable', 'AuthState', ['authenticated', 'unauthenticated', 'not_required', ('unknown', 'UnknownState')])
S('unstable', 'AuthStatusCapabilities', [M])
S('unstable', 'ForkSessionRequest', ['sessionId:str', 'cursorId?:str', 'cwd:str', 'additionalDirectories?:[str]', 'mcpServers?:[McpServer]', 'systemPrompt?:SystemPrompt', 'configOptions?:[InitialSessionConfigOption]', M])
S('unstable', 'ForkSessionResponse', ['sessionId:str', 'modes?:SessionModeState', 'configOptions?:[SessionConfigOption]', M])
S('unstable', 'SessionForkCapabilities', [M])
S('unstable', 'ArchiveSessionRequest', ['sessionId:str', M])
S('unstable', 'ArchiveSessionResponse', [M])
S('unstable', 'UnarchiveSessionRequest', ['sessionId:str', M])
S('unstable', 'UnarchiveSessionResponse', [M])
S('unstable', 'SessionArchiveCapabilities', [M])
E('unstable', 'SessionArchiveFilter', ['exclude', 'include', 'only'])
S('unstable', 'SessionStatusRequest', ['sessionId:str', M])
S('unstable', 'SessionStatusResponse', ['status:SessionStatus', M])
E('unstable', 'SessionStatus', ['open', 'saved'])
S('unstable', 'SessionStatusCapabilities', [M])
S('unstable', 'SetSessionTitleRequest', ['sessionId:str', 'title:str', M])
S('unstable', 'SetSessionTitleResponse', ['title:str', M])
S('unstable', 'SessionTitleCapabilities', [M])
S('unstable', 'Usage', ['totalTokens:u64', 'inputTokens:u64', 'outputTokens:u64', 'thoughtTokens?:u64', 'cachedReadTokens?:u64', 'cachedWriteTokens?:u64', M])
# `session/options` (unstable_session_options).
S('unstable', 'SessionOptionsRequest', ['cwd:str', 'additionalDirectories?:[str]', 'sessionId?:str', M])
S('unstable', 'SessionOptionsResponse', ['modes?:SessionModeState', 'configOptions?:[SessionConfigOption]', M])
S('unstable', 'SessionOptionsCapabilities', [M])
# The initial values of `configOptions` in session/new, load, resume, fork:
# `type: "boolean"` with a boolean value, no `type` with a value id.
S('unstable', 'InitialSessionConfigOption', ['configId:str', 'type?:str', 'value:ConfigValue', M])
# Cursors (unstable_session_cursors).
S('unstable', 'CursorUpdate', ['cursorId:str', 'capabilities?:CursorCapabilities', 'anchor?:CursorAnchor', M])
S('unstable', 'CursorCapabilities', ['fork?:CursorForkCapabilities', M])
S('unstable', 'CursorForkCapabilities', [M])
S('unstable', 'SessionCursorsCapabilities', [M])
T('unstable', 'CursorAnchor', 'type', [('user_message', 'UserMessage', 'CursorMessageAnchor'), ('agent_message', 'AgentMessage', 'CursorMessageAnchor'), ('agent_thought', 'AgentThought', 'CursorMessageAnchor'), ('session_message', 'SessionMessage', 'CursorMessageAnchor'), ('tool_call', 'ToolCall', 'CursorToolCallAnchor'), ('compaction', 'Compaction', 'CursorCompactionAnchor')])
S('unstable', 'CursorMessageAnchor', ['messageId:str', 'position:CursorAnchorPosition', M])
S('unstable', 'CursorToolCallAnchor', ['toolCallId:str', 'position:CursorAnchorPosition', M])
S('unstable', 'CursorCompactionAnchor', ['compactionId:str', 'position:CursorAnchorPosition', M])
E('unstable', 'CursorAnchorPosition', ['before', 'after'])
# Prompt suggestions (unstable_prompt_suggestions). `prompt` is never empty.
S('unstable', 'PromptSuggestionsUpdate', ['suggestions:[PromptSuggestion]', M])
S('unstable', 'PromptSuggestion', ['prompt:[ContentBlock]', M])
S('unstable', 'PromptSuggestionsCapabilities', ['image?:MetaOnly', 'audio?:MetaOnly', 'embeddedContext?:MetaOnly', M])
S('unstable', 'McpServerAcp', ['name:str', 'serverId:str', M])
S('unstable', 'MessageMcpRequest', ['serverId:str', 'requestId:str', 'method:str', 'params?:raw', M])
S('unstable', 'MessageMcpNotification', ['serverId:str', 'requestId:str', 'method:str', 'params?:raw', M])
# Selected by key, not tag: exactly one of `result` (any JSON, `null` kept)
# and `error` is sent; receivers prefer `result`.
S('unstable', 'MessageMcpResponse', ['result?:raw', 'error?:McpError', M])
S('unstable', 'McpError', ['code:i64', 'message:str', 'data?:raw'])

ALIASES = {
 'init': [
   ('LogoutRequest', 'MetaOnly', 'Params of `logout`.'),
   ('AuthenticateResponse', 'MetaOnly', 'Result of `authenticate`.'),
   ('LogoutResponse', 'MetaOnly', 'Result of `logout`.'),
 ],
 'session': [
   ('DeleteSessionRequest', 'SessionIdRequest', 'Params of `session/delete`.'),
   ('DeleteSessionResponse', 'MetaOnly', 'Result of `session/delete`.'),
   ('CloseSessionRequest', 'SessionIdRequest', 'Params of `session/close`.'),
   ('CloseSessionResponse', 'MetaOnly', 'Result of `session/close`.'),
   ('CancelNotification', 'SessionIdRequest', 'Params of the `session/cancel` notification.'),
   ('SetSessionModeResponse', 'MetaOnly', 'Result of `session/set_mode`.'),
   ('SetSessionModelResponse', 'MetaOnly', 'Result of `session/set_model`.'),
 ],
 'client': [
   ('WriteTextFileResponse', 'MetaOnly', 'Result of `fs/write_text_file`.'),
   ('TerminalOutputRequest', 'TerminalRequest', 'Params of `terminal/output`.'),
   ('ReleaseTerminalRequest', 'TerminalRequest', 'Params of `terminal/release`.'),
   ('ReleaseTerminalResponse', 'MetaOnly', 'Result of `terminal/release`.'),
   ('WaitForTerminalExitRequest', 'TerminalRequest', 'Params of `terminal/wait_for_exit`.'),
   ('WaitForTerminalExitResponse', 'TerminalExitStatus', 'Result of `terminal/wait_for_exit`.'),
   ('KillTerminalRequest', 'TerminalRequest', 'Params of `terminal/kill`.'),
   ('KillTerminalResponse', 'MetaOnly', 'Result of `terminal/kill`.'),
 ],
}

PRIM = {'bool', 'u16', 'u32', 'u64', 'i64', 'f64'}

def snake(n):
    if n == '_meta':
        return 'meta'
    if n == 'type':
        return 'kind'
    if n == 'override':
        return 'override_mode'  # `override` is a reserved word
    return re.sub(r'([A-Z])', lambda m: '_' + m.group(1).lower(), n)

def is_unstable(f):
    return f.endswith('!u')

def cfg_u(unstable, indent):
    return '%s%s\n' % (indent, UNSTABLE_CFG) if unstable else ''

def variants(t):
    """The variants of a tagged union as (wire, Variant, Type, unstable)."""
    return [(v[0], v[1], v[2], len(v) > 3 and v[3] == 'u') for v in t['variants']]

def enum_values(e):
    """The values of a string enum as (wire, Variant, unstable): the variant
    is the value in CamelCase, or given (`('unknown', 'UnknownState')`:
    `Unknown` is the catch-all variant); a value ending in "!u" exists only
    with feature `unstable` (without it, it decodes as `Unknown`)."""
    out = []
    for v in e['values']:
        wire, var = v if isinstance(v, tuple) else (v, None)
        unstable = is_unstable(wire)
        wire = wire[:-2] if unstable else wire
        out.append((wire, var or ''.join(p.capitalize() for p in wire.split('_')), unstable))
    return out

def parse_field(f):
    if f.endswith('!u'):
        f = f[:-2]
    name, ty = f.split(':', 1)
    opt = name.endswith('?')
    name = name.rstrip('?')
    return name, ty, opt

def rust_ty(ty):
    if ty.startswith('['):
        return 'Vec<%s>' % rust_ty(ty[1:-1])
    if ty == 'str':
        return "Cow<'a, str>"
    if ty == 'raw':
        return "RawJson<'a>"
    if ty == 'id':
        return "RequestId<'a>"
    if ty == 'f64':
        return 'Number'
    if ty in PRIM:
        return ty
    return "%s<'a>" % ty

def has_lt(ty):
    if ty.startswith('['):
        return has_lt(ty[1:-1])
    return ty not in PRIM

def field_code(sname, f):
    name, ty, opt = parse_field(f)
    rname = snake(name)
    rt = 'Option<%s>' % rust_ty(ty) if opt else rust_ty(ty)
    doc = prop_doc(STRUCTS[sname]['docdef'], name) or prop_doc(sname, name)
    if name == '_meta':
        doc = 'Extension metadata (`_meta`), kept raw.'
    if doc is None:
        doc = {'type': 'The `type` tag (`"boolean"` for boolean values).', 'value': 'The new value.',
               'models': 'The session\'s models (Gemini CLI; not in the v1 schema).',
               'modelId': 'The model to switch to.', 'currentModelId': 'The current model.',
               'availableModels': 'The models to choose from.', 'mode': 'The elicitation mode.',
               'requestedSchema': 'For `form`: the JSON Schema of the form, kept raw.',
               'elicitationId': 'For `url`: the elicitation\'s id.', 'url': 'For `url`: the URL to open.',
               'sessionId': 'The session.', 'toolCallId': 'The tool call the elicitation belongs to.',
               'requestId': 'The request the elicitation belongs to.', 'action': 'What the user chose.',
               'content': 'For `accept`: the values entered, kept raw.', 'name': 'The name.',
               'id': 'The id.', 'description': 'A description.', 'category': 'The category.',
               'currentValue': 'The current value.', 'options': 'The possible values.',
               'terminalId': 'The terminal.', 'title': 'The title.',
               'group': 'The group id.', 'message': 'The message shown to the user.',
               'compaction': 'Whether the client handles compaction updates.',
               'notices': 'Whether the client handles notices.',
               }.get(name, 'The `%s` member.' % name)
    if opt and not doc.startswith('Extension'):
        doc = doc.rstrip('.') + ' (optional).'
    return '        /// %s\n%s        "%s" pub %s: %s,\n' % (doc, cfg_u(is_unstable(f), '        '), name, rust_field(rname), rt)

def rust_field(rname):
    return 'r#type' if rname == 'type' else rname

def param_ty(ty):
    """The type a constructor or setter takes for a member of `ty`."""
    if ty == 'str':
        return "impl Into<Cow<'a, str>>"
    return rust_ty(ty)

def param_val(ty, var):
    return '%s.into()' % var if ty == 'str' else var

def gen_ctor(s):
    name = s['name']
    fields = [parse_field(f) + (is_unstable(f),) for f in s['fields']]
    req = [(n, t) for n, t, o, u in fields if not o]
    params = ', '.join('%s: %s' % (rust_field(snake(n)), param_ty(t)) for n, t in req)
    def init(n, t, o):
        r = rust_field(snake(n))
        v = param_val(t, r) if not o else 'None'
        return r if v == r else '%s: %s' % (r, v)
    inits = ''.join('%s            %s,\n' % (cfg_u(u, '            '), init(n, t, o)) for n, t, o, u in fields)
    if req:
        doc = 'A `%s` from its required members (%s); the optional ones absent.' % (name, ', '.join('`%s`' % n for n, _ in req))
    else:
        doc = 'A `%s` with every (optional) member absent.' % name
    out = "\nimpl<'a> %s<'a> {\n    /// %s\n    pub fn new(%s) -> Self {\n        Self {\n%s            extra: Extra::new(),\n        }\n    }\n" % (name, doc, params, inits)
    for n, t, o, u in fields:
        if not o:
            continue
        r = rust_field(snake(n))
        setter = 'with_' + snake(n)
        out += "\n    /// Sets `%s`.\n%s    #[must_use]\n    pub fn %s(mut self, %s: %s) -> Self {\n        self.%s = Some(%s);\n        self\n    }\n" % (n, cfg_u(u, '    '), setter, 'value', param_ty(t), r, param_val(t, 'value'))
    out += '}\n'
    if not req:
        out += "\nimpl Default for %s<'_> {\n    fn default() -> Self {\n        Self::new()\n    }\n}\n" % name
    return out

def gen_struct(s):
    name = s['name']
    doc = s['doc'] or def_doc(s['docdef']) or ('`%s`.' % name)
    out = '\nacp_struct! {\n    /// %s\n    pub struct %s<\'a> {\n' % (doc, name)
    for f in s['fields']:
        out += field_code(name, f)
    out += '    }\n}\n'
    out += gen_ctor(s)
    return out

def gen_enum(e):
    doc = e['doc'] or def_doc(e['docdef']) or '`%s`.' % e['name']
    out = '\nstring_enum! {\n    /// %s\n    pub enum %s {\n' % (doc, e['name'])
    for v, var, u in enum_values(e):
        out += '        /// `"%s"`.\n%s        %s = "%s",\n' % (v, cfg_u(u, '        '), var, v)
    out += '    }\n}\n'
    return out

def gen_tagged(t):
    doc = t['doc'] or def_doc(t['name']) or '`%s`.' % t['name']
    vs = ''.join('        /// `%s`: `"%s"`.\n%s        %s(%s) = "%s",\n' % (t['tag'], w, cfg_u(u, '        '), v, ty, w) for w, v, ty, u in variants(t))
    absent = ''
    if t['absent']:
        absent = '        @absent /// No `%s` member.\n        %s(%s),\n' % (t['tag'], t['absent'][0], t['absent'][1])
    return '\ntagged_enum! {\n    /// %s\n    pub enum %s tag "%s" {\n%s%s    }\n}\n' % (doc, t['name'], t['tag'], vs, absent)

def gen_tried(u):
    doc = u['doc'] or def_doc(u['name']) or '`%s`.' % u['name']
    vs = ''.join('        /// `%s`.\n        %s(%s),\n' % (ty.strip('[]'), v, rust_ty(ty)) for v, ty in u['variants'])
    return '\ntried_enum! {\n    /// %s\n    pub enum %s {\n%s    }\n}\n' % (doc, u['name'], vs)


# ---------------------------------------------------------------- placement
# A type of module 'unstable' that a type of another module names (through a
# member or variant that exists only with feature `unstable`) moves down
# into the lowest module that names it, gated there by the feature, so the
# modules import each other one way only (content < init < session <
# update < client < unstable); what only the new methods use stays in
# src/acp/unstable.rs.
RANK = {'content': 0, 'init': 1, 'session': 2, 'update': 3, 'client': 4, 'unstable': 5}
UNSTABLE_ITEMS = set()
for table in (STRUCTS, ENUMS, TAGGED, TRIED):
    for n, item in table.items():
        if item['module'] == 'unstable':
            UNSTABLE_ITEMS.add(n)

def item_of(name):
    for table in (STRUCTS, ENUMS, TAGGED, TRIED):
        if name in table:
            return table[name]
    return None

def names_in(name):
    """The generated types `name` refers to."""
    refs = []
    if name in STRUCTS:
        for f in STRUCTS[name]['fields']:
            refs.append(f.split(':', 1)[1].split('!')[0].strip('[]'))
    elif name in TAGGED:
        refs += [v[2] for v in TAGGED[name]['variants']]
        if TAGGED[name]['absent']:
            refs.append(TAGGED[name]['absent'][1])
    elif name in TRIED:
        refs += [v[1].strip('[]') for v in TRIED[name]['variants']]
    return [r for r in refs if item_of(r)]

changed = True
while changed:
    changed = False
    for table in (STRUCTS, ENUMS, TAGGED, TRIED):
        for n, item in table.items():
            for r in names_in(n):
                target = item_of(r)
                if r in UNSTABLE_ITEMS and RANK[item['module']] < RANK[target['module']]:
                    target['module'] = item['module']
                    changed = True
for mod in list(ORDER):
    for entry in list(ORDER[mod]):
        m = item_of(entry[1])['module']
        if m != mod:
            ORDER[mod].remove(entry)
            ORDER.setdefault(m, []).append(entry)

KEYWORDS = ('acp_struct! {', 'string_enum! {', 'tagged_enum! {', 'tried_enum! {', 'impl<', 'impl Default', 'pub fn ')

def gate(unstable, code):
    """Top-level items of `code`, behind feature `unstable` if `unstable`."""
    if not unstable or not code:
        return code
    for kw in KEYWORDS:
        code = code.replace('\n' + kw, '\n' + UNSTABLE_CFG + '\n' + kw)
    return code

HEAD = {
 'content': 'Content blocks: text, images, audio, resource links and embedded resources.',
 'update': '`session/update` notifications: every update variant, tool calls and their content.',
 'init': '`initialize` and `authenticate`: capabilities, implementation info, auth methods.',
 'session': 'Client-to-agent methods: initialize, authenticate, sessions, prompts; capabilities and MCP servers.',
 'client': 'Agent-to-client methods: file system, terminals, permission requests, elicitations.',
 'unstable': 'What the unstable ACP v1 schema (`agent-client-protocol-schema` %s with its `unstable`\n//! feature) adds over the stable one (feature `unstable`): providers, `auth/status`, session\n//! fork, archive, status, options and title, usage, cursors, prompt suggestions, MCP over ACP.\n//! These may change or go away with any release of the schema.' % SCHEMA_VERSION,
}
def module_of(ty):
    for table in (STRUCTS, ENUMS, TAGGED, TRIED):
        if ty in table:
            return table[ty]['module']
    return None

def imports(mod, body, ungated):
    """The `use` lines a generated module needs, from what its body names."""
    uses = []
    code = '\n'.join(l for l in body.split('\n') if not l.strip().startswith('//'))
    words = set(re.findall(r'\b[A-Za-z_][A-Za-z0-9_]*\b', code))
    if 'Cow' in words:
        uses.append('use alloc::borrow::Cow;')
    if 'Vec' in words:
        uses.append('use alloc::vec::Vec;')
    uses.append('')
    if 'Number' in words:
        uses.append('use serde_json::Number;')
        uses.append('')
    find = lambda text: set(re.findall(r"\b(\w+)<'a>", text)) | set(re.findall(r"\((\w+)\)", text))
    types = find(code)
    plain_types = find('\n'.join(l for l in ungated.split('\n') if not l.strip().startswith('//')))
    local = {}
    for w in sorted(types):
        m = module_of(w)
        if m and m != mod:
            # Gated: an unstable type, or one only gated items use.
            gated = mod == 'unstable' or w in UNSTABLE_ITEMS or w not in plain_types
            local.setdefault((m, gated), []).append(w)
    for (m, gated) in sorted(local):
        names = local[(m, gated)]
        if gated and mod != 'unstable':
            uses.append(UNSTABLE_CFG)
        uses.append('use super::%s::%s;' % (m, names[0] if len(names) == 1 else '{%s}' % ', '.join(names)))
    if 'RequestId' in words:
        uses.append('use super::id::RequestId;')
    raw = [n for n in ('RawJson',) if n in words]
    if raw:
        uses.append('use super::raw::%s;' % (raw[0] if len(raw) == 1 else '{%s}' % ', '.join(raw)))
    tagged = [n for n in ('ConfigValue', 'tagged_enum', 'tried_enum') if n in words]
    if tagged:
        uses.append('use super::tagged::%s;' % (tagged[0] if len(tagged) == 1 else '{%s}' % ', '.join(tagged)))
    uses.append('use super::wire::{acp_struct, string_enum};' if 'string_enum' in words else 'use super::wire::acp_struct;')
    uses.append('use super::Extra;')
    return '\n'.join(uses) + '\n'

MODULES = ['content', 'update', 'init', 'session', 'client', 'unstable']
for mod in MODULES:
    body = ''
    ungated = ''
    for kind, name in ORDER.get(mod, []):
        if kind == 'struct':
            code = gen_struct(STRUCTS[name])
        elif kind == 'enum':
            code = gen_enum(ENUMS[name])
        elif kind == 'tagged':
            code = gen_tagged(TAGGED[name])
        else:
            code = gen_tried(TRIED[name])
        gated = name in UNSTABLE_ITEMS and mod != 'unstable'
        body += gate(gated, code)
        if not gated:
            ungated += code
    for a, target, doc in ALIASES.get(mod, []):
        body += "\n/// %s\npub type %s<'a> = %s<'a>;\n" % (doc, a, target)
        ungated += "\n/// %s\npub type %s<'a> = %s<'a>;\n" % (doc, a, target)
    out = '//! %s\n//!\n//! Generated by `scripts/gen_acp_types.py` from the official schemas; edit\n//! the spec there, not this file.\n#![allow(clippy::doc_markdown)]\n\n%s%s' % (HEAD[mod], imports(mod, body, ungated), body)
    write('src/acp/%s.rs' % mod, out)

# ---------------------------------------------------------------- strategies
def strat(ty, valid):
    if ty.startswith('['):
        return 'vec(%s, 0..3)' % strat(ty[1:-1], valid)
    if ty == 'str':
        return 'text()'
    if ty == 'raw':
        return 'raw()'
    if ty == 'id':
        return 'request_id()'
    if ty == 'bool':
        return 'any::<bool>()'
    if ty in ('u16', 'u32', 'u64'):
        return 'any::<%s>()' % ty
    if ty == 'i64':
        return 'any::<i64>()'
    if ty == 'f64':
        return 'number()'
    return 'arb_%s(valid)' % snake(ty).lstrip('_')

SPECIAL = {'SetSessionConfigOptionRequest', 'CreateElicitationRequest', 'CreateElicitationResponse', 'Notice', 'AuthMethodTerminal'}

def dual(gen, item, has_unstable):
    """`gen(item, with_unstable)`, twice when the item has unstable parts:
    once for feature `unstable`, once without."""
    if not has_unstable:
        return gen(item, False)
    return ('\n' + UNSTABLE_CFG + gen(item, True)
            + '\n#[cfg(not(feature = "unstable"))]' + gen(item, False))

ERROR_JSON = 'Just(RawJson::from_text("{\\"code\\":-32603,\\"message\\":\\"boom\\"}").unwrap())'

ARB_SPECIAL = {
 # `type: "boolean"` goes with a boolean value, no `type` with a value id.
 'InitialSessionConfigOption': """
pub fn arb_initial_session_config_option(valid: bool) -> BoxedStrategy<InitialSessionConfigOption<'static>> {
    let _ = valid;
    let value = prop_oneof![
        any::<bool>().prop_map(|b| (Some(std::borrow::Cow::Borrowed("boolean")), ConfigValue::Bool(b))),
        text().prop_map(|s| (None, ConfigValue::Id(s))),
    ];
    (text(), value, option::of(meta()))
        .prop_map(|(config_id, (kind, value), meta)| {
            let mut v = InitialSessionConfigOption::new(config_id, value);
            v.kind = kind;
            v.meta = meta;
            v
        })
        .boxed()
}
""",
 # A suggestion's prompt is never empty.
 'PromptSuggestion': """
pub fn arb_prompt_suggestion(valid: bool) -> BoxedStrategy<PromptSuggestion<'static>> {
    (vec(arb_content_block(valid), 1..3), option::of(meta()))
        .prop_map(|(prompt, meta)| {
            let mut v = PromptSuggestion::new(prompt);
            v.meta = meta;
            v
        })
        .boxed()
}
""",
 # Exactly one outcome, a result or an MCP error (the schema's two arms).
 'MessageMcpResponse': """
pub fn arb_message_mcp_response(valid: bool) -> BoxedStrategy<MessageMcpResponse<'static>> {
    let outcome = prop_oneof![
        raw().prop_map(|r| (Some(r), None)),
        arb_mcp_error(valid).prop_map(|e| (None, Some(e))),
    ];
    (outcome, option::of(meta()))
        .prop_map(|((result, error), m)| {
            let mut v = MessageMcpResponse::new();
            v.result = result;
            v.error = error;
            v.meta = m;
            v
        })
        .boxed()
}
""",
}

def arb_struct(s):
    if s['name'] in ARB_SPECIAL:
        return ARB_SPECIAL[s['name']]
    return dual(arb_struct_with, s, any(is_unstable(f) for f in s['fields']))

def arb_struct_with(s, with_unstable):
    name = s['name']
    fields = [parse_field(f) for f in s['fields'] if with_unstable or not is_unstable(f)]
    fn = 'arb_%s' % snake(name).lstrip('_')
    out = "\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n    let _ = valid;\n" % (fn, name)
    parts = []
    for fname, ty, opt in fields:
        st = strat(ty, True)
        if fname == '_meta':
            st = 'meta()'
        if name in SPECIAL and (fname, ty) in (('title', 'str'),):
            st = 'text1()'
        if (name, fname) in (('AuthMethodTerminal', 'env'), ('SetProviderRequest', 'headers')):
            st = 'env_map()'
        if name in ('MessageMcpRequest', 'MessageMcpNotification') and fname == 'params':
            st = 'meta()'  # an object or null
        if name in ('IdleStateUpdate', 'ErrorStopReason') and fname == 'error':
            st = ERROR_JSON
        if opt:
            st = 'option::of(%s)' % st
        parts.append((snake(fname), st))
    # proptest tuples go up to 12; nest in pairs of groups
    groups = [parts[i:i + 6] for i in range(0, len(parts), 6)]
    tup = '(' + ', '.join('(' + ', '.join(st for _, st in g) + ',)' for g in groups) + ',)'
    pat = '(' + ', '.join('(' + ', '.join(n if n != 'type' else 'kind' for n, _ in g) + ',)' for g in groups) + ',)'
    var = lambda n: 'kind' if n == 'type' else n
    req = [snake(f) for f, ty, opt in fields if not opt]
    sets = ''.join(' v.%s = %s;' % ('r#type' if snake(f) == 'type' else snake(f), var(snake(f))) for f, ty, opt in fields if opt)
    body = '{ let %sv = %s::new(%s);%s v }' % ('mut ' if sets else '', name, ', '.join(var(n) for n in req), sets)
    out += '    %s\n        .prop_map(|%s| %s)\n        .boxed()\n}\n' % (tup, pat, body)
    return out

def arb_enum(e):
    return dual(arb_enum_with, e, any(u for _, _, u in enum_values(e)))

def arb_enum_with(e, with_unstable):
    fn = 'arb_%s' % snake(e['name']).lstrip('_')
    vals = ', '.join('%s::%s' % (e['name'], var) for v, var, u in enum_values(e) if with_unstable or not u)
    return ("\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n    let known = prop::sample::select(vec![%s]);\n"
            "    if valid {\n        known.boxed()\n    } else {\n        prop_oneof![4 => known, 1 => unknown_word().prop_map(|w| %s::Unknown(w.into()))].boxed()\n    }\n}\n") % (fn, e['name'], vals, e['name'])

def arb_tagged(t):
    return dual(arb_tagged_with, t, any(u for _, _, _, u in variants(t)))

def arb_tagged_with(t, with_unstable):
    fn = 'arb_%s' % snake(t['name']).lstrip('_')
    arms = ['%s.prop_map(%s::%s)' % ('arb_%s(valid)' % snake(ty).lstrip('_'), t['name'], v) for w, v, ty, u in variants(t) if with_unstable or not u]
    if t['absent']:
        arms.append('arb_%s(valid).prop_map(%s::%s)' % (snake(t['absent'][1]).lstrip('_'), t['name'], t['absent'][0]))
    known = 'prop_oneof![%s]' % ', '.join(arms)
    return ("\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n    let known = %s;\n"
            "    if valid {\n        known.boxed()\n    } else {\n        prop_oneof![6 => known, 1 => unknown_object(\"%s\").prop_map(%s::Unknown)].boxed()\n    }\n}\n") % (fn, t['name'], known, t['tag'], t['name'])

def arb_tried(u):
    fn = 'arb_%s' % snake(u['name']).lstrip('_')
    arms = ['%s.prop_map(%s::%s)' % (strat(ty, True), u['name'], v) for v, ty in u['variants']]
    if u['name'] == 'SessionConfigSelectOptions':
        arms = ['vec(arb_session_config_select_option(valid), 0..3).prop_map(SessionConfigSelectOptions::Ungrouped)',
                'vec(arb_session_config_select_group(valid), 1..3).prop_map(SessionConfigSelectOptions::Grouped)']
    return "\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n    prop_oneof![%s].boxed()\n}\n" % (fn, u['name'], ', '.join(arms))

out = '//! proptest strategies for every typed ACP message, generated by\n//! `scripts/gen_acp_types.py`. `valid` = only values the official schema\n//! accepts (no unknown variants or enum values).\n#![allow(dead_code, clippy::all)]\n\nuse acp_codec::acp::*;\nuse proptest::collection::vec;\nuse proptest::option;\nuse proptest::prelude::*;\n\npub use super::arb_base::*;\n'
for mod in MODULES:
    for kind, name in ORDER.get(mod, []):
        if kind == 'struct' and name not in ('SetSessionConfigOptionRequest', 'CreateElicitationRequest', 'CreateElicitationResponse'):
            out += gate(name in UNSTABLE_ITEMS, arb_struct(STRUCTS[name]))
        elif kind == 'enum':
            out += gate(name in UNSTABLE_ITEMS, arb_enum(ENUMS[name]))
        elif kind == 'tagged':
            out += gate(name in UNSTABLE_ITEMS, arb_tagged(TAGGED[name]))
        elif kind == 'tried':
            out += gate(name in UNSTABLE_ITEMS, arb_tried(TRIED[name]))
# ---------------------------------------------------------------- arbitrary
# `arbitrary::Arbitrary` for every generated type (feature `arbitrary`),
# written to src/acp/arbitrary.rs. Leaf helpers live in src/acp/leaf.rs.
LEAF = {'str': 'text', 'raw': 'raw', 'f64': 'number'}

def arb_expr(ty):
    """A Rust expression of type `Result<T>` generating a value of `ty`."""
    if ty.startswith('['):
        return 'list(u, %s)' % arb_fn(ty[1:-1])
    if ty in LEAF:
        return '%s(u)' % LEAF[ty]
    return 'u.arbitrary()'

def arb_fn(ty):
    """The same as a function of `u`."""
    return LEAF.get(ty) or '|u| %s' % arb_expr(ty)

ARB_TIED = {
 # `type: "boolean"` goes with a boolean value, no `type` with a value id.
 'SetSessionConfigOptionRequest': """        let (kind, value) = if u.arbitrary()? {
            (Some(Cow::Borrowed("boolean")), ConfigValue::Bool(u.arbitrary()?))
        } else {
            (None, ConfigValue::Id(text(u)?))
        };
        Ok(Self {
            session_id: text(u)?,
            config_id: text(u)?,
            kind,
            value,
            meta: option(u, meta)?,
            extra: Extra::new(),
        })
""",
 'InitialSessionConfigOption': """        let (kind, value) = if u.arbitrary()? {
            (Some(Cow::Borrowed("boolean")), ConfigValue::Bool(u.arbitrary()?))
        } else {
            (None, ConfigValue::Id(text(u)?))
        };
        Ok(Self {
            config_id: text(u)?,
            kind,
            value,
            meta: option(u, meta)?,
            extra: Extra::new(),
        })
""",
 # A form carries its schema, a URL its id and address; the scope is a
 # session (with an optional tool call) or a request.
 'CreateElicitationRequest': """        let form = u.arbitrary()?;
        let (session_id, tool_call_id, request_id) = if u.arbitrary()? {
            (Some(text(u)?), option(u, text)?, None)
        } else {
            (None, None, Some(u.arbitrary()?))
        };
        Ok(Self {
            message: text(u)?,
            mode: if form { ElicitationMode::Form } else { ElicitationMode::Url },
            requested_schema: if form { Some(raw(u)?) } else { None },
            elicitation_id: if form { None } else { Some(text(u)?) },
            url: if form { None } else { Some(text(u)?) },
            session_id,
            tool_call_id,
            request_id,
            meta: option(u, meta)?,
            extra: Extra::new(),
        })
""",
 # Only `accept` carries the values entered.
 'CreateElicitationResponse': """        let action: ElicitationAction<'static> = u.arbitrary()?;
        let content = if action == ElicitationAction::Accept {
            option(u, meta)?
        } else {
            None
        };
        Ok(Self {
            action,
            content,
            meta: option(u, meta)?,
            extra: Extra::new(),
        })
""",
}

def arb_impl(name, body):
    return ("\nimpl<'u> Arbitrary<'u> for %s<'static> {\n    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {\n%s    }\n}\n"
            % (name, body))

def arbitrary_struct(s):
    name = s['name']
    if name in ARB_TIED:
        return arb_impl(name, ARB_TIED[name])
    body = '        Ok(Self {\n'
    for f in s['fields']:
        fname, ty, opt = parse_field(f)
        rname = snake(fname)
        if fname == '_meta':
            e = 'option(u, meta)?'
        elif name in SPECIAL and fname == 'title' and ty == 'str':
            e = 'text1(u)?'
        elif name == 'AuthMethodTerminal' and fname == 'env':
            e = 'option(u, env_map)?'
        elif opt:
            e = 'option(u, %s)?' % arb_fn(ty)
        else:
            e = '%s?' % arb_expr(ty)
        body += '%s            %s: %s,\n' % (cfg_u(is_unstable(f), '            '), 'r#type' if rname == 'type' else rname, e)
    body += '            extra: Extra::new(),\n        })\n'
    return arb_impl(name, body)

def arbitrary_enum(e):
    return dual(arbitrary_enum_with, e, any(u for _, _, u in enum_values(e)))

def arbitrary_enum_with(e, with_unstable):
    words = ', '.join('"%s"' % v for v, _, u in enum_values(e) if with_unstable or not u)
    body = ('        const KNOWN: &[&str] = &[%s];\n'
            '        if u.ratio(1u8, 8)? {\n'
            '            return Ok(Self::Unknown(unknown_word(u, KNOWN)?));\n'
            '        }\n'
            '        Ok(Self::from_wire(Cow::Borrowed(u.choose(KNOWN)?)))\n') % words
    return arb_impl(e['name'], body)

def arbitrary_tagged(t):
    return dual(arbitrary_tagged_with, t, any(u for _, _, _, u in variants(t)))

def arbitrary_tagged_with(t, with_unstable):
    vs = [(w, v) for w, v, ty, u in variants(t) if with_unstable or not u]
    tags = ', '.join('"%s"' % w for w, v in vs)
    arms = [(v, 'u.arbitrary()?') for w, v in vs]
    if t['absent']:
        arms.append((t['absent'][0], 'u.arbitrary()?'))
    body = '        const TAGS: &[&str] = &[%s];\n        Ok(match u.choose_index(%d)? {\n' % (tags, len(arms) + 1)
    for i, (v, e) in enumerate(arms):
        body += '            %d => Self::%s(%s),\n' % (i, v, e)
    body += '            _ => Self::Unknown(unknown_object(u, "%s", TAGS)?),\n        })\n' % t['tag']
    return arb_impl(t['name'], body)

def arbitrary_tried(u_):
    arms = []
    for v, ty in u_['variants']:
        e = arb_expr(ty) + '?'
        # An empty list of groups reads as an empty list of options.
        if u_['name'] == 'SessionConfigSelectOptions' and v == 'Grouped':
            e = 'list1(u, |u| u.arbitrary())?'
        arms.append((v, e))
    body = '        Ok(match u.choose_index(%d)? {\n' % (len(arms) + 1)
    for i, (v, e) in enumerate(arms):
        body += '            %d => Self::%s(%s),\n' % (i, v, e)
    body += '            _ => Self::Unknown(unknown_shape(u)?),\n        })\n'
    return arb_impl(u_['name'], body)

arb = ('//! `arbitrary::Arbitrary` for every generated ACP type (feature `arbitrary`).\n//!\n'
       '//! Generated by `scripts/gen_acp_types.py` from the same spec as the types;\n'
       '//! edit the spec there, not this file. What these generate encodes to JSON\n'
       '//! that decodes back to an equal value: strings are any UTF-8, raw JSON is\n'
       '//! small and compact, floats are finite and exact in decimal, an unknown\n'
       '//! enum value or tag never spells a known one, an unknown tagged variant is\n'
       '//! an object carrying its tag, an unknown shape is a JSON scalar no variant\n'
       '//! accepts.\n\n'
       'use alloc::borrow::Cow;\n\n'
       'use ::arbitrary::{Arbitrary, Result, Unstructured};\n\n'
       'use super::*;\n'
       'use crate::acp::leaf::{\n    env_map, list, list1, meta, number, option, raw, text, text1, unknown_object,\n    unknown_shape, unknown_word,\n};\n')
for mod in MODULES:
    for kind, name in ORDER.get(mod, []):
        if kind == 'struct':
            arb += gate(name in UNSTABLE_ITEMS, arbitrary_struct(STRUCTS[name]))
        elif kind == 'enum':
            arb += gate(name in UNSTABLE_ITEMS, arbitrary_enum(ENUMS[name]))
        elif kind == 'tagged':
            arb += gate(name in UNSTABLE_ITEMS, arbitrary_tagged(TAGGED[name]))
        else:
            arb += gate(name in UNSTABLE_ITEMS, arbitrary_tried(TRIED[name]))
write('src/acp/arbitrary.rs', arb)

# The explicit re-exports of the generated types (no glob re-exports: a
# reader of src/acp/mod.rs sees every name and the file it comes from).
exports = ''
for mod in ['client', 'content', 'init', 'session', 'update', 'unstable']:
    names = sorted(set(re.findall(r'^\s*pub (?:struct|enum|type) ([A-Za-z0-9_]+)', open(out_path('src/acp/%s.rs' % mod)).read(), re.M)))
    plain = [n for n in names if n not in UNSTABLE_ITEMS]
    gated = [n for n in names if n in UNSTABLE_ITEMS]
    if plain:
        exports += 'pub use %s::{%s};\n' % (mod, ', '.join(plain))
    if gated:
        exports += '%spub use %s::{%s};\n' % (cfg_u(True, ''), mod, ', '.join(gated))
begin, end = '// generated exports: begin\n', '// generated exports: end\n'
text = open(out_path('src/acp/mod.rs')).read()
a, b = text.index(begin) + len(begin), text.index(end)
write('src/acp/mod.rs', text[:a] + exports + text[b:])
write('tests/acp_support/arb.rs', out)

def rustfmt(text):
    """`text` formatted as `cargo fmt` formats the crate (its edition); read
    from stdin, so no module file is followed."""
    return subprocess.run(['rustfmt', '--edition', '2021'], input=text, capture_output=True, text=True, check=True).stdout

if CHECK:
    stale = []
    for path in WRITTEN:
        new, old = rustfmt(open(out_path(path)).read()), open(path).read()
        if new != old:
            stale.append(path)
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), path, path + ' (generated)'))
    shutil.rmtree(ROOT)
    if stale:
        sys.exit('stale generated files (run python3 scripts/gen_acp_types.py && cargo fmt --all): %s' % ', '.join(stale))
    print('ok: %d generated files up to date' % len(WRITTEN))
else:
    print('ok')
