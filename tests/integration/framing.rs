//! The framing layer through the public API: split invariance against a
//! naive oracle, limits, recovery after every kind of bad line.

use acp_codec::framing::LineTooLong;
use acp_codec::{FrameError, Limits, LineSplitter, PeekedId};
use proptest::prelude::*;

use crate::checks::line_splitter as check;

#[cfg(feature = "bytes")]
use check::bytes_agree;
use check::{batches, one_shot, oracle, pieces, Item};

fn line(s: &str) -> Item {
    Item::Line(s.as_bytes().to_vec(), true)
}

/// Byte streams rich in the bytes that matter: newlines, `\r`, blanks,
/// invalid UTF-8, multi-byte characters.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => proptest::collection::vec(b'a'..=b'z', 0..12),
        3 => Just(b"\n".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b" \t".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => Just("é€😀".as_bytes().to_vec()),
        1 => Just(vec![0xff]),
        1 => Just(vec![0xe2, 0x82]),
        1 => Just(br#"{"jsonrpc":"2.0","id":3,"method":"m"}"#.to_vec()),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Pass-through: for any input, limit and split into reads, the
    /// items' bytes put end to end are the input, and each item is what
    /// `split_inclusive` says (an oversized line's pieces joined).
    #[test]
    fn passthrough_is_exact(input in stream(), limit in 1usize..48, seed: u32) {
        check::passthrough_agrees(limit, &input, seed);
        check::passthrough_agrees(acp_codec::limits::DEFAULT_MAX_LINE_LEN, &input, seed);
    }

    /// Any split of the input gives the same items as the oracle.
    #[test]
    fn split_invariance(input in stream(), limit in 1usize..48, seed: u32) {
        let expected = oracle(limit, &input);
        prop_assert_eq!(one_shot(limit, &input), expected.clone());
        prop_assert_eq!(pieces(limit, &input, seed), expected.clone());
        prop_assert_eq!(batches(limit, &input, seed), expected);
    }

    /// Arbitrary bytes, not only the friendly alphabet.
    #[test]
    fn arbitrary_bytes(input in proptest::collection::vec(any::<u8>(), 0..300), limit in 1usize..32, seed: u32) {
        prop_assert_eq!(pieces(limit, &input, seed), oracle(limit, &input));
        prop_assert_eq!(batches(limit, &input, seed), oracle(limit, &input));
    }

    /// `decode_bytes` over a `BytesMut` fed in random pieces agrees too
    /// (arbitrary bytes: invalid UTF-8, CR, blank and oversized lines).
    #[cfg(feature = "bytes")]
    #[test]
    fn bytes_variant_agrees(
        input in prop_oneof![stream(), proptest::collection::vec(any::<u8>(), 0..300)],
        limit in 1usize..48,
        seed: u32,
    ) {
        bytes_agree(limit, &input, seed, oracle(limit, &input));
    }

    /// One byte per call, the worst case for rescanning, still agrees.
    #[test]
    fn byte_at_a_time(input in stream(), limit in 1usize..48) {
        let mut s = LineSplitter::with_max_line_len(limit);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        let mut take = |r: Result<acp_codec::Line<'_>, FrameError>| match r {
            Ok(l) => Item::Line(l.as_bytes().to_vec(), l.is_terminated()),
            Err(FrameError::LineTooLong(_)) => Item::TooLong,
            Err(_) => Item::BadUtf8,
        };
        for &b in &input {
            buf.push(b);
            loop {
                let d = s.decode(&buf);
                let consumed = d.consumed;
                let item = d.item.map(&mut take);
                buf.drain(..consumed);
                match item {
                    Some(i) => got.push(i),
                    None => break,
                }
            }
            prop_assert!(buf.len() <= limit + 1);
        }
        loop {
            let d = s.decode_eof(&buf);
            let consumed = d.consumed;
            let item = d.item.map(&mut take);
            buf.drain(..consumed);
            match item {
                Some(i) => got.push(i),
                None => break,
            }
        }
        prop_assert_eq!(got, oracle(limit, &input));
    }
}

