use super::*;
use crate::framing::LineTooLong;
use crate::PeekedId;

/// Feeds `input` in pieces of `step` bytes; collects items as strings.
fn run(
    splitter: &mut LineSplitter,
    input: &[u8],
    step: usize,
) -> alloc::vec::Vec<alloc::string::String> {
    use alloc::string::ToString;
    let mut out = alloc::vec::Vec::new();
    let mut buf = alloc::vec::Vec::new();
    for piece in input.chunks(step.max(1)) {
        buf.extend_from_slice(piece);
        let mut start = 0;
        loop {
            let d = splitter.decode(&buf[start..]);
            start += d.consumed;
            match d.item {
                Some(Ok(l)) => out.push(l.as_str().to_string()),
                Some(Err(e)) => out.push(alloc::format!("error: {e}")),
                None => break,
            }
        }
        buf.drain(..start);
        assert!(buf.len() <= splitter.max_line_len() + step.max(1));
    }
    loop {
        let d = splitter.decode_eof(&buf);
        let consumed = d.consumed;
        let item = d.item.map(|r| {
            r.map(|l| {
                alloc::format!(
                    "{}{}",
                    l.as_str(),
                    if l.is_terminated() { "" } else { " (eof)" }
                )
            })
        });
        buf.drain(..consumed);
        match item {
            Some(Ok(l)) => out.push(l),
            Some(Err(e)) => out.push(alloc::format!("error: {e}")),
            None => break,
        }
    }
    out
}

#[test]
fn crlf_blank_and_eof() {
    let mut s = LineSplitter::new();
    let out = run(&mut s, b"a\r\n \t\r\n\n\r\nb\nc", 1);
    assert_eq!(out, ["a", "b", "c (eof)"]);
}

#[test]
fn oversized_then_good_in_any_piece_size() {
    let input = b"{\"id\":4,\"method\":\"x\",\"params\":\"0123456789\"}\nok\n";
    for step in 1..input.len() + 1 {
        let mut s = LineSplitter::with_max_line_len(24);
        let out = run(&mut s, input, step);
        assert_eq!(out.len(), 2, "step {step}: {out:?}");
        assert!(
            out[0].contains("line of more than 24 bytes (request id 4)"),
            "{out:?}"
        );
        assert_eq!(out[1], "ok");
    }
}

#[test]
fn oversized_reported_once_with_id() {
    let mut s = LineSplitter::with_max_line_len(8);
    let d = s.decode(b"{\"id\":\"q\",\"method\":\"m\"");
    assert_eq!(d.consumed, 22);
    assert_eq!(
        d.item,
        Some(Err(FrameError::LineTooLong(LineTooLong::new(
            8,
            22,
            PeekedId::from_str_id("q"),
            true
        ))))
    );
    let d = s.decode(b"more bytes of it");
    assert_eq!((d.consumed, d.item), (16, None));
    let d = s.decode(b"end}\nnext\n");
    assert_eq!(d.consumed, 10);
    assert_eq!(d.item.unwrap().unwrap().as_str(), "next");
}

#[test]
fn invalid_utf8_is_one_line() {
    let mut s = LineSplitter::new();
    let out = run(&mut s, b"ok\n\xff\xfe\nnext\n", 2);
    assert_eq!(out[0], "ok");
    assert!(out[1].starts_with("error: line of 2 bytes is not valid utf-8"));
    assert_eq!(out[2], "next");
}

#[test]
fn eof_in_oversized_line_resets() {
    let mut s = LineSplitter::with_max_line_len(3);
    let out = run(&mut s, b"abcdef", 2);
    assert_eq!(out.len(), 1);
    assert!(out[0].starts_with("error: line of more than 3 bytes"));
    let d = s.decode(b"ok\n");
    assert_eq!(d.item.unwrap().unwrap().as_str(), "ok");
}

#[test]
fn limit_is_inclusive_and_counts_cr() {
    let mut s = LineSplitter::with_max_line_len(3);
    assert_eq!(s.decode(b"abc\n").item.unwrap().unwrap().as_str(), "abc");
    assert!(s.decode(b"ab\r\n").item.unwrap().is_ok());
    assert!(s.decode(b"abc\r\n").item.unwrap().is_err());
    assert!(s.decode(b"abcd").item.unwrap().is_err());
}

