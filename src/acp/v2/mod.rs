//! ACP v2, typed (feature `v2`): every method, request, response,
//! notification, session update, content block, capability and error of
//! the v2 schema of the TypeScript SDK 2.4.0, with feature `unstable` its
//! unstable additions (not `proxy/*`). v2 is a draft: outside semver until
//! it is final.
//!
//! The types are declared from the v2 schema with v1's machinery and keep
//! its guarantees: borrowed, one pass, unknown members in `extra`, unknown
//! variants and values kept, lenient salvage reported, the same limits. A
//! type v2 keeps as v1 had it (members, wire names, member types, all the
//! way down) is v1's, re-exported; an object with `_meta` only is
//! [`MetaOnly`]. A union beside an object's own members (told by `mode`,
//! `action`, `operation`, `stopReason`, `state` or `type`) is one struct:
//! the tag an enum, every branch's members optional. The schema's maps
//! (`ElicitationSchema.properties`) and `Error.data` stay raw JSON.
//!
//! The envelope is the same as v1's ([`Message`](crate::acp::Message));
//! a connection's version is settled by its `initialize`, and the params or
//! result of a v2 message are typed with the `*_v2` methods:
//!
//! ```
//! use acp_codec::acp::v2::{RequestParams, ResponseResult, SessionUpdate, NotificationParams};
//! use acp_codec::acp::{Message, Mode};
//!
//! let line = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}"#;
//! let Message::Request(req) = Message::decode(line)? else { unreachable!() };
//! let RequestParams::Prompt(p) = req.typed_v2(Mode::Lenient)?.value else { unreachable!() };
//! assert_eq!(p.session_id, "s");
//!
//! // The answer acknowledges the prompt; the turn ends with a state update.
//! let line = r#"{"jsonrpc":"2.0","id":1,"result":{"messageId":"m1"}}"#;
//! let Message::Response(resp) = Message::decode(line)? else { unreachable!() };
//! let ResponseResult::Prompt(r) = resp.typed_v2("session/prompt", Mode::Lenient)?.value else { unreachable!() };
//! assert_eq!(r.message_id, "m1");
//! let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}"#;
//! let Message::Notification(n) = Message::decode(line)? else { unreachable!() };
//! let NotificationParams::UpdateSession(u) = n.typed_v2(Mode::Lenient)?.value else { unreachable!() };
//! let SessionUpdate::StateUpdate(state) = &u.update else { unreachable!() };
//! assert_eq!(state.stop_reason.as_ref().map(|r| r.as_str()), Some("end_turn"));
//! # Ok::<(), acp_codec::MessageError>(())
//! ```
//!
//! A `null` that clears a member in a v2 upsert stays in `extra` (the
//! member reads as absent), re-encoded as sent: `extra.get("title")` tells
//! a cleared member from an absent one.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use super::encode::encode_call;
use super::message::{Notification, Request, Response};
use super::raw::RawJson;
use super::salvage::Typed;
use super::wire::Mode;
use super::{MessageError, RequestId};
use crate::framing::EncodeError;

// `decode_known` and `blank` serve a one-pass line decoder, which v2 does
// not have yet.
#[allow(dead_code)]
mod methods;
mod types;

pub use methods::{names, NotificationParams, RequestParams, ResponseResult, METHODS};
// Every v2 type, listed in `types.rs` (generated).
pub use types::*;

impl Request<'_> {
    /// Decodes the params by v2 method (see [`RequestParams`]) in `mode`,
    /// as [`typed`](Self::typed) does by v1 method.
    ///
    /// # Errors
    ///
    /// [`MessageError::InvalidParams`] (`-32602`) when the params of a known
    /// method do not fit its schema. Unknown methods are not errors.
    pub fn typed_v2(&self, mode: Mode) -> Result<Typed<'_, RequestParams<'_>>, MessageError> {
        let params = self.params.as_ref().map(RawJson::get);
        RequestParams::decode_text(Cow::Borrowed(&self.method), params, mode)
    }
}

impl Notification<'_> {
    /// Decodes the params by v2 method (see [`NotificationParams`]) in
    /// `mode`, as [`Request::typed_v2`].
    ///
    /// # Errors
    ///
    /// [`MessageError::InvalidParams`] when the params of a known method do
    /// not fit its schema. Unknown methods are not errors.
    pub fn typed_v2(&self, mode: Mode) -> Result<Typed<'_, NotificationParams<'_>>, MessageError> {
        let params = self.params.as_ref().map(RawJson::get);
        NotificationParams::decode_text(Cow::Borrowed(&self.method), params, mode)
    }
}

impl Response<'_> {
    /// Decodes the result as the result of v2 `method` (the method of the
    /// request it answers), in `mode` as [`Request::typed_v2`].
    ///
    /// # Errors
    ///
    /// [`MessageError::InvalidResult`] when the result does not fit.
    pub fn typed_v2(
        &self,
        method: &str,
        mode: Mode,
    ) -> Result<Typed<'_, ResponseResult<'_>>, MessageError> {
        ResponseResult::decode(method, &self.result, mode)
    }
}

/// Encodes a typed v2 request as one line (as
/// [`acp::encode_request`](crate::acp::encode_request) a v1 one).
///
/// # Errors
///
/// [`EncodeError`] as [`encode_line`](crate::encode_line); `out` is left as it
/// was.
pub fn encode_request(
    id: &RequestId<'_>,
    params: &RequestParams<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError> {
    encode_call(
        Some(id),
        params.method(),
        params.has_params().then_some(params),
        out,
    )
}

/// Encodes a typed v2 notification as one line.
///
/// # Errors
///
/// [`EncodeError`] as [`encode_line`](crate::encode_line); `out` is left as it
/// was.
pub fn encode_notification(
    params: &NotificationParams<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError> {
    encode_call(
        None,
        params.method(),
        params.has_params().then_some(params),
        out,
    )
}
