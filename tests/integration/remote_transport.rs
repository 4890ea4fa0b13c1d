//! The remote transport's rules (`remote::parts::Gate`, `remote::parts::check_post`,
//! `remote::session_field`), and what `remote::Server` keeps for a session
//! whose client left, through the public API, held against independent
//! oracles: the TypeScript SDK 2.4's rules re-stated over
//! `serde_json::Value`, and a plain characterization of what a
//! byte-bounded, oldest-first log keeps.
#![cfg(feature = "alloc")]

use acp_codec::acp::RawJson;
use acp_codec::remote::parts::{check_post, Checked, Gate, Post};
use acp_codec::remote::{
    is_session_scoped, oversize, session_field, CloseCode, RemoteError, SessionField, BATCH_ERROR,
    DEFAULT_MAX_ID_LENGTH, HEADER_CONNECTION_ID, HEADER_SESSION_ID, PARSE_ERROR,
};
use proptest::prelude::*;
use serde_json::{json, Value};

// ---------------------------------------------------------------- the SDK's rules, over Value

/// What the SDK's WebSocket server does with one frame (`ws-server.js`).
#[derive(Debug, PartialEq)]
enum Sdk {
    Forward,
    Ignore,
    Reply(Value),
    Close(u16),
}

fn is_request(v: &Value) -> bool {
    v.get("method").is_some_and(Value::is_string) && v.get("id").is_some()
}

fn is_notification(v: &Value) -> bool {
    v.get("method").is_some_and(Value::is_string) && v.get("id").is_none()
}

fn is_response(v: &Value) -> bool {
    v.get("method").is_none()
        && v.get("id").is_some()
        && (v.get("result").is_some() || v.get("error").is_some())
}

fn sdk_ws(initialized: &mut bool, text: &str) -> Sdk {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return Sdk::Reply(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700}}));
    };
    if v.is_array() {
        return Sdk::Reply(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600}}));
    }
    if !v.is_object() {
        return Sdk::Reply(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600}}));
    }
    if !*initialized {
        if is_response(&v) {
            return Sdk::Ignore;
        }
        if !is_request(&v) && !is_notification(&v) {
            return Sdk::Reply(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600}}));
        }
        if !(is_request(&v) && v["method"] == "initialize") || v["id"].is_null() {
            return Sdk::Close(1002);
        }
        *initialized = true;
        return Sdk::Forward;
    }
    if is_request(&v) && v["method"] == "initialize" {
        return Sdk::Reply(json!({"jsonrpc":"2.0","id":v["id"],"error":{"code":-32600}}));
    }
    Sdk::Forward
}

/// Ours, in the same terms: the reply reduced to id and code.
fn ours_ws(gate: &mut Gate, text: &str) -> Sdk {
    match gate.check(text) {
        Ok(Checked::Forward(_)) => Sdk::Forward,
        Ok(Checked::Ignore) => Sdk::Ignore,
        Err(e) => match (e.close_code(), reply_line(&e)) {
            (Some(code), _) => Sdk::Close(code.0),
            (None, Some(reply)) => {
                let v: Value = serde_json::from_str(&reply).unwrap();
                Sdk::Reply(
                    json!({"jsonrpc":"2.0","id":v["id"],"error":{"code":v["error"]["code"]}}),
                )
            }
            (None, None) => panic!("{e}: neither a reply nor a close"),
        },
    }
}

fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        (0i64..5).prop_map(Value::from),
        "[a-c]{1,3}".prop_map(Value::from),
    ]
}

fn method() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "initialize",
        "session/new",
        "session/prompt",
        "session/load",
        "session/list",
        "session/cancel",
        "_x/ext",
    ])
}

fn params() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(json!({}))),
        "[a-c]{1,2}".prop_map(|s| Some(json!({"sessionId": s, "prompt": []}))),
        Just(Some(json!({"sessionId": null}))),
    ]
}

