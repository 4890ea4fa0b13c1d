//! The tokio-util codecs through `FramedRead`/`FramedWrite`: bad lines are
//! items and the stream goes on, whatever the read sizes; encoded messages
//! decode back to themselves.
#![cfg(feature = "tokio-util")]

use std::pin::Pin;
use std::task::{Context, Poll};

use acp_codec::acp::Message;
use acp_codec::codec::{AcpCodec, LineCodec, RawLineCodec};
use acp_codec::framing::RawItem;
use acp_codec::{Error, FrameError, Limits};
use futures_util::{SinkExt, StreamExt};
use proptest::prelude::*;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::codec::{FramedRead, FramedWrite};

/// A reader that hands out its data in reads of the given sizes (cycled).
struct Pieces {
    data: Vec<u8>,
    pos: usize,
    sizes: Vec<usize>,
    turn: usize,
}

impl AsyncRead for Pieces {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let size = self.sizes[self.turn % self.sizes.len()].max(1);
        self.turn += 1;
        let end = self
            .pos
            .saturating_add(size)
            .min(self.data.len())
            .min(self.pos + buf.remaining());
        let piece = self.data[self.pos..end].to_vec();
        buf.put_slice(&piece);
        self.pos = end;
        Poll::Ready(Ok(()))
    }
}

fn pieces(data: &[u8], sizes: &[usize]) -> Pieces {
    Pieces {
        data: data.to_vec(),
        pos: 0,
        sizes: if sizes.is_empty() {
            vec![usize::MAX]
        } else {
            sizes.to_vec()
        },
        turn: 0,
    }
}

/// Everything the ACP codec yields, as `Ok(method-or-id)` / `Err(code)`.
fn run_acp(data: &[u8], sizes: &[usize], limits: &Limits) -> Vec<Result<String, i32>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut framed = FramedRead::new(pieces(data, sizes), AcpCodec::with_limits(limits));
        let mut out = Vec::new();
        while let Some(item) = framed.next().await {
            out.push(match item.expect("no i/o error") {
                Ok(msg) => Ok(match (msg.method(), msg.id()) {
                    (Some(m), _) => m.to_owned(),
                    (None, Some(id)) => format!("response {id}"),
                    (None, None) => unreachable!(),
                }),
                Err(e) => Err(e.code().0),
            });
        }
        out
    })
}

const STREAM: &[u8] = b"Loaded cached credentials.\n\
{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\r\n\
\n\
\xff\xfe not utf-8\n\
{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\",\"prompt\":[{\"type\":\"text\",\"text\":\"01234567890123456789012345678901234567890123456789012345678901234567890123456789\"}]}}\n\
{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}\n\
{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}}}\n\
{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1}}";

#[test]
fn bad_lines_are_items_and_the_stream_goes_on() {
    let limits = Limits::default().with_max_line_len(160);
    let got = run_acp(STREAM, &[], &limits);
    assert_eq!(
        got,
        vec![
            Err(-32700), // stray text
            Ok("initialize".to_owned()),
            Err(-32700), // invalid UTF-8
            Err(-32600), // too long
            Err(-32600), // jsonrpc 1.0
            Ok("session/update".to_owned()),
            Ok("response 0".to_owned()), // unterminated last line, at EOF
        ]
    );
}

#[test]
fn too_long_request_keeps_its_id() {
    let limits = Limits::default().with_max_line_len(64);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"session/prompt\",\"params\":\"{}\"}}\n{{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}\n",
        "a".repeat(1000)
    );
    rt.block_on(async {
        let mut framed = FramedRead::new(
            pieces(line.as_bytes(), &[7]),
            AcpCodec::with_limits(&limits),
        );
        let first = framed.next().await.unwrap().unwrap().unwrap_err();
        let Error::Frame(FrameError::LineTooLong(long)) = first else {
            panic!("{first:?}")
        };
        assert_eq!(long.id().unwrap().to_string(), "42");
        assert!(long.is_request());
        let next = framed.next().await.unwrap().unwrap().unwrap();
        assert_eq!(next.method(), Some("x"));
        assert!(framed.next().await.is_none());
    });
}

/// A request over the limit whose id is a UUID comes out of both codecs
/// with that id, so the adapter can answer it.
#[test]
fn too_long_request_keeps_its_uuid_id() {
    let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let limits = Limits::default().with_max_line_len(256);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let input = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"{uuid}\",\"method\":\"session/prompt\",\"params\":\"{}\"}}\n{{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}\n",
        "a".repeat(1000)
    );
    rt.block_on(async {
        let mut framed = FramedRead::new(
            pieces(input.as_bytes(), &[7]),
            AcpCodec::with_limits(&limits),
        );
        let first = framed.next().await.unwrap().unwrap().unwrap_err();
        let Error::Frame(FrameError::LineTooLong(long)) = first else {
            panic!("{first:?}")
        };
        assert_eq!(long.request_id().unwrap().as_str(), Some(uuid));
        let next = framed.next().await.unwrap().unwrap().unwrap();
        assert_eq!(next.method(), Some("x"));

        let mut framed = FramedRead::new(
            pieces(input.as_bytes(), &[5]),
            LineCodec::with_limits(&limits),
        );
        let first = framed.next().await.unwrap().unwrap().unwrap_err();
        let FrameError::LineTooLong(long) = first else {
            panic!("{first:?}")
        };
        assert_eq!(long.request_id().unwrap().as_str(), Some(uuid));
        assert!(framed.next().await.unwrap().unwrap().is_ok());
        assert!(framed.next().await.is_none());
    });
}

