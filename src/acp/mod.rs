//! Agent Client Protocol (ACP) messages: a zero-copy JSON-RPC envelope,
//! typed params and results for every ACP v1 method, and a sans-IO request
//! [`Tracker`].
//!
//! # Decoding
//!
//! [`Message::decode`] reads one line into a [`Message`] that borrows from
//! it; params and results stay raw JSON ([`RawJson`]) until
//! [`Request::typed`], [`Notification::typed`] or [`Response::typed`] decode
//! them by method. Text fields are `Cow<'a, str>`, borrowed when the JSON
//! string has no escapes; free-form JSON (`rawInput`, `rawOutput`, `_meta`,
//! extension params) stays [`RawJson`]. `into_owned()` on any type gives a
//! `'static` value to keep.
//!
//! [`decode_line`] does both steps in one call, giving a notification's
//! typed params ([`Incoming::Notification`]) or any other message
//! ([`Incoming::Message`]). Notifications are the bulk of what an agent
//! sends during a turn: a `session/update` with a content chunk, a tool
//! call or a tool call update (the common shapes) is checked and decoded in
//! a single pass over the line, building the typed update in place, instead
//! of checking the whole line and then parsing its params again; every
//! other line takes the two steps, with the same result.
//! `Notification::typed` uses the same direct decoder over params that
//! [`Message::decode`] already checked.
//!
//! A string with escapes costs one allocation of its unescaped size; a
//! string longer than 4 KiB whose escapes go on past that point is
//! unescaped while it is scanned into one allocation sized by the rest of
//! the line (bounded by the line limit), trimmed to at most twice the text
//! plus 4 KiB when much of it went unused.
//!
//! # Forward compatibility
//!
//! The official Rust crate fails on any `sessionUpdate` or content `type` it
//! does not know. Here an unknown method decodes to `Unknown` (`Ext` when it
//! starts with `_`), an unknown `sessionUpdate`, content `type` or other tag
//! to an `Unknown(RawJson)` variant that keeps the object's JSON, and an
//! unknown enum value (`ToolKind`, `StopReason`, …) to `Unknown(Cow<str>)`.
//! Unknown variants re-encode byte for byte when the object was sent
//! compact, as peers send it (`JSON.stringify`, `serde_json`); whitespace
//! between its members would be dropped (values inside are kept as sent).
//! Unknown fields are ignored; `_meta` is kept. The envelope's raw params
//! and results always re-encode unchanged.
//!
//! # Wire form of the typed structs
//!
//! Fields follow the schema one to one: a required member is a plain field,
//! an optional one an `Option` (absent and `null` both decode to `None`
//! except for raw JSON and ids, where `null` is kept), so a decoded message
//! re-encodes to the JSON it came from. Defaults the schema declares (such
//! as `loadSession: false`) are the caller's to apply.
//!
//! # For clients
//!
//! Beside the messages: [`quirks`], what a client answers differently to a
//! known agent (keyed by the `agentInfo` of its `initialize` result), such
//! as the answer to a read of a missing file that lets Gemini CLI create
//! files; and [`terminal::TerminalOutput`], the bounded output of a command
//! run for `terminal/*`.
//!
//! # Encoding
//!
//! [`Message::encode`], [`encode_request`], [`encode_notification`],
//! [`encode_response`] and [`encode_error`] write compact JSON plus `\n`
//! through [`encode_line`](crate::encode_line): exactly one line, even when
//! raw JSON handed in by a caller was pretty-printed.
//!
//! ```
//! use acp_codec::acp::{encode_request, Message, PromptRequest, ContentBlock, TextContent, RequestParams, RequestId};
//! use std::borrow::Cow;
//!
//! let prompt = RequestParams::Prompt(PromptRequest {
//!     session_id: "s1".into(),
//!     prompt: vec![ContentBlock::Text(TextContent { annotations: None, text: "hi".into(), meta: None })],
//!     meta: None,
//! });
//! let mut out = Vec::new();
//! encode_request(&RequestId::Number(2), &prompt, &mut out).unwrap();
//! assert_eq!(
//!     std::str::from_utf8(&out).unwrap(),
//!     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n"
//! );
//! let msg = Message::decode(std::str::from_utf8(&out).unwrap().trim_end()).unwrap();
//! let Message::Request(req) = &msg else { panic!() };
//! assert_eq!(req.typed().unwrap(), prompt);
//! ```

#[cfg(feature = "arbitrary")]
mod arbitrary;
mod direct;
mod extra;
#[cfg(feature = "arbitrary")]
pub(crate) mod leaf;
pub(crate) mod raw;
mod salvage;
mod tagged;
pub(crate) mod wire;

mod client;
mod content;
mod encode;
mod error;
mod id;
mod init;
mod line;
mod message;
mod method;
pub mod quirks;
mod session;
pub mod terminal;
mod tracker;
#[cfg(feature = "unstable")]
#[cfg_attr(docsrs, doc(cfg(feature = "unstable")))]
mod unstable;
mod update;

