//! Leaf generators shared by every `Arbitrary` impl of the crate: text, small
//! JSON values, finite floats, bounded lists, unknown words and objects.
//!
//! Each one produces only values that survive an encode/decode round trip
//! unchanged, so the types built from them do too.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use ::arbitrary::{Arbitrary, Error, Result, Unstructured};
use serde_json::{Map, Number, Value};

use super::RawJson;

/// The most items a generated list holds: enough for every shape
/// (empty, one, several), small enough to keep inputs cheap.
pub(crate) const MAX_LIST: usize = 6;

/// How deep a generated JSON value nests.
const MAX_JSON_DEPTH: u8 = 3;

/// How deep the values inside a generated object nest.
const MAX_MEMBER_DEPTH: u8 = 2;

/// Any UTF-8 text: escaping it is the encoder's job.
pub(crate) fn text(u: &mut Unstructured<'_>) -> Result<Cow<'static, str>> {
    String::arbitrary(u).map(Cow::Owned)
}

/// Non-empty text, for members the schema gives `minLength: 1`.
pub(crate) fn text1(u: &mut Unstructured<'_>) -> Result<Cow<'static, str>> {
    let t = text(u)?;
    Ok(if t.is_empty() {
        Cow::Borrowed("untitled")
    } else {
        t
    })
}

/// A finite float whose shortest decimal form parses back to the same
/// value with any correct parser: a 32-bit integer over 1, 2, 4, 8 or 16
/// (at most 15 significant digits, exactly representable).
pub(crate) fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    let n = f64::from(i32::arbitrary(u)?);
    Ok(n / u.choose(&[1.0, 2.0, 4.0, 8.0, 16.0])?)
}

/// A [`float`] as a JSON number.
pub(crate) fn number(u: &mut Unstructured<'_>) -> Result<serde_json::Number> {
    Ok(serde_json::Number::from_f64(float(u)?).unwrap_or_else(|| serde_json::Number::from(0u8)))
}

/// `Some(f(u))` or `None`, as the input says.
pub(crate) fn option<'u, T>(
    u: &mut Unstructured<'u>,
    f: impl FnOnce(&mut Unstructured<'u>) -> Result<T>,
) -> Result<Option<T>> {
    Ok(if u.arbitrary()? { Some(f(u)?) } else { None })
}

/// Up to [`MAX_LIST`] items.
pub(crate) fn list<'u, T>(
    u: &mut Unstructured<'u>,
    mut f: impl FnMut(&mut Unstructured<'u>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    while out.len() < MAX_LIST && u.arbitrary::<bool>()? {
        out.push(f(u)?);
    }
    Ok(out)
}

/// One to [`MAX_LIST`] items.
pub(crate) fn list1<'u, T>(
    u: &mut Unstructured<'u>,
    mut f: impl FnMut(&mut Unstructured<'u>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out = alloc::vec![f(u)?];
    while out.len() < MAX_LIST && u.arbitrary::<bool>()? {
        out.push(f(u)?);
    }
    Ok(out)
}

/// One to [`MAX_LIST`] items of any value of their type.
pub(crate) fn nonempty<'u, T: Arbitrary<'u>>(u: &mut Unstructured<'u>) -> Result<Vec<T>> {
    list1(u, |u| u.arbitrary())
}

/// A small JSON value of any kind.
pub(crate) fn json(u: &mut Unstructured<'_>, depth: u8) -> Result<Value> {
    let kinds = if depth == 0 { 5 } else { 7 };
    Ok(match u.choose_index(kinds)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(i64::arbitrary(u)?.into()),
        3 => Number::from_f64(float(u)?).map_or(Value::Null, Value::Number),
        4 => Value::String(String::arbitrary(u)?),
        5 => Value::Array(list(u, |u| json(u, depth.saturating_sub(1)))?),
        _ => Value::Object(object(u, depth.saturating_sub(1))?),
    })
}

/// A small JSON object (keys are any text, each once).
fn object(u: &mut Unstructured<'_>, depth: u8) -> Result<Map<String, Value>> {
    let mut map = Map::new();
    for (k, v) in list(u, |u| Ok((String::arbitrary(u)?, json(u, depth)?)))? {
        map.insert(k, v);
    }
    Ok(map)
}

