//! A union's tag may stand anywhere among its object's members. Every
//! recorded line (the sessions under `tests/fixtures/` and the spec's
//! examples) is written again three ways: every object's members in key
//! order with the tags (`sessionUpdate`, `type`, `outcome`, `state`)
//! first; with the tags last; with the tags last and the other members in
//! reverse order. A union then meets its tag first (read at once), after a
//! member that tells the variant (read as that variant, the tag checked
//! when it comes) or after other members (found by looking ahead).
//! Strictly and leniently, the three decode alike: the same variants,
//! fields and salvages (the types' and variants' names of the `Debug`
//! rendering, which raw JSON and text cannot hold), each encoding to the
//! JSON it was given.
#![cfg(feature = "std")]

use crate::acp_support;

use std::collections::BTreeMap;

use acp_codec::acp::{Message, Mode, RequestId};
use acp_support::{outside_strings, payload, recorded_lines};
use serde_json::Value;

const TAGS: &[&str] = &["sessionUpdate", "type", "outcome", "state"];

#[derive(Clone, Copy, Debug)]
enum Tags {
    First,
    Last,
    LastOthersReversed,
}

const LAYOUTS: [Tags; 3] = [Tags::First, Tags::Last, Tags::LastOthersReversed];

/// `v` as JSON text, each object's members in `layout`'s order.
fn write(v: &Value, layout: Tags, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            if matches!(layout, Tags::LastOthersReversed) {
                keys.reverse();
            }
            let is_tag = |k: &&String| TAGS.contains(&k.as_str());
            let (tags, rest): (Vec<&String>, Vec<&String>) = keys.into_iter().partition(is_tag);
            let keys = match layout {
                Tags::First => [tags, rest].concat(),
                Tags::Last | Tags::LastOthersReversed => [rest, tags].concat(),
            };
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                write(&map[k], layout, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, layout, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// What a decode gave, as compared across layouts: the names of the types,
/// variants and salvage kinds its `Debug` rendering holds, sorted (members
/// kept raw and salvages follow the input's order), and its encoding.
#[derive(Debug, PartialEq)]
enum Decoded {
    Typed { names: Vec<String>, json: Value },
    Failed,
}

fn decoded<T: std::fmt::Debug + serde::Serialize, E>(
    t: Result<acp_codec::acp::Typed<'_, T>, E>,
) -> Decoded {
    let Ok(t) = t else {
        return Decoded::Failed;
    };
    let debug = outside_strings(&format!("{:?} {:?}", t.value, t.salvaged));
    let mut names: Vec<String> = debug
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(str::to_owned)
        .collect();
    names.sort();
    Decoded::Typed {
        names,
        json: serde_json::to_value(&t.value).unwrap(),
    }
}

/// `line` decoded typed in `mode`; `methods` maps the ids of requests the
/// other side sent to their methods.
fn decode(line: &str, mode: Mode, methods: &BTreeMap<RequestId<'static>, String>) -> Decoded {
    match Message::decode(line) {
        Ok(Message::Request(r)) => decoded(r.typed(mode)),
        Ok(Message::Notification(n)) => decoded(n.typed(mode)),
        Ok(Message::Response(r)) => match methods.get(&r.id.to_owned_id()) {
            Some(method) => decoded(r.typed(method, mode)),
            None => Decoded::Failed,
        },
        _ => Decoded::Failed,
    }
}

#[test]
fn tags_decode_alike_wherever_they_stand() {
    let mut lines_checked = 0;
    let mut typed = 0;
    for (file, lines) in recorded_lines() {
        // The ids of the requests each side sent, to their methods.
        let mut sent: BTreeMap<String, BTreeMap<RequestId<'static>, String>> = BTreeMap::new();
        for (from, line) in &lines {
            let original: Value = serde_json::from_str(line).unwrap();
            if let (Some(id), Some(method)) = (original.get("id"), original.get("method")) {
                let id = id.to_string();
                let id: RequestId<'_> = serde_json::from_str(&id).unwrap();
                sent.entry(from.clone())
                    .or_default()
                    .insert(id.into_owned(), method.as_str().unwrap().to_owned());
            }
            // Responses answer the other side's requests (a file without
            // sides answers its own).
            let other = sent
                .iter()
                .find(|(side, _)| *side != from)
                .or_else(|| sent.get_key_value(from))
                .map(|(_, m)| m.clone())
                .unwrap_or_default();
            for mode in [Mode::Strict, Mode::Lenient] {
                let mut first = None;
                for layout in LAYOUTS {
                    let mut text = String::new();
                    write(&original, layout, &mut text);
                    let got = decode(&text, mode, &other);
                    if let Decoded::Typed { json, .. } = &got {
                        let given: Value = serde_json::from_str(&text).unwrap();
                        assert_eq!(
                            Some(json),
                            payload(&given).as_ref(),
                            "{file}: {layout:?} {mode:?} does not encode to what it was given: {text}"
                        );
                        typed += 1;
                    }
                    match &first {
                        None => first = Some(got),
                        Some(want) => assert_eq!(
                            &got, want,
                            "{file}: {layout:?} {mode:?} decodes otherwise than tags first: {text}"
                        ),
                    }
                }
            }
            lines_checked += 1;
        }
    }
    assert!(lines_checked > 400, "{lines_checked} lines");
    assert!(typed > 2500, "{typed} typed decodes");
}

/// A `session/update` line with `update` as the update.
fn update(update: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
    )
}

#[test]
fn what_a_first_member_tells_is_checked_against_the_tag() {
    let none = BTreeMap::new();
    // Each as written (the tag after a member that tells a variant, or most
    // of those that have it), and written with its tags first.
    for written in [
        // Told right; the type's other variant; another type.
        r#"{"content":{"text":"t","type":"text"},"sessionUpdate":"agent_message_chunk"}"#,
        r#"{"content":{"type":"text","text":"t"},"messageId":"m","sessionUpdate":"agent_thought_chunk"}"#,
        r#"{"content":{"type":"text","text":"t"},"compactionId":"c","sessionUpdate":"compaction_summary_chunk"}"#,
        r#"{"messageId":"m","content":{"type":"text","text":"t"},"sessionUpdate":"session_message_chunk"}"#,
        // Another variant inside, whose body fits or not.
        r#"{"content":{"text":"t","data":"d","mimeType":"m","type":"image"},"sessionUpdate":"agent_message_chunk"}"#,
        r#"{"content":{"text":"t","type":"image"},"sessionUpdate":"agent_message_chunk"}"#,
        // The told variant's body does not fit; an unknown tag; a tag that
        // is not a string; no tag.
        r#"{"entries":[5],"sessionUpdate":"plan"}"#,
        r#"{"entries":[{"content":"c","priority":"x_future","status":"pending","x":1}],"sessionUpdate":"plan"}"#,
        r#"{"entries":[],"sessionUpdate":"x_future"}"#,
        r#"{"entries":[],"sessionUpdate":5}"#,
        r#"{"entries":[]}"#,
        r#"{"used":1,"size":"big","sessionUpdate":"usage_update"}"#,
    ] {
        let v: Value = serde_json::from_str(written).unwrap();
        let mut first = String::new();
        write(&v, Tags::First, &mut first);
        for mode in [Mode::Strict, Mode::Lenient] {
            assert_eq!(
                decode(&update(written), mode, &none),
                decode(&update(&first), mode, &none),
                "{mode:?}: {written}"
            );
        }
    }
    // A tag twice, the first time after a member that tells the variant.
    for (written, first) in [
        (
            r#"{"entries":[],"sessionUpdate":"plan","sessionUpdate":"plan"}"#,
            r#"{"sessionUpdate":"plan","entries":[],"sessionUpdate":"plan"}"#,
        ),
        (
            r#"{"entries":[],"sessionUpdate":5,"sessionUpdate":"plan"}"#,
            r#"{"sessionUpdate":5,"entries":[],"sessionUpdate":"plan"}"#,
        ),
    ] {
        for mode in [Mode::Strict, Mode::Lenient] {
            assert_eq!(
                decode(&update(written), mode, &none),
                decode(&update(first), mode, &none),
                "{mode:?}: {written}"
            );
        }
    }
}
