"""The ACP spec that scripts/gen_acp_types.py generates from, as data.

Nothing here writes a file: this module only declares what the generator
reads. Docs of types and members come from the official schemas (copies in
tests/fixtures/acp); what the schemas do not say is written here.

- Types: `S` (struct), `E` (string enum), `T` (union told apart by a tag
  member), `U` (union tried variant by variant), each in the module of
  src/acp/ it is generated into; `ALIASES`, type aliases.
- `METHODS`: every method, its params and result types, who sends it,
  request or notification, stable or unstable, and its docs.
- Tables for what the emitters cannot derive: member docs the schemas lack,
  module docs, and the few members whose generated values are constrained.

Struct members are strings "wireName:type", with "?" after the name for an
optional member; types:

    str raw id bool u16 u32 u64 i64 f64 [T] TypeName

(`str` text, `raw` any JSON kept as sent, `id` a JSON-RPC request id,
`f64` a JSON number kept as sent, `[T]` a list). A member ending in "!u"
(and a union variant with a fourth element 'u', an enum value ending in
"!u") exists only with feature `unstable` (the unstable schema): without it
the member lands in `extra`, the variant decodes as `Unknown`. Types of
module 'unstable' go to src/acp/unstable.rs, a module of that feature
(those a stable type names move down, behind the feature; see the
generator's placement).
"""

SCHEMA_VERSION = '1.20.0'

# ---------------------------------------------------------------- types
STRUCTS = {}
ENUMS = {}
TAGGED = {}
TRIED = {}
# The items of each module, in the order they are generated.
ORDER = {}


def S(module, name, fields, docdef=None, doc=None):
    """A struct: its members; the schema def its docs come from (its own
    name by default) or a doc of its own."""
    STRUCTS[name] = dict(module=module, name=name, fields=fields, docdef=docdef or name, doc=doc)
    ORDER.setdefault(module, []).append(('struct', name))


def E(module, name, values, doc=None, docdef=None):
    """A string enum: its wire values (a value or (value, Variant); the
    variant is the value in CamelCase by default)."""
    ENUMS[name] = dict(module=module, name=name, values=values, doc=doc, docdef=docdef or name)
    ORDER.setdefault(module, []).append(('enum', name))


def T(module, name, tag, variants, doc=None, absent=None):
    """A tagged union: the tag member, the variants as [(wire, Variant,
    Type)]; `absent`, (Variant, Type) decoded when the tag is missing (or
    not a string). Without it such an object, like an unknown tag, is
    `Unknown`."""
    TAGGED[name] = dict(module=module, name=name, tag=tag, variants=variants, doc=doc, absent=absent)
    ORDER.setdefault(module, []).append(('tagged', name))


def U(module, name, variants, doc=None):
    """A union told apart by shape: [(Variant, Type)], tried in order; what
    fits none is `Unknown`."""
    TRIED[name] = dict(module=module, name=name, variants=variants, doc=doc)
    ORDER.setdefault(module, []).append(('tried', name))


# `_meta`, which (almost) every struct has.
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
# `mcp/message` as the schema has it, plus the MCP-over-ACP RFD's
# `connectionId` (the answer of its `mcp/connect`); the inner MCP `params`
# stay raw.
S('unstable', 'MessageMcpRequest', ['serverId:str', 'requestId:str', 'method:str', 'params?:raw', 'connectionId?:str', M])
S('unstable', 'MessageMcpNotification', ['serverId:str', 'requestId:str', 'method:str', 'params?:raw', 'connectionId?:str', M])
# `mcp/connect` and `mcp/disconnect`: in the MCP-over-ACP RFD, not in the
# schema 1.20.0 (typed as the RFD writes them).
S('unstable', 'ConnectMcpRequest', ['acpId:str', M], doc='Params of `mcp/connect` (MCP-over-ACP RFD; not in the schema): open a connection to the ACP-transport MCP server the sender declared with this id.')
S('unstable', 'ConnectMcpResponse', ['connectionId:str', M], doc='Result of `mcp/connect`: the new connection, named in the `mcp/message`s and the `mcp/disconnect` that follow.')
S('unstable', 'DisconnectMcpRequest', ['connectionId:str', M], doc='Params of `mcp/disconnect` (MCP-over-ACP RFD; not in the schema): close a connection `mcp/connect` opened.')
S('unstable', 'DisconnectMcpResponse', [M], doc='Result of `mcp/disconnect`.')
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

