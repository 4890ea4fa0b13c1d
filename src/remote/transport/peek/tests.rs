//! The peek held against the full decode ([`Message::decode_with_session`])
//! and `serde_json`: the same message and session on every line the full
//! decode takes; no line taken that is JSON the full decode refuses.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{peek, session_member};
use crate::acp::{Message, SessionMember};

/// A JSON value as text: nested, with escapes, whitespace inside
/// containers, and now and then a `sessionId` member (or two).
fn value() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let leaf = proptest::sample::select(vec![
        "null",
        "true",
        "0",
        "-12.5e3",
        "\"a\"",
        "\"\"",
        "\"\\\\\"",
        "\"x\\\"y\\\\\\\"}]\"",
        "\"\\u00e9\\n\\t{[\"",
        "\"s-1\"",
        // Past the sixteen bytes a string's end is first looked for in.
        "\"text past sixteen bytes, \\\"quoted\\\" and on\"",
        "\"text past sixteen bytes\"",
        // Past the inline search's sixty-four bytes, plain and escaped.
        "\"text past sixty-four bytes, which the peek searches inline sixteen at a step\"",
        "\"text past sixty-four bytes, with an escape late in it, at byte fifty: \\\"quoted\\\" on\"",
    ])
    .prop_map(String::from);
    let key = proptest::sample::select(vec!["a", "sessionId", "update", "b\\u0041", "text"]);
    let gap = || proptest::sample::select(vec!["", "", " "]);
    leaf.prop_recursive(4, 24, 4, move |inner| {
        prop_oneof![
            proptest::collection::vec((gap(), inner.clone()), 0..4).prop_map(|items| {
                let items: Vec<_> = items.into_iter().map(|(g, v)| format!("{g}{v}")).collect();
                format!("[{}]", items.join(","))
            }),
            proptest::collection::vec((key.clone(), inner), 0..4).prop_map(|members| {
                let members: Vec<_> = members
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

/// A message in the envelope's own form (most of the time) or near it.
fn line() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let id = proptest::sample::select(vec![
        None,
        Some("1"),
        Some("-7"),
        Some("0"),
        Some("01"),
        Some("-0"),
        Some("99999999999999999999"),
        Some("\"r-1\""),
        Some("\"r\\\"1\""),
        Some("null"),
        Some("1.5"),
    ]);
    let method = proptest::sample::select(vec![
        Some("\"session/update\""),
        Some("\"session/prompt\""),
        Some("\"a\\/b\""),
        Some("3"),
        None,
    ]);
    let head = proptest::sample::select(vec![
        r#"{"jsonrpc":"2.0","#,
        r#"{"jsonrpc":"2.0","#,
        r#"{ "jsonrpc":"2.0","#,
        r#"{"jsonrpc":"1.0","#,
    ]);
    let tail = proptest::sample::select(vec!["}", "}", "} ", ",\"id\":2}", "}}"]);
    (head, id, method, value(), tail).prop_map(|(head, id, method, value, tail)| {
        let id = id.map_or(String::new(), |id| format!("\"id\":{id},"));
        let body = match method {
            Some(m) => format!("\"method\":{m},\"params\":{value}"),
            None => format!("\"result\":{value}"),
        };
        format!("{head}{id}{body}{tail}")
    })
}

/// [`line`], most of the time with one byte deleted, inserted or replaced.
fn hostile() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let byte = proptest::sample::select(vec![
        b'{', b'}', b'[', b']', b',', b':', b'"', b' ', b'\\', b'0', b'a', 0x01,
    ]);
    (line(), any::<proptest::sample::Index>(), 0u8..4, byte).prop_map(|(text, at, op, c)| {
        let mut b = text.into_bytes();
        let i = at.index(b.len().saturating_add(1));
        match op {
            1 if i < b.len() => drop(b.remove(i)),
            2 => b.insert(i, c),
            3 if i < b.len() => b[i] = c,
            _ => {}
        }
        String::from_utf8(b).unwrap()
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6000))]
    /// Whatever the peek reads, the full decode reads the same, or the
    /// line is not JSON at all (the inside of a value the peek passes
    /// over); and every line in the envelope's own form is peeked.
    #[test]
    fn the_peek_agrees_with_the_full_decode(text in hostile()) {
        let full = Message::decode_with_session(&text);
        let json = serde_json::from_str::<serde_json::Value>(&text).is_ok();
        match (peek(&text), full) {
            (Some(p), Ok((message, session))) => {
                proptest::prop_assert_eq!(&p.message, &message, "{:?}", text);
                proptest::prop_assert_eq!(p.session, session, "{:?}", text);
            }
            (Some(_), Err(e)) => proptest::prop_assert!(!json, "{:?}: {}", text, e),
            (None, _) => {}
        }
    }

    /// The session member of any value, where the peek's walk tells it,
    /// is the full decode's.
    #[test]
    fn session_member_agrees(params in value()) {
        let text = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params}}}"#);
        let Ok((_, full)) = Message::decode_with_session(&text) else {
            return Ok(());
        };
        if let Some(s) = session_member(&params) {
            proptest::prop_assert_eq!(s, full, "{}", params);
        }
    }
}