#[test]
fn oversized_then_good() {
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"fs/write_text_file\",\"params\":{{\"content\":\"{}\"}}}}\n",
        "x".repeat(100_000)
    );
    let input = [
        big.as_bytes(),
        b"{\"jsonrpc\":\"2.0\",\"id\":43,\"result\":null}\n",
    ]
    .concat();
    let limits = Limits::default().with_max_line_len(65_536);
    for read in [1usize, 7, 4096, 65_536, 1 << 20] {
        let mut s = LineSplitter::with_limits(&limits);
        let mut buf = Vec::new();
        let mut items = Vec::new();
        for chunk in input.chunks(read) {
            buf.extend_from_slice(chunk);
            let mut start = 0;
            loop {
                let d = s.decode(&buf[start..]);
                start += d.consumed;
                match d.item {
                    Some(r) => items.push(r.map(|l| l.as_str().to_owned())),
                    None => break,
                }
            }
            buf.drain(..start);
            assert!(buf.len() <= 65_536 + read);
        }
        assert_eq!(items.len(), 2, "read {read}");
        match &items[0] {
            Err(FrameError::LineTooLong(long)) => {
                assert_eq!(long.limit(), 65_536);
                let seen = long.seen();
                assert!(seen > 65_536 && seen <= 65_536 + read.max(1) || seen == big.len() - 1);
                assert_eq!(long.id(), Some(PeekedId::Number(42)));
                assert!(long.is_request());
            }
            other => panic!("read {read}: {other:?}"),
        }
        assert_eq!(
            items[1].as_deref(),
            Ok("{\"jsonrpc\":\"2.0\",\"id\":43,\"result\":null}")
        );
    }
}

#[test]
fn crlf_blank_whitespace() {
    let input = b"\r\n   \n\t\r\n{\"a\":1}\r\n\n  {\"b\":2}  \n";
    assert_eq!(
        oracle(1 << 20, input),
        vec![line("{\"a\":1}"), line("  {\"b\":2}  ")]
    );
    assert_eq!(one_shot(1 << 20, input), oracle(1 << 20, input));
}

#[test]
fn invalid_utf8_then_good() {
    let mut s = LineSplitter::new();
    let d = s.decode(b"\xc3\x28\n{}\n");
    assert_eq!(d.consumed, 3);
    assert_eq!(
        d.item,
        Some(Err(FrameError::InvalidUtf8 {
            len: 2,
            valid_up_to: 0
        }))
    );
    let d = s.decode(b"{}\n");
    assert_eq!(d.item.unwrap().unwrap().as_str(), "{}");
}

#[test]
fn eof_mid_line() {
    let mut s = LineSplitter::new();
    let d = s.decode(b"{\"partial\":");
    assert_eq!((d.consumed, d.item), (0, None));
    let d = s.decode_eof(b"{\"partial\":");
    assert_eq!(d.consumed, 11);
    let l = d.item.unwrap().unwrap();
    assert!(!l.is_terminated());
    assert_eq!(&*l, "{\"partial\":");
    // Reset by the end of input: usable again.
    let d = s.decode_eof(b"");
    assert_eq!((d.consumed, d.item), (0, None));
    assert_eq!(s.decode(b"x\n").item.unwrap().unwrap().as_str(), "x");
}

#[test]
fn id_beyond_peek_window_is_not_read() {
    let limits = Limits::default()
        .with_max_line_len(10)
        .with_id_peek_window(8);
    let mut s = LineSplitter::with_limits(&limits);
    let d = s.decode(b"{\"id\":12345,\"method\":\"m\"}\n");
    assert!(matches!(
        d.item,
        Some(Err(FrameError::LineTooLong(e))) if e.id().is_none()
    ));
}

#[test]
fn error_display_is_lowercase_with_numbers() {
    let mut s = LineSplitter::with_max_line_len(4);
    let e = s.decode(b"{\"id\":\"abc\"}\n").item.unwrap().unwrap_err();
    assert_eq!(e.to_string(), "line of more than 4 bytes (id \"abc\")");
    assert_eq!(e.code().0, -32600);
}