/// The compact text of `value` as raw JSON.
pub(crate) fn to_raw(value: &Value) -> Result<RawJson<'static>> {
    RawJson::to_raw(value).map_err(|_| Error::IncorrectFormat)
}

/// A small JSON value, compact (as any encoder writes it).
pub(crate) fn raw(u: &mut Unstructured<'_>) -> Result<RawJson<'static>> {
    to_raw(&json(u, MAX_JSON_DEPTH)?)
}

/// `_meta` and other free-form objects.
pub(crate) fn meta(u: &mut Unstructured<'_>) -> Result<RawJson<'static>> {
    to_raw(&Value::Object(object(u, MAX_MEMBER_DEPTH)?))
}

/// The `env` object of a terminal auth method: names to string values.
pub(crate) fn env_map(u: &mut Unstructured<'_>) -> Result<RawJson<'static>> {
    let mut map = Map::new();
    for (k, v) in list(u, |u| Ok((String::arbitrary(u)?, String::arbitrary(u)?)))? {
        map.insert(k, Value::String(v));
    }
    to_raw(&Value::Object(map))
}

/// Text that is none of `known`: what a later version of the protocol
/// might send.
pub(crate) fn unknown_word(u: &mut Unstructured<'_>, known: &[&str]) -> Result<Cow<'static, str>> {
    let mut word = String::arbitrary(u)?;
    // No known word contains `~`, so this ends after one step.
    while known.contains(&word.as_str()) {
        word.push('~');
    }
    Ok(Cow::Owned(word))
}

/// An object whose `tag` member holds a value none of `known` spells, with
/// a few other members: an unknown variant of a tagged union.
pub(crate) fn unknown_object(
    u: &mut Unstructured<'_>,
    tag: &str,
    known: &[&str],
) -> Result<RawJson<'static>> {
    let mut map = object(u, MAX_MEMBER_DEPTH)?;
    let word = unknown_word(u, known)?;
    map.insert(tag.into(), Value::String(word.into_owned()));
    to_raw(&Value::Object(map))
}

/// `x_future_` and any text: a word no version of the protocol uses yet.
pub(crate) fn future_word(u: &mut Unstructured<'_>) -> Result<Cow<'static, str>> {
    let mut word = String::from("x_future_");
    word.push_str(&String::arbitrary(u)?);
    Ok(Cow::Owned(word))
}

/// An object tagged with a [`future_word`], with a few other members.
pub(crate) fn future_object(u: &mut Unstructured<'_>, tag: &str) -> Result<RawJson<'static>> {
    let mut map = object(u, MAX_MEMBER_DEPTH)?;
    map.insert(tag.into(), Value::String(future_word(u)?.into_owned()));
    to_raw(&Value::Object(map))
}

/// A JSON string or number: a shape no untagged union of objects or lists
/// accepts (and, unlike `null`, one an optional member keeps).
pub(crate) fn unknown_shape(u: &mut Unstructured<'_>) -> Result<RawJson<'static>> {
    let value = if u.arbitrary()? {
        Value::String(String::arbitrary(u)?)
    } else {
        Value::Number(i64::arbitrary(u)?.into())
    };
    to_raw(&value)
}

/// An extension method name: `_` and any text.
pub(crate) fn extension_method(u: &mut Unstructured<'_>) -> Result<Cow<'static, str>> {
    let mut name = String::from("_");
    name.push_str(&String::arbitrary(u)?);
    Ok(Cow::Owned(name))
}

/// A method name that is not an extension (`_…`) and that `is_unknown`
/// accepts: a method a later version of the protocol might add.
pub(crate) fn unknown_method(
    u: &mut Unstructured<'_>,
    is_unknown: impl Fn(&str) -> bool,
) -> Result<Cow<'static, str>> {
    let mut name = String::arbitrary(u)?;
    if name.starts_with('_') {
        name.insert(0, 'x');
    }
    // No method name contains `~`, so this ends after one step.
    while !is_unknown(&name) {
        name.push('~');
    }
    Ok(Cow::Owned(name))
}
