//! Gemini CLI's headless stream-json events (`gemini -p … -o stream-json`).
//!
//! One JSON object a line, each with a `type` and a `timestamp`:
//! [`Init`], [`MessageEvent`], [`ToolUse`], [`ToolResult`], [`ErrorEvent`],
//! [`ResultEvent`], plus the three frames of the chunked tool-result protocol
//! ([`ToolResultStart`], [`ToolResultChunk`], [`ToolResultEnd`], see
//! [`chunk`](crate::chunk)). Field names follow Gemini CLI's
//! `JsonStreamEventType` (`packages/core/src/output/types.ts`).
//!
//! Decoding borrows text from the line when it holds no escapes
//! ([`Text`]). It is forward compatible: unknown fields are ignored and an
//! unknown `type` decodes to [`Event::Unknown`], which keeps the line and
//! re-encodes it unchanged. Encoding writes one compact line plus `\n`, in
//! Gemini CLI's field order and escaping, so a decoded then re-encoded
//! compact line is byte-identical.
//!
//! ```
//! use acp_codec::stream_json::{Event, Status};
//!
//! let line = r#"{"type":"tool_result","timestamp":"2025-01-01T00:00:00.000Z","tool_id":"ls-1","status":"success","output":"a b"}"#;
//! let Event::ToolResult(r) = Event::decode(line)? else { panic!() };
//! assert_eq!(r.status, Status::Success);
//! assert!(r.output.as_ref().unwrap().is_borrowed());
//! let mut out = Vec::new();
//! Event::ToolResult(r).encode(&mut out)?;
//! assert_eq!(out, format!("{line}\n").as_bytes());
//!
//! // Unknown types are kept as they were.
//! let line = r#"{"type":"thought","subject":"x"}"#;
//! let event = Event::decode(line)?;
//! assert!(matches!(event, Event::Unknown(_)));
//! # Ok::<(), acp_codec::Error>(())
//! ```

mod error;
mod frames;
mod text;
pub(crate) mod write;

use alloc::vec::Vec;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub use text::{JsonStr, Text};

use crate::framing::EncodeError;
pub use error::EventError;
pub use frames::{FrameKind, ToolResultChunk, ToolResultEnd, ToolResultStart};

/// Whether a tool call or a run succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// `"success"`.
    Success,
    /// `"error"`.
    Error,
}

impl Status {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
        }
    }

    fn from_raw(raw: &RawValue) -> Option<Self> {
        match raw.get() {
            "\"success\"" => Some(Self::Success),
            "\"error\"" => Some(Self::Error),
            _ => None,
        }
    }
}

impl Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The `error` object of a [`ToolResult`] or [`ResultEvent`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolError<'a> {
    /// `type`: the error's kind, such as `FatalToolExecutionError`.
    #[serde(rename = "type", borrow, default)]
    pub kind: Text<'a>,
    /// `message`.
    #[serde(borrow, default)]
    pub message: Text<'a>,
}

impl ToolError<'_> {
    /// An owned copy.
    pub fn into_owned(self) -> ToolError<'static> {
        ToolError {
            kind: self.kind.into_owned(),
            message: self.message.into_owned(),
        }
    }
}

/// `init`: the session started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Init<'a> {
    /// ISO 8601 time the event was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Text<'a>>,
    /// The session's id.
    pub session_id: Text<'a>,
    /// The model in use.
    pub model: Text<'a>,
}

/// `message`: user or assistant text (a fragment when `delta` is true).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageEvent<'a> {
    /// ISO 8601 time the event was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Text<'a>>,
    /// `user` or `assistant`.
    pub role: Text<'a>,
    /// The text.
    pub content: Text<'a>,
    /// Whether `content` is an incremental fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<bool>,
}

/// `tool_use`: the model called a tool.
#[derive(Debug, Clone, Serialize)]
pub struct ToolUse<'a> {
    /// ISO 8601 time the event was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Text<'a>>,
    /// The tool's name.
    pub tool_name: Text<'a>,
    /// The call's id, repeated by its [`ToolResult`].
    pub tool_id: Text<'a>,
    /// The arguments, as raw JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<&'a RawValue>,
}

/// `tool_result`: a tool call finished (the legacy, single-line form).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolResult<'a> {
    /// ISO 8601 time the event was written.
    pub timestamp: Option<Text<'a>>,
    /// The call's id.
    pub tool_id: Text<'a>,
    /// `success` or `error`.
    pub status: Status,
    /// The tool's output.
    pub output: Option<Text<'a>>,
    /// The error, for a failed call.
    pub error: Option<ToolError<'a>>,
}