# ---------------------------------------------------------------- methods
# Every method, in the order of `names` (the variants of `RequestParams`,
# `NotificationParams` and `ResponseResult` keep it). A method that is both
# a request and a notification (`mcp/message`) has a row for each.
CLIENT_TO_AGENT, AGENT_TO_CLIENT, EITHER = 'client to agent', 'agent to client', 'either side'
METHODS = []


# The routing columns (what a server sharing an agent needs, generated
# into `src/remote/routing.rs`), keyword arguments of `R` and `N`:
# - `session`: the member of params that names the session the method
#   acts on, when a Streamable HTTP `POST` of it must carry
#   `Acp-Session-Id` (the official TypeScript SDK's list);
# - `opens`: its answer names a new session (`result.sessionId`);
# - `reattach`: it binds an existing session to the sender's connection;
# - `read_only`: a user with the `read` permission alone may send it.
# The direction is the table's own column.


def R(wire, const, variant, params, result, direction, unstable=False, note=None,
      session=None, opens=False, reattach=False, read_only=False):
    """A request: its wire name, the name of its constant in `names`, its
    variant in `RequestParams` and `ResponseResult`, its params and result
    types, who sends it, whether only feature `unstable` types it, a
    note for the docs: (in the constant's doc, in the variant's), and its
    routing columns (above)."""
    METHODS.append(dict(wire=wire, const=const, variant=variant, params=params, result=result,
                        direction=direction, kind='request', unstable=unstable, note=note,
                        session=session, opens=opens, reattach=reattach, read_only=read_only))


def N(wire, const, variant, params, direction, unstable=False, session=None):
    """A notification: as a request, without a result."""
    METHODS.append(dict(wire=wire, const=const, variant=variant, params=params, result=None,
                        direction=direction, kind='notification', unstable=unstable, note=None,
                        session=session, opens=False, reattach=False, read_only=False))


R('initialize', 'INITIALIZE', 'Initialize', 'InitializeRequest', 'InitializeResponse', CLIENT_TO_AGENT, read_only=True)
R('authenticate', 'AUTHENTICATE', 'Authenticate', 'AuthenticateRequest', 'AuthenticateResponse', CLIENT_TO_AGENT)
R('logout', 'LOGOUT', 'Logout', 'LogoutRequest', 'LogoutResponse', CLIENT_TO_AGENT)
R('session/new', 'SESSION_NEW', 'NewSession', 'NewSessionRequest', 'NewSessionResponse', CLIENT_TO_AGENT, opens=True)
R('session/load', 'SESSION_LOAD', 'LoadSession', 'LoadSessionRequest', 'LoadSessionResponse', CLIENT_TO_AGENT, session='sessionId', reattach=True, read_only=True)
R('session/list', 'SESSION_LIST', 'ListSessions', 'ListSessionsRequest', 'ListSessionsResponse', CLIENT_TO_AGENT, read_only=True)
R('session/delete', 'SESSION_DELETE', 'DeleteSession', 'DeleteSessionRequest', 'DeleteSessionResponse', CLIENT_TO_AGENT, session='sessionId')
R('session/resume', 'SESSION_RESUME', 'ResumeSession', 'ResumeSessionRequest', 'ResumeSessionResponse', CLIENT_TO_AGENT, session='sessionId', reattach=True, read_only=True)
R('session/close', 'SESSION_CLOSE', 'CloseSession', 'CloseSessionRequest', 'CloseSessionResponse', CLIENT_TO_AGENT, session='sessionId')
R('session/set_mode', 'SESSION_SET_MODE', 'SetSessionMode', 'SetSessionModeRequest', 'SetSessionModeResponse', CLIENT_TO_AGENT, session='sessionId')
R('session/set_config_option', 'SESSION_SET_CONFIG_OPTION', 'SetSessionConfigOption', 'SetSessionConfigOptionRequest', 'SetSessionConfigOptionResponse', CLIENT_TO_AGENT, session='sessionId')
R('session/set_model', 'SESSION_SET_MODEL', 'SetSessionModel', 'SetSessionModelRequest', 'SetSessionModelResponse', CLIENT_TO_AGENT,
  note=('Gemini CLI, not in the v1 schema', 'Gemini CLI'), session='sessionId')