/// The look-ahead of a validation pass ends at the start of a character,
/// checked against the standard library's `is_char_boundary`: the last
/// boundary at or before `end + ahead`, not past the buffer's last byte
/// (which may begin a character not yet read), and never before `end`.
#[test]
fn lookahead_ends_at_a_character_boundary() {
    let text = "a—ï😀b\nnaïve — fix 😀\n";
    let len = text.len();
    for end in 0..=len {
        if !text.is_char_boundary(end) {
            continue;
        }
        for ahead in 0..=len + 2 {
            let top = (end + ahead).min(len);
            let expected = if top <= end {
                top
            } else {
                (end..=top.min(len - 1))
                    .rev()
                    .find(|&at| text.is_char_boundary(at))
                    .unwrap_or(end)
            };
            assert_eq!(
                lookahead_end(text.as_bytes(), end, ahead),
                expected,
                "end {end}, ahead {ahead}"
            );
        }
    }
}

/// Lines whose validation's look-ahead ends inside a character are still
/// whole and valid: through `decode` in pieces of every size, and through
/// `lines` (whose look-ahead reaches the end of the buffer, or 64 KiB).
#[test]
fn lines_whose_lookahead_cuts_a_character() {
    let input = "x—\nï\n😀😀\n".repeat(3);
    for step in 1..=input.len() {
        let out = run(&mut LineSplitter::new(), input.as_bytes(), step);
        assert_eq!(out, ["x—", "ï", "😀😀"].repeat(3), "step {step}");
    }
    let mut splitter = LineSplitter::new();
    let mut lines = splitter.lines(input.as_bytes());
    let texts: alloc::vec::Vec<&str> = lines.by_ref().map(|l| l.unwrap().as_str()).collect();
    assert_eq!(texts, ["x—", "ï", "😀😀"].repeat(3));
    assert_eq!(lines.consumed(), input.len());
    // Six-byte lines: a look-ahead of 64 KiB from a line's end lands on
    // the second byte of its `—` in a buffer this long.
    let long = "ab—\n".repeat(30_000);
    let mut lines = splitter.lines(long.as_bytes());
    assert!(lines.by_ref().all(|l| l.unwrap().as_str() == "ab—"));
    assert_eq!(lines.consumed(), long.len());
    // The `bytes` paths, fed reads that end inside a `—`.
    #[cfg(feature = "bytes")]
    for batch in [false, true] {
        let mut buf = bytes::BytesMut::new();
        let mut count = 0;
        for read in long.as_bytes().chunks(65_537) {
            buf.extend_from_slice(read);
            let mut take = |line: Result<bytes::Bytes, FrameError>| {
                assert_eq!(&line.unwrap()[..], "ab—".as_bytes());
                count += 1;
            };
            if batch {
                splitter.lines_bytes(&mut buf).for_each(&mut take);
            } else {
                while let Some(line) = splitter.decode_bytes(&mut buf) {
                    take(line);
                }
            }
        }
        assert_eq!((count, buf.len()), (30_000, 0), "batch {batch}");
    }
}

/// Pass-through at the edges: a line over the limit reported at the end of
/// the input is its one piece, done; a lone `\r` at the end stays content.
#[test]
fn raw_items_at_the_end_of_input() {
    let mut s = RawLineSplitter::with_limits(&Limits::new().with_max_line_len(3));
    let item = s.decode_eof(b"abcdef").unwrap();
    assert!(
        matches!(&item, super::RawItem::TooLong { done: true, error, .. } if error.seen() == 6)
    );
    assert!(s.decode_eof(b"").is_none());
    let Some(super::RawItem::Line(line)) = s.decode_eof(b"ab\r") else {
        panic!("not a line")
    };
    assert_eq!(
        (line.content(), line.ending()),
        (&b"ab\r"[..], super::Ending::Unterminated)
    );
    // A line cut by the limit before its `\n`: pieces until the `\n`.
    let mut s = RawLineSplitter::with_limits(&Limits::new().with_max_line_len(3));
    assert!(matches!(
        s.decode(b"abcd"),
        Some(super::RawItem::TooLong { done: false, .. })
    ));
    assert!(matches!(
        s.decode(b"ef"),
        Some(super::RawItem::Rest { done: false, .. })
    ));
    let rest = s.decode(b"g\nok\n").unwrap();
    assert_eq!(
        (
            rest.as_bytes(),
            matches!(rest, super::RawItem::Rest { done: true, .. })
        ),
        (&b"g\n"[..], true)
    );
    assert_eq!(s.decode(b"ok\n").unwrap().as_bytes(), b"ok\n");
}
