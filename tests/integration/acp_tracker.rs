//! The request tracker through the public API: ids, per-direction matching,
//! duplicates, unknown and late responses, deadlines, cancellation; and a
//! proptest against a naive model.
#![cfg(feature = "std")]

use std::collections::BTreeMap;
use std::time::Duration;

use acp_codec::acp::{Message, RequestId, RequestParams, RpcError, SessionIdRequest, Tracker};
use acp_codec::{ErrorCode, TrackerError};
use proptest::prelude::*;

const S: Duration = Duration::from_secs(1);

#[test]
fn overlapping_ids_match_per_direction() {
    let mut t = Tracker::new();
    let mut out = Vec::new();
    for _ in 0..3 {
        t.encode_request(
            &RequestParams::CloseSession(SessionIdRequest::new("s")),
            Duration::ZERO,
            &mut out,
        )
        .unwrap();
    }
    // The agent's request 2 arrives while our request 2 waits.
    let theirs = Message::decode(r#"{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#).unwrap();
    assert_eq!(t.handle(&theirs, S).unwrap(), None);
    assert_eq!((t.pending_len(), t.peer_pending_len()), (3, 1));
    // Reusing a pending id is reported; the table is unchanged.
    assert!(matches!(
        t.handle(&theirs, S),
        Err(TrackerError::DuplicateRequest { .. })
    ));
    // Our answer to theirs.
    let mut reply = Vec::new();
    t.encode_response(
        &RequestId::Number(2),
        &serde_json::json!({"content": "x"}),
        &mut reply,
    )
    .unwrap();
    assert_eq!(
        reply,
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":\"x\"}}\n"
    );
    assert!(matches!(
        t.encode_response(&RequestId::Number(2), &(), &mut reply),
        Err(TrackerError::NotPending { .. })
    ));
    // Their answer to ours.
    let ours = Message::decode(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#).unwrap();
    let done = t.handle(&ours, 3 * S).unwrap().unwrap();
    assert_eq!(
        (done.id, done.elapsed, &*done.method),
        (RequestId::Number(2), 3 * S, "session/close")
    );
    assert_eq!((t.pending_len(), t.peer_pending_len()), (2, 0));
}

#[test]
fn duplicate_unknown_and_late_responses() {
    let mut t = Tracker::new().with_default_timeout(10 * S);
    let a = t.start("session/prompt", Duration::ZERO);
    let b = t.start_with_timeout("initialize", Duration::ZERO, 2 * S);
    assert_eq!(t.next_deadline(), Some(2 * S));
    assert_eq!(t.handle_response(&a, S).unwrap().method, "session/prompt");
    let e = t.handle_response(&a, S).unwrap_err();
    assert_eq!(e.to_string(), "duplicate response to request id 0");
    assert!(matches!(
        t.handle_response(&RequestId::Number(7), S),
        Err(TrackerError::UnknownResponse { .. })
    ));
    let e = t.handle_response(&RequestId::from("1"), S).unwrap_err();
    assert_eq!(e.to_string(), "response to unknown request id \"1\"");
    assert!(t.poll_expired(S).is_none());
    let x = t.poll_expired(2 * S).unwrap();
    assert_eq!(
        (x.id.clone(), &*x.method, x.deadline),
        (b.clone(), "initialize", 2 * S)
    );
    assert!(t.poll_expired(100 * S).is_none());
    assert!(matches!(
        t.handle_response(&b, 3 * S),
        Err(TrackerError::LateResponse { .. })
    ));
    // An error response completes a request too.
    let c = t.start("session/new", 3 * S);
    let err =
        Message::decode(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"auth"}}"#)
            .unwrap();
    assert_eq!(t.handle(&err, 4 * S).unwrap().unwrap().id, c);
}

#[test]
fn cancellation_messages() {
    let mut t = Tracker::new();
    let id = t.start("session/prompt", Duration::ZERO);
    let mut out = Vec::new();
    t.cancel(&id, &mut out).unwrap();
    assert_eq!(
        out,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"requestId\":0}}\n"
    );
    out.clear();
    t.cancel_session("s1", &mut out).unwrap();
    assert_eq!(
        out,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s1\"}}\n"
    );
    // Still pending until answered; the completion says it was cancelled.
    let done = t.handle_response(&id, S).unwrap();
    assert!(done.cancelled);
    assert!(matches!(
        t.cancel(&id, &mut out),
        Err(TrackerError::NotPending { .. })
    ));
    // Peer requests: answering with -32800.
    t.handle_peer_request(&RequestId::from("p"), "session/request_permission")
        .unwrap();
    out.clear();
    t.encode_error(
        &RequestId::from("p"),
        &RpcError::new(ErrorCode::REQUEST_CANCELLED, "cancelled"),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"error\":{\"code\":-32800,\"message\":\"cancelled\"}}\n");
}

#[test]
fn peer_pending_is_bounded() {
    let mut t = Tracker::new().with_max_peer_pending(2);
    t.handle_peer_request(&RequestId::Number(0), "a").unwrap();
    t.handle_peer_request(&RequestId::Number(1), "a").unwrap();
    let e = t
        .handle_peer_request(&RequestId::Number(2), "a")
        .unwrap_err();
    assert_eq!(e.to_string(), "peer has more than 2 requests pending");
    assert_eq!(t.finish_peer_request(&RequestId::Number(0)).unwrap(), "a");
    t.handle_peer_request(&RequestId::Number(2), "a").unwrap();
}

#[derive(Debug, Clone)]
enum Op {
    Start(u8),
    Respond(u8),
    Advance(u8),
    Cancel(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u8..20).prop_map(Op::Start),
        any::<u8>().prop_map(Op::Respond),
        (0u8..10).prop_map(Op::Advance),
        any::<u8>().prop_map(Op::Cancel),
    ]
}