/// Frames of every kind the SDK tells apart.
fn frame() -> impl Strategy<Value = String> {
    let request = (id(), method(), params()).prop_map(|(id, m, p)| {
        let mut v = json!({"jsonrpc":"2.0","id":id,"method":m});
        if let Some(p) = p {
            v["params"] = p;
        }
        v.to_string()
    });
    let notification = (method(), params()).prop_map(|(m, p)| {
        let mut v = json!({"jsonrpc":"2.0","method":m});
        if let Some(p) = p {
            v["params"] = p;
        }
        v.to_string()
    });
    let response = id().prop_map(|id| json!({"jsonrpc":"2.0","id":id,"result":{}}).to_string());
    prop_oneof![
        4 => request,
        2 => notification,
        1 => response,
        1 => Just(r#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#.to_owned()),
        1 => Just("[]".to_owned()),
        1 => Just("not json".to_owned()),
        1 => Just("42".to_owned()),
        1 => Just(r#""text""#.to_owned()),
    ]
}

proptest! {
    /// A connection's frames, one after the other: our gate decides what
    /// the SDK's server does, frame by frame (until the SDK would close).
    #[test]
    fn gate_agrees_with_the_sdk(frames in prop::collection::vec(frame(), 1..12)) {
        let (mut gate, mut initialized) = (Gate::new(), false);
        for f in &frames {
            let sdk = sdk_ws(&mut initialized, f);
            let ours = ours_ws(&mut gate, f);
            prop_assert_eq!(&ours, &sdk, "frame {}", f);
            prop_assert_eq!(gate.is_initialized(), initialized);
            if matches!(sdk, Sdk::Close(_)) {
                break;
            }
        }
    }

    /// A `POST` body with or without the two headers: ours accepts exactly
    /// what the SDK's `handlePost` accepts, and routes it to the same
    /// session (`server.js`: `determineRoute`).
    #[test]
    fn check_post_agrees_with_the_sdk(
        body in frame(),
        connection in prop::option::of(Just("c-1")),
        header in prop::option::of("[a-c]{1,2}"),
    ) {
        let sdk = sdk_post(&body, connection, header.as_deref());
        let ours = match check_post(&body, connection, header.as_deref(), DEFAULT_MAX_ID_LENGTH) {
            Ok(Post::Initialize(_)) => Ok(None),
            Ok(Post::Message { session, .. }) => Ok(Some(session.map(|s| s.into_owned()))),
            Err(e) => Err(e.http_status()),
        };
        prop_assert_eq!(ours, sdk, "body {} connection {:?} session {:?}", body, connection, header);
    }

    /// `session_field` reads what a `Value` lookup reads.
    #[test]
    fn session_field_agrees_with_value(
        session in prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            "[a-z\"\\\\é]{0,6}".prop_map(|s| Some(Value::from(s))),
            (0i64..9).prop_map(|n| Some(Value::from(n))),
            Just(Some(json!({"nested": "x"}))),
        ],
        other in "[a-z]{1,4}",
    ) {
        let mut v = json!({ other.clone(): [1, {"sessionId": "inner"}] });
        if let Some(s) = &session {
            v["sessionId"] = s.clone();
        }
        let text = v.to_string();
        let raw = RawJson::from_text(&text).unwrap();
        let want = match v.get("sessionId") {
            None | Some(Value::Null) => SessionField::Absent,
            Some(Value::String(s)) => SessionField::Id(s.clone().into()),
            Some(_) => SessionField::Invalid,
        };
        prop_assert_eq!(session_field(Some(&raw)), want);
    }
}

/// The SDK's `handlePost`: `Ok(None)` for an initialize that makes a
/// connection, `Ok(Some(session))` for a forwarded message, `Err(status)`.
fn sdk_post(
    body: &str,
    connection: Option<&str>,
    header: Option<&str>,
) -> Result<Option<Option<String>>, u16> {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return Err(400);
    };
    // The SDK answers a batch 400; the transport's RFD says 501 ("Batch
    // JSON-RPC requests return 501"), and that is what we answer.
    if v.is_array() {
        return Err(501);
    }
    if !v.is_object() {
        return Err(400);
    }
    if v.get("method").is_some_and(|m| m == "initialize") && v.get("id").is_some() {
        if connection.is_some() || v["id"].is_null() {
            return Err(400);
        }
        return Ok(None);
    }
    if connection.is_none() {
        return Err(400);
    }
    if is_response(&v) {
        return Ok(Some(None));
    }
    // Objects the SDK forwards but that are not JSON-RPC messages do not
    // occur in `frame()`.
    let method = v["method"].as_str().unwrap();
    let from_params = v
        .get("params")
        .and_then(|p| p.get("sessionId"))
        .and_then(Value::as_str);
    if (is_session_scoped(method) || from_params.is_some()) && header.is_none() {
        return Err(400);
    }
    if let (Some(h), Some(p)) = (header, from_params) {
        if h != p {
            return Err(400);
        }
    }
    Ok(Some(header.or(from_params).map(str::to_owned)))
}

// ---------------------------------------------------------------- examples

