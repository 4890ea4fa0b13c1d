//! Version negotiation, sans-IO: which protocol version a connection
//! speaks, read from its first `initialize`, and the rewrite of
//! `initialize`'s members between ACP v1 and v2.
//!
//! ACP numbers its major versions with one integer. The client asks for
//! the latest it speaks; the agent answers with the highest version it
//! speaks at or below the one asked, or, when it speaks none, with error
//! `-32022` ("Unsupported protocol version", data
//! `{"requested": N, "supported": [...]}`). That version holds for the
//! whole connection: [`Dialect`] says how to decode the rest of it.
//!
//! A [`Negotiator`] is an agent's side of it (or a proxy's, on the agent's
//! behalf): give it each line the client sends ([`Negotiator::handle_line`])
//! and act on the [`Step`] it returns. Before a valid `initialize`:
//! a notification or a response is ignored, any other request is refused
//! with `-32600`, a line that is not a message (a batch, text that is not
//! JSON) gets its decoding error's code with id `null`, and an
//! `initialize` whose `protocolVersion` is not an integer from 0 to 65535
//! gets `-32602`; none of these changes the state, so the client may send
//! `initialize` again. Once negotiated, every line comes back as
//! [`Step::Pass`] with its dialect, except a repeated `initialize`: one
//! that chooses the same dialect is answered again
//! ([`Step::Initialize`] with `repeated`), one that would choose another
//! gets `-32600` (a connection never changes version).
//!
//! v2 renames `initialize`'s role-specific members: the client's
//! `clientCapabilities` and `clientInfo` and the agent's
//! `agentCapabilities` and `agentInfo` are `capabilities` and `info` on
//! both sides. [`rewrite_initialize`] renames them in the params or result
//! text, and sets `protocolVersion` to the target's; every other byte is
//! kept as sent (the members' values included), so a rewrite there and
//! back gives the same text. It does not reshape the capabilities' values
//! (v1's booleans are v2's objects, v1's `promptCapabilities` is v2's
//! `session.prompt`, v2 has no `fs` nor `terminal`): a v2 peer sees v1's
//! capabilities as unknown members, which it ignores. Translating them
//! with their meaning is a translator's job, above this one.
//!
//! ```
//! use acp_codec::version::{Dialect, Negotiator, Step};
//!
//! let mut negotiator = Negotiator::new(&[Dialect::V1, Dialect::V2]);
//! // A client that speaks up to version 3, in v2's words.
//! let first = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":3,"info":{"name":"ed","version":"1"}}}"#;
//! let Step::Initialize(init) = negotiator.handle_line(first) else { unreachable!() };
//! assert_eq!((init.asked, init.dialect, init.written_as), (3, Dialect::V2, Dialect::V2));
//! // The rest of the connection is v2.
//! let next = r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}"#;
//! assert!(matches!(negotiator.handle_line(next), Step::Pass { dialect: Dialect::V2, .. }));
//!
//! // A v1-only agent refuses a client that asks for version 0.
//! let mut v1_only = Negotiator::new(&[Dialect::V1]);
//! let old = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":0}}"#;
//! let Step::Refuse { error, .. } = v1_only.handle_line(old) else { unreachable!() };
//! assert_eq!(error.code.0, -32022);
//! assert_eq!(error.data.unwrap().get(), r#"{"requested":0,"supported":[1]}"#);
//! ```
//!
//! # Against the TypeScript SDK's `AgentProtocolRouter`
//!
//! The official TypeScript SDK (2.4.0) picks a version with its
//! `AgentProtocolRouter`, which reads a connection until a valid
//! `initialize` and hands the connection to a v1 or a v2 implementation.
//! The cases it documents, and what differs here:
//!
//! | case | `AgentProtocolRouter` | here |
//! |---|---|---|
//! | a batch (a JSON array) before `initialize` | one `-32600` with id `null` | the same |
//! | a request other than `initialize` first | `-32600`, connection kept | the same |
//! | a notification or a response first | ignored | the same |
//! | `protocolVersion` not an integer from 0 to 65535 | `-32602`; `2.0` counts as an integer (a JavaScript number) | `-32602`, `2.0` and `2e0` included (the schema's `uint16`, as serde reads it) |
//! | a newer version asked than spoken | the highest spoken at or below it | the same |
//! | an older version asked than any spoken | `-32022` with `{requested, supported}`; a v1-only endpoint answers v1 whatever is asked (v1's rule: the latest it speaks) | `-32022` always: one rule, the v2 schema's |
//! | a repeated `initialize` | handed to the chosen implementation, never re-routed; v2 accepts one asking v2 or newer before any other request, `-32600` for a lower one | answered again when it chooses the same dialect (at any time), `-32600` otherwise |
//! | the first `initialize` on v2 with a `null` id | `-32600` with id `null` | the same |
//! | params written for another version | parsed and re-serialized: what does not parse is dropped, a missing v2 `info` becomes `{"name":"unknown","version":"unknown"}`, v1 capabilities are filled from v2's (`fs` and `terminal` false) | kept as sent ([`Initialize::params`], [`Initialize::written_as`]); [`rewrite_initialize`] renames the members, nothing dropped nor invented |
//! | `initialize` without params, or params not an object | `-32602` | the same |
//! | a line after `initialize` | forwarded unchanged to the chosen implementation, whose connection answers a batch with one `-32600` | [`Step::Pass`] with the envelope; a batch (`-32600`) or text that is not JSON (`-32700`) is refused with id `null`, as before `initialize` |
//! | what it is | a router over async streams, for agents | a state machine over lines: for agents, proxies and bridges; the caller routes |

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::error_code::ErrorCode;
use crate::json::scan::{key_at, skip_value, skip_ws};
use crate::json::unescape::unquote;