// generated exports: begin
pub use client::{
    CompleteElicitationNotification, CreateElicitationRequest, CreateElicitationResponse,
    CreateTerminalRequest, CreateTerminalResponse, ElicitationAction, ElicitationMode,
    KillTerminalRequest, KillTerminalResponse, PermissionOption, PermissionOptionKind,
    ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest, ReleaseTerminalResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, TerminalExitStatus, TerminalOutputRequest, TerminalOutputResponse,
    TerminalRequest, WaitForTerminalExitRequest, WaitForTerminalExitResponse, WriteTextFileRequest,
    WriteTextFileResponse,
};
pub use content::{
    Annotations, AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource,
    EmbeddedResourceResource, ImageContent, MetaOnly, ResourceLink, Role, TextContent,
    TextResourceContents,
};
pub use init::{
    AgentAuthCapabilities, AgentCapabilities, AuthCapabilities, AuthMethod, AuthMethodAgent,
    AuthMethodTerminal, AuthenticateRequest, AuthenticateResponse, ClientCapabilities,
    ClientSessionCapabilities, ElicitationCapabilities, FileSystemCapabilities, Implementation,
    InitializeRequest, InitializeResponse, LogoutRequest, LogoutResponse, McpCapabilities,
    PromptCapabilities, SessionCapabilities, SessionConfigOptionsCapabilities,
};
pub use session::{
    CancelNotification, CancelRequestNotification, CloseSessionRequest, CloseSessionResponse,
    DeleteSessionRequest, DeleteSessionResponse, EnvVariable, HttpHeader, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpServer, McpServerHttp,
    McpServerSse, McpServerStdio, ModelInfo, NewSessionRequest, NewSessionResponse, PromptRequest,
    PromptResponse, ResumeSessionRequest, ResumeSessionResponse, SessionConfigBoolean,
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelect,
    SessionConfigSelectGroup, SessionConfigSelectOption, SessionConfigSelectOptions,
    SessionIdRequest, SessionInfo, SessionMode, SessionModeState, SessionModelState,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse, SetSessionModelRequest, SetSessionModelResponse, StopReason,
};
#[cfg(feature = "unstable")]
pub use unstable::{
    ArchiveSessionRequest, ArchiveSessionResponse, AuthAccount, AuthState, AuthStatusCapabilities,
    AuthStatusRequest, AuthStatusResponse, AuthStatusUpdateNotification, DisableProviderRequest,
    DisableProviderResponse, ErrorStopReason, ForkSessionRequest, ForkSessionResponse,
    IdleStateUpdate, IdleStopReason, ListProvidersRequest, ListProvidersResponse, LlmProtocol,
    McpError, McpServerAcp, MessageMcpNotification, MessageMcpRequest, MessageMcpResponse,
    PlanCapabilities, PlanFile, PlanItems, PlanMarkdown, PlanRemoved, PlanUpdate,
    PlanUpdateContent, ProviderCurrentConfig, ProviderInfo, ProvidersCapabilities,
    RequiresActionStateUpdate, RunningStateUpdate, SessionArchiveCapabilities,
    SessionArchiveFilter, SessionCancelCapabilities, SessionForkCapabilities, SessionMessage,
    SessionMessageChunk, SessionStatus, SessionStatusCapabilities, SessionStatusRequest,
    SessionStatusResponse, SessionSystemPromptCapabilities, SessionSystemPromptModeCapabilities,
    SessionSystemPromptOverrideCapabilities, SessionTitleCapabilities, SetProviderRequest,
    SetProviderResponse, SetSessionTitleRequest, SetSessionTitleResponse, StateUpdate,
    SubagentCapabilities, SubagentSessionCapabilities, SubagentUpdate, SystemPrompt,
    SystemPromptMode, UnarchiveSessionRequest, UnarchiveSessionResponse, UnknownStateUpdate, Usage,
};
pub use update::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CompactionStatus,
    CompactionSummaryChunk, CompactionUpdate, ConfigOptionUpdate, Content, ContentChunk, Cost,
    CurrentModeUpdate, Diff, Notice, NoticeSeverity, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionInfoUpdate, SessionNotification, SessionUpdate, Terminal, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolKind,
    UnstructuredCommandInput, UsageUpdate,
};
// generated exports: end
pub use encode::{encode_error, encode_notification, encode_request, encode_response};
pub use error::{EnvelopeFault, MessageError, TrackerError};
pub use extra::Extra;
pub use id::RequestId;
#[allow(deprecated)]
pub use line::{decode_line, decode_line_strict, Decoded, Incoming};
pub use message::{ErrorResponse, Message, Notification, Request, Response, RpcError};
pub use method::{is_extension, names, NotificationParams, RequestParams, ResponseResult};
pub use raw::{IntoOwned, RawJson};
pub use salvage::{Salvage, SalvageKind, Typed};
pub use tagged::ConfigValue;
pub use tracker::{Completed, Expired, Tracker, DEFAULT_MAX_PEER_PENDING, DEFAULT_TIMEOUT};
