//! `Arbitrary` for the hand-written ACP types: ids, raw JSON, the envelope.
//! (The generated types get theirs from `src/acp/arbitrary.rs`, the typed
//! params and results from the macros that define them.)

use alloc::borrow::Cow;

use ::arbitrary::{Arbitrary, Result, Unstructured};

use crate::acp::leaf::{option, raw, text};
use crate::acp::{
    ConfigValue, ErrorResponse, Message, Notification, NotificationParams, RawJson, Request,
    RequestId, RequestParams, Response, ResponseResult, RpcError,
};
use crate::ErrorCode;

/// `null`, any 64-bit integer or any string.
impl<'u> Arbitrary<'u> for RequestId<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        Ok(match u.choose_index(3)? {
            0 => Self::Null,
            1 => Self::Number(u.arbitrary()?),
            _ => Self::Str(text(u)?),
        })
    }
}

/// A small JSON value (null, booleans, numbers, strings, arrays and objects
/// nested at most three deep), compact as encoders write it.
impl<'u> Arbitrary<'u> for RawJson<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        raw(u)
    }
}

/// A boolean or a value id.
impl<'u> Arbitrary<'u> for ConfigValue<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        Ok(if u.arbitrary()? {
            Self::Bool(u.arbitrary()?)
        } else {
            Self::Id(text(u)?)
        })
    }
}

/// The codes JSON-RPC and ACP define, and now and then any other.
impl<'u> Arbitrary<'u> for RpcError<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        const CODES: &[ErrorCode] = &[
            ErrorCode::PARSE_ERROR,
            ErrorCode::INVALID_REQUEST,
            ErrorCode::METHOD_NOT_FOUND,
            ErrorCode::INVALID_PARAMS,
            ErrorCode::INTERNAL_ERROR,
            ErrorCode::REQUEST_CANCELLED,
            ErrorCode::AUTH_REQUIRED,
            ErrorCode::RESOURCE_NOT_FOUND,
        ];
        let code = if u.ratio(1u8, 4)? {
            ErrorCode(u.arbitrary()?)
        } else {
            *u.choose(CODES)?
        };
        Ok(Self {
            code,
            message: text(u)?,
            data: option(u, raw)?,
        })
    }
}

/// A request, notification, response or error whose params or result are
/// the compact JSON of a typed value ([`RequestParams`],
/// [`NotificationParams`], [`ResponseResult`]), so that
/// [`Request::typed`], [`Notification::typed`] and [`Response::typed`] (with
/// the method of the result) decode them back to that value.
impl<'u> Arbitrary<'u> for Message<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        Ok(match u.choose_index(4)? {
            0 => {
                let id = u.arbitrary()?;
                let params: RequestParams<'static> = u.arbitrary()?;
                Self::Request(Request {
                    id,
                    method: Cow::Owned(params.method().into()),
                    params: typed_params(&params, params.has_params())?,
                })
            }
            1 => {
                let params: NotificationParams<'static> = u.arbitrary()?;
                Self::Notification(Notification {
                    method: Cow::Owned(params.method().into()),
                    params: typed_params(&params, params.has_params())?,
                })
            }
            2 => Self::Response(Response {
                id: u.arbitrary()?,
                result: to_raw_of(&ResponseResult::arbitrary(u)?)?,
            }),
            _ => Self::Error(ErrorResponse {
                id: u.arbitrary()?,
                error: u.arbitrary()?,
            }),
        })
    }
}

fn typed_params<T: serde::Serialize>(
    params: &T,
    present: bool,
) -> Result<Option<RawJson<'static>>> {
    if present {
        to_raw_of(params).map(Some)
    } else {
        Ok(None)
    }
}

/// The compact JSON of a typed value, raw parts written as they are.
fn to_raw_of<T: serde::Serialize>(value: &T) -> Result<RawJson<'static>> {
    RawJson::to_raw(value).map_err(|_| ::arbitrary::Error::IncorrectFormat)
}
