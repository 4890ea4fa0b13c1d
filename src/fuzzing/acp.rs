//! `Arbitrary` for the hand-written ACP types (ids, raw JSON, the
//! envelope) and for the generated types whose members are tied together
//! (a tag and the value it goes with, a form or a URL, a scope: declared
//! `: by_hand`). The other types, and the typed params and results, get
//! theirs from their declarations (the macros of `src/acp/decl.rs`).

use alloc::borrow::Cow;

use ::arbitrary::{Arbitrary, Result, Unstructured};

use crate::acp::leaf::{meta, option, raw, text};
#[cfg(feature = "unstable")]
use crate::acp::InitialSessionConfigOption;
use crate::acp::{
    ConfigValue, CreateElicitationRequest, CreateElicitationResponse, ElicitationAction,
    ElicitationMode, ErrorResponse, Extra, Message, Notification, NotificationParams, RawJson,
    Request, RequestId, RequestParams, Response, ResponseResult, RpcError,
    SetSessionConfigOptionRequest,
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

/// `type: "boolean"` with a boolean value, no `type` with a value id.
impl<'u> Arbitrary<'u> for SetSessionConfigOptionRequest<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        let (kind, value) = config_value(u)?;
        Ok(Self {
            session_id: text(u)?,
            config_id: text(u)?,
            kind,
            value,
            meta: option(u, meta)?,
            extra: Extra::new(),
        })
    }
}

/// `type: "boolean"` with a boolean value, no `type` with a value id.
#[cfg(feature = "unstable")]
impl<'u> Arbitrary<'u> for InitialSessionConfigOption<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        let (kind, value) = config_value(u)?;
        Ok(Self {
            config_id: text(u)?,
            kind,
            value,
            meta: option(u, meta)?,
            extra: Extra::new(),
        })
    }
}

/// A config option's `type` and the value it goes with.
fn config_value(
    u: &mut Unstructured<'_>,
) -> Result<(Option<Cow<'static, str>>, ConfigValue<'static>)> {
    Ok(if u.arbitrary()? {
        (
            Some(Cow::Borrowed("boolean")),
            ConfigValue::Bool(u.arbitrary()?),
        )
    } else {
        (None, ConfigValue::Id(text(u)?))
    })
}

/// A form carries its schema, a URL its id and address; the scope is a
/// session (with an optional tool call) or a request.
impl<'u> Arbitrary<'u> for CreateElicitationRequest<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        let form = u.arbitrary()?;
        let (session_id, tool_call_id, request_id) = if u.arbitrary()? {
            (Some(text(u)?), option(u, text)?, None)
        } else {
            (None, None, Some(u.arbitrary()?))
        };
        Ok(Self {
            message: text(u)?,
            mode: if form {
                ElicitationMode::Form
            } else {
                ElicitationMode::Url
            },
            requested_schema: if form { Some(raw(u)?) } else { None },
            elicitation_id: if form { None } else { Some(text(u)?) },
            url: if form { None } else { Some(text(u)?) },
            session_id,
            tool_call_id,
            request_id,
            meta: option(u, meta)?,
            extra: Extra::new(),
        })
    }
}

/// Only `accept` carries the values entered.
impl<'u> Arbitrary<'u> for CreateElicitationResponse<'static> {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        let action: ElicitationAction<'static> = u.arbitrary()?;
        let content = if action == ElicitationAction::Accept {
            option(u, meta)?
        } else {
            None
        };
        Ok(Self {
            action,
            content,
            meta: option(u, meta)?,
            extra: Extra::new(),
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