R('session/prompt', 'SESSION_PROMPT', 'Prompt', 'PromptRequest', 'PromptResponse', CLIENT_TO_AGENT, session='sessionId')
N('session/cancel', 'SESSION_CANCEL', 'Cancel', 'CancelNotification', CLIENT_TO_AGENT, session='sessionId')
N('session/update', 'SESSION_UPDATE', 'SessionUpdate', 'SessionNotification', AGENT_TO_CLIENT)
R('session/request_permission', 'SESSION_REQUEST_PERMISSION', 'RequestPermission', 'RequestPermissionRequest', 'RequestPermissionResponse', AGENT_TO_CLIENT)
R('fs/read_text_file', 'FS_READ_TEXT_FILE', 'ReadTextFile', 'ReadTextFileRequest', 'ReadTextFileResponse', AGENT_TO_CLIENT)
R('fs/write_text_file', 'FS_WRITE_TEXT_FILE', 'WriteTextFile', 'WriteTextFileRequest', 'WriteTextFileResponse', AGENT_TO_CLIENT)
R('terminal/create', 'TERMINAL_CREATE', 'CreateTerminal', 'CreateTerminalRequest', 'CreateTerminalResponse', AGENT_TO_CLIENT)
R('terminal/output', 'TERMINAL_OUTPUT', 'TerminalOutput', 'TerminalOutputRequest', 'TerminalOutputResponse', AGENT_TO_CLIENT)
R('terminal/release', 'TERMINAL_RELEASE', 'ReleaseTerminal', 'ReleaseTerminalRequest', 'ReleaseTerminalResponse', AGENT_TO_CLIENT)
R('terminal/wait_for_exit', 'TERMINAL_WAIT_FOR_EXIT', 'WaitForTerminalExit', 'WaitForTerminalExitRequest', 'WaitForTerminalExitResponse', AGENT_TO_CLIENT)
R('terminal/kill', 'TERMINAL_KILL', 'KillTerminal', 'KillTerminalRequest', 'KillTerminalResponse', AGENT_TO_CLIENT)
R('elicitation/create', 'ELICITATION_CREATE', 'CreateElicitation', 'CreateElicitationRequest', 'CreateElicitationResponse', AGENT_TO_CLIENT)
N('elicitation/complete', 'ELICITATION_COMPLETE', 'CompleteElicitation', 'CompleteElicitationNotification', AGENT_TO_CLIENT)
N('$/cancel_request', 'CANCEL_REQUEST', 'CancelRequest', 'CancelRequestNotification', EITHER)
R('providers/list', 'PROVIDERS_LIST', 'ListProviders', 'ListProvidersRequest', 'ListProvidersResponse', CLIENT_TO_AGENT, unstable=True)
R('providers/set', 'PROVIDERS_SET', 'SetProvider', 'SetProviderRequest', 'SetProviderResponse', CLIENT_TO_AGENT, unstable=True)
R('providers/disable', 'PROVIDERS_DISABLE', 'DisableProvider', 'DisableProviderRequest', 'DisableProviderResponse', CLIENT_TO_AGENT, unstable=True)
R('auth/status', 'AUTH_STATUS', 'AuthStatus', 'AuthStatusRequest', 'AuthStatusResponse', CLIENT_TO_AGENT, unstable=True)
R('session/fork', 'SESSION_FORK', 'ForkSession', 'ForkSessionRequest', 'ForkSessionResponse', CLIENT_TO_AGENT, unstable=True, session='sessionId', opens=True)
R('session/archive', 'SESSION_ARCHIVE', 'ArchiveSession', 'ArchiveSessionRequest', 'ArchiveSessionResponse', CLIENT_TO_AGENT, unstable=True)
R('session/unarchive', 'SESSION_UNARCHIVE', 'UnarchiveSession', 'UnarchiveSessionRequest', 'UnarchiveSessionResponse', CLIENT_TO_AGENT, unstable=True)
R('session/status', 'SESSION_STATUS', 'SessionStatus', 'SessionStatusRequest', 'SessionStatusResponse', CLIENT_TO_AGENT, unstable=True)
R('session/options', 'SESSION_OPTIONS', 'SessionOptions', 'SessionOptionsRequest', 'SessionOptionsResponse', CLIENT_TO_AGENT, unstable=True)
R('session/set_title', 'SESSION_SET_TITLE', 'SetSessionTitle', 'SetSessionTitleRequest', 'SetSessionTitleResponse', CLIENT_TO_AGENT, unstable=True)
N('auth/status_update', 'AUTH_STATUS_UPDATE', 'AuthStatusUpdate', 'AuthStatusUpdateNotification', AGENT_TO_CLIENT, unstable=True)
# MCP over ACP: `mcp/connect` and `mcp/disconnect` come from the side
# that connects to the server (the agent), `mcp/message` goes both ways
# (the RFD; the schema has the request from the agent, the notification
# from the client).
R('mcp/connect', 'MCP_CONNECT', 'McpConnect', 'ConnectMcpRequest', 'ConnectMcpResponse', AGENT_TO_CLIENT, unstable=True)
R('mcp/message', 'MCP_MESSAGE', 'McpMessage', 'MessageMcpRequest', 'MessageMcpResponse', EITHER, unstable=True)
N('mcp/message', 'MCP_MESSAGE', 'McpMessage', 'MessageMcpNotification', EITHER, unstable=True)
R('mcp/disconnect', 'MCP_DISCONNECT', 'McpDisconnect', 'DisconnectMcpRequest', 'DisconnectMcpResponse', AGENT_TO_CLIENT, unstable=True)

