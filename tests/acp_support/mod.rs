//! Helpers shared by the ACP integration tests.
#![allow(dead_code)]

use acp_codec::acp::Mode;
use std::collections::BTreeMap;

use acp_codec::acp::{Message, RequestId, ResponseResult};
use serde_json::Value;

/// The typed form of one message, re-encoded as JSON (`params` or `result`),
/// and its Debug text (to look for `Unknown` variants).
pub struct Typed {
    pub json: Option<Value>,
    pub debug: String,
}

/// The value of a lenient decoding that salvaged nothing (the input fit
/// the schema); panics, listing the salvages, otherwise.
pub fn clean<T>(what: &str, t: acp_codec::acp::Typed<'_, T>) -> T {
    assert!(
        t.is_clean(),
        "{what}: salvaged: {}",
        t.salvaged
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    );
    t.value
}

/// Decodes `msg`'s params or result to the typed form (panicking unless it
/// fits the schema: an error, or anything lenient decoding salvaged).
/// `methods` maps the ids of requests sent by the *other* side to their
/// methods.
pub fn typed(msg: &Message<'_>, methods: &BTreeMap<RequestId<'static>, String>) -> Typed {
    match msg {
        Message::Request(r) => {
            let t = r
                .typed(Mode::Lenient)
                .unwrap_or_else(|e| panic!("{}: {e}", r.method));
            let t = clean(&r.method, t);
            Typed {
                json: r.params.as_ref().map(|_| serde_json::to_value(&t).unwrap()),
                debug: format!("{t:?}"),
            }
        }
        Message::Notification(n) => {
            let t = n
                .typed(Mode::Lenient)
                .unwrap_or_else(|e| panic!("{}: {e}", n.method));
            let t = clean(&n.method, t);
            Typed {
                json: n.params.as_ref().map(|_| serde_json::to_value(&t).unwrap()),
                debug: format!("{t:?}"),
            }
        }
        Message::Response(r) => {
            let method = methods
                .get(&r.id.to_owned_id())
                .map(String::as_str)
                .unwrap_or("");
            let t = r
                .typed(method, Mode::Lenient)
                .unwrap_or_else(|e| panic!("result of {method}: {e}"));
            let t = clean(&format!("result of {method}"), t);
            let debug = match &t {
                ResponseResult::Other(_) if !method.is_empty() && !method.starts_with('_') => {
                    format!("Unknown result for {method}")
                }
                t => format!("{t:?}"),
            };
            Typed {
                json: Some(serde_json::to_value(&t).unwrap()),
                debug,
            }
        }
        Message::Error(e) => Typed {
            json: Some(serde_json::to_value(&e.error).unwrap()),
            debug: format!("{e:?}"),
        },
    }
}

/// A `Debug` rendering without its string literals: text that merely says
/// "Unknown" (Qwen Code's command descriptions do) is not an unknown variant.
pub fn outside_strings(debug: &str) -> String {
    let mut out = String::with_capacity(debug.len());
    let (mut in_str, mut escaped) = (false, false);
    for c in debug.chars() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
        } else if c == '"' {
            in_str = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// The part of the original message the typed form re-encodes.
pub fn payload(original: &Value) -> Option<Value> {
    ["params", "result", "error"]
        .iter()
        .find_map(|k| original.get(*k).cloned())
}

/// Whether every member of `a` is in `b` with an equal value (arrays
/// element by element, same length); `null` members of `b` may be absent
/// from `a`.
pub fn is_subset(a: &Value, b: &Value) -> Result<(), String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let Some(w) = y.get(k) else {
                    return Err(format!("member {k} invented"));
                };
                is_subset(v, w).map_err(|e| format!("{k}.{e}"))?;
            }
            Ok(())
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Err(format!("array of {} became {}", y.len(), x.len()));
            }
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                is_subset(v, w).map_err(|e| format!("[{i}].{e}"))?;
            }
            Ok(())
        }
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => Ok(()),
        _ if a == b => Ok(()),
        _ => Err(format!("{a} != {b}")),
    }
}

/// Which members the typed form dropped (unknown fields), for reporting.
pub fn dropped(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, w) in y {
                match x.get(k) {
                    None if !w.is_null() => out.push(format!("{path}.{k}")),
                    None => {}
                    Some(v) => dropped(v, w, &format!("{path}.{k}"), out),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                dropped(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

pub mod arb;
pub mod arb_base;
#[cfg(feature = "v2")]
pub mod arb_v2;
#[cfg(feature = "v2")]
pub mod arb_v2_base;

/// Every line of every recorded ACP file under `tests/fixtures/`, with the
/// file it came from and who sent it (transcripts say).
pub fn recorded_lines() -> Vec<(String, Vec<(String, String)>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files = vec![
        root.join("acp/examples.ndjson"),
        root.join("acp-spec-examples.ndjson"),
    ];
    let mut sessions: Vec<_> = std::fs::read_dir(root.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path().join("transcript.ndjson"))
        .collect();
    sessions.sort();
    files.extend(sessions);
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let lines = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    // Transcripts wrap each message: {"from": …, "msg": {…}}.
                    let v: Value = serde_json::from_str(l).unwrap();
                    match v.get("msg") {
                        Some(m) => (v["from"].as_str().unwrap().to_owned(), m.to_string()),
                        None => (String::new(), l.to_owned()),
                    }
                })
                .collect();
            (path.display().to_string(), lines)
        })
        .collect()
}
