//! Typed params and results, chosen by method: the helpers that
//! [`RequestParams`](super::RequestParams),
//! [`NotificationParams`](super::NotificationParams) and
//! [`ResponseResult`](super::ResponseResult) call to decode, and the row
//! type of [`METHODS`](super::METHODS). The enums themselves, one variant
//! per method, are generated from the method table into `methods.rs`.

use super::read::{Fail, Reader};
use super::salvage::Typed;
use super::wire::{decode_text, Cx, Decode, Mode};
use super::MessageError;

/// Whether a method is a request (answered with a result) or a
/// notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// A request: the receiver answers it with a result or an error.
    Request,
    /// A notification: never answered.
    Notification,
}

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The client sends it, the agent receives it.
    ClientToAgent,
    /// The agent sends it, the client receives it.
    AgentToClient,
    /// Either side sends it (`$/cancel_request`).
    Both,
}

/// A row of [`METHODS`](super::METHODS): one method of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct MethodInfo {
    /// The method name, as in [`names`](super::names).
    pub name: &'static str,
    /// Request or notification. Every method here has typed params;
    /// a request also has a typed result
    /// ([`ResponseResult`](super::ResponseResult)).
    pub kind: MethodKind,
    /// Who sends it.
    pub direction: Direction,
    /// Whether it belongs to the unstable schema (feature `unstable`,
    /// without which it is not listed).
    pub unstable: bool,
}

impl MethodInfo {
    /// A row of the table.
    pub(super) const fn row(
        name: &'static str,
        kind: MethodKind,
        direction: Direction,
        unstable: bool,
    ) -> Self {
        Self {
            name,
            kind,
            direction,
            unstable,
        }
    }
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
pub(super) fn params<'b, T: Decode<'b>>(
    method: &'static str,
    raw: Option<&'b str>,
    mode: Mode,
) -> Result<Typed<'b, T>, MessageError> {
    decode_text(params_text(raw), mode).map_err(|why| MessageError::InvalidParams {
        method,
        error: serde::de::Error::custom(why.reason()),
    })
}

/// Decodes the params of `method` at the reader's position into `out`
/// (absent params are the caller's, `null` reads as `{}`).
pub(super) fn params_at<'b, T: Decode<'b>>(
    r: &mut Reader<'b>,
    cx: &mut Cx<'b>,
    out: &mut T,
) -> Result<(), Fail> {
    if r.null()? {
        return T::decode_in(&mut Reader::new("{}"), cx, out);
    }
    T::decode_in(r, cx, out)
}