#[test]
fn errors_say_what_to_answer() {
    let mut gate = Gate::new();
    let e = gate.check("{").unwrap_err();
    assert_eq!(
        (reply_line(&e).as_deref(), e.close_code(), e.code().0),
        (Some(PARSE_ERROR), None, -32700)
    );
    let e = gate.check(r#"[1,2]"#).unwrap_err();
    assert_eq!(reply_line(&e).as_deref(), Some(BATCH_ERROR));
    let v: Value = serde_json::from_str(BATCH_ERROR).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: JSON-RPC batches are not supported"}})
    );
    let e = gate
        .check(r#"{"jsonrpc":"2.0","id":null,"method":"initialize"}"#)
        .unwrap_err();
    assert_eq!(
        (e.clone(), e.close_code()),
        (
            RemoteError::InitializeWithoutId,
            Some(CloseCode::PROTOCOL_ERROR)
        )
    );
    assert_eq!(e.to_string(), "the initialize request must have an id");
    // None of these changed the gate.
    assert!(!gate.is_initialized());
    let init = r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":1}}"#;
    assert!(matches!(gate.check(init), Ok(Checked::Forward(_))));
    // Over-long ids close with 1008, as the SDK's limit does.
    let long = "x".repeat(DEFAULT_MAX_ID_LENGTH + 1);
    let prompt = json!({"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":long,"prompt":[]}}).to_string();
    let e = gate.check(&prompt).unwrap_err();
    assert_eq!(
        e,
        RemoteError::IdTooLong {
            len: DEFAULT_MAX_ID_LENGTH + 1,
            limit: DEFAULT_MAX_ID_LENGTH
        }
    );
    assert_eq!(e.close_code(), Some(CloseCode::POLICY_VIOLATION));
    let mut small = Gate::new().with_max_id_len(3);
    let e = small
        .check(r#"{"jsonrpc":"2.0","id":"abcd","method":"initialize"}"#)
        .unwrap_err();
    assert_eq!(e.to_string(), "id of 4 bytes exceeds the 3-byte limit");
}

#[test]
fn post_errors_and_headers() {
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}"#;
    let e = check_post(list, None, None, DEFAULT_MAX_ID_LENGTH).unwrap_err();
    assert_eq!(
        (e.http_status(), e.to_string()),
        (400, format!("missing {HEADER_CONNECTION_ID} header"))
    );
    let Ok(Post::Message { session: None, .. }) =
        check_post(list, Some("c"), None, DEFAULT_MAX_ID_LENGTH)
    else {
        panic!()
    };
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#;
    let e = check_post(init, Some("c"), None, DEFAULT_MAX_ID_LENGTH).unwrap_err();
    assert_eq!(
        reply_line(&e).unwrap(),
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"initialize is not allowed on an initialized connection"}}"#
    );
    let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#;
    let e = check_post(cancel, Some("c"), None, DEFAULT_MAX_ID_LENGTH).unwrap_err();
    assert_eq!(e.to_string(), format!("missing {HEADER_SESSION_ID} header"));
    // A session-scoped method named by the header alone.
    let Ok(Post::Message { session, .. }) = check_post(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/set_model","params":{"modelId":"m"}}"#,
        Some("c"),
        Some("s9"),
        DEFAULT_MAX_ID_LENGTH,
    ) else {
        panic!()
    };
    assert_eq!(session.as_deref(), Some("s9"));
    let e = check_post("[]", Some("c"), None, DEFAULT_MAX_ID_LENGTH).unwrap_err();
    assert_eq!(
        (e.http_status(), reply_line(&e).as_deref()),
        (501, Some(BATCH_ERROR))
    );
}

