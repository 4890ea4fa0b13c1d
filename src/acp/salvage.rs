//! What lenient decoding gives: the typed value, and a report of each part
//! of the input it salvaged instead of failing.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::raw::{IntoOwned, RawJson};

/// Typed params or a typed result, with every [`Salvage`] lenient decoding
/// made to get them (none for input that fits the schema).
///
/// ```
/// use acp_codec::acp::Mode;
/// use acp_codec::acp::{decode_line, Incoming, NotificationParams, SalvageKind, SessionUpdate};
///
/// // `used` is required and must be an integer: the update cannot be typed,
/// // so it is kept raw, and the line still decodes.
/// let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":null,"size":1000}}}"#;
/// let Incoming::Notification(typed) = decode_line(line, Mode::Lenient)? else { unreachable!() };
/// let NotificationParams::SessionUpdate(n) = &typed.value else { unreachable!() };
/// assert!(matches!(n.update, SessionUpdate::Unknown(_)));
/// let s = &typed.salvaged[0];
/// assert_eq!((s.path.as_str(), s.kind), ("/update", SalvageKind::UnknownVariant));
/// assert_eq!(s.to_string(), "/update: kept as unknown: invalid type: null, expected u64");
/// # Ok::<(), acp_codec::MessageError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Typed<'a, T> {
    /// The typed value.
    pub value: T,
    /// What was salvaged to get it, in input order; empty when the input
    /// fit the schema.
    pub salvaged: Vec<Salvage<'a>>,
}

impl<'a, T> Typed<'a, T> {
    /// A value nothing was salvaged for.
    pub fn clean(value: T) -> Self {
        Self {
            value,
            salvaged: Vec::new(),
        }
    }

    /// Whether the input fit the schema (nothing salvaged).
    pub fn is_clean(&self) -> bool {
        self.salvaged.is_empty()
    }

    /// The value, dropping the report.
    pub fn into_value(self) -> T {
        self.value
    }

    /// The same report with the value mapped.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Typed<'a, U> {
        Typed {
            value: f(self.value),
            salvaged: self.salvaged,
        }
    }
}

impl<T: IntoOwned> Typed<'_, T> {
    /// The value and report with all borrowed text copied (`'static`).
    pub fn into_owned(self) -> Typed<'static, T::Owned> {
        Typed {
            value: self.value.into_owned(),
            salvaged: self.salvaged.into_iter().map(Salvage::into_owned).collect(),
        }
    }
}

/// One place where lenient decoding kept going instead of failing: where,
/// what it did, why, and the value as sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Salvage<'a> {
    /// Where, as a JSON Pointer from the params (or result) object:
    /// `/update/locations/0`.
    pub path: String,
    /// What was done.
    pub kind: SalvageKind,
    /// Why the value did not fit (the decoding error, lowercase).
    pub reason: String,
    /// The value as sent.
    pub raw: RawJson<'a>,
}

impl Salvage<'_> {
    /// The report with its text copied (`'static`).
    pub fn into_owned(self) -> Salvage<'static> {
        Salvage {
            path: self.path,
            kind: self.kind,
            reason: self.reason,
            raw: self.raw.into_owned(),
        }
    }
}

/// `"{path}: {what was done}: {reason}"`.
impl fmt::Display for Salvage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.path, self.kind, self.reason)
    }
}

/// What lenient decoding did with a value that did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SalvageKind {
    /// An optional member was decoded as absent; its value is kept in the
    /// struct's [`Extra`](super::Extra) and re-encoded as sent.
    MemberDropped,
    /// An item of a list was left out of the typed list.
    ItemSkipped,
    /// A known variant (`sessionUpdate`, content `type`, …) was kept as its
    /// union's `Unknown` variant, raw, and re-encodes as sent.
    UnknownVariant,
}

impl fmt::Display for SalvageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MemberDropped => "member dropped",
            Self::ItemSkipped => "list item skipped",
            Self::UnknownVariant => "kept as unknown",
        })
    }
}
