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
//! [`decode_line`] does both in one pass over the line, for every
//! method: the envelope's members are checked as they come, and a
//! notification's or a request's params (the bulk of what an agent sends
//! during a turn) are typed where they stand, the value built in place.
//! A response's result is typed in the same pass when
//! [`Decoding::with_tracker`] gives the [`Tracker`] that has its request
//! pending (so the method it answers is known before the result is read);
//! without one, a response comes back as the [`Message`], its result typed
//! on demand by [`Response::typed`].
//!
//! Every type has one decoder, derived from its declaration (written from
//! the schema): one walk over
//! the JSON text that checks its grammar and reads each member by key into
//! its field, keeps unknown members and optional `null`s in `extra`, reads
//! a union's tag wherever it stands in the object (looking ahead without
//! building anything when it is not first), and in lenient mode salvages
//! in the same pass. The types' `Deserialize` (for users who hold them in
//! their own serde structures, read by `serde_json` from text) goes through
//! it too, strictly.
//!
//! A string without escapes is borrowed. A string with escapes costs one
//! allocation, of its escaped size, when its end is found by a short
//! search (one that meets no escaped quote 4 KiB or more in); text dense
//! with `\"` past that is not searched to its end first but unescaped
//! into an allocation of the rest of the line, which it cannot outgrow
//! (never grown, so never copied as it is read), and is trimmed when it
//! ends (at most a quarter of its length plus 4 KiB left unused).
//!
//! # Lossless: what a peer sent comes back
//!
//! Every generated struct keeps, in its [`Extra`] (`extra` field), the
//! members it does not hold: a newer peer's members at any depth, and a
//! `null` sent for an optional member. Encoding writes them back after the
//! typed members, so a decoded message re-encodes to JSON equal, as a value,
//! to what came in: unknown members and `null`s kept, numbers as sent (an
//! `f64` member is a [`serde_json::Number`], so `1` stays `1` and `1.0`
//! stays `1.0`). A bridge or proxy can decode, edit and re-encode without
//! dropping what a newer peer sent. An unknown method decodes to `Unknown`
//! (`Ext` when it starts with `_`) and an unknown `sessionUpdate`, content
//! `type` or other tag to its union's `Unknown(RawJson)` variant, which
//! keeps the object's JSON; an unknown enum value (`ToolKind`,
//! `StopReason`, …) to `Unknown(Cow<str>)`. The envelope's raw params and
//! results always re-encode unchanged. Members of the JSON-RPC envelope
//! itself other than `jsonrpc`, `id`, `method`, `params`, `result` and
//! `error` are not kept.
//!
//! # Lenient by default, strict on request
//!
//! Every decode takes a [`Mode`]. [`Mode::Lenient`] (the default): a line
//! that does not quite fit the schema still gives the message, and every
//! place where decoding kept going instead of failing is reported in
//! [`Typed::salvaged`] as a [`Salvage`]: where (a JSON Pointer from the
//! params or result), what was done ([`SalvageKind`]), why (the error), and
//! the value as sent. Salvaging happens in the same pass: input that fits
//! costs nothing more. [`Mode::Strict`] keeps the schema's errors, for
//! conformance tests: it fails exactly where the lenient mode would
//! salvage.
//!
//! Point by point, against the official SDKs (TypeScript
//! `@agentclientprotocol/sdk` 2.4.0 with zod, Python
//! `agent-client-protocol` 0.12.1 with pydantic, Rust
//! `agent-client-protocol-schema` 1.20.0 with `serde_with`), which share one
//! policy, written into the schema as `x-deserialize-default-on-error` and
//! `x-deserialize-skip-invalid-items`:
//!
//! | input | official SDKs | here |
//! |---|---|---|
//! | optional member whose value does not fit (`annotations.priority: "high"`) | dropped, silently | absent, value kept in `extra` (re-encoded as sent), reported ([`SalvageKind::MemberDropped`]) |
//! | list item that does not fit (a `locations` item without `path`) | skipped, silently (lists the schema marks) | skipped in every list, reported with the item ([`SalvageKind::ItemSkipped`]); the only salvage whose re-encoding leaves something out |
//! | unknown `sessionUpdate` or content `type` | the whole message fails | `Unknown(RawJson)`, not a salvage |
//! | known `sessionUpdate` or content `type` whose body does not fit (`usage_update` with `used: null`) | the whole message fails | that union's `Unknown(RawJson)`, re-encoded as sent, reported ([`SalvageKind::UnknownVariant`]) |
//! | unknown member | dropped | kept in `extra` |
//! | `null` for an optional member | absent (dropped on re-encode) | absent, `null` kept in `extra` |
//! | required member missing (`sessionId`, `toolCallId`, …) | error | error (a union does not hide it as `Unknown`); inside an optional member or a list item, that member is dropped or that item skipped |
//! | required member of the params or result that does not fit | error | error |
//! | type coercion (`"5"` for a number) | Python's pydantic coerces; the others do not | never |
//!
//! A request whose params cannot be typed even leniently gets `-32602`
//! ([`MessageError::code`]), as from the official SDKs; the error is the
//! strict one (the first place the params do not fit).
//!
//! ```
//! use acp_codec::acp::Mode;
//! use acp_codec::acp::{decode_line, Incoming, NotificationParams, SalvageKind, SessionUpdate};
//!
//! let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Read","locations":[{"line":3},{"path":"/b"}],"newMember":{"x":1}}}}"#;
//! let Incoming::Notification(typed) = decode_line(line, Mode::Lenient)? else { unreachable!() };
//! let NotificationParams::SessionUpdate(n) = &typed.value else { unreachable!() };
//! let SessionUpdate::ToolCall(call) = &n.update else { unreachable!() };
//! assert_eq!(call.locations.as_ref().unwrap().len(), 1);
//! assert_eq!(call.extra.get("newMember").unwrap().get(), r#"{"x":1}"#);
//! let skipped = &typed.salvaged[0];
//! assert_eq!((skipped.path.as_str(), skipped.kind), ("/update/locations/0", SalvageKind::ItemSkipped));
//! assert_eq!(skipped.reason, "missing field `path`");
//! // Strictly, the line is an error.
//! assert!(acp_codec::acp::decode_line(line, Mode::Strict).is_err());
//! # Ok::<(), acp_codec::MessageError>(())
//! ```
//!
//! # Building messages
//!
//! The generated structs are `#[non_exhaustive]`, so a member a new version
//! of the schema adds is not a breaking change: build them with `new`
//! (their required members) and `with_…` (optional ones), or set the public
//! fields of a value built so. Defaults the schema declares (such as
//! `loadSession: false`) are the caller's to apply.
//!
//! # For clients
//!
//! Beside the messages, in [`crate::client`]: the agents' quirks and a
//! terminal's bounded output.
//!
//! # Versions
//!
//! [`crate::version`]: which protocol version a connection speaks (the
//! [`crate::version::Negotiator`] of its first `initialize`: the highest
//! version spoken at or below the one asked, or `-32022`), and the rewrite
//! of `initialize`'s members between v1 and v2; `translate` (feature `v2`):
//! a v1 peer in front of a v2 one.
//!
//! # Encoding
//!
//! [`Message::encode`], [`encode_request`], [`encode_notification`],
//! [`encode_response`] and [`encode_error`] write compact JSON plus `\n`
//! through [`encode_line`](crate::encode_line): exactly one line, even when
//! raw JSON handed in by a caller was pretty-printed.
//!
//! ```
//! use acp_codec::acp::Mode;
//! use acp_codec::acp::{encode_request, ContentBlock, Message, PromptRequest, RequestId, RequestParams, TextContent};
//!
//! let prompt = RequestParams::Prompt(PromptRequest::new(
//!     "s1",
//!     vec![ContentBlock::Text(TextContent::new("hi"))],
//! ));
//! let mut out = Vec::new();
//! encode_request(&RequestId::Number(2), &prompt, &mut out).unwrap();
//! assert_eq!(
//!     std::str::from_utf8(&out).unwrap(),
//!     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n"
//! );
//! let msg = Message::decode(std::str::from_utf8(&out).unwrap().trim_end()).unwrap();
//! let Message::Request(req) = &msg else { panic!() };
//! assert_eq!(req.typed(Mode::Lenient).unwrap().value, prompt);
//! ```