#[test]
fn oversize_answers_requests_only() {
    let e = oversize(
        br#"{"id":"r-7","method":"session/prompt","params":{"#,
        100,
        50,
    );
    assert_eq!(e.http_status(), 413);
    assert_eq!(
        e.to_string(),
        "message of 100 bytes exceeds the 50-byte limit"
    );
    let v: Value = serde_json::from_str(&reply_line(&e).unwrap()).unwrap();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!("r-7"), json!(-32600))
    );
    // A response, or no readable id: nothing to answer, only the close.
    assert_eq!(
        reply_line(&oversize(br#"{"id":3,"result":{"#, 100, 50)),
        None
    );
    assert_eq!(
        reply_line(&oversize(br#"{"params":{"huge":"#, 100, 50)),
        None
    );
    assert_eq!(
        oversize(b"", 100, 50).close_code(),
        Some(CloseCode::MESSAGE_TOO_BIG)
    );
}

// ---------------------------------------------------------------- missed

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// What a left session keeps for the client that reattaches it is the
    /// longest run of its latest messages that fits the budget, skipping
    /// those larger than the budget (never kept); everything else was
    /// dropped and counted (`_bridge/replay_dropped` first); sessions do
    /// not mix, and once handed over nothing is handed over again.
    #[test]
    fn a_reattach_gets_the_newest_that_fit(
        pushes in prop::collection::vec((0usize..3, 0usize..300), 0..40),
        budget in 0usize..1200,
    ) {
        use crate::checks::remote_transport::{kept_of, Away};
        use acp_codec::remote::REPLAY_DROPPED;

        let mut away = Away::new(budget, &["s0", "s1", "s2"]);
        let mut sent: Vec<Vec<String>> = vec![Vec::new(); 3];
        for (n, &(s, len)) in pushes.iter().enumerate() {
            let text: String = format!("{n:03}").chars().cycle().take(len).collect();
            sent[s].push(away.update(&format!("s{s}"), &text));
        }
        for (s, sent) in sent.iter().enumerate() {
            let session = format!("s{s}");
            let (keep, dropped, bytes) = kept_of(sent, budget);
            let (conn, mut got, answer) = away.reattach(&session, json!({"result": {}}));
            prop_assert!(answer.get("result").is_some());
            if dropped > 0 && budget > 0 {
                let note: Value = serde_json::from_str(&got.remove(0)).unwrap();
                prop_assert_eq!(&note["method"], REPLAY_DROPPED);
                prop_assert_eq!(
                    &note["params"],
                    &json!({"sessionId": session, "droppedMessages": dropped, "droppedBytes": bytes})
                );
            }
            prop_assert_eq!(&got, &keep);
            away.leave(conn);
            let (conn, got, _) = away.reattach(&session, json!({"result": {}}));
            prop_assert!(got.is_empty(), "handed over twice: {:?}", got);
            away.leave(conn);
        }
    }
}

// ---------------------------------------------------------------- backlog

/// Bytes a backlog holds after `log` (`(time, take, len)`), takes of more
/// than it holds refused.
fn log_bytes(log: &[(u64, bool, usize)]) -> usize {
    let mut bytes = 0usize;
    for &(_, take, len) in log {
        if !take {
            bytes += len;
        } else if len <= bytes {
            bytes -= len;
        }
    }
    bytes
}

proptest! {
    /// `Backlog` against a replay of its event log: the bytes are what was
    /// queued minus what was taken (a take of more than is queued refused,
    /// changing nothing), and it is stalled
    /// exactly when full and the last take, or the moment it became full,
    /// is `max_stall` or more in the past.
    #[test]
    fn backlog_agrees_with_its_event_log(
        events in prop::collection::vec((any::<bool>(), 0usize..60, 0u64..4), 1..50),
        probe in 0u64..20,
    ) {
        use acp_codec::remote::Backlog;
        use std::time::Duration;
        let (max, stall) = (100usize, 5u64);
        let mut backlog = Backlog::new(max, Duration::from_secs(stall));
        let mut log: Vec<(u64, bool, usize)> = Vec::new();
        let mut now = 0u64;
        for &(take, len, dt) in &events {
            now += dt;
            let done = if take {
                backlog.taken(len, Duration::from_secs(now)).is_ok()
            } else {
                backlog.queued(len, Duration::from_secs(now)).is_ok()
            };
            log.push((now, take, len));
            prop_assert_eq!(done, !take || log_bytes(&log[..log.len() - 1]) >= len);
        }
        // The oracle, from the log alone.
        let mut bytes = 0usize;
        let mut clock = 0u64;
        for &(t, take, len) in &log {
            if take {
                if len > bytes {
                    continue;
                }
                bytes -= len;
                clock = t;
            } else {
                let was_full = bytes >= max;
                bytes += len;
                if !was_full && bytes >= max {
                    clock = t;
                }
            }
        }
        let at = now + probe;
        prop_assert_eq!(backlog.bytes(), bytes);
        prop_assert_eq!(backlog.is_full(), bytes >= max);
        prop_assert_eq!(backlog.is_stalled(Duration::from_secs(at)), bytes >= max && at - clock >= stall);
    }
}

/// The output a connection holds and the chunk reassembler's budget are two
/// limits with two names: a default `Backlog` is full at 64 MiB, not at
/// the reassembler's 50 MiB.
#[test]
fn backlog_limit_is_not_the_reassembler_budget() {
    use acp_codec::remote::{Backlog, DEFAULT_MAX_BACKLOG_BYTES};
    use std::time::Duration;
    assert_eq!(DEFAULT_MAX_BACKLOG_BYTES, 64 << 20);
    assert_eq!(acp_codec::limits::DEFAULT_MAX_BUFFERED_BYTES, 50 << 20);
    let mut b = Backlog::default();
    b.queued(
        acp_codec::limits::DEFAULT_MAX_BUFFERED_BYTES,
        Duration::ZERO,
    )
    .unwrap();
    assert!(!b.is_full());
    b.queued((64 << 20) - (50 << 20), Duration::ZERO).unwrap();
    assert!(b.is_full());
}

/// A refusal's reply as the line a bridge sends (without `\n`).
fn reply_line(e: &acp_codec::remote::RemoteError) -> Option<String> {
    let mut line = Vec::new();
    e.reply()?.encode(&mut line).unwrap();
    assert_eq!(line.pop(), Some(b'\n'));
    Some(String::from_utf8(line).unwrap())
}