#[test]
fn lines_in_the_envelopes_form_are_peeked_past_their_routing_members() {
    let big = "x\\n".repeat(1000);
    let update = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s-1","update":{{"text":"{big}\"}}"}}}}}}"#
    );
    let p = peek(&update).expect("peeked");
    assert_eq!(p.session, SessionMember::One("\"s-1\""));
    assert_eq!(p.message.method(), Some("session/update"));
    let prompt = r#"{"jsonrpc":"2.0","id":"r-1","method":"session/prompt","params":{"prompt":[{"type":"text","text":"a\"b"}],"sessionId":"s"}}"#;
    let p = peek(prompt).expect("peeked");
    assert_eq!(p.session, SessionMember::One("\"s\""));
    assert_eq!(
        Some((p.message, p.session)),
        Message::decode_with_session(prompt).ok()
    );
    let answer = r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"n"}}"#;
    assert_eq!(
        peek(answer).expect("peeked").session,
        SessionMember::One("\"n\"")
    );
}

#[test]
fn what_the_peek_cannot_use_is_left_to_the_full_decode() {
    // Two sessions: seen, though the second comes after a long value.
    let twice =
        r#"{"jsonrpc":"2.0","method":"m","params":{"sessionId":"a","x":"}}","sessionId":"b"}}"#;
    assert_eq!(
        peek(twice).map(|p| p.session),
        Some(SessionMember::Repeated)
    );
    for text in [
        // Another order, whitespace, escapes in a key or the method.
        r#"{"method":"m","jsonrpc":"2.0","params":{}}"#,
        r#"{"jsonrpc":"2.0", "method":"m","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"m","params":{"session\u0049d":"b"}}"#,
        r#"{"jsonrpc":"2.0","method":"a\/b","params":{}}"#,
        // A member after the params (an id making it a request).
        r#"{"jsonrpc":"2.0","method":"m","params":{},"id":1}"#,
        // Brackets that do not match, a string that does not end.
        r#"{"jsonrpc":"2.0","method":"m","params":{"a":[}]}}"#,
        r#"{"jsonrpc":"2.0","method":"m","params":{"a":"\"}}"#,
        // Ids the full decode reads otherwise.
        r#"{"jsonrpc":"2.0","id":-0,"method":"m","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":01,"method":"m","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1e3,"method":"m","params":{}}"#,
    ] {
        assert_eq!(peek(text), None, "{text}");
    }
    let deep = format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    assert_eq!(peek(&deep), None);
}

/// Where a string's text ends, byte by byte: the string search's own
/// oracle (after its first quote that no backslash escapes).
fn naive_string_end(b: &[u8], at: usize) -> Option<usize> {
    crate::json::string_end::tests::naive_str_end(b, at.checked_add(1)?)
}

#[test]
fn string_end_agrees_with_a_byte_loop_at_every_length_and_escape() {
    // Text of every length to past the inline search's sixty-four
    // bytes and its sixteen-byte steps, with an escape, a control
    // character or a backslash run at each place, and without its
    // closing quote.
    for len in 0..100 {
        for at in 0..=len {
            for special in [
                &b"\\\""[..],
                b"\\\\",
                b"\\\\\\\"",
                b"\\n",
                b"\x01",
                b"\"",
                b"\\u0041",
            ] {
                let mut text = vec![b'"'];
                text.extend(core::iter::repeat_n(b'a', at));
                text.extend_from_slice(special);
                text.extend(core::iter::repeat_n(b'b', len - at));
                for tail in [&b"\",1"[..], b"", b"\\\"x\""] {
                    let mut b = text.clone();
                    b.extend_from_slice(tail);
                    assert_eq!(
                        super::string_end(&b, 0, &mut super::Passed::default()),
                        naive_string_end(&b, 0),
                        "{:?}",
                        String::from_utf8_lossy(&b)
                    );
                }
            }
        }
    }
}

