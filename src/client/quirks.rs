//! Agent quirks: what a client answers differently to a known agent, so that
//! the agent's tools work, keyed by the `agentInfo` the agent sends in its
//! `initialize` result (name, and a range of versions).
//!
//! ACP says how a client answers; some agents in wide use read the answer in
//! a way of their own, and a client that answers by the letter sees their
//! tools fail. Each row of [`KNOWN`] names one agent, the versions it was
//! seen in, what to do instead, why, and where upstream discussed it. An
//! agent not in the table, or one that sends no `agentInfo`, gets the
//! standard answers ([`Quirks::default`]).
//!
//! # A read of a file that does not exist
//!
//! The standard answer to `fs/read_text_file` for a missing file is the
//! JSON-RPC error `-32002` (`Resource not found`), and most agents take it
//! as "no such file". Gemini CLI (through 0.61 at least) treats a failed
//! read as "no such file" only when its SDK hands it a JavaScript `Error`
//! whose message says so; the SDK it bundles rejects with the plain error
//! object instead, so every `-32002` is taken as a failure of the tool that
//! asked. Its `write_file` reads the file first, so every new file it is
//! asked to create fails with `Error checking existing file`. Answering
//! such a read with empty text makes the write go through (as the edit of
//! an empty file): [`MissingFile::EmptyContent`].
//!
//! ```
//! use acp_codec::client::quirks::{MissingFile, Quirks};
//!
//! let gemini = Quirks::for_agent("gemini-cli", "0.61.0");
//! assert_eq!(gemini.missing_file, MissingFile::EmptyContent);
//! // What to send for `fs/read_text_file` of `/p/new.txt`, which does not exist:
//! let answer = gemini.missing_file.answer("/p/new.txt");
//! assert_eq!(answer.unwrap().content, "");
//!
//! // Anyone else gets the standard error.
//! let other = Quirks::for_agent("some-agent", "1.0.0");
//! let err = other.missing_file.answer("/p/new.txt").unwrap_err();
//! assert_eq!(err.code.0, -32002);
//! assert_eq!(err.message, "Resource not found: /p/new.txt");
//! ```
//!
//! # Orders of messages every agent may use
//!
//! What an agent does differently that a client accepts from every agent
//! needs no row: the table is for answers that must differ by agent. Each
//! such order is listed here, with where upstream met it and the test that
//! holds it.
//!
//! | order | agents | upstream | held by |
//! |---|---|---|---|
//! | `session/request_permission` for a tool call never announced by `tool_call` | Gemini CLI (through 0.61 at least) | google-gemini/gemini-cli#21783 | `TurnView`'s permission creates the tool call (`tests/integration/turn.rs`, `permission_first_creates_the_tool_call`; the recorded `gemini-cli-0.61.0-acp-turn`) |
//! | `session/request_permission` first, the `tool_call` of the same id after it | Claude's ACP adapter (`claude-agent-acp`) when its SDK asks permission before the tool use has streamed | agentclientprotocol/claude-agent-acp#820 | the `tool_call` completes the permission's tool call, no problem reported (`tests/integration/turn.rs`, `permission_before_its_tool_call_is_not_a_problem`: the recorded `claude-agent-acp-0.101.0-acp-turn`, which announces first, with each permission request moved before its `tool_call`) |

use alloc::borrow::Cow;
use alloc::format;
use core::fmt;

use crate::acp::{Implementation, RawJson, ReadTextFileResponse, RpcError};
use crate::ErrorCode;

/// How a client answers `fs/read_text_file` for a file that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum MissingFile {
    /// The standard answer: error `-32002`, `Resource not found: PATH`, with
    /// `data.uri` naming the path.
    #[default]
    ResourceNotFound,
    /// A successful read of empty text, for agents that take any error as a
    /// failure of the tool that asked (their new-file writes fail on it).
    EmptyContent,
}

impl MissingFile {
    /// The answer to a read of `path`, which does not exist.
    ///
    /// # Errors
    ///
    /// For [`MissingFile::ResourceNotFound`], the error to send.
    pub fn answer(self, path: &str) -> Result<ReadTextFileResponse<'static>, RpcError<'static>> {
        match self {
            Self::EmptyContent => Ok(ReadTextFileResponse {
                content: Cow::Borrowed(""),
                meta: None,
                extra: crate::acp::Extra::new(),
            }),
            Self::ResourceNotFound => {
                let mut err = RpcError::new(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("Resource not found: {path}"),
                );
                err.data = RawJson::to_raw(&UriData { uri: path }).ok();
                Err(err)
            }
        }
    }
}

#[derive(serde::Serialize)]
struct UriData<'a> {
    uri: &'a str,
}

/// What a client does differently for one agent. The default is the
/// protocol's standard behaviour everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Quirks {
    /// How to answer a read of a file that does not exist.
    pub missing_file: MissingFile,
}

impl Quirks {
    /// The quirks of the agent named `name` at `version` (its `agentInfo`):
    /// the first row of [`KNOWN`] that matches, else the default.
    pub fn for_agent(name: &str, version: &str) -> Self {
        KNOWN
            .iter()
            .find(|q| q.matches(name, version))
            .map_or_else(Self::default, |q| q.quirks)
    }

    /// The quirks for an `initialize` result's `agentInfo` (the default when
    /// the agent sent none).
    pub fn of(agent_info: Option<&Implementation<'_>>) -> Self {
        agent_info.map_or_else(Self::default, |i| Self::for_agent(&i.name, &i.version))
    }
}