use crate::acp::{Message, RawJson, RequestId, RpcError, Side};

/// A protocol version this crate knows how to decode: what the rest of a
/// connection is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Dialect {
    /// ACP v1 (`protocolVersion: 1`): the [`acp`](crate::acp) types.
    V1,
    /// ACP v2 (`protocolVersion: 2`), a draft.
    V2,
}

impl Dialect {
    /// Every dialect, oldest first.
    pub const ALL: [Self; 2] = [Self::V1, Self::V2];

    /// The `protocolVersion` number.
    pub const fn version(self) -> u16 {
        match self {
            Self::V1 => 1,
            Self::V2 => 2,
        }
    }

    /// The dialect of `protocolVersion` `version`; `None` for others.
    pub const fn from_version(version: u16) -> Option<Self> {
        match version {
            1 => Some(Self::V1),
            2 => Some(Self::V2),
            _ => None,
        }
    }

    /// The member names an `initialize` asking for `asked` is written
    /// with: v2's from 2 up (a newer version is taken to keep them), v1's
    /// below.
    pub const fn written_by(asked: u16) -> Self {
        if asked >= 2 {
            Self::V2
        } else {
            Self::V1
        }
    }

    /// The names of `side`'s capabilities and implementation members in
    /// `initialize`.
    const fn names(self, side: Side) -> [&'static str; 2] {
        match (self, side) {
            (Self::V1, Side::Client) => ["clientCapabilities", "clientInfo"],
            (Self::V1, Side::Agent) => ["agentCapabilities", "agentInfo"],
            (Self::V2, _) => ["capabilities", "info"],
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.version())
    }
}

/// The dialect an endpoint that speaks `spoken` answers an `initialize`
/// asking for `asked` with: the highest at or below it; `None` when there
/// is none (answer `-32022`).
///
/// ```
/// use acp_codec::version::{choose, Dialect};
///
/// assert_eq!(choose(&[Dialect::V1, Dialect::V2], 7), Some(Dialect::V2));
/// assert_eq!(choose(&[Dialect::V2], 1), None);
/// ```
pub fn choose(spoken: &[Dialect], asked: u16) -> Option<Dialect> {
    spoken
        .iter()
        .copied()
        .filter(|d| d.version() <= asked)
        .max()
}

/// The first `initialize` accepted (or a repeat of it): answer `id` with
/// `dialect`'s version.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Initialize<'a> {
    /// The request's id, to answer with.
    pub id: RequestId<'a>,
    /// The `protocolVersion` the client asked for.
    pub asked: u16,
    /// The version chosen, which the rest of the connection speaks.
    pub dialect: Dialect,
    /// The names the params use ([`Dialect::written_by`] the version
    /// asked): when it is not `dialect`, [`rewrite_initialize`] gives
    /// params `dialect`'s decoder reads.
    pub written_as: Dialect,
    /// The params, as sent.
    pub params: RawJson<'a>,
    /// Whether the connection was negotiated already (this `initialize`
    /// chose the same dialect again).
    pub repeated: bool,
}