impl ToolResult<'_> {
    /// An owned copy.
    pub fn into_owned(self) -> ToolResult<'static> {
        ToolResult {
            timestamp: self.timestamp.map(Text::into_owned),
            tool_id: self.tool_id.into_owned(),
            status: self.status,
            output: self.output.map(Text::into_owned),
            error: self.error.map(ToolError::into_owned),
        }
    }
}

/// `error`: a warning or a non-fatal error during the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorEvent<'a> {
    /// ISO 8601 time the event was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Text<'a>>,
    /// `warning` or `error`.
    pub severity: Text<'a>,
    /// The message.
    pub message: Text<'a>,
}

/// `result`: the run ended.
#[derive(Debug, Clone, Serialize)]
pub struct ResultEvent<'a> {
    /// ISO 8601 time the event was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Text<'a>>,
    /// `success` or `error`.
    pub status: Status,
    /// The error, for a failed run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError<'a>>,
    /// Token and timing statistics, as raw JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<&'a RawValue>,
}

/// Raw JSON members compare by their text.
impl PartialEq for ToolUse<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.timestamp == other.timestamp
            && self.tool_name == other.tool_name
            && self.tool_id == other.tool_id
            && self.parameters.map(RawValue::get) == other.parameters.map(RawValue::get)
    }
}

/// Raw JSON members compare by their text.
impl PartialEq for ResultEvent<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.timestamp == other.timestamp
            && self.status == other.status
            && self.error == other.error
            && self.stats.map(RawValue::get) == other.stats.map(RawValue::get)
    }
}

/// An event of a `type` this crate does not know, kept as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// Its `type`.
    pub kind: Text<'a>,
    /// The whole line, re-encoded unchanged.
    pub raw: &'a str,
}