#[derive(Debug, PartialEq)]
enum State {
    Pending { deadline: Duration, cancelled: bool },
    Answered,
    Expired,
}

proptest! {
    /// The tracker agrees with a naive model on every response, expiry and
    /// cancellation.
    #[test]
    fn tracker_matches_a_naive_model(ops in proptest::collection::vec(op(), 0..80)) {
        let mut t = Tracker::new();
        let mut model: BTreeMap<i64, State> = BTreeMap::new();
        let mut now = Duration::ZERO;
        for op in ops {
            match op {
                Op::Start(secs) => {
                    let id = t.start_with_timeout("m", now, Duration::from_secs(secs.into()));
                    prop_assert_eq!(id, RequestId::Number(model.len() as i64));
                    model.insert(model.len() as i64, State::Pending { deadline: now + Duration::from_secs(secs.into()), cancelled: false });
                }
                Op::Respond(k) => {
                    let n = i64::from(k) % (model.len() as i64 + 2);
                    let got = t.handle_response(&RequestId::Number(n), now);
                    match model.get_mut(&n) {
                        Some(s @ State::Pending { .. }) => {
                            let State::Pending { cancelled, .. } = *s else { unreachable!() };
                            let done = got.unwrap();
                            prop_assert_eq!(done.cancelled, cancelled);
                            *s = State::Answered;
                        }
                        Some(State::Answered) => prop_assert!(matches!(got, Err(TrackerError::DuplicateResponse { .. })), "{:?}", got),
                        Some(s @ State::Expired) => {
                            prop_assert!(matches!(got, Err(TrackerError::LateResponse { .. })), "{:?}", got);
                            *s = State::Answered;
                        }
                        None => prop_assert!(matches!(got, Err(TrackerError::UnknownResponse { .. })), "{:?}", got),
                    }
                }
                Op::Advance(secs) => {
                    now += Duration::from_secs(secs.into());
                    let mut expired = Vec::new();
                    while let Some(x) = t.poll_expired(now) {
                        prop_assert!(x.deadline <= now);
                        let RequestId::Number(n) = x.id else { unreachable!() };
                        expired.push(n);
                    }
                    let mut expect: Vec<(Duration, i64)> = model.iter().filter_map(|(&n, s)| match s {
                        State::Pending { deadline, .. } if *deadline <= now => Some((*deadline, n)),
                        _ => None,
                    }).collect();
                    expect.sort();
                    prop_assert_eq!(expired, expect.iter().map(|e| e.1).collect::<Vec<_>>());
                    for (_, n) in expect {
                        model.insert(n, State::Expired);
                    }
                }
                Op::Cancel(k) => {
                    let n = i64::from(k) % (model.len() as i64 + 1);
                    let mut out = Vec::new();
                    let got = t.cancel(&RequestId::Number(n), &mut out);
                    match model.get_mut(&n) {
                        Some(State::Pending { cancelled, .. }) => {
                            prop_assert!(got.is_ok());
                            *cancelled = true;
                        }
                        _ => prop_assert!(got.is_err() && out.is_empty()),
                    }
                }
            }
            let pending = model.values().filter(|s| matches!(s, State::Pending { .. })).count();
            prop_assert_eq!(t.pending_len(), pending);
            let next = model.values().filter_map(|s| match s { State::Pending { deadline, .. } => Some(*deadline), _ => None }).min();
            prop_assert_eq!(t.next_deadline(), next);
        }
    }
}