# The docs of the generated method items (the variants' and constants'
# docs are made from the rows above).
NAMES_DOC = 'The method names of ACP v1 (plus `session/set_model`, which Gemini CLI\ncalls).'
REQUEST_PARAMS_DOC = '''The typed params of a request, by method: every request of ACP v1
in both directions, plus `session/set_model`.

```
use acp_codec::acp::{Message, Mode, RequestParams};

let line = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#;
let Message::Request(req) = Message::decode(line).unwrap() else { panic!() };
let RequestParams::NewSession(p) = req.typed(Mode::Lenient).unwrap().value else { panic!() };
assert_eq!(p.cwd, "/p");
```'''
NOTIFICATION_PARAMS_DOC = 'The typed params of a notification, by method.'
RESPONSE_RESULT_DOC = '''The typed result of a response, by the method of the request it
answers (responses do not name their method: the
[`Tracker`](super::Tracker) remembers it).'''
METHODS_DOC = '''Every method this version types, in the order of [`names`]: its name,
whether it is a request (with a typed result) or a notification, who
sends it, and whether it belongs to the unstable schema. `mcp/message`,
a request and a notification (either side), has a row for each. The
methods of feature `unstable` are listed only with it.

```
use acp_codec::acp::{names, Direction, MethodKind, METHODS};

let update = METHODS.iter().find(|m| m.name == names::SESSION_UPDATE).unwrap();
assert_eq!((update.kind, update.direction), (MethodKind::Notification, Direction::AgentToClient));
// The methods an agent answers.
let served = METHODS
    .iter()
    .filter(|m| m.kind == MethodKind::Request && m.direction == Direction::ClientToAgent);
assert!(served.map(|m| m.name).any(|name| name == names::SESSION_PROMPT));
```'''