/// One stream-json event.
///
/// ```
/// use acp_codec::stream_json::{Event, Status};
///
/// // What `gemini -p "list files" -o stream-json` prints, one event a line.
/// let transcript = r#"{"type":"init","timestamp":"2025-01-01T00:00:00.000Z","session_id":"s1","model":"gemini-2.5-pro"}
/// {"type":"message","timestamp":"2025-01-01T00:00:01.000Z","role":"assistant","content":"Listing.","delta":true}
/// {"type":"tool_use","timestamp":"2025-01-01T00:00:02.000Z","tool_name":"run_shell_command","tool_id":"run_shell_command-1-0","parameters":{"command":"ls"}}
/// {"type":"tool_result","timestamp":"2025-01-01T00:00:03.000Z","tool_id":"run_shell_command-1-0","status":"success","output":"a.txt\nb.txt"}
/// {"type":"result","timestamp":"2025-01-01T00:00:04.000Z","status":"success","stats":{"total_tokens":10}}"#;
/// let mut log = Vec::new();
/// for line in transcript.lines() {
///     match Event::decode(line)? {
///         Event::Init(init) => log.push(format!("model {}", init.model.as_str())),
///         Event::Message(m) => log.push(format!("{}: {}", m.role.as_str(), m.content.as_str())),
///         Event::ToolUse(t) => log.push(format!("call {}", t.tool_name.as_str())),
///         Event::ToolResult(r) => log.push(format!("output {:?}", r.output.as_deref())),
///         Event::Result(r) => log.push(format!("done {}", r.status == Status::Success)),
///         other => log.push(format!("other {}", other.kind())),
///     }
/// }
/// assert_eq!(log, [
///     "model gemini-2.5-pro",
///     "assistant: Listing.",
///     "call run_shell_command",
///     "output Some(\"a.txt\\nb.txt\")",
///     "done true",
/// ]);
/// # Ok::<(), acp_codec::EventError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// `init`.
    Init(Init<'a>),
    /// `message`.
    Message(MessageEvent<'a>),
    /// `tool_use`.
    ToolUse(ToolUse<'a>),
    /// `tool_result`.
    ToolResult(ToolResult<'a>),
    /// `error`.
    Error(ErrorEvent<'a>),
    /// `result`.
    Result(ResultEvent<'a>),
    /// `tool_result_start`: a chunked tool result begins.
    ToolResultStart(ToolResultStart<'a>),
    /// `tool_result_chunk`: one piece of a chunked tool result.
    ToolResultChunk(ToolResultChunk<'a>),
    /// `tool_result_end`: a chunked tool result is complete.
    ToolResultEnd(ToolResultEnd<'a>),
    /// Any other `type`, kept raw.
    Unknown(Unknown<'a>),
}

/// Every field of every known event, decoded in one pass.
#[derive(Deserialize)]
struct Flat<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Text<'a>>,
    #[serde(borrow)]
    timestamp: Option<Text<'a>>,
    #[serde(borrow)]
    session_id: Option<Text<'a>>,
    #[serde(borrow)]
    model: Option<Text<'a>>,
    #[serde(borrow)]
    role: Option<Text<'a>>,
    #[serde(borrow)]
    content: Option<Text<'a>>,
    delta: Option<bool>,
    #[serde(borrow)]
    tool_name: Option<Text<'a>>,
    #[serde(borrow)]
    tool_id: Option<Text<'a>>,
    #[serde(borrow)]
    parameters: Option<&'a RawValue>,
    #[serde(borrow)]
    status: Option<&'a RawValue>,
    #[serde(borrow)]
    output: Option<Text<'a>>,
    #[serde(borrow)]
    error: Option<ToolError<'a>>,
    #[serde(borrow)]
    severity: Option<Text<'a>>,
    #[serde(borrow)]
    message: Option<Text<'a>>,
    #[serde(borrow)]
    stats: Option<&'a RawValue>,
    seq: Option<u64>,
    total_bytes: Option<u64>,
    chunks: Option<u64>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Text<'a>>,
}

const KNOWN: [&str; 9] = [
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "result",
    "tool_result_start",
    "tool_result_chunk",
    "tool_result_end",
];

fn req<T>(v: Option<T>, event: &'static str, field: &'static str) -> Result<T, EventError> {
    v.ok_or(EventError::MissingField { event, field })
}

fn status(v: Option<&RawValue>, event: &'static str) -> Result<Status, EventError> {
    let raw = req(v, event, "status")?;
    Status::from_raw(raw).ok_or(EventError::InvalidField {
        event,
        field: "status",
    })
}

impl<'a> Flat<'a> {
    fn into_event(self, line: &'a str) -> Result<Event<'a>, EventError> {
        let kind = req(self.kind, "event", "type")?;
        let ts = self.timestamp;
        Ok(match kind.as_str() {
            "init" => Event::Init(Init {
                timestamp: ts,
                session_id: req(self.session_id, "init", "session_id")?,
                model: req(self.model, "init", "model")?,
            }),
            "message" => Event::Message(MessageEvent {
                timestamp: ts,
                role: req(self.role, "message", "role")?,
                content: req(self.content, "message", "content")?,
                delta: self.delta,
            }),
            "tool_use" => Event::ToolUse(ToolUse {
                timestamp: ts,
                tool_name: req(self.tool_name, "tool_use", "tool_name")?,
                tool_id: req(self.tool_id, "tool_use", "tool_id")?,
                parameters: self.parameters,
            }),
            "tool_result" => Event::ToolResult(ToolResult {
                timestamp: ts,
                tool_id: req(self.tool_id, "tool_result", "tool_id")?,
                status: status(self.status, "tool_result")?,
                output: self.output,
                error: self.error,
            }),
            "error" => Event::Error(ErrorEvent {
                timestamp: ts,
                severity: req(self.severity, "error", "severity")?,
                message: req(self.message, "error", "message")?,
            }),
            "result" => Event::Result(ResultEvent {
                timestamp: ts,
                status: status(self.status, "result")?,
                error: self.error,
                stats: self.stats,
            }),
            "tool_result_start" => Event::ToolResultStart(ToolResultStart {
                timestamp: ts,
                tool_id: req(self.tool_id, "tool_result_start", "tool_id")?,
                status: status(self.status, "tool_result_start")?,
                total_bytes: req(self.total_bytes, "tool_result_start", "total_bytes")?,
                error: self.error,
            }),
            "tool_result_chunk" => {
                let data = req(self.data, "tool_result_chunk", "data")?;
                if !data.get().starts_with('"') {
                    return Err(EventError::InvalidField {
                        event: "tool_result_chunk",
                        field: "data",
                    });
                }
                Event::ToolResultChunk(ToolResultChunk {
                    tool_id: req(self.tool_id, "tool_result_chunk", "tool_id")?,
                    seq: req(self.seq, "tool_result_chunk", "seq")?,
                    data: JsonStr::from_checked(data.get()),
                })
            }
            "tool_result_end" => Event::ToolResultEnd(ToolResultEnd {
                tool_id: req(self.tool_id, "tool_result_end", "tool_id")?,
                chunks: req(self.chunks, "tool_result_end", "chunks")?,
                total_bytes: req(self.total_bytes, "tool_result_end", "total_bytes")?,
            }),
            _ => Event::Unknown(Unknown { kind, raw: line }),
        })
    }
}

impl<'a> Event<'a> {
    /// Decodes one line (without its `\n`), borrowing text from it.
    ///
    /// # Errors
    ///
    /// [`EventError::Json`] if the line is not a JSON object or a field of a
    /// known event has the wrong type, [`EventError::MissingField`] or
    /// [`EventError::InvalidField`] if a known event lacks a required field
    /// or has a bad value. An unknown `type` is not an error.
    ///
    /// ```
    /// use acp_codec::stream_json::Event;
    /// use acp_codec::EventError;
    ///
    /// let err = Event::decode(r#"{"type":"tool_use","tool_name":"ls"}"#).unwrap_err();
    /// assert!(matches!(err, EventError::MissingField { event: "tool_use", field: "tool_id" }));
    /// assert_eq!(err.code().0, -32602);
    /// // Not JSON at all (a log line on stdout): -32700. Nothing is kept.
    /// assert_eq!(Event::decode("Loaded cached credentials.").unwrap_err().code().0, -32700);
    /// assert_eq!(Event::decode(r#"{"type":"thought"}"#)?.kind(), "thought");
    /// # Ok::<(), acp_codec::EventError>(())
    /// ```
    pub fn decode(line: &'a str) -> Result<Self, EventError> {
        match serde_json::from_str::<Flat<'a>>(line) {
            Ok(flat) => flat.into_event(line),
            Err(e) => match serde_json::from_str::<Probe<'a>>(line) {
                // An unknown type keeps its raw JSON, whatever its fields.
                Ok(Probe { kind: Some(kind) }) if !KNOWN.contains(&kind.as_str()) => {
                    Ok(Event::Unknown(Unknown { kind, raw: line }))
                }
                _ => Err(EventError::Json(e)),
            },
        }
    }

    /// The event's `type`.
    pub fn kind(&self) -> &str {
        match self {
            Self::Init(_) => "init",
            Self::Message(_) => "message",
            Self::ToolUse(_) => "tool_use",
            Self::ToolResult(_) => "tool_result",
            Self::Error(_) => "error",
            Self::Result(_) => "result",
            Self::ToolResultStart(_) => "tool_result_start",
            Self::ToolResultChunk(_) => "tool_result_chunk",
            Self::ToolResultEnd(_) => "tool_result_end",
            Self::Unknown(u) => u.kind.as_str(),
        }
    }

    /// Appends the event to `out` as one compact line plus `\n`; returns the
    /// bytes appended. An [`Event::Unknown`] is written as it was read
    /// (compacted only if it spans several lines).
    ///
    /// # Errors
    ///
    /// [`EncodeError`] if raw JSON inside the event cannot be one line. On
    /// error `out` is left as it was.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<usize, EncodeError> {
        let start = out.len();
        match self {
            Self::Init(e) => {
                return crate::encode_line(
                    &Tagged {
                        kind: "init",
                        body: e,
                    },
                    out,
                )
            }
            Self::Message(e) => {
                return crate::encode_line(
                    &Tagged {
                        kind: "message",
                        body: e,
                    },
                    out,
                )
            }
            Self::ToolUse(e) => {
                return crate::encode_line(
                    &Tagged {
                        kind: "tool_use",
                        body: e,
                    },
                    out,
                )
            }
            Self::Error(e) => {
                return crate::encode_line(
                    &Tagged {
                        kind: "error",
                        body: e,
                    },
                    out,
                )
            }
            Self::Result(e) => {
                return crate::encode_line(
                    &Tagged {
                        kind: "result",
                        body: e,
                    },
                    out,
                )
            }
            Self::Unknown(u) => {
                if memchr::memchr(b'\n', u.raw.as_bytes()).is_some() {
                    return crate::encode_raw_line(u.raw, out);
                }
                out.extend_from_slice(u.raw.as_bytes());
            }
            Self::ToolResult(r) => write::tool_result(&mut write::IntoVec(out), r),
            Self::ToolResultStart(s) => write::start(&mut write::IntoVec(out), s),
            Self::ToolResultChunk(c) => {
                write::chunk_head(&mut write::IntoVec(out), &c.tool_id, c.seq);
                out.extend_from_slice(c.data.as_literal().as_bytes());
                out.push(b'}');
            }
            Self::ToolResultEnd(e) => write::end(&mut write::IntoVec(out), e),
        }
        out.push(b'\n');
        Ok(out.len().saturating_sub(start))
    }

    /// The legacy [`ToolResult`], if this is one.
    pub fn into_tool_result(self) -> Option<ToolResult<'a>> {
        match self {
            Self::ToolResult(r) => Some(r),
            _ => None,
        }
    }
}

/// An event body with its `type` first.
#[derive(Serialize)]
struct Tagged<'t, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    body: &'t T,
}

#[cfg(test)]
mod tests;
