//! `Arbitrary` for the stream-json events and the chunked tool-result
//! frames.
//!
//! Events borrow their raw parts (`parameters`, `stats`, a chunk's `data`
//! literal, an unknown event's line) and there is no owned form of them, so
//! these impls borrow from the fuzzer's input: a raw part is the input's
//! next bytes when they already are what the field needs (a fuzzer soon
//! learns to write JSON there), and otherwise one of a few fixed samples.
//! Text is any UTF-8, borrowed from the input.

use ::arbitrary::{Arbitrary, Result, Unstructured};
use serde_json::value::RawValue;

use crate::chunk::{ToolResultChunk, ToolResultEnd, ToolResultStart};
use crate::stream_json::{
    ErrorEvent, Event, Init, JsonStr, MessageEvent, ResultEvent, Status, Text, ToolError,
    ToolResult, ToolUse,
};

/// Raw JSON samples for `parameters` and `stats`: what Gemini CLI sends,
/// plus escapes, nesting and every kind of value but `null` (which reads
/// as an absent member).
const RAW_SAMPLES: &[&str] = &[
    "{}",
    r#"{"command":"ls -la","dir_path":"/tmp"}"#,
    r#"{"absolute_path":"/p/a b.txt","offset":0,"limit":2000}"#,
    r#"{"models":{"gemini-2.5-pro":{"tokens":{"input":10,"output":2.5}}},"total_tokens":12}"#,
    r#"{"nested":{"a":[{"b":"\u00e9\n\"q\""}],"c":[]},"d":true}"#,
    r#"[1,-2.5e3,"x",null,false]"#,
    r#""plain""#,
    "0",
];

/// `data` literals: empty, plain, escaped, multi-byte.
const DATA_SAMPLES: &[&str] = &[
    r#""""#,
    r#""hello""#,
    r#""line\nnext\t\u0001 \"q\" \\ \u00e9""#,
    r#""☃ snow 🦀""#,
];

/// Events of types this crate does not know, as a later Gemini CLI might
/// write them.
const UNKNOWN_SAMPLES: &[&str] = &[
    r#"{"type":"thought","timestamp":"2025-01-01T00:00:00.000Z","subject":"Planning","description":"x"}"#,
    r#"{"type":"x_future","payload":[1,{"a":null}]}"#,
    r#"{"type":"tool_result_progress","tool_id":"t-1","percent":50}"#,
];

fn text<'a>(u: &mut Unstructured<'a>) -> Result<Text<'a>> {
    <&'a str>::arbitrary(u).map(Text::borrowed)
}

fn opt_text<'a>(u: &mut Unstructured<'a>) -> Result<Option<Text<'a>>> {
    Ok(if u.arbitrary()? { Some(text(u)?) } else { None })
}

/// A raw value that re-encodes as itself on one line: the input's next
/// bytes when they are one JSON value other than `null` without line
/// breaks, else a sample.
fn raw_value<'a>(u: &mut Unstructured<'a>) -> Result<&'a RawValue> {
    let candidate = <&'a str>::arbitrary(u)?;
    if let Ok(raw) = serde_json::from_str::<&'a RawValue>(candidate) {
        if raw.get() != "null" && !raw.get().contains(['\n', '\r']) {
            return Ok(raw);
        }
    }
    let sample: &'static str = u.choose(RAW_SAMPLES)?;
    serde_json::from_str(sample).map_err(|_| ::arbitrary::Error::IncorrectFormat)
}

fn opt_raw<'a>(u: &mut Unstructured<'a>) -> Result<Option<&'a RawValue>> {
    Ok(if u.arbitrary()? {
        Some(raw_value(u)?)
    } else {
        None
    })
}

/// `"success"` or `"error"`.
impl<'a> Arbitrary<'a> for Status {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(if u.arbitrary()? {
            Self::Success
        } else {
            Self::Error
        })
    }
}

impl<'a> Arbitrary<'a> for ToolError<'a> {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Self {
            kind: text(u)?,
            message: text(u)?,
        })
    }
}

impl<'a> Arbitrary<'a> for ToolResult<'a> {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Self {
            timestamp: opt_text(u)?,
            tool_id: text(u)?,
            status: u.arbitrary()?,
            output: opt_text(u)?,
            error: u.arbitrary()?,
        })
    }
}

impl<'a> Arbitrary<'a> for ToolResultStart<'a> {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Self {
            timestamp: opt_text(u)?,
            tool_id: text(u)?,
            status: u.arbitrary()?,
            total_bytes: u.arbitrary()?,
            error: u.arbitrary()?,
        })
    }
}

/// `data` is the input's next bytes when they are a JSON string literal,
/// else a sample literal.
impl<'a> Arbitrary<'a> for ToolResultChunk<'a> {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let tool_id = text(u)?;
        let seq = u.arbitrary()?;
        let candidate = <&'a str>::arbitrary(u)?;
        let data = match JsonStr::from_literal(candidate) {
            Ok(data) => data,
            Err(_) => JsonStr::from_literal(u.choose(DATA_SAMPLES)?)
                .map_err(|_| ::arbitrary::Error::IncorrectFormat)?,
        };
        Ok(Self { tool_id, seq, data })
    }
}

impl<'a> Arbitrary<'a> for ToolResultEnd<'a> {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Self {
            tool_id: text(u)?,
            chunks: u.arbitrary()?,
            total_bytes: u.arbitrary()?,
        })
    }
}

/// Any event, the three chunk frames included, or an event of an unknown
/// type (the input's next bytes when they decode as one, else a sample).
impl<'a> Arbitrary<'a> for Event<'a> {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match u.choose_index(10)? {
            0 => Self::Init(Init {
                timestamp: opt_text(u)?,
                session_id: text(u)?,
                model: text(u)?,
            }),
            1 => Self::Message(MessageEvent {
                timestamp: opt_text(u)?,
                role: text(u)?,
                content: text(u)?,
                delta: u.arbitrary()?,
            }),
            2 => Self::ToolUse(ToolUse {
                timestamp: opt_text(u)?,
                tool_name: text(u)?,
                tool_id: text(u)?,
                parameters: opt_raw(u)?,
            }),
            3 => Self::ToolResult(u.arbitrary()?),
            4 => Self::Error(ErrorEvent {
                timestamp: opt_text(u)?,
                severity: text(u)?,
                message: text(u)?,
            }),
            5 => Self::Result(ResultEvent {
                timestamp: opt_text(u)?,
                status: u.arbitrary()?,
                error: u.arbitrary()?,
                stats: opt_raw(u)?,
            }),
            6 => Self::ToolResultStart(u.arbitrary()?),
            7 => Self::ToolResultChunk(u.arbitrary()?),
            8 => Self::ToolResultEnd(u.arbitrary()?),
            _ => unknown_event(u)?,
        })
    }
}

/// An event of an unknown type on one line.
fn unknown_event<'a>(u: &mut Unstructured<'a>) -> Result<Event<'a>> {
    let candidate = <&'a str>::arbitrary(u)?;
    if !candidate.contains(['\n', '\r']) {
        if let Ok(event @ Event::Unknown(_)) = Event::decode(candidate) {
            return Ok(event);
        }
    }
    match Event::decode(u.choose(UNKNOWN_SAMPLES)?) {
        Ok(event @ Event::Unknown(_)) => Ok(event),
        _ => Err(::arbitrary::Error::IncorrectFormat),
    }
}
