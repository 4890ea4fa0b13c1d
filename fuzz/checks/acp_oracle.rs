//! The invariant behind the `acp_oracle` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs` (which replays the committed seeds) and
//! `tests/integration/acp_oracle.rs` (recorded sessions, generated and mutated
//! messages).
//!
//! The oracle (`tests/oracle/`) is generated from the same spec as the
//! crate's types, as plain serde derives over owned data: it shares no code
//! with the crate's decoding. Input: one line of arbitrary bytes. For a
//! request's or a notification's params of a method the spec types, and for
//! a response's result read as the result of every request method,
//! asserted:
//! - the crate's strict decoding accepts exactly what the oracle accepts;
//! - what both accept encodes to equal JSON, once the members whose value
//!   is `null` are left out on both sides (the crate keeps a `null` sent
//!   for an optional member, the oracle drops it);
//! - and holds as many values it did not understand (`Unknown` variants of
//!   unions and enums, counted in the `Debug` text; both name them so):
//!   equal JSON alone would not tell a known variant from an `Unknown`
//!   that keeps the same object;
//! - the crate's encoding is the JSON that came in (as a
//!   `serde_json::Value`), `null`s and unknown members included;
//! - a method the spec does not type is unknown to the crate too.
//!
//! A line naming a member twice in some object is skipped: what it means is
//! not the oracle's to say (a `serde_json::Value` keeps the last one).

#[path = "../../tests/oracle/mod.rs"]
pub mod oracle;

use acp_codec::acp::Mode;
use acp_codec::acp::{
    Message, MethodKind, NotificationParams, RequestParams, ResponseResult, METHODS,
};
use serde_json::Value;

/// What a decoding gave: the value encoded as JSON and how many values in
/// it are `Unknown`, or the error's text.
pub type Outcome = Result<(Value, usize), String>;

/// How many `Unknown(…)` variants a value's `Debug` text shows.
fn unknowns(debug: &str) -> usize {
    debug.matches("Unknown(").count()
}

/// The crate's strict decoding of `msg`'s params (`method` unused), or of
/// its result as the result of `method`, encoded again; `None` when the
/// crate does not type it (an unknown or extension method, an error
/// response). The one place that names the crate's strict decoders.
pub fn crate_strict(msg: &Message<'_>, method: &str) -> Option<Outcome> {
    Some(match msg {
        Message::Request(r) => match r.typed(Mode::Strict).map(|t| t.value) {
            Ok(RequestParams::Ext { .. } | RequestParams::Unknown { .. }) => return None,
            Ok(p) => Ok(encode(&p)),
            Err(e) => Err(e.to_string()),
        },
        Message::Notification(n) => match n.typed(Mode::Strict).map(|t| t.value) {
            Ok(NotificationParams::Ext { .. } | NotificationParams::Unknown { .. }) => return None,
            Ok(p) => Ok(encode(&p)),
            Err(e) => Err(e.to_string()),
        },
        Message::Response(r) => match r.typed(method, Mode::Strict).map(|t| t.value) {
            Ok(ResponseResult::Other(_)) => return None,
            Ok(p) => Ok(encode(&p)),
            Err(e) => Err(e.to_string()),
        },
        Message::Error(_) => return None,
    })
}

/// A typed value the crate decoded, encoded again as JSON, and how many
/// `Unknown`s it holds.
fn encode<T: serde::Serialize + std::fmt::Debug>(value: &T) -> (Value, usize) {
    let json = serde_json::to_value(value).expect("a typed value encodes");
    (json, unknowns(&format!("{value:?}")))
}

/// The oracle's decoding of what `msg` carries (as [`crate_strict`]);
/// `None` for a method the spec does not type.
pub fn oracle_typed(msg: &Message<'_>, method: &str) -> Option<Outcome> {
    // Absent and `null` params read as `{}`, as the crate documents.
    let params = |p: Option<&acp_codec::acp::RawJson<'_>>| match p.map(|p| p.get()) {
        Some(text) if text != "null" => text.to_owned(),
        _ => "{}".to_owned(),
    };
    let outcome = match msg {
        Message::Request(r) => oracle::request(&r.method, &params(r.params.as_ref())),
        Message::Notification(n) => oracle::notification(&n.method, &params(n.params.as_ref())),
        Message::Response(r) => oracle::result(method, r.result.get()),
        Message::Error(_) => None,
    };
    outcome.map(|o| {
        o.map(|(json, debug)| (json, unknowns(&debug)))
            .map_err(|e| e.to_string())
    })
}

/// `value` without the object members whose value is `null`, at any depth.
pub fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

/// Asserts the crate and the oracle agree on `msg` (a response read as the
/// result of `method`), as the module docs say; returns whether both
/// typed and accepted it.
pub fn agree(line: &str, msg: &Message<'_>, method: &str) -> bool {
    let ours = crate_strict(msg, method);
    let theirs = oracle_typed(msg, method);
    match (&ours, &theirs) {
        (None, None) => false,
        (Some(Ok((a, a_unknown))), Some(Ok((b, b_unknown)))) => {
            assert_eq!(
                normalize(a),
                normalize(b),
                "the crate and the oracle decode to different values ({method}): {line}"
            );
            assert_eq!(
                a_unknown, b_unknown,
                "the crate and the oracle do not understand as much ({method}): {line}"
            );
            let sent = match msg {
                Message::Request(r) => r.params.as_ref(),
                Message::Notification(n) => n.params.as_ref(),
                Message::Response(r) => Some(&r.result),
                Message::Error(_) => None,
            };
            // Absent and `null` params read as `{}`; JSON a `Value` cannot
            // hold (numbers beyond f64) is compared nowhere.
            if let Some(Ok(sent)) = sent.map(|s| serde_json::from_str::<Value>(s.get())) {
                if !sent.is_null() {
                    assert_eq!(
                        a, &sent,
                        "the crate re-encodes other JSON ({method}): {line}"
                    );
                }
            }
            true
        }
        (Some(Err(_)), Some(Err(_))) => false,
        (Some(Ok(_)), Some(Err(e))) => {
            panic!("the crate accepts, the oracle refuses ({e}) ({method}): {line}")
        }
        (Some(Err(e)), Some(Ok(_))) => {
            panic!("the crate refuses ({e}), the oracle accepts ({method}): {line}")
        }
        _ => panic!(
            "typed by one side only: the crate {ours:?}, the oracle {theirs:?} ({method}): {line}"
        ),
    }
}

/// Checks one line: params by their method, a result as every request
/// method's. Returns how many decodings both accepted.
pub fn check_line(line: &str) -> usize {
    let Ok(msg) = Message::decode(line) else {
        return 0;
    };
    if oracle::names_a_member_twice(line) {
        return 0;
    }
    // JSON a `serde_json::Value` cannot hold (a number beyond `f64`, a
    // lone surrogate), which the crate keeps raw: the oracle, built on
    // `Value`, cannot judge it.
    if serde_json::from_str::<Value>(line).is_err() {
        return 0;
    }
    match &msg {
        Message::Response(_) => METHODS
            .iter()
            .filter(|m| m.kind == MethodKind::Request)
            .filter(|m| agree(line, &msg, m.name))
            .count(),
        _ => usize::from(agree(line, &msg, "")),
    }
}

pub fn check(data: &[u8]) {
    if let Ok(line) = std::str::from_utf8(data) {
        check_line(line);
    }
}