/// What to do with a line from the client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Step<'a> {
    /// An `initialize` accepted: answer it with its dialect's version.
    Initialize(Initialize<'a>),
    /// Answer `id` with `error`; the negotiation's state is unchanged.
    Refuse {
        /// The id to answer (`null` when the line has none the client can
        /// match).
        id: RequestId<'a>,
        /// The error to answer with.
        error: RpcError<'static>,
    },
    /// Nothing to answer: a notification or a response before
    /// `initialize`.
    Ignore,
    /// The connection is negotiated: decode `message` as `dialect`.
    Pass {
        /// The connection's dialect.
        dialect: Dialect,
        /// The line's envelope (its params and result raw).
        message: Message<'a>,
    },
}

/// An endpoint's side of version negotiation: the versions it speaks and
/// the one chosen. See the [module docs](self) for the rules.
#[derive(Debug, Clone)]
pub struct Negotiator {
    /// The dialects spoken.
    spoken: Vec<Dialect>,
    chosen: Option<Dialect>,
}

impl Negotiator {
    /// A negotiator for an endpoint that speaks `spoken` (an endpoint that
    /// speaks none refuses every `initialize` with `-32022`).
    pub fn new(spoken: &[Dialect]) -> Self {
        Self {
            spoken: spoken.to_vec(),
            chosen: None,
        }
    }

    /// The dialect chosen, once an `initialize` was accepted.
    pub fn dialect(&self) -> Option<Dialect> {
        self.chosen
    }

    /// What to do with `line`, a line the client sent.
    pub fn handle_line<'a>(&mut self, line: &'a str) -> Step<'a> {
        let message = match Message::decode(line) {
            Ok(m) => m,
            Err(e) => {
                return Step::Refuse {
                    id: RequestId::Null,
                    error: RpcError::new(e.code(), format!("{e}")),
                }
            }
        };
        let request = match message {
            Message::Request(r) if r.method == "initialize" => r,
            message => {
                return match (self.chosen, message) {
                    (Some(dialect), message) => Step::Pass { dialect, message },
                    (None, Message::Request(r)) => Step::Refuse {
                        id: r.id,
                        error: RpcError::new(
                            ErrorCode::INVALID_REQUEST,
                            format!("the first request must be initialize, got {}", r.method),
                        ),
                    },
                    (None, _) => Step::Ignore,
                }
            }
        };
        let params = request.params.unwrap_or(RawJson::from_validated("null"));
        let asked = match asked_version(params.get()) {
            Ok(v) => v,
            Err(why) => {
                return Step::Refuse {
                    id: request.id,
                    error: RpcError::new(ErrorCode::INVALID_PARAMS, why),
                }
            }
        };
        let Some(dialect) = choose(&self.spoken, asked) else {
            return Step::Refuse {
                id: request.id,
                error: self.unsupported(asked),
            };
        };
        if dialect == Dialect::V2 && request.id == RequestId::Null {
            return Step::Refuse {
                id: RequestId::Null,
                error: RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    "an acp v2 request id must be a string or an integer",
                ),
            };
        }
        let repeated = self.chosen.is_some();
        if let Some(chosen) = self.chosen.filter(|&c| c != dialect) {
            return Step::Refuse {
                id: request.id,
                error: RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "initialize asks for protocol version {asked}, which chooses {dialect}; this connection speaks {chosen}"
                    ),
                ),
            };
        }
        self.chosen = Some(dialect);
        Step::Initialize(Initialize {
            id: request.id,
            asked,
            dialect,
            written_as: Dialect::written_by(asked),
            params,
            repeated,
        })
    }

    /// The `-32022` answer to an `initialize` asking for `asked`.
    fn unsupported(&self, asked: u16) -> RpcError<'static> {
        let mut versions: Vec<u16> = self.spoken.iter().map(|d| d.version()).collect();
        versions.sort_unstable();
        versions.dedup();
        let supported: Vec<String> = versions.iter().map(|v| format!("{v}")).collect();
        let data = format!(
            r#"{{"requested":{asked},"supported":[{}]}}"#,
            supported.join(",")
        );
        let mut error = RpcError::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        );
        error.data = Some(RawJson::from_validated(&data).into_owned());
        error
    }
}