/// One row of the quirks table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quirk {
    /// The agent's `agentInfo.name`, exactly.
    pub agent: &'static str,
    /// The versions the row applies to.
    pub versions: Versions,
    /// What to do for them.
    pub quirks: Quirks,
    /// What goes wrong with the standard answer.
    pub why: &'static str,
    /// Where upstream discussed it.
    pub upstream: &'static str,
}

impl Quirk {
    /// Whether the row applies to the agent `name` at `version`.
    pub fn matches(&self, name: &str, version: &str) -> bool {
        self.agent == name && self.versions.contains(version)
    }
}

/// The known quirks, first match wins.
pub const KNOWN: &[Quirk] = &[Quirk {
    agent: "gemini-cli",
    // Seen in 0.61.0 (tested); no release is known to fix it, so the row
    // stays open-ended: empty text works for a fixed release too.
    versions: Versions::ANY,
    quirks: Quirks {
        missing_file: MissingFile::EmptyContent,
    },
    why: "takes the -32002 error object for a failed read, so write_file of a new file fails \
          with \"Error checking existing file\"",
    upstream: "google-gemini/gemini-cli#9280, #17588 (PR #14190)",
}];

/// An inclusive range of versions; an absent bound is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Versions {
    /// The first version in the range.
    pub from: Option<Version>,
    /// The last version in the range.
    pub through: Option<Version>,
}

impl Versions {
    /// Every version, including ones that do not parse.
    pub const ANY: Self = Self {
        from: None,
        through: None,
    };

    /// Whether `version` is in the range. A version that does not parse is
    /// only in [`Versions::ANY`].
    pub fn contains(&self, version: &str) -> bool {
        if *self == Self::ANY {
            return true;
        }
        let Some(v) = Version::parse(version) else {
            return false;
        };
        self.from.is_none_or(|f| v >= f) && self.through.is_none_or(|t| v <= t)
    }
}

/// A `major.minor.patch` version; pre-release and build suffixes are
/// ignored (`0.62.0-nightly.1` is `0.62.0`).
///
/// ```
/// use acp_codec::client::quirks::Version;
///
/// assert_eq!(Version::parse("0.61.0"), Some(Version::new(0, 61, 0)));
/// assert_eq!(Version::parse("v1.2"), Some(Version::new(1, 2, 0)));
/// assert_eq!(Version::parse("0.62.0-nightly.20261101"), Some(Version::new(0, 62, 0)));
/// assert!(Version::parse("latest").is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    /// Major.
    pub major: u64,
    /// Minor.
    pub minor: u64,
    /// Patch.
    pub patch: u64,
}

impl Version {
    /// The version `major.minor.patch`.
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// Reads `1`, `1.2`, `1.2.3` (missing parts are 0), with an optional
    /// leading `v` and any `-pre` or `+build` suffix; `None` otherwise.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.strip_prefix('v').unwrap_or(text);
        let core = text.split(['-', '+']).next().unwrap_or(text);
        let mut parts = core.split('.');
        let mut next = |required: bool| match parts.next() {
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok(),
            None if !required => Some(0),
            _ => None,
        };
        let version = Self::new(next(true)?, next(false)?, next(false)?);
        parts.next().is_none().then_some(version)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let r = Versions {
            from: Some(Version::new(0, 10, 0)),
            through: Some(Version::new(0, 61, 9)),
        };
        assert!(r.contains("0.10.0"));
        assert!(r.contains("0.61.0"));
        assert!(r.contains("0.61.9-nightly"));
        assert!(!r.contains("0.62.0"));
        assert!(!r.contains("0.9.99"));
        assert!(!r.contains("dev"));
        assert!(Versions::ANY.contains("dev"));
        assert!(Versions::ANY.contains(""));
    }

    #[test]
    fn parse_rejects_junk() {
        for bad in ["", ".", "1.", "1..2", "1.2.3.4", "a.b", "1.x", "-1"] {
            assert_eq!(Version::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn table_rows_match_their_agent_only() {
        for q in KNOWN {
            assert!(q.matches(q.agent, "0.61.0"));
            assert!(!q.matches("another-agent", "0.61.0"));
            assert!(!q.why.is_empty() && !q.upstream.is_empty());
        }
        assert_eq!(Quirks::for_agent("Gemini-CLI", "0.61.0"), Quirks::default());
    }

    /// Qwen Code is a fork of Gemini CLI but has no row: its ACP file
    /// system maps `-32002` to ENOENT before its tools see it, and its
    /// `write_file` checks for a new file itself, never asking the client
    /// to read it (seen in 0.24.4: `scripts/interop_qwen.sh` and
    /// `tests/fixtures/sessions/qwen-code-0.24.4-acp-turn`). Its known
    /// new-file bug, QwenLM/qwen-code#2294, is on the write side: a client
    /// that refuses `fs/write_text_file` for a file that does not exist yet;
    /// a client that creates the file (as it should) does not meet it.
    #[test]
    fn qwen_code_gets_the_standard_answers() {
        assert_eq!(Quirks::for_agent("qwen-code", "0.24.4"), Quirks::default());
    }

    #[test]
    fn standard_answer_names_the_path() {
        let err = MissingFile::ResourceNotFound
            .answer("/tmp/a \"b\".txt")
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(err.data.unwrap().get(), r#"{"uri":"/tmp/a \"b\".txt"}"#);
    }
}