/// A request over the limit whose id is a UUID (as many clients number
/// their requests) is reported with that id, so it can be answered; so is
/// the longest string id the peek reads, fed in pieces of any size.
#[test]
fn too_long_request_keeps_a_long_string_id() {
    let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let longest = "u".repeat(PeekedId::MAX_STR_ID);
    for id in [uuid, longest.as_str()] {
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"{id}\",\"method\":\"session/prompt\",\"params\":{{\"text\":\"{}\"}}}}\n{{\"id\":1}}\n",
            "a".repeat(500)
        );
        for step in [1, 7, 64, input.len()] {
            let mut s = LineSplitter::with_max_line_len(256);
            let mut buf = Vec::new();
            let mut items = Vec::new();
            for piece in input.as_bytes().chunks(step) {
                buf.extend_from_slice(piece);
                let mut start = 0;
                while let Some(item) = {
                    let d = s.decode(&buf[start..]);
                    start += d.consumed;
                    d.item
                } {
                    items.push(item.map(|l| l.as_str().to_owned()));
                }
                buf.drain(..start);
            }
            assert_eq!(items.len(), 2, "step {step}");
            let Err(FrameError::LineTooLong(long)) = &items[0] else {
                panic!("step {step}: {:?}", items[0])
            };
            assert_eq!(long.request_id(), PeekedId::from_str_id(id), "step {step}");
            assert_eq!(long.id().unwrap().as_str(), Some(id));
            assert_eq!(items[1].as_deref(), Ok("{\"id\":1}"));
        }
    }
    let mut s = LineSplitter::with_max_line_len(16);
    let e = s
        .decode(format!("{{\"id\":\"{uuid}\",\"method\":\"m\"}}\n").as_bytes())
        .item
        .unwrap()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("line of more than 16 bytes (request id \"{uuid}\")")
    );
}

/// Errors travel by value through every `Result`: with `alloc` a long
/// string id is boxed, so they stay at 40 bytes.
#[cfg(all(target_pointer_width = "64", feature = "alloc"))]
#[test]
fn errors_are_small() {
    assert!(size_of::<FrameError>() <= 40);
    assert!(size_of::<acp_codec::Error>() <= 40);
    assert!(size_of::<acp_codec::ChunkError>() <= 32);
}

fn peeked_id() -> impl Strategy<Value = Option<PeekedId>> {
    prop_oneof![
        Just(None),
        Just(Some(PeekedId::Null)),
        any::<i64>().prop_map(|n| Some(PeekedId::Number(n))),
        "[a-z0-9é-]{0,20}".prop_map(|s| PeekedId::from_str_id(&s)),
        "[a-f0-9-]{36}".prop_map(|s| PeekedId::from_str_id(&s)),
        "[a-zA-Z0-9é_-]{0,64}".prop_map(|s| PeekedId::from_str_id(&s)),
    ]
}

proptest! {
    /// `LineTooLong` keeps what it is given: every id a `PeekedId` holds
    /// (inline or boxed) comes back as given.
    #[test]
    fn line_too_long_keeps_every_id(
        limit in any::<usize>(),
        seen in any::<usize>(),
        id in peeked_id(),
        is_request in any::<bool>(),
    ) {
        let e = LineTooLong::new(limit, seen, id, is_request);
        prop_assert_eq!((e.limit(), e.seen(), e.is_request()), (limit, seen, is_request));
        prop_assert_eq!(e.id(), id);
        prop_assert_eq!(e.request_id(), id.filter(|_| is_request));
        prop_assert_eq!(e.clone(), e);
    }
}

/// JSON values with strings that hold spaces, tabs, quotes, backslashes and
/// escaped newlines: what pretty-printing and compaction must tell apart
/// from the whitespace between tokens.
#[cfg(feature = "alloc")]
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[ \t\"\\\\\n\r{}:,a-zé]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[ a-z\"\n]{0,6}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

#[cfg(feature = "alloc")]
proptest! {
    /// `encode_raw_line` of pretty-printed JSON is serde_json's compact
    /// form plus `\n` (an independent oracle), and compact JSON is kept as
    /// it is.
    #[test]
    fn raw_lines_compact_like_serde(value in json_value()) {
        let compact = serde_json::to_string(&value).unwrap();
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        for text in [&pretty, &compact] {
            let mut out = Vec::new();
            let n = acp_codec::encode_raw_line(text, &mut out).unwrap();
            prop_assert_eq!(n, out.len());
            prop_assert_eq!(std::str::from_utf8(&out).unwrap(), format!("{compact}\n"));
        }
    }
}