/// The `protocolVersion` of `initialize`'s params (validated JSON): an
/// integer from 0 to 65535, written without fraction nor exponent.
fn asked_version(params: &str) -> Result<u16, String> {
    let not_object = |_| String::from("initialize params must be an object");
    let mut walk = Walk::open(params).map_err(not_object)?;
    let mut found = None;
    while let Some(member) = walk.next(params).map_err(not_object)? {
        if member.name == "protocolVersion" {
            if found.is_some() {
                return Err("initialize params hold protocolVersion twice".into());
            }
            found = Some(member.value);
        }
    }
    let value = found.ok_or("initialize params must hold protocolVersion")?;
    value
        .bytes()
        .all(|c| c.is_ascii_digit())
        .then(|| value.parse::<u16>().ok())
        .flatten()
        .ok_or_else(|| format!("protocolVersion must be an integer from 0 to 65535, got {value}"))
}

/// One member of an object, where it stands in the text.
struct Member<'a> {
    /// The key, unescaped.
    name: Cow<'a, str>,
    /// The key's token (quotes included): its byte range.
    key: (usize, usize),
    /// The value's byte range.
    value_at: (usize, usize),
    /// The value's text.
    value: &'a str,
}

/// A walk over an object's members, in order.
struct Walk {
    /// Where the next member (or the closing brace) is looked for; after
    /// the closing brace, the offset after it.
    pos: usize,
    first: bool,
}

impl Walk {
    /// Starts on the object `text`; `Err(offset)` when it is not one.
    fn open(text: &str) -> Result<Self, usize> {
        let b = text.as_bytes();
        let open = skip_ws(b, 0);
        if b.get(open) != Some(&b'{') {
            return Err(open);
        }
        Ok(Self {
            pos: open.saturating_add(1),
            first: true,
        })
    }

    /// The next member; `None` after the closing brace, `Err(offset)` where
    /// the text is not JSON.
    fn next<'a>(&mut self, text: &'a str) -> Result<Option<Member<'a>>, usize> {
        let b = text.as_bytes();
        let mut i = skip_ws(b, self.pos);
        match b.get(i) {
            Some(b'}') => {
                self.pos = i.saturating_add(1);
                return Ok(None);
            }
            Some(b',') if !self.first => i = skip_ws(b, i.saturating_add(1)),
            Some(b'"') if self.first => {}
            _ => return Err(i),
        }
        self.first = false;
        let (token, value_at) = key_at(b, i).map_err(|e| e.offset)?;
        let key_end = i.saturating_add(token.len());
        let end = skip_value(b, value_at).map_err(|e| e.offset)?;
        let (Some(token), Some(value)) = (text.get(i..key_end), text.get(value_at..end)) else {
            return Err(i);
        };
        let name = unquote::<serde_json::Error>(token).map_err(|_| i)?;
        self.pos = end;
        Ok(Some(Member {
            name,
            key: (i, key_end),
            value_at: (value_at, end),
            value,
        }))
    }
}

/// Why [`rewrite_initialize`] could not rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VersionError {
    /// The text is not a JSON object; the byte offset where it stops
    /// being one.
    NotAnObject {
        /// The byte offset.
        at: usize,
    },
    /// The text holds a member under a name the rewrite would give another
    /// one (a v1 object with an unknown `info`, a v2 one with a
    /// `clientInfo`): renaming would merge them, and renaming back could
    /// not tell them apart.
    Taken {
        /// The member's name.
        name: &'static str,
    },
    /// The text is not followed only by whitespace.
    Trailing {
        /// The byte offset of what follows.
        at: usize,
    },
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnObject { at } => write!(f, "not a json object at byte {at}"),
            Self::Taken { name } => write!(
                f,
                "member `{name}` is already taken by a member the rewrite leaves alone"
            ),
            Self::Trailing { at } => write!(f, "text after the json object at byte {at}"),
        }
    }
}

impl core::error::Error for VersionError {}

impl VersionError {
    /// The JSON-RPC code for answering with this error: `-32602`.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::INVALID_PARAMS
    }
}