/// The observer against a plain list, on generated lines of both sides
/// (the `observer` fuzz target's check).
#[cfg(feature = "alloc")]
mod observer {
    use acp_codec::acp::{
        decode_line, Incoming, Message, Mode, Observer, Side, StopReason, ToolCallStatus, ToolKind,
    };
    use acp_codec::TrackerError;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn pairs_as_a_plain_list_does(data in proptest::collection::vec(any::<u8>(), 0..120)) {
            crate::checks::observer::check(&data);
        }
    }

    /// The same id from both sides: two requests, each answered by the
    /// other side; a response pairs only across.
    #[test]
    fn the_sides_number_their_own_requests() {
        let mut o = Observer::new();
        let lines = [
            (
                Side::Client,
                r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
            ),
            (
                Side::Agent,
                r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#,
            ),
        ];
        for (side, line) in lines {
            let msg = decode_line(line, o.decoding(side, Mode::Lenient)).unwrap();
            assert_eq!(o.handle(side, &msg), Ok(None));
        }
        // The client answers the agent's fs request, typed as one.
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"content":"x"}}"#;
        let msg = decode_line(answer, o.decoding(Side::Client, Mode::Lenient)).unwrap();
        assert!(
            matches!(&msg, Incoming::Response { result, .. } if result.value.method() == Some("fs/read_text_file"))
        );
        assert_eq!(
            o.handle(Side::Client, &msg).unwrap().unwrap().method,
            "fs/read_text_file"
        );
        // A second answer from the client pairs with nothing.
        let again = decode_line(answer, o.decoding(Side::Client, Mode::Lenient)).unwrap();
        assert!(matches!(again, Incoming::Message(Message::Response(_))));
        assert!(matches!(
            o.handle(Side::Client, &again),
            Err(TrackerError::UnknownResponse { .. })
        ));
        // The agent's error answer to the prompt pairs with it.
        let err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#;
        let msg = decode_line(err, o.decoding(Side::Agent, Mode::Lenient)).unwrap();
        assert_eq!(
            o.handle(Side::Agent, &msg).unwrap().unwrap().method,
            "session/prompt"
        );
        assert_eq!(
            (o.pending_len(Side::Client), o.pending_len(Side::Agent)),
            (0, 0)
        );
    }

    #[test]
    fn wire_enums_print_their_wire_names() {
        assert_eq!(ToolKind::Execute.to_string(), "execute");
        assert_eq!(ToolCallStatus::InProgress.to_string(), "in_progress");
        assert_eq!(StopReason::MaxTurnRequests.to_string(), "max_turn_requests");
        assert_eq!(StopReason::Unknown("later".into()).to_string(), "later");
    }

    #[test]
    fn tracker_errors_compare() {
        let id = acp_codec::acp::RequestId::Number(3);
        assert_eq!(
            TrackerError::UnknownResponse { id: id.clone() },
            TrackerError::UnknownResponse { id: id.clone() }
        );
        assert_ne!(
            TrackerError::UnknownResponse { id: id.clone() },
            TrackerError::DuplicateResponse { id }
        );
        assert_ne!(
            TrackerError::TooManyPending { limit: 1 },
            TrackerError::TooManyPending { limit: 2 }
        );
    }
}