# ---------------------------------------------------------------- docs
# Member docs for members the schemas do not describe.
FIELD_DOCS = {
    'type': 'The `type` tag (`"boolean"` for boolean values).', 'value': 'The new value.',
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
    'acpId': 'The `serverId` of the ACP-transport MCP server, as declared in the session.',
    'connectionId': 'The MCP connection (the answer of `mcp/connect`).',
}

# The doc of each generated module.
MODULE_DOCS = {
    'content': 'Content blocks: text, images, audio, resource links and embedded resources.',
    'update': '`session/update` notifications: every update variant, tool calls and their content.',
    'init': '`initialize` and `authenticate`: capabilities, implementation info, auth methods.',
    'session': 'Client-to-agent methods: initialize, authenticate, sessions, prompts; capabilities and MCP servers.',
    'client': 'Agent-to-client methods: file system, terminals, permission requests, elicitations.',
    'unstable': 'What the unstable ACP v1 schema (`agent-client-protocol-schema` %s with its `unstable`\n//! feature) adds over the stable one (feature `unstable`): providers, `auth/status`, session\n//! fork, archive, status, options and title, usage, cursors, prompt suggestions, MCP over ACP.\n//! These may change or go away with any release of the schema.' % SCHEMA_VERSION,
}

# ---------------------------------------------------------------- generated values
# Members whose generated values are constrained, as (Type, member) ->
# proptest strategy (tests/acp_support/arb.rs) and `arbitrary` leaf
# function (src/acp/leaf.rs, named in the type's declaration).
ERROR_JSON = 'Just(RawJson::from_text("{\\"code\\":-32603,\\"message\\":\\"boom\\"}").unwrap())'
MEMBER_STRATEGIES = {
    ('Notice', 'title'): 'text1()',  # minLength: 1
    ('AuthMethodTerminal', 'env'): 'env_map()',  # an object of strings
    ('SetProviderRequest', 'headers'): 'env_map()',
    ('MessageMcpRequest', 'params'): 'meta()',  # an object or null
    ('MessageMcpNotification', 'params'): 'meta()',
    ('IdleStateUpdate', 'error'): ERROR_JSON,  # a JSON-RPC error object
    ('ErrorStopReason', 'error'): ERROR_JSON,
}
MEMBER_ARBITRARY = {
    ('Notice', 'title'): 'text1',
    ('AuthMethodTerminal', 'env'): 'env_map',
}
# Union variants whose generated values are constrained: an empty list of
# groups reads as an empty list of options.
VARIANT_STRATEGIES = {
    ('SessionConfigSelectOptions', 'Grouped'): 'vec(arb_session_config_select_group(valid), 1..3)',
}
VARIANT_ARBITRARY = {
    ('SessionConfigSelectOptions', 'Grouped'): 'nonempty',
}
# Types whose members are tied together (a tag and the value it goes with,
# one of two scopes, a non-empty list): their strategies are hand-written
# in tests/acp_support/arb_base.rs, and those with an `arbitrary` impl
# hand-written in src/fuzzing/acp.rs.
HAND_WRITTEN_STRATEGIES = {
    'SetSessionConfigOptionRequest', 'CreateElicitationRequest', 'CreateElicitationResponse',
    'InitialSessionConfigOption', 'PromptSuggestion', 'MessageMcpResponse',
}
HAND_WRITTEN_ARBITRARY = {
    'SetSessionConfigOptionRequest', 'InitialSessionConfigOption', 'CreateElicitationRequest',
    'CreateElicitationResponse',
}
