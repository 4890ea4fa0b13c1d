//! Typed params and results, chosen by method name.

use alloc::borrow::Cow;

use serde::{Serialize, Serializer};

use super::client::*;
use super::init::*;
use super::raw::{IntoOwned, RawJson};
use super::salvage::Typed;
use super::session::*;
#[cfg(feature = "unstable")]
use super::unstable::*;
use super::update::SessionNotification;
use super::read::{Fail, Reader};
use super::wire::{decode_text, Cx, Decode, Mode};
use super::MessageError;

/// The method names of ACP v1 (plus `session/set_model`, which Gemini CLI
/// calls).
pub mod names {
    /// `initialize` (client to agent).
    pub const INITIALIZE: &str = "initialize";
    /// `authenticate` (client to agent).
    pub const AUTHENTICATE: &str = "authenticate";
    /// `logout` (client to agent).
    pub const LOGOUT: &str = "logout";
    /// `session/new` (client to agent).
    pub const SESSION_NEW: &str = "session/new";
    /// `session/load` (client to agent).
    pub const SESSION_LOAD: &str = "session/load";
    /// `session/list` (client to agent).
    pub const SESSION_LIST: &str = "session/list";
    /// `session/delete` (client to agent).
    pub const SESSION_DELETE: &str = "session/delete";
    /// `session/resume` (client to agent).
    pub const SESSION_RESUME: &str = "session/resume";
    /// `session/close` (client to agent).
    pub const SESSION_CLOSE: &str = "session/close";
    /// `session/set_mode` (client to agent).
    pub const SESSION_SET_MODE: &str = "session/set_mode";
    /// `session/set_config_option` (client to agent).
    pub const SESSION_SET_CONFIG_OPTION: &str = "session/set_config_option";
    /// `session/set_model` (client to agent; Gemini CLI, not in the v1 schema).
    pub const SESSION_SET_MODEL: &str = "session/set_model";
    /// `session/prompt` (client to agent).
    pub const SESSION_PROMPT: &str = "session/prompt";
    /// `session/cancel` (client to agent, notification).
    pub const SESSION_CANCEL: &str = "session/cancel";
    /// `session/update` (agent to client, notification).
    pub const SESSION_UPDATE: &str = "session/update";
    /// `session/request_permission` (agent to client).
    pub const SESSION_REQUEST_PERMISSION: &str = "session/request_permission";
    /// `fs/read_text_file` (agent to client).
    pub const FS_READ_TEXT_FILE: &str = "fs/read_text_file";
    /// `fs/write_text_file` (agent to client).
    pub const FS_WRITE_TEXT_FILE: &str = "fs/write_text_file";
    /// `terminal/create` (agent to client).
    pub const TERMINAL_CREATE: &str = "terminal/create";
    /// `terminal/output` (agent to client).
    pub const TERMINAL_OUTPUT: &str = "terminal/output";
    /// `terminal/release` (agent to client).
    pub const TERMINAL_RELEASE: &str = "terminal/release";
    /// `terminal/wait_for_exit` (agent to client).
    pub const TERMINAL_WAIT_FOR_EXIT: &str = "terminal/wait_for_exit";
    /// `terminal/kill` (agent to client).
    pub const TERMINAL_KILL: &str = "terminal/kill";
    /// `elicitation/create` (agent to client).
    pub const ELICITATION_CREATE: &str = "elicitation/create";
    /// `elicitation/complete` (agent to client, notification).
    pub const ELICITATION_COMPLETE: &str = "elicitation/complete";
    /// `$/cancel_request` (either side, notification).
    pub const CANCEL_REQUEST: &str = "$/cancel_request";
    /// `providers/list` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const PROVIDERS_LIST: &str = "providers/list";
    /// `providers/set` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const PROVIDERS_SET: &str = "providers/set";
    /// `providers/disable` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const PROVIDERS_DISABLE: &str = "providers/disable";
    /// `auth/status` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const AUTH_STATUS: &str = "auth/status";
    /// `session/fork` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const SESSION_FORK: &str = "session/fork";
    /// `session/archive` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const SESSION_ARCHIVE: &str = "session/archive";
    /// `session/unarchive` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const SESSION_UNARCHIVE: &str = "session/unarchive";
    /// `session/status` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const SESSION_STATUS: &str = "session/status";
    /// `session/options` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const SESSION_OPTIONS: &str = "session/options";
    /// `session/set_title` (client to agent; unstable).
    #[cfg(feature = "unstable")]
    pub const SESSION_SET_TITLE: &str = "session/set_title";
    /// `auth/status_update` (agent to client, notification; unstable).
    #[cfg(feature = "unstable")]
    pub const AUTH_STATUS_UPDATE: &str = "auth/status_update";
    /// `mcp/message` (a request agent to client, a notification client to
    /// agent; unstable).
    #[cfg(feature = "unstable")]
    pub const MCP_MESSAGE: &str = "mcp/message";
}

