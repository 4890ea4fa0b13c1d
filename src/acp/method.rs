//! Typed params and results, chosen by method: the macros that define
//! [`RequestParams`](super::RequestParams),
//! [`NotificationParams`](super::NotificationParams) and
//! [`ResponseResult`](super::ResponseResult), the helpers they call, and the
//! row type of [`METHODS`](super::METHODS). The invocations, one variant
//! per method, are generated from the method table into `methods.rs`.

use serde_json::value::RawValue;

use super::salvage::Typed;
use super::wire::{Cx, Value};
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

/// Decodes the params of `method` with serde.
pub(super) fn params<'b, T: serde::Deserialize<'b>>(
    method: &'static str,
    raw: Option<&'b str>,
) -> Result<T, MessageError> {
    serde_json::from_str(params_text(raw))
        .map_err(|error| MessageError::InvalidParams { method, error })
}

/// Decodes the params of `method` leniently: strictly first (input that
/// fits costs nothing more), then, if that failed, salvaging what does not
/// fit; the strict error when even that fails.
pub(super) fn params_lenient<'b, T: Value<'b>>(
    method: &'static str,
    raw: Option<&'b str>,
) -> Result<Typed<'b, T>, MessageError> {
    let text = params_text(raw);
    let strict = match T::decode(&mut serde_json::Deserializer::from_str(text)) {
        Ok(v) => return Ok(Typed::clean(v)),
        Err(error) => MessageError::InvalidParams { method, error },
    };
    salvage(text).ok_or(strict)
}

/// Leniently decodes `text`, one valid JSON value; `None` when it cannot
/// be typed even so.
pub(super) fn salvage<'b, T: Value<'b>>(text: &'b str) -> Option<Typed<'b, T>> {
    let raw: &'b RawValue = serde_json::from_str(text).ok()?;
    let mut cx = Cx::new();
    let value = T::lenient(raw, &mut cx).ok()?;
    Some(Typed {
        value,
        salvaged: cx.salvaged,
    })
}

/// Defines `RequestParams` or `NotificationParams`: one variant per method
/// (`Variant(ParamsType) = NAME_CONSTANT`), `Ext` and `Unknown`, decoding by
/// method, and their `Serialize` and `Arbitrary`.
macro_rules! method_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident {
            $( $(#[doc = $vd:literal])* $(#[cfg($vc:meta)])? $variant:ident($ty:ident) = $method:ident $(=> $direct:path)?, )*
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
            /// Decodes the params of `method`, borrowing from them,
            /// leniently: what does not fit the schema is salvaged and
            /// reported (see [the policy](crate::acp#lenient-by-default-strict-on-request)).
            ///
            /// # Errors
            ///
            /// [`MessageError::InvalidParams`] (the strict decoding's error)
            /// when the params of a known method cannot be typed even so: a
            /// required member missing or not fitting. Unknown and extension
            /// methods are never errors.
            pub fn decode(method: &'a str, raw: Option<&'a RawJson<'_>>) -> Result<Typed<'a, Self>, MessageError> {
                Self::decode_text_lenient(Cow::Borrowed(method), raw.map(RawJson::get))
            }

            /// Decodes the params of `method` strictly, as the schema is
            /// written: any member that does not fit is an error.
            ///
            /// # Errors
            ///
            /// [`MessageError::InvalidParams`] when the params of a known
            /// method do not fit its schema.
            pub fn decode_strict(method: &'a str, raw: Option<&'a RawJson<'_>>) -> Result<Self, MessageError> {
                Self::decode_text(Cow::Borrowed(method), raw.map(RawJson::get))
            }

            /// [`Self::decode`] from the params text, which must be one
            /// valid JSON value.
            pub(crate) fn decode_text_lenient(method: Cow<'a, str>, raw: Option<&'a str>) -> Result<Typed<'a, Self>, MessageError> {
                Ok(match &*method {
                    $( $(#[cfg($vc)])? names::$method => {
                        $( if let Some(v) = $direct(params_text(raw)) {
                            return Ok(Typed::clean(Self::$variant(v)));
                        } )?
                        params_lenient(names::$method, raw)?.map(Self::$variant)
                    } )*
                    _ => Typed::clean(Self::decode_text(method, raw)?),
                })
            }

            /// [`Self::decode`] from the params text, which must be one
            /// valid JSON value.
            pub(crate) fn decode_text(method: Cow<'a, str>, raw: Option<&'a str>) -> Result<Self, MessageError> {
                Ok(match &*method {
                    $( $(#[cfg($vc)])? names::$method => {
                        $( if let Some(v) = $direct(params_text(raw)) {
                            return Ok(Self::$variant(v));
                        } )?
                        Self::$variant(params(names::$method, raw)?)
                    } )*
                    _ => {
                        let params = raw.map(RawJson::from_validated);
                        if is_extension(&method) { Self::Ext { method, params } } else { Self::Unknown { method, params } }
                    }
                })
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
                            matches!($name::decode_text(Cow::Borrowed(m), None), Ok($name::Unknown { .. }))
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

        $crate::acp::raw::forward_into_owned!($name);
    };
}
pub(crate) use method_enum;

/// Defines `ResponseResult`: one variant per request method
/// (`Variant(ResultType) = NAME_CONSTANT`) and `Other`, decoding by method,
/// and its `Serialize` and `Arbitrary`.
macro_rules! results {
    (
        $(#[$m:meta])*
        pub enum ResponseResult {
            $( $(#[doc = $vd:literal])* $(#[cfg($c:meta)])? $variant:ident($ty:ident) = $method:ident, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        #[allow(clippy::large_enum_variant)]
        pub enum ResponseResult<'a> {
            $( $(#[doc = $vd])* $(#[cfg($c)])? $variant($ty<'a>), )*
            /// The result of an extension or unknown method, as sent.
            Other(RawJson<'a>),
        }

        impl<'a> ResponseResult<'a> {
            /// Decodes `raw` as the result of `method` strictly, as the
            /// schema is written.
            ///
            /// # Errors
            ///
            /// [`MessageError::InvalidResult`] when the result of a known
            /// method does not fit its schema.
            pub fn decode_strict(method: &str, raw: &'a RawJson<'_>) -> Result<Self, MessageError> {
                Ok(match method {
                    $( $(#[cfg($c)])? names::$method => Self::$variant(
                        serde_json::from_str(raw.get()).map_err(|error| MessageError::InvalidResult { method: names::$method, error })?,
                    ), )*
                    _ => Self::Other(raw.reborrow()),
                })
            }

            /// Decodes `raw` as the result of `method`, leniently: what does
            /// not fit the schema is salvaged and reported (see [the
            /// policy](crate::acp#lenient-by-default-strict-on-request)).
            ///
            /// # Errors
            ///
            /// [`MessageError::InvalidResult`] (the strict decoding's error)
            /// when the result of a known method cannot be typed even so.
            pub fn decode(method: &str, raw: &'a RawJson<'_>) -> Result<Typed<'a, Self>, MessageError> {
                let strict = match Self::decode_strict(method, raw) {
                    Ok(v) => return Ok(Typed::clean(v)),
                    Err(e) => e,
                };
                Ok(match method {
                    $( $(#[cfg($c)])? names::$method => salvage(raw.get()).ok_or(strict)?.map(Self::$variant), )*
                    _ => return Err(strict),
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

        $crate::acp::raw::forward_into_owned!(ResponseResult);
    };
}
pub(crate) use results;
