//! The framing layer through the public API: split invariance against a
//! naive oracle, limits, recovery after every kind of bad line.

use acp_codec::framing::LineTooLong;
use acp_codec::{FrameError, Limits, LineSplitter, PeekedId};
use proptest::prelude::*;

#[allow(dead_code)]
#[path = "../fuzz/checks/line_splitter.rs"]
mod check;

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
    assert_eq!(
        e.to_string(),
        "line of 12 bytes exceeds the 4-byte limit (id \"abc\")"
    );
    assert_eq!(e.code().0, -32600);
}

/// Errors travel by value through every `Result`: 32 bytes at most.
#[cfg(target_pointer_width = "64")]
#[test]
fn errors_are_small() {
    assert!(size_of::<FrameError>() <= 32);
    assert!(size_of::<acp_codec::Error>() <= 32);
    #[cfg(feature = "alloc")]
    assert!(size_of::<acp_codec::ChunkError>() <= 32);
}

fn peeked_id() -> impl Strategy<Value = Option<PeekedId>> {
    prop_oneof![
        Just(None),
        Just(Some(PeekedId::Null)),
        any::<i64>().prop_map(|n| Some(PeekedId::Number(n))),
        "[a-z0-9é-]{0,20}".prop_map(|s| PeekedId::from_str_id(&s)),
    ]
}

proptest! {
    /// `LineTooLong` packs what it is given into 32 bytes: everything comes
    /// back as given, but a string id longer than `MAX_STR_ID` bytes, which
    /// reads as absent.
    #[test]
    fn line_too_long_keeps_what_fits(
        limit in any::<usize>(),
        seen in any::<usize>(),
        id in peeked_id(),
        is_request in any::<bool>(),
    ) {
        let e = LineTooLong::new(limit, seen, id, is_request);
        prop_assert_eq!((e.limit(), e.seen(), e.is_request()), (limit, seen, is_request));
        let fits = id.as_ref().and_then(PeekedId::as_str).is_none_or(|s| s.len() <= LineTooLong::MAX_STR_ID);
        prop_assert_eq!(e.id(), if fits { id } else { None });
        prop_assert_eq!(e.request_id(), e.id().filter(|_| is_request));
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