// The declaration macros first: the type modules below use them.
#[macro_use]
mod decl;
mod extra;
#[cfg(feature = "arbitrary")]
pub(crate) mod leaf;
pub(crate) mod raw;
pub(crate) mod read;
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
mod methods;
mod observer;
mod pending;
mod session;
mod tracker;
#[cfg(feature = "unstable")]
#[cfg_attr(docsrs, doc(cfg(feature = "unstable")))]
mod unstable;
mod update;
#[cfg(feature = "v2")]
#[cfg_attr(docsrs, doc(cfg(feature = "v2")))]
pub mod v2;

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
    PlanCapabilities, PromptCapabilities, SessionCapabilities, SessionConfigOptionsCapabilities,
    SessionSystemPromptCapabilities, SessionSystemPromptModeCapabilities,
    SessionSystemPromptOverrideCapabilities, SubagentCapabilities,
};
#[cfg(feature = "unstable")]
pub use init::{
    AuthStatusCapabilities, PromptSuggestionsCapabilities, ProvidersCapabilities,
    SessionArchiveCapabilities, SessionCursorsCapabilities, SessionForkCapabilities,
    SessionOptionsCapabilities, SessionStatusCapabilities, SessionTitleCapabilities,
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
    SystemPrompt, SystemPromptMode,
};
#[cfg(feature = "unstable")]
pub use session::{InitialSessionConfigOption, McpServerAcp, SessionArchiveFilter, Usage};
#[cfg(feature = "unstable")]
pub use unstable::{
    ArchiveSessionRequest, ArchiveSessionResponse, AuthAccount, AuthState, AuthStatusRequest,
    AuthStatusResponse, AuthStatusUpdateNotification, ConnectMcpRequest, ConnectMcpResponse,
    DisableProviderRequest, DisableProviderResponse, DisconnectMcpRequest, DisconnectMcpResponse,
    ForkSessionRequest, ForkSessionResponse, ListProvidersRequest, ListProvidersResponse,
    LlmProtocol, McpError, MessageMcpNotification, MessageMcpRequest, MessageMcpResponse,
    ProviderCurrentConfig, ProviderInfo, SessionOptionsRequest, SessionOptionsResponse,
    SessionStatus, SessionStatusRequest, SessionStatusResponse, SetProviderRequest,
    SetProviderResponse, SetSessionTitleRequest, SetSessionTitleResponse, UnarchiveSessionRequest,
    UnarchiveSessionResponse,
};
pub use update::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CompactionStatus,
    CompactionSummaryChunk, CompactionUpdate, ConfigOptionUpdate, Content, ContentChunk, Cost,
    CurrentModeUpdate, Diff, ErrorStopReason, IdleStateUpdate, IdleStopReason, Notice,
    NoticeSeverity, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, PlanItems, PlanMarkdown,
    PlanRemoved, PlanUpdate, PlanUpdateContent, RequiresActionStateUpdate, RunningStateUpdate,
    SessionCancelCapabilities, SessionInfoUpdate, SessionMessage, SessionMessageChunk,
    SessionNotification, SessionUpdate, StateUpdate, SubagentSessionCapabilities, SubagentUpdate,
    Terminal, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolKind, UnknownStateUpdate, UnstructuredCommandInput, UsageUpdate,
};
#[cfg(feature = "unstable")]
pub use update::{
    CursorAnchor, CursorAnchorPosition, CursorCapabilities, CursorCompactionAnchor,
    CursorForkCapabilities, CursorMessageAnchor, CursorToolCallAnchor, CursorUpdate,
    PromptSuggestion, PromptSuggestionsUpdate,
};
// generated exports: end
pub use encode::{encode_error, encode_notification, encode_request, encode_response};
pub use error::{EnvelopeFault, MessageError, TrackerError};
pub use extra::Extra;
pub use id::RequestId;
pub use line::{decode_line, decode_line_bytes, Decoding, Incoming};
#[cfg(feature = "remote")]
pub(crate) use message::SessionMember;
pub use message::{ErrorResponse, Message, Notification, Request, Response, RpcError};
pub use method::{is_extension, Direction, MethodInfo, MethodKind};
pub use methods::{names, NotificationParams, RequestParams, ResponseResult, METHODS};
pub use observer::{Observer, Paired, Side};
pub use raw::{IntoOwned, RawJson};
pub use salvage::{Salvage, SalvageKind, Typed};
pub use tagged::ConfigValue;
pub use tracker::{Completed, Expired, Tracker, DEFAULT_MAX_PEER_PENDING, DEFAULT_TIMEOUT};
pub use wire::Mode;