/// The codecs finish a line the way `encode_line` does: the same bytes
/// for pretty raw JSON, the same refusal (buffer untouched) for a raw
/// newline inside a string.
#[test]
fn codec_lines_are_encode_line_lines() {
    use serde_json::value::RawValue;
    use tokio_util::codec::Encoder;
    let pretty =
        RawValue::from_string("{\n  \"a\": [1,\n 2], \"s\": \"x y\"\n}".to_owned()).unwrap();
    let mut want = Vec::new();
    acp_codec::encode_line(&pretty, &mut want).unwrap();
    let mut got = bytes::BytesMut::from(&b"before"[..]);
    LineCodec::new().encode(&*pretty, &mut got).unwrap();
    assert_eq!(&got[..], [&b"before"[..], &want].concat());
    let broken = RawValue::from_string("\"a\nb\"".to_owned());
    if let Ok(broken) = broken {
        let mut out = bytes::BytesMut::from(&b"keep"[..]);
        assert!(LineCodec::new().encode(&*broken, &mut out).is_err());
        assert_eq!(&out[..], b"keep");
    }
}

#[test]
fn encode_then_decode_round_trips() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/acp-spec-examples.ndjson"
    ))
    .unwrap();
    let messages: Vec<Message<'_>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Message::decode(l).unwrap())
        .collect();
    assert!(messages.len() > 5);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut sink = FramedWrite::new(Vec::new(), AcpCodec::new());
        for m in &messages {
            sink.send(m).await.unwrap();
        }
        let bytes = sink.into_inner();
        assert_eq!(
            bytes.iter().filter(|&&b| b == b'\n').count(),
            messages.len()
        );
        let mut framed = FramedRead::new(pieces(&bytes, &[3, 1000, 17]), AcpCodec::new());
        let mut back = Vec::new();
        while let Some(item) = framed.next().await {
            back.push(item.unwrap().unwrap());
        }
        assert_eq!(back, messages);
    });
}

#[test]
fn line_codec_recovers_too() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let limits = Limits::default().with_max_line_len(160);
        let mut framed = FramedRead::new(pieces(STREAM, &[5]), LineCodec::with_limits(&limits));
        let mut errors = 0;
        let mut lines = 0;
        while let Some(item) = framed.next().await {
            match item.unwrap() {
                Ok(_) => lines += 1,
                Err(e) => {
                    eprintln!("{e}");
                    errors += 1
                }
            }
        }
        assert_eq!((lines, errors), (5, 2));
    });
}

/// Every item `RawLineCodec` hands out through `FramedRead`, as
/// (bytes, what it is).
fn run_raw(data: &[u8], sizes: &[usize], limits: &Limits) -> Vec<(Vec<u8>, &'static str)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut framed = FramedRead::new(pieces(data, sizes), RawLineCodec::with_limits(limits));
        let mut out = Vec::new();
        while let Some(item) = framed.next().await {
            let item = item.expect("no i/o error");
            let kind = match &item {
                RawItem::Line(l) if l.is_blank() => "blank",
                RawItem::Line(l) if !l.is_terminated() => "last",
                RawItem::Line(_) => "line",
                RawItem::TooLong { .. } => "too long",
                RawItem::Rest { .. } => "rest",
            };
            out.push((item.into_bytes().to_vec(), kind));
        }
        out
    })
}

#[test]
fn raw_line_codec_gives_back_every_byte() {
    let limits = Limits::default().with_max_line_len(160);
    let items = run_raw(STREAM, &[7, 1, 30], &limits);
    let joined: Vec<u8> = items.iter().flat_map(|(b, _)| b.clone()).collect();
    assert_eq!(joined, STREAM);
    // Read whole, the oversized line is one piece: its end is in the
    // buffer when it is found.
    let items = run_raw(STREAM, &[], &limits);
    let kinds: Vec<&str> = items.iter().map(|(_, k)| *k).collect();
    assert_eq!(
        kinds,
        ["line", "line", "blank", "line", "too long", "line", "line", "last"]
    );
    // The CRLF line keeps its `\r\n`; the oversized request its id.
    assert!(items[1].0.ends_with(b"}\r\n"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Pass-through through `FramedRead`: the items' bytes are the input
    /// and do not depend on the read sizes.
    #[test]
    fn raw_items_independent_of_read_sizes(sizes in proptest::collection::vec(1usize..40, 1..8)) {
        let limits = Limits::default().with_max_line_len(40);
        let items = run_raw(STREAM, &sizes, &limits);
        let joined: Vec<u8> = items.iter().flat_map(|(b, _)| b.clone()).collect();
        prop_assert_eq!(joined, STREAM);
        // Pieces of an oversized line may be cut where the reads fall;
        // the lines within the limit may not.
        let lines = |v: &[(Vec<u8>, &str)]| -> Vec<Vec<u8>> {
            v.iter().filter(|(_, k)| !matches!(*k, "too long" | "rest")).map(|(b, _)| b.clone()).collect()
        };
        prop_assert_eq!(lines(&items), lines(&run_raw(STREAM, &[], &limits)));
    }

    /// The items do not depend on how the input is split into reads.
    #[test]
    fn items_independent_of_read_sizes(sizes in proptest::collection::vec(1usize..40, 1..8)) {
        let limits = Limits::default().with_max_line_len(160);
        prop_assert_eq!(run_acp(STREAM, &sizes, &limits), run_acp(STREAM, &[], &limits));
    }
}