/// Rewrites `side`'s `initialize` params (the client's) or result (the
/// agent's), `text`, from `from`'s member names to `to`'s, into `out`
/// (appended): `clientCapabilities`/`agentCapabilities` and
/// `clientInfo`/`agentInfo` in v1 are `capabilities` and `info` in v2.
/// `protocolVersion`'s value becomes `to`'s version. Every other byte is
/// kept: the renamed members' values, the other members, their order,
/// whitespace, a renamed key's place (a renamed key written with escapes
/// is written plain). So rewriting from `a` to `b` and back gives `text`
/// again when its `protocolVersion` was written as `a`'s version.
///
/// ```
/// use acp_codec::version::{rewrite_initialize, Dialect};
/// use acp_codec::acp::Side;
///
/// let v1 = r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}},"clientInfo":{"name":"zed","version":"0.1"},"_meta":{"a":1}}"#;
/// let mut v2 = String::new();
/// rewrite_initialize(v1, Side::Client, Dialect::V1, Dialect::V2, &mut v2)?;
/// assert_eq!(v2, r#"{"protocolVersion":2,"capabilities":{"fs":{"readTextFile":true}},"info":{"name":"zed","version":"0.1"},"_meta":{"a":1}}"#);
/// let mut back = String::new();
/// rewrite_initialize(&v2, Side::Client, Dialect::V2, Dialect::V1, &mut back)?;
/// assert_eq!(back, v1);
/// # Ok::<(), acp_codec::version::VersionError>(())
/// ```
///
/// # Errors
///
/// [`VersionError::NotAnObject`] when `text` is not a JSON object (what
/// was appended to `out` is taken back), [`VersionError::Taken`] when it
/// holds a member under one of `to`'s names that is not one of `from`'s
/// (or under one of `from`'s names that the rewrite back would take for a
/// renamed one), [`VersionError::Trailing`] when text follows the object.
pub fn rewrite_initialize(
    text: &str,
    side: Side,
    from: Dialect,
    to: Dialect,
    out: &mut String,
) -> Result<(), VersionError> {
    let start = out.len();
    let result = rewrite_into(text, side, from, to, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn rewrite_into(
    text: &str,
    side: Side,
    from: Dialect,
    to: Dialect,
    out: &mut String,
) -> Result<(), VersionError> {
    let (old, new) = (from.names(side), to.names(side));
    let not_object = |at| VersionError::NotAnObject { at };
    let mut walk = Walk::open(text).map_err(not_object)?;
    let mut copied = 0usize;
    while let Some(member) = walk.next(text).map_err(not_object)? {
        let renamed = old.iter().position(|n| *n == member.name);
        if renamed.is_none() {
            // A member under a name of the target's that is not one of
            // the source's would be taken for a renamed one.
            if let Some(name) = new.iter().find(|n| **n == member.name) {
                return Err(VersionError::Taken { name });
            }
        }
        // The span replaced, and what it becomes.
        let (span, with) = match renamed.and_then(|i| new.get(i)) {
            Some(name) => (member.key, format!("\"{name}\"")),
            None if member.name == "protocolVersion" => {
                (member.value_at, format!("{}", to.version()))
            }
            None => continue,
        };
        out.push_str(text.get(copied..span.0).unwrap_or_default());
        out.push_str(&with);
        copied = span.1;
    }
    let after = skip_ws(text.as_bytes(), walk.pos);
    if after != text.len() {
        return Err(VersionError::Trailing { at: after });
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_of_params() {
        assert_eq!(asked_version(r#"{"protocolVersion":2}"#), Ok(2));
        assert!(asked_version(r#"{"protocolVersion":2.0}"#).is_err());
        assert!(asked_version(r#"{"protocolVersion":-1}"#).is_err());
        assert!(asked_version(r#"{"protocolVersion":65536}"#).is_err());
        assert!(asked_version(r#"{"protocolVersion":"2"}"#).is_err());
        assert!(asked_version(r#"{"protocolVersion":1,"protocolVersion":2}"#).is_err());
        assert!(asked_version("[]").is_err());
    }

    #[test]
    fn an_escaped_key_is_read_as_its_name() {
        let mut out = String::new();
        let text = r#"{"client\u0049nfo":{},"protocolVersion" : 1 }"#;
        rewrite_initialize(text, Side::Client, Dialect::V1, Dialect::V2, &mut out).unwrap();
        assert_eq!(out, r#"{"info":{},"protocolVersion" : 2 }"#);
    }
}