/// Whether `method` is an extension method (it starts with `_`).
pub fn is_extension(method: &str) -> bool {
    method.starts_with('_')
}

/// The params text, an absent or `null` value read as `{}`.
fn params_text(raw: Option<&str>) -> &str {
    match raw {
        Some(r) if r != "null" => r,
        _ => "{}",
    }
}

/// Decodes the params of `method` (one valid JSON value, absent or `null`
/// read as `{}`) by its one decoder.
fn params<'b, T: Decode<'b>>(
    method: &'static str,
    raw: Option<&'b str>,
    mode: Mode,
) -> Result<Typed<'b, T>, MessageError> {
    decode_text(params_text(raw), mode).map_err(|why| MessageError::InvalidParams {
        method,
        error: serde::de::Error::custom(why.reason()),
    })
}

/// Decodes the params of `method` at the reader's position (absent params
/// are the caller's, `null` reads as `{}`).
pub(crate) fn params_at<'b, T: Decode<'b>>(
    r: &mut Reader<'b>,
    cx: &mut Cx<'b>,
) -> Result<T, Fail> {
    if r.null()? {
        return T::decode(&mut Reader::new("{}"), cx);
    }
    T::decode(r, cx)
}

macro_rules! method_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident {
            $( $(#[doc = $vd:literal])* $(#[cfg($vc:meta)])? $variant:ident($ty:ident) = $method:ident, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        // Decoded once per message and matched at once: boxing the big
        // variants would cost an allocation for nothing.
        #[allow(clippy::large_enum_variant)]
        pub enum $name<'a> {
            $( $(#[doc = $vd])* $(#[cfg($vc)])? $variant($ty<'a>), )*
            /// An extension method (its name starts with `_`), params as sent.
            Ext {
                /// The method name.
                method: Cow<'a, str>,
                /// The params as sent.
                params: Option<RawJson<'a>>,
            },
            /// A method this version does not know, params as sent.
            Unknown {
                /// The method name.
                method: Cow<'a, str>,
                /// The params as sent.
                params: Option<RawJson<'a>>,
            },
        }

        impl<'a> $name<'a> {
            /// Decodes the params of `method`, one valid JSON value (absent
            /// or `null` read as `{}`), borrowing from them.
            pub(crate) fn decode_text(method: Cow<'a, str>, raw: Option<&'a str>, mode: Mode) -> Result<Typed<'a, Self>, MessageError> {
                Ok(match &*method {
                    $( $(#[cfg($vc)])? names::$method => params(names::$method, raw, mode)?.map(Self::$variant), )*
                    _ => Typed::clean(Self::other(method, raw.map(RawJson::from_validated))),
                })
            }

            /// Decodes the params of `method` at the reader's position, in
            /// the pass over a whole line; `None` for a method this version
            /// does not know (the caller keeps its params raw).
            // Only notifications are typed in that pass (`decode_line`).
            #[allow(dead_code)]
            pub(crate) fn decode_at(method: &str, r: &mut Reader<'a>, cx: &mut Cx<'a>) -> Option<Result<Self, Fail>> {
                Some(match method {
                    $( $(#[cfg($vc)])? names::$method => params_at(r, cx).map(Self::$variant), )*
                    _ => return None,
                })
            }

            /// An extension or unknown method's params, as sent.
            pub(crate) fn other(method: Cow<'a, str>, params: Option<RawJson<'a>>) -> Self {
                if is_extension(&method) {
                    Self::Ext { method, params }
                } else {
                    Self::Unknown { method, params }
                }
            }

            /// The method name.
            pub fn method(&self) -> &str {
                match self {
                    $( $(#[cfg($vc)])? Self::$variant(_) => names::$method, )*
                    Self::Ext { method, .. } | Self::Unknown { method, .. } => method,
                }
            }

            /// Whether the message carries params (only `Ext` and `Unknown`
            /// can have none).
            pub fn has_params(&self) -> bool {
                match self {
                    Self::Ext { params, .. } | Self::Unknown { params, .. } => params.is_some(),
                    _ => true,
                }
            }

            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                match self {
                    $( $(#[cfg($vc)])? Self::$variant(v) => $name::$variant(v.into_owned()), )*
                    Self::Ext { method, params } => $name::Ext { method: IntoOwned::into_owned(method), params: IntoOwned::into_owned(params) },
                    Self::Unknown { method, params } => $name::Unknown { method: IntoOwned::into_owned(method), params: IntoOwned::into_owned(params) },
                }
            }
        }

        /// Any known method with params that decode back to an equal value,
        /// an extension method (`_…`) or an unknown one, params as sent.
        #[cfg(feature = "arbitrary")]
        impl<'u> ::arbitrary::Arbitrary<'u> for $name<'static> {
            #[allow(clippy::vec_init_then_push)]
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<Self> {
                type Make<'u> = fn(&mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<$name<'static>>;
                // Pushed one by one: a variant may be behind feature `unstable`.
                let mut arms: alloc::vec::Vec<Make<'u>> = alloc::vec::Vec::new();
                $( $(#[cfg($vc)])? arms.push(|u| Ok($name::$variant(u.arbitrary()?))); )*
                arms.extend_from_slice(&[
                    |u| Ok($name::Ext {
                        method: crate::acp::leaf::extension_method(u)?,
                        params: crate::acp::leaf::option(u, crate::acp::leaf::raw)?,
                    }),
                    |u| Ok($name::Unknown {
                        method: crate::acp::leaf::unknown_method(u, |m| {
                            matches!($name::decode_text(Cow::Borrowed(m), None, Mode::Strict), Ok(Typed { value: $name::Unknown { .. }, .. }))
                        })?,
                        params: crate::acp::leaf::option(u, crate::acp::leaf::raw)?,
                    }),
                ]);
                u.choose(&arms)?(u)
            }
        }

        /// Serializes the params object only (the envelope is written by
        /// the `encode_*` functions).
        impl Serialize for $name<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $(#[cfg($vc)])? Self::$variant(v) => v.serialize(s), )*
                    Self::Ext { params, .. } | Self::Unknown { params, .. } => params.serialize(s),
                }
            }
        }
    };
}

method_enum! {
    /// The typed params of a request, by method: every request of ACP v1
    /// in both directions, plus `session/set_model`.
    ///
    /// ```
    /// use acp_codec::acp::{Message, Mode, RequestParams};
    ///
    /// let line = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#;
    /// let Message::Request(req) = Message::decode(line).unwrap() else { panic!() };
    /// let RequestParams::NewSession(p) = req.typed(Mode::Lenient).unwrap().value else { panic!() };
    /// assert_eq!(p.cwd, "/p");
    /// ```
    pub enum RequestParams {
        /// `initialize`.
        Initialize(InitializeRequest) = INITIALIZE,
        /// `authenticate`.
        Authenticate(AuthenticateRequest) = AUTHENTICATE,
        /// `logout`.
        Logout(LogoutRequest) = LOGOUT,
        /// `session/new`.
        NewSession(NewSessionRequest) = SESSION_NEW,
        /// `session/load`.
        LoadSession(LoadSessionRequest) = SESSION_LOAD,
        /// `session/list`.
        ListSessions(ListSessionsRequest) = SESSION_LIST,
        /// `session/delete`.
        DeleteSession(DeleteSessionRequest) = SESSION_DELETE,
        /// `session/resume`.
        ResumeSession(ResumeSessionRequest) = SESSION_RESUME,
        /// `session/close`.
        CloseSession(CloseSessionRequest) = SESSION_CLOSE,
        /// `session/set_mode`.
        SetSessionMode(SetSessionModeRequest) = SESSION_SET_MODE,
        /// `session/set_config_option`.
        SetSessionConfigOption(SetSessionConfigOptionRequest) = SESSION_SET_CONFIG_OPTION,
        /// `session/set_model` (Gemini CLI).
        SetSessionModel(SetSessionModelRequest) = SESSION_SET_MODEL,
        /// `session/prompt`.
        Prompt(PromptRequest) = SESSION_PROMPT,
        /// `session/request_permission`.
        RequestPermission(RequestPermissionRequest) = SESSION_REQUEST_PERMISSION,
        /// `fs/read_text_file`.
        ReadTextFile(ReadTextFileRequest) = FS_READ_TEXT_FILE,
        /// `fs/write_text_file`.
        WriteTextFile(WriteTextFileRequest) = FS_WRITE_TEXT_FILE,
        /// `terminal/create`.
        CreateTerminal(CreateTerminalRequest) = TERMINAL_CREATE,
        /// `terminal/output`.
        TerminalOutput(TerminalOutputRequest) = TERMINAL_OUTPUT,
        /// `terminal/release`.
        ReleaseTerminal(ReleaseTerminalRequest) = TERMINAL_RELEASE,
        /// `terminal/wait_for_exit`.
        WaitForTerminalExit(WaitForTerminalExitRequest) = TERMINAL_WAIT_FOR_EXIT,
        /// `terminal/kill`.
        KillTerminal(KillTerminalRequest) = TERMINAL_KILL,
        /// `elicitation/create`.
        CreateElicitation(CreateElicitationRequest) = ELICITATION_CREATE,
        /// `providers/list` (unstable).
        #[cfg(feature = "unstable")]
        ListProviders(ListProvidersRequest) = PROVIDERS_LIST,
        /// `providers/set` (unstable).
        #[cfg(feature = "unstable")]
        SetProvider(SetProviderRequest) = PROVIDERS_SET,
        /// `providers/disable` (unstable).
        #[cfg(feature = "unstable")]
        DisableProvider(DisableProviderRequest) = PROVIDERS_DISABLE,
        /// `auth/status` (unstable).
        #[cfg(feature = "unstable")]
        AuthStatus(AuthStatusRequest) = AUTH_STATUS,
        /// `session/fork` (unstable).
        #[cfg(feature = "unstable")]
        ForkSession(ForkSessionRequest) = SESSION_FORK,
        /// `session/archive` (unstable).
        #[cfg(feature = "unstable")]
        ArchiveSession(ArchiveSessionRequest) = SESSION_ARCHIVE,
        /// `session/unarchive` (unstable).
        #[cfg(feature = "unstable")]
        UnarchiveSession(UnarchiveSessionRequest) = SESSION_UNARCHIVE,
        /// `session/status` (unstable).
        #[cfg(feature = "unstable")]
        SessionStatus(SessionStatusRequest) = SESSION_STATUS,
        /// `session/options` (unstable).
        #[cfg(feature = "unstable")]
        SessionOptions(SessionOptionsRequest) = SESSION_OPTIONS,
        /// `session/set_title` (unstable).
        #[cfg(feature = "unstable")]
        SetSessionTitle(SetSessionTitleRequest) = SESSION_SET_TITLE,
        /// `mcp/message` (agent to client; unstable).
        #[cfg(feature = "unstable")]
        McpMessage(MessageMcpRequest) = MCP_MESSAGE,
    }
}

method_enum! {
    /// The typed params of a notification, by method.
    pub enum NotificationParams {
        /// `session/cancel` (client to agent).
        Cancel(CancelNotification) = SESSION_CANCEL,
        /// `session/update` (agent to client).
        SessionUpdate(SessionNotification) = SESSION_UPDATE,
        /// `elicitation/complete` (agent to client).
        CompleteElicitation(CompleteElicitationNotification) = ELICITATION_COMPLETE,
        /// `$/cancel_request` (either side).
        CancelRequest(CancelRequestNotification) = CANCEL_REQUEST,
        /// `auth/status_update` (agent to client; unstable).
        #[cfg(feature = "unstable")]
        AuthStatusUpdate(AuthStatusUpdateNotification) = AUTH_STATUS_UPDATE,
        /// `mcp/message` (client to agent; unstable).
        #[cfg(feature = "unstable")]
        McpMessage(MessageMcpNotification) = MCP_MESSAGE,
    }
}

/// The typed result of a response, by the method of the request it
/// answers (responses do not name their method: the
/// [`Tracker`](super::Tracker) remembers it).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)]
pub enum ResponseResult<'a> {
    /// `initialize`.
    Initialize(InitializeResponse<'a>),
    /// `authenticate`.
    Authenticate(AuthenticateResponse<'a>),
    /// `logout`.
    Logout(LogoutResponse<'a>),
    /// `session/new`.
    NewSession(NewSessionResponse<'a>),
    /// `session/load`.
    LoadSession(LoadSessionResponse<'a>),
    /// `session/list`.
    ListSessions(ListSessionsResponse<'a>),
    /// `session/delete`.
    DeleteSession(DeleteSessionResponse<'a>),
    /// `session/resume`.
    ResumeSession(ResumeSessionResponse<'a>),
    /// `session/close`.
    CloseSession(CloseSessionResponse<'a>),
    /// `session/set_mode`.
    SetSessionMode(SetSessionModeResponse<'a>),
    /// `session/set_config_option`.
    SetSessionConfigOption(SetSessionConfigOptionResponse<'a>),
    /// `session/set_model`.
    SetSessionModel(SetSessionModelResponse<'a>),
    /// `session/prompt`.
    Prompt(PromptResponse<'a>),
    /// `session/request_permission`.
    RequestPermission(RequestPermissionResponse<'a>),
    /// `fs/read_text_file`.
    ReadTextFile(ReadTextFileResponse<'a>),
    /// `fs/write_text_file`.
    WriteTextFile(WriteTextFileResponse<'a>),
    /// `terminal/create`.
    CreateTerminal(CreateTerminalResponse<'a>),
    /// `terminal/output`.
    TerminalOutput(TerminalOutputResponse<'a>),
    /// `terminal/release`.
    ReleaseTerminal(ReleaseTerminalResponse<'a>),
    /// `terminal/wait_for_exit`.
    WaitForTerminalExit(WaitForTerminalExitResponse<'a>),
    /// `terminal/kill`.
    KillTerminal(KillTerminalResponse<'a>),
    /// `elicitation/create`.
    CreateElicitation(CreateElicitationResponse<'a>),
    /// `providers/list` (unstable).
    #[cfg(feature = "unstable")]
    ListProviders(ListProvidersResponse<'a>),
    /// `providers/set` (unstable).
    #[cfg(feature = "unstable")]
    SetProvider(SetProviderResponse<'a>),
    /// `providers/disable` (unstable).
    #[cfg(feature = "unstable")]
    DisableProvider(DisableProviderResponse<'a>),
    /// `auth/status` (unstable).
    #[cfg(feature = "unstable")]
    AuthStatus(AuthStatusResponse<'a>),
    /// `session/fork` (unstable).
    #[cfg(feature = "unstable")]
    ForkSession(ForkSessionResponse<'a>),
    /// `session/archive` (unstable).
    #[cfg(feature = "unstable")]
    ArchiveSession(ArchiveSessionResponse<'a>),
    /// `session/unarchive` (unstable).
    #[cfg(feature = "unstable")]
    UnarchiveSession(UnarchiveSessionResponse<'a>),
    /// `session/status` (unstable).
    #[cfg(feature = "unstable")]
    SessionStatus(SessionStatusResponse<'a>),
    /// `session/options` (unstable).
    #[cfg(feature = "unstable")]
    SessionOptions(SessionOptionsResponse<'a>),
    /// `session/set_title` (unstable).
    #[cfg(feature = "unstable")]
    SetSessionTitle(SetSessionTitleResponse<'a>),
    /// `mcp/message` (unstable).
    #[cfg(feature = "unstable")]
    McpMessage(MessageMcpResponse<'a>),
    /// The result of an extension or unknown method, as sent.
    Other(RawJson<'a>),
}

macro_rules! results {
    ($( $(#[cfg($c:meta)])? $variant:ident = $method:ident, )*) => {
        impl<'a> ResponseResult<'a> {
            /// Decodes `raw` as the result of `method`.
            pub(crate) fn decode(method: &str, raw: &'a RawJson<'_>, mode: Mode) -> Result<Typed<'a, Self>, MessageError> {
                Ok(match method {
                    $( $(#[cfg($c)])? names::$method => decode_text(raw.get(), mode)
                        .map_err(|why| MessageError::InvalidResult {
                            method: names::$method,
                            error: serde::de::Error::custom(why.reason()),
                        })?
                        .map(Self::$variant), )*
                    _ => Typed::clean(Self::Other(raw.reborrow())),
                })
            }

            /// The method whose result this is (`None` for
            /// [`Other`](Self::Other), the result of a method this version
            /// does not know).
            pub fn method(&self) -> Option<&'static str> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(_) => Some(names::$method), )*
                    Self::Other(_) => None,
                }
            }

            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> ResponseResult<'static> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(v) => ResponseResult::$variant(v.into_owned()), )*
                    Self::Other(v) => ResponseResult::Other(v.into_owned()),
                }
            }
        }

        /// The result of any known method, decoding back to an equal value
        /// for [`method`](ResponseResult::method), or any JSON as
        /// [`Other`](ResponseResult::Other).
        #[cfg(feature = "arbitrary")]
        impl<'u> ::arbitrary::Arbitrary<'u> for ResponseResult<'static> {
            #[allow(clippy::vec_init_then_push)]
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<Self> {
                type Make<'u> = fn(&mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<ResponseResult<'static>>;
                // Pushed one by one: a variant may be behind feature `unstable`.
                let mut arms: alloc::vec::Vec<Make<'u>> = alloc::vec::Vec::new();
                $( $(#[cfg($c)])? arms.push(|u| Ok(ResponseResult::$variant(u.arbitrary()?))); )*
                arms.push(|u| Ok(ResponseResult::Other(crate::acp::leaf::raw(u)?)));
                u.choose(&arms)?(u)
            }
        }

        /// Serializes the result object only.
        impl Serialize for ResponseResult<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(v) => v.serialize(s), )*
                    Self::Other(v) => v.serialize(s),
                }
            }
        }
    };
}

results! {
    Initialize = INITIALIZE,
    Authenticate = AUTHENTICATE,
    Logout = LOGOUT,
    NewSession = SESSION_NEW,
    LoadSession = SESSION_LOAD,
    ListSessions = SESSION_LIST,
    DeleteSession = SESSION_DELETE,
    ResumeSession = SESSION_RESUME,
    CloseSession = SESSION_CLOSE,
    SetSessionMode = SESSION_SET_MODE,
    SetSessionConfigOption = SESSION_SET_CONFIG_OPTION,
    SetSessionModel = SESSION_SET_MODEL,
    Prompt = SESSION_PROMPT,
    RequestPermission = SESSION_REQUEST_PERMISSION,
    ReadTextFile = FS_READ_TEXT_FILE,
    WriteTextFile = FS_WRITE_TEXT_FILE,
    CreateTerminal = TERMINAL_CREATE,
    TerminalOutput = TERMINAL_OUTPUT,
    ReleaseTerminal = TERMINAL_RELEASE,
    WaitForTerminalExit = TERMINAL_WAIT_FOR_EXIT,
    KillTerminal = TERMINAL_KILL,
    CreateElicitation = ELICITATION_CREATE,
    #[cfg(feature = "unstable")]
    ListProviders = PROVIDERS_LIST,
    #[cfg(feature = "unstable")]
    SetProvider = PROVIDERS_SET,
    #[cfg(feature = "unstable")]
    DisableProvider = PROVIDERS_DISABLE,
    #[cfg(feature = "unstable")]
    AuthStatus = AUTH_STATUS,
    #[cfg(feature = "unstable")]
    ForkSession = SESSION_FORK,
    #[cfg(feature = "unstable")]
    ArchiveSession = SESSION_ARCHIVE,
    #[cfg(feature = "unstable")]
    UnarchiveSession = SESSION_UNARCHIVE,
    #[cfg(feature = "unstable")]
    SessionStatus = SESSION_STATUS,
    #[cfg(feature = "unstable")]
    SessionOptions = SESSION_OPTIONS,
    #[cfg(feature = "unstable")]
    SetSessionTitle = SESSION_SET_TITLE,
    #[cfg(feature = "unstable")]
    McpMessage = MCP_MESSAGE,
}

impl IntoOwned for RequestParams<'_> {
    type Owned = RequestParams<'static>;
    fn into_owned(self) -> Self::Owned {
        RequestParams::into_owned(self)
    }
}

impl IntoOwned for NotificationParams<'_> {
    type Owned = NotificationParams<'static>;
    fn into_owned(self) -> Self::Owned {
        NotificationParams::into_owned(self)
    }
}

impl IntoOwned for ResponseResult<'_> {
    type Owned = ResponseResult<'static>;
    fn into_owned(self) -> Self::Owned {
        ResponseResult::into_owned(self)
    }
}
