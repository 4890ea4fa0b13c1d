//! Typed params and results, chosen by method: the macros that define
//! [`RequestParams`](super::RequestParams),
//! [`NotificationParams`](super::NotificationParams) and
//! [`ResponseResult`](super::ResponseResult), the helpers they call, and the
//! row type of [`METHODS`](super::METHODS). The invocations, one variant
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

/// Defines `decode_known` in a `RequestParams`, `NotificationParams` or
/// `ResponseResult` impl: one variant per method (`Variant(Type) =
/// NAME_CONSTANT`), each read by `$read(reader, cx, value)`.
macro_rules! decode_known {
    ($read:path; $( $(#[cfg($c:meta)])? $variant:ident($ty:ident) = $method:ident, )*) => {
        /// Decodes the params or result of `method` at the reader's
        /// position, in the pass over a whole line, when this version types
        /// them: `slot` is asked for the place they go, the variant is set
        /// there and its value read into it, never moved. `None`, and
        /// `slot` never called, for a method this version does not type.
        /// After an error the slot holds part of a value.
        pub(crate) fn decode_known<'s>(
            method: &str,
            r: &mut Reader<'a>,
            cx: &mut Cx<'a>,
            slot: impl FnOnce() -> &'s mut Self,
        ) -> Option<Result<(), Fail>>
        where
            'a: 's,
        {
            match method {
                $( $(#[cfg($c)])? names::$method => {
                    let out = slot();
                    *out = Self::$variant(<$ty<'a> as $crate::acp::wire::Decode<'a>>::blank());
                    let Self::$variant(v) = out else {
                        unreachable!("the variant was set just above")
                    };
                    Some($read(r, cx, v))
                } )*
                _ => None,
            }
        }
    };
}
pub(crate) use decode_known;

/// Defines `RequestParams` or `NotificationParams`: one variant per method
/// (`Variant(ParamsType) = NAME_CONSTANT`), `Ext` and `Unknown`, decoding by
/// method, and their `Serialize` and `Arbitrary`.
macro_rules! method_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident {
            $( $(#[doc = $vd:literal])* $(#[cfg($vc:meta)])? $variant:ident($ty:ident) = $method:ident, )*
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
            /// Decodes the params of `method`, one valid JSON value (absent
            /// or `null` read as `{}`), borrowing from them.
            pub(crate) fn decode_text(method: Cow<'a, str>, raw: Option<&'a str>, mode: Mode) -> Result<Typed<'a, Self>, MessageError> {
                Ok(match &*method {
                    $( $(#[cfg($vc)])? names::$method => params(names::$method, raw, mode)?.map(Self::$variant), )*
                    _ => Typed::clean(Self::other(method, raw.map(RawJson::from_validated))),
                })
            }

            /// A placeholder, overwritten by [`decode_known`](Self::decode_known).
            pub(crate) fn blank() -> Self {
                Self::Unknown { method: Cow::Borrowed(""), params: None }
            }

            $crate::acp::method::decode_known!(params_at; $( $(#[cfg($vc)])? $variant($ty) = $method, )*);

            /// An extension or unknown method's params, as sent.
            pub(crate) fn other(method: Cow<'a, str>, params: Option<RawJson<'a>>) -> Self {
                if is_extension(&method) {
                    Self::Ext { method, params }
                } else {
                    Self::Unknown { method, params }
                }
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
                            matches!($name::decode_text(Cow::Borrowed(m), None, Mode::Strict), Ok(Typed { value: $name::Unknown { .. }, .. }))
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
            /// Decodes `raw` as the result of `method`.
            pub(crate) fn decode(method: &str, raw: &'a RawJson<'_>, mode: Mode) -> Result<Typed<'a, Self>, MessageError> {
                Self::decode_text(method, raw.get(), mode)
            }

            /// Decodes `text` (one valid JSON value) as the result of
            /// `method`, borrowing from it.
            pub(crate) fn decode_text(method: &str, text: &'a str, mode: Mode) -> Result<Typed<'a, Self>, MessageError> {
                Ok(match method {
                    $( $(#[cfg($c)])? names::$method => decode_text(text, mode)
                        .map_err(|why| MessageError::InvalidResult {
                            method: names::$method,
                            error: serde::de::Error::custom(why.reason()),
                        })?
                        .map(Self::$variant), )*
                    _ => Typed::clean(Self::Other(RawJson::from_validated(text))),
                })
            }

            /// A placeholder, overwritten by [`decode_known`](Self::decode_known).
            pub(crate) fn blank() -> Self {
                Self::Other(RawJson::from_validated("null"))
            }

            $crate::acp::method::decode_known!($crate::acp::wire::Decode::decode_in; $( $(#[cfg($c)])? $variant($ty) = $method, )*);

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
