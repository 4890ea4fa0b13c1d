//! The invariant behind the `observer` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds,
//! and `tests/integration/acp_tracker.rs`, which runs it on generated input.
//!
//! Input: two bytes per line seen by an `Observer` (at most 4 requests
//! waiting per side). Byte 0: bit 0 the side that sent it, bits 1-2 what it
//! is (a request, twice as likely; a response; an error response), bits 3-4
//! the method; byte 1: the id (0 to 7, a string id when bit 3 is set), so
//! the sides' ids collide often. Asserted against a plain list of what
//! each side has asked and not had answered:
//! - a request is recorded, or refused as a duplicate of its side's id or
//!   past the limit, and then not recorded;
//! - a response or error response pairs with the other side's request of
//!   that id, whatever the same id means on its own side, and gives that
//!   request's method; the result is typed by that method in the same pass
//!   (`Observer::decoding`) when it fits (else it does not fit when typed
//!   apart either); a response to nothing waiting is refused and comes
//!   back untyped;
//! - the tables' sizes are the list's, after every line.

use acp_codec::acp::{decode_line, Incoming, Message, Mode, Observer, RequestId, Side};
use acp_codec::TrackerError;

/// Methods with params and a result that fit them.
const METHODS: [(&str, &str, &str); 4] = [
    (
        "session/prompt",
        r#"{"sessionId":"s","prompt":[]}"#,
        r#"{"stopReason":"end_turn"}"#,
    ),
    (
        "fs/read_text_file",
        r#"{"sessionId":"s","path":"/a"}"#,
        r#"{"content":"x"}"#,
    ),
    (
        "session/new",
        r#"{"cwd":"/","mcpServers":[]}"#,
        r#"{"sessionId":"s2"}"#,
    ),
    (
        "session/set_mode",
        r#"{"sessionId":"s","modeId":"m"}"#,
        r#"{}"#,
    ),
];

const MAX_PENDING: usize = 4;

pub fn check(data: &[u8]) {
    let mut observer = Observer::new().with_max_pending(MAX_PENDING);
    // What each side asked and was not answered: (side, id, method).
    let mut waiting: Vec<(Side, RequestId<'static>, &str)> = Vec::new();
    for op in data.chunks_exact(2) {
        let from = if op[0] & 1 == 0 {
            Side::Client
        } else {
            Side::Agent
        };
        let (method, params, result) = METHODS[usize::from(op[0] >> 3) % METHODS.len()];
        let n = i64::from(op[1] % 8);
        let id: RequestId<'static> = if op[1] & 8 == 0 {
            RequestId::Number(n)
        } else {
            RequestId::from(format!("r{n}").as_str()).into_owned()
        };
        let id_json = serde_json::to_string(&id).unwrap();
        let line = match (op[0] >> 1) & 3 {
            0 | 1 => format!(
                r#"{{"jsonrpc":"2.0","id":{id_json},"method":"{method}","params":{params}}}"#
            ),
            2 => format!(r#"{{"jsonrpc":"2.0","id":{id_json},"result":{result}}}"#),
            _ => format!(
                r#"{{"jsonrpc":"2.0","id":{id_json},"error":{{"code":-32000,"message":"no"}}}}"#
            ),
        };
        let incoming = decode_line(&line, observer.decoding(from, Mode::Lenient)).unwrap();
        let got = observer.handle(from, &incoming);
        match &incoming {
            Incoming::Request { .. } => {
                let mine = waiting.iter().filter(|(s, _, _)| *s == from).count();
                if waiting.iter().any(|(s, i, _)| *s == from && *i == id) {
                    assert_eq!(got, Err(TrackerError::DuplicateRequest { id }), "{line}");
                } else if mine >= MAX_PENDING {
                    assert_eq!(
                        got,
                        Err(TrackerError::TooManyPending { limit: MAX_PENDING })
                    );
                } else {
                    assert_eq!(got, Ok(None), "{line}");
                    waiting.push((from, id, method));
                }
            }
            Incoming::Response { result, .. } => {
                let at = waiting
                    .iter()
                    .position(|(s, i, _)| *s == from.other() && *i == id)
                    .unwrap_or_else(|| panic!("typed with no request waiting: {line}"));
                let (_, _, asked) = waiting.remove(at);
                assert_eq!(result.value.method(), Some(asked), "{line}");
                let paired = got.unwrap().unwrap();
                assert_eq!((paired.id, &*paired.method), (id, asked));
            }
            Incoming::Message(Message::Response(_) | Message::Error(_)) => {
                match waiting
                    .iter()
                    .position(|(s, i, _)| *s == from.other() && *i == id)
                {
                    Some(at) => {
                        let (_, _, asked) = waiting.remove(at);
                        // Untyped with its request waiting: an error
                        // response, or a result that does not fit that
                        // request's method (typed apart, it fails too).
                        if let Incoming::Message(Message::Response(r)) = &incoming {
                            let typed = r.typed(asked, Mode::Lenient);
                            assert!(
                                typed.map_or(true, |t| t.value.method().is_none()),
                                "untyped: {line} for {asked}"
                            );
                        }
                        let paired = got.unwrap().unwrap();
                        assert_eq!((paired.id, &*paired.method), (id, asked));
                    }
                    None => assert_eq!(got, Err(TrackerError::UnknownResponse { id })),
                }
            }
            other => panic!("unexpected {other:?} for {line}"),
        }
        for side in [Side::Client, Side::Agent] {
            let expected = waiting.iter().filter(|(s, _, _)| *s == side).count();
            assert_eq!(observer.pending_len(side), expected);
        }
    }
}