proptest::proptest! {
    #[test]
    fn string_end_agrees_with_a_byte_loop(
        body in proptest::collection::vec(
            proptest::sample::select(vec![b'a', b'"', b'\\', b'\n', 0x01, b' ', 0xc3, 0xa9]),
            0..200,
        ),
    ) {
        let mut b = vec![b'"'];
        b.extend_from_slice(&body);
        proptest::prop_assert_eq!(super::string_end(&b, 0, &mut super::Passed::default()), naive_string_end(&b, 0));
    }
}

/// JSON text with strings full of what a block walk could mistake:
/// backslash runs of every length (at every place of a block, as the
/// values nest), escaped quotes, brackets inside strings; containers
/// nested a few deep, empty ones among them.
fn bracketed() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let text = proptest::collection::vec(
        proptest::sample::select(vec!['a', '\\', '"', '{', '}', '[', ']', ' ', 'é', '\n']),
        0..40,
    )
    .prop_map(|chars| serde_json::to_string(&chars.into_iter().collect::<String>()).unwrap());
    let leaf = prop_oneof![
        text,
        Just(String::from("1")),
        Just(String::from("[]")),
        Just(String::from("{}"))
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6)
                .prop_map(|v| format!("[{}]", v.join(","))),
            proptest::collection::vec(inner, 0..6).prop_map(|v| {
                let members: Vec<_> = v
                    .iter()
                    .enumerate()
                    .map(|(n, v)| format!("\"k{n}\":{v}"))
                    .collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
    /// The block walk against the byte walk: on JSON containers at every
    /// alignment, cut short, followed by more text, or with a bracket of
    /// the other kind (or the other side) put in for one.
    #[test]
    fn the_block_walk_agrees_with_the_byte_walk(
        value in bracketed(),
        gap in 0usize..70,
        cut in proptest::prelude::any::<proptest::sample::Index>(),
        swap in proptest::prelude::any::<proptest::sample::Index>(),
        to in proptest::sample::select(vec![b'{', b'}', b'[', b']']),
    ) {
        let value = format!("[{value}]");
        let mut b = vec![b' '; gap];
        b.extend_from_slice(value.as_bytes());
        b.extend_from_slice(b",\"tail\"}");
        let whole = b.clone();
        proptest::prop_assert_eq!(super::container_end(&b, gap, &mut super::Passed::default()), Some(gap + value.len()));
        let brackets: Vec<usize> = (gap..b.len()).filter(|&i| b"{}[]".contains(&b[i])).collect();
        if !brackets.is_empty() {
            b[*swap.get(&brackets)] = to;
        }
        proptest::prop_assert_eq!(super::container_end(&b, gap, &mut super::Passed::default()), super::container_end_bytes(&b, gap, &mut super::Passed::default()));
        let cut = gap + cut.index(value.len());
        let short = &whole[..cut];
        proptest::prop_assert_eq!(super::container_end(short, gap, &mut super::Passed::default()), super::container_end_bytes(short, gap, &mut super::Passed::default()));
    }
}

#[test]
fn the_block_walk_stops_where_the_byte_walk_does_at_the_depth_limit() {
    for depth in [99usize, 100, 101, 130] {
        for gap in [0usize, 1, 63] {
            let mut b = vec![b' '; gap];
            b.extend(core::iter::repeat_n(b'[', depth));
            b.extend(core::iter::repeat_n(b']', depth));
            assert_eq!(
                super::container_end(&b, gap, &mut super::Passed::default()),
                super::container_end_bytes(&b, gap, &mut super::Passed::default()),
                "{depth} at {gap}"
            );
            assert_eq!(
                super::container_end(&b, gap, &mut super::Passed::default()).is_some(),
                depth <= 100
            );
        }
    }
}
