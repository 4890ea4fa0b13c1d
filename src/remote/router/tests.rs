//! Unit tests of the router's internal state.

use super::*;
use crate::acp::{Message, RequestId};

fn up() -> Router {
    let mut r = Router::new();
    r.agent_started(1, 0, &mut Vec::new());
    r
}

/// `client` asks for a session and the agent answers `"s"`.
fn open_s(r: &mut Router, client: ClientId, out: &mut Vec<Out>) {
    r.handle_client(
        client,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#,
        Duration::ZERO,
        out,
    );
    r.handle_agent(
        r#"{"jsonrpc":"2.0","id":0,"result":{"sessionId":"s"}}"#,
        Duration::ZERO,
        out,
    );
}

/// The sessions `out` says to forget, and empties it.
fn forgotten(out: &mut Vec<Out>) -> Vec<String> {
    out.drain(..)
        .filter_map(|o| match o {
            Out::Forget { session } => Some(session),
            _ => None,
        })
        .collect()
}

#[test]
fn detached_sessions_are_forgotten_when_reused_or_reattached() {
    let mut r = up();
    let a = r.connect();
    let mut out = Vec::new();
    open_s(&mut r, a, &mut out);
    r.disconnect(a, &mut out);
    assert!(r.replaying.iter().any(|d| d == "s"));
    out.clear();
    // A new session of the same name (an agent reusing ids) is not a
    // reattach: what the old one missed is forgotten.
    let b = r.connect();
    r.handle_client(
        b,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#,
        Duration::ZERO,
        &mut out,
    );
    r.handle_agent(
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#,
        Duration::ZERO,
        &mut out,
    );
    assert!(r.replaying.is_empty());
    assert_eq!(forgotten(&mut out), ["s"]);
    assert_eq!(r.sessions.holder("s"), Some(b));
    // Pending counts come back to zero.
    assert_eq!(r.clients.get(&b).map(|c| c.pending.get()), Some(0));
    assert_eq!(r.pending(), (0, 0));
    // At most the session limit is kept: the oldest go.
    let mut r = up();
    r.max_replaying = 2;
    let (mut missed, mut forgot) = (Vec::new(), Vec::new());
    out.clear();
    for n in 0..3 {
        let c = r.connect();
        r.handle_client(
            c,
            r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#,
            Duration::ZERO,
            &mut out,
        );
        r.handle_agent(
            &format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"sessionId":"s{n}"}}}}"#),
            Duration::ZERO,
            &mut out,
        );
        r.disconnect(c, &mut out);
        r.handle_agent(&format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s{n}","update":{{}}}}}}"#), Duration::ZERO, &mut out);
        missed.extend(out.iter().filter_map(|o| match o {
            Out::Missed { session, .. } => Some(session.clone()),
            _ => None,
        }));
        forgot.extend(forgotten(&mut out));
    }
    assert_eq!(r.replaying, ["s1", "s2"]);
    assert_eq!(missed, ["s0", "s1", "s2"]);
    assert_eq!(forgot, ["s0"]);
}

/// Who may reattach a session (and so open its stream before the
/// reattach): its owner's user; a session never seen, only the agent's
/// own user; a session of another user's, never.
#[test]
fn may_reattach_follows_the_claim_rules() {
    let mut out = Vec::new();
    // A shared agent with named users: nobody may claim an unseen session.
    let mut shared = Router::new();
    shared.agent_started(1, 0, &mut out);
    let ana = shared.connect_as("ana", Permissions::READ_WRITE).unwrap();
    let bo = shared.connect_as("bo", Permissions::READ_WRITE).unwrap();
    assert!(!shared.may_reattach(ana, "unseen"));
    open_s(&mut shared, ana, &mut out);
    assert!(shared.may_reattach(ana, "s"));
    assert!(!shared.may_reattach(bo, "s"));
    // The anonymous user of a single-user agent may.
    let mut single = Router::new();
    let anyone = single.connect();
    assert!(single.may_reattach(anyone, "unseen"));
    // A user's own agent: its user may.
    let mut own = Router::new().with_dedicated_user("cy");
    let cy = own.connect_as("cy", Permissions::READ_WRITE).unwrap();
    assert!(own.may_reattach(cy, "unseen"));
    assert!(!own.may_reattach(ClientId(99), "unseen"));
}

/// The per-user connection limit is checked once, here: connections the
/// server core holds for clients that may resume are excused, every other
/// one counts, and the refusal names the limit.
#[test]
fn the_connection_limit_counts_all_but_the_excused_connections() {
    let mut r = Router::new().with_user_limits(2, 8);
    for _ in 0..3 {
        r.connect_excusing("ana", Permissions::READ_WRITE, 1)
            .unwrap();
    }
    assert_eq!(r.user_connections("ana"), 3);
    // Three held, one excused: two count, the limit.
    assert_eq!(
        r.connect_excusing("ana", Permissions::READ_WRITE, 1),
        Err(ConnectError::TooManyConnections { limit: 2 })
    );
    assert_eq!(
        r.connect_as("ana", Permissions::READ_WRITE),
        Err(ConnectError::TooManyConnections { limit: 2 })
    );
    assert!(r
        .connect_excusing("ana", Permissions::READ_WRITE, 2)
        .is_ok());
    // Another user's connections are not ana's.
    assert!(r.connect_as("bo", Permissions::READ_WRITE).is_ok());
}

/// A WebSocket bridge's loop per frame, the gate first, then the router:
/// a batch is refused by the gate with its reply and no close; the
/// `initialize` goes to the agent with the router's id.
#[test]
fn gate_then_router_per_frame() {
    use crate::remote::parts::{Checked, Gate};
    let mut router = Router::new();
    let mut out = Vec::new();
    router.agent_started(4242, 0, &mut out);
    let (mut gate, client) = (Gate::new(), router.connect());
    let mut replies = Vec::new();
    for frame in [
        r#"[{"jsonrpc":"2.0","id":0,"method":"initialize"}]"#,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
    ] {
        match gate.check(frame) {
            Ok(Checked::Forward(_)) => {
                router.handle_client(client, frame, Duration::ZERO, &mut out)
            }
            Ok(Checked::Ignore) => {}
            Err(e) => {
                assert_eq!(e.close_code(), None, "{e}");
                replies.push(e.reply().unwrap().error.message.clone());
            }
        }
    }
    assert!(replies.len() == 1 && replies[0].contains("batches are not supported"));
    let [Out::Agent(line)] = &out[..] else {
        panic!("{out:?}")
    };
    assert!(line
        .to_vec()
        .starts_with(br#"{"jsonrpc":"2.0","id":0,"method":"initialize""#));
}

/// v2's cancellation through the router: the agent's `$/cancel_request`
/// for its request goes to the client it asked (not to another one), the
/// answer back to the agent; a client's `tool_call/cancel` of its own
/// session goes to the agent and its answer back, one naming another
/// user's session is refused.
#[test]
fn cancellation_reaches_the_client_asked_and_tool_call_cancel_its_session() {
    let mut r = Router::new();
    let mut out = Vec::new();
    r.agent_started(1, 0, &mut out);
    let ana = r.connect_as("ana", Permissions::READ_WRITE).unwrap();
    let bo = r.connect_as("bo", Permissions::READ_WRITE).unwrap();
    for (n, c) in [ana, bo].into_iter().enumerate() {
        let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#;
        r.handle_client(c, new, Duration::ZERO, &mut out);
        let opened = format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"sessionId":"s{n}"}}}}"#);
        r.handle_agent(&opened, Duration::ZERO, &mut out);
    }
    out.clear();
    let to = |out: &[Out]| -> Vec<(Option<ClientId>, String)> {
        out.iter()
            .map(|o| match o {
                Out::Client { to, text, .. } => (Some(*to), text.clone()),
                Out::Agent(line) => (None, String::from_utf8_lossy(&line.to_vec()).into_owned()),
                other => (None, format!("{other:?}")),
            })
            .collect()
    };
    let ask = r#"{"jsonrpc":"2.0","id":50,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[]}}"#;
    r.handle_agent(ask, Duration::ZERO, &mut out);
    let withdraw = r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":50}}"#;
    r.handle_agent(withdraw, Duration::ZERO, &mut out);
    let sent = to(&out);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent.iter().all(|(c, _)| *c == Some(bo)), "{sent:?}");
    assert_eq!(sent[1].1, withdraw);
    out.clear();
    let cancelled = r#"{"jsonrpc":"2.0","id":50,"error":{"code":-32800,"message":"Cancelled"}}"#;
    r.handle_client(ana, cancelled, Duration::ZERO, &mut out);
    assert!(
        to(&out).iter().all(|(c, _)| c.is_some()),
        "not ana's to answer"
    );
    out.clear();
    r.handle_client(bo, cancelled, Duration::ZERO, &mut out);
    assert_eq!(to(&out), [(None, format!("{cancelled}\n"))]);
    out.clear();

    let cancel = |s: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"c","method":"tool_call/cancel","params":{{"sessionId":"{s}","toolCallId":"t"}}}}"#
        )
    };
    r.handle_client(ana, &cancel("s1"), Duration::ZERO, &mut out);
    let refused = to(&out);
    assert!(
        matches!(refused.as_slice(), [(Some(c), t)] if *c == ana && t.contains("error")),
        "{refused:?}"
    );
    out.clear();
    r.handle_client(ana, &cancel("s0"), Duration::ZERO, &mut out);
    let forwarded = to(&out);
    let [(None, line)] = forwarded.as_slice() else {
        panic!("{forwarded:?}")
    };
    assert!(line.contains(r#""method":"tool_call/cancel""#), "{line}");
    let ours: serde_json::Value = serde_json::from_str(line).unwrap();
    out.clear();
    let answer = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, ours["id"]);
    r.handle_agent(&answer, Duration::ZERO, &mut out);
    let back = to(&out);
    assert!(
        matches!(back.as_slice(), [(Some(c), t)] if *c == ana && t.contains(r#""id":"c""#)),
        "{back:?}"
    );
}

/// An agent's line is read up to the members it is routed on, short or
/// long: one whose structure holds but whose inside is not JSON (an
/// invalid escape, a bare word) goes to its session's client byte for
/// byte, as a plain relay would pass it; one whose structure breaks (a
/// string or a bracket left open), or stray text, is dropped.
#[test]
fn an_agents_line_is_read_no_further_than_its_routing_members() {
    let mut r = up();
    let a = r.connect();
    let mut out = Vec::new();
    open_s(&mut r, a, &mut out);
    out.clear();
    let sent = |out: &mut Vec<Out>| -> Vec<String> {
        out.drain(..)
            .filter_map(|o| match o {
                Out::Client { to, text, .. } if to == a => Some(text),
                _ => None,
            })
            .collect()
    };
    let inside = [
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"text":"\x"}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"done":tru}}}"#,
    ];
    for line in inside {
        assert!(crate::acp::Message::decode(line).is_err(), "{line}");
        r.handle_agent(line, Duration::ZERO, &mut out);
        assert_eq!(sent(&mut out), [line]);
    }
    let broken = [
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"text":"open}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"a":[}}}"#,
        "Loaded cached credentials.",
    ];
    for line in broken {
        r.handle_agent(line, Duration::ZERO, &mut out);
        assert!(sent(&mut out).is_empty(), "{line}");
    }
}

/// A JSON value as text, with whitespace (some of it newlines) here and
/// there, and strings with escapes and non-ASCII text.
fn answer_result() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        proptest::sample::select(alloc::vec!["null", "true", "0", "-1", "12.5e-3", "\"\""])
            .prop_map(String::from),
        "[ -~é日\u{1F600}]{0,12}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        any::<i64>().prop_map(|n| n.to_string()),
    ];
    let gap = || proptest::sample::select(alloc::vec!["", "", " ", "\t", "\n  "]);
    leaf.prop_recursive(3, 16, 4, move |inner| {
        prop_oneof![
            proptest::collection::vec((gap(), inner.clone()), 0..4).prop_map(|items| {
                let items: Vec<_> = items
                    .into_iter()
                    .map(|(g, v)| format!("{g}{v}{g}"))
                    .collect();
                format!("[{}]", items.join(","))
            }),
            proptest::collection::vec((gap(), "[a-zA-Z\"\\\\é]{1,8}", inner), 0..4).prop_map(
                |members| {
                    let members: Vec<_> = members
                        .into_iter()
                        .map(|(g, k, v)| {
                            format!("{g}{}{g}:{g}{v}", serde_json::to_string(&k).unwrap())
                        })
                        .collect();
                    format!("{{{}}}", members.join(","))
                }
            ),
        ]
    })
}

proptest::proptest! {
    /// The answer the router sends back is what `Message::encode` (serde)
    /// writes for it, whether spliced or encoded; the client reads the
    /// agent's result, under its own id.
    #[test]
    fn an_answer_is_what_the_serde_encoder_writes(
        result in answer_result(),
        numeric in proptest::prelude::any::<bool>(),
        n in proptest::prelude::any::<i64>(),
        name in "[ -~é\u{1F600}]{0,10}",
    ) {
        let agent_line = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#);
        let Ok(Message::Response(agent)) = Message::decode(&agent_line) else {
            panic!("the agent's line decodes: {agent_line}");
        };
        let id = if numeric { RequestId::Number(n) } else { RequestId::from(name.as_str()) };
        let back = Message::Response(crate::acp::Response { id: id.clone(), result: agent.result });
        let mut oracle = Vec::new();
        back.encode(&mut oracle).unwrap();
        let oracle = String::from_utf8(oracle).unwrap();
        let text = super::agent::answer_text(&back, agent_line.len()).unwrap();
        proptest::prop_assert_eq!(&text, oracle.trim_end_matches('\n'));
        let read: serde_json::Value = serde_json::from_str(&text).unwrap();
        let want: serde_json::Value = serde_json::from_str(&result).unwrap();
        proptest::prop_assert_eq!(&read["result"], &want);
        proptest::prop_assert_eq!(&read["id"], &serde_json::to_value(&id).unwrap());
        proptest::prop_assert!(!text.contains('\n'));
    }
}

/// A result the routing peek passed over unchecked, with a control byte
/// inside a string (not JSON): not spliced into a line a client would
/// refuse; the serde encoder refuses it too, so no answer is made.
#[test]
fn an_answer_whose_result_is_not_json_is_not_spliced() {
    let result = crate::acp::RawJson::from_validated("{\"sessionId\":\"a\u{0}b\"}");
    let back = Message::Response(crate::acp::Response {
        id: RequestId::Number(1),
        result,
    });
    assert_eq!(super::agent::answer_text(&back, 0), None);
    let result = crate::acp::RawJson::from_validated("{\"sessionId\":\"ab\"}");
    let back = Message::Response(crate::acp::Response {
        id: RequestId::Number(1),
        result,
    });
    assert_eq!(
        super::agent::answer_text(&back, 0).as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"ab"}}"#)
    );
}

/// The agent answers with a result holding a control byte inside a string
/// (the peek reads its envelope, not its inside): the requester gets an
/// internal error under its own id, not a line its parser refuses, nor
/// silence.
#[test]
fn an_answer_whose_result_is_not_json_gets_the_requester_an_error() {
    let mut r = up();
    let a = r.connect();
    let mut out = Vec::new();
    r.handle_client(
        a,
        r#"{"jsonrpc":"2.0","id":"q-5","method":"_x/ask","params":{}}"#,
        Duration::ZERO,
        &mut out,
    );
    out.clear();
    r.handle_agent(
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"text\":\"a\u{1}b\"}}",
        Duration::ZERO,
        &mut out,
    );
    let texts: Vec<&str> = out
        .iter()
        .filter_map(|o| match o {
            Out::Client { to, text, .. } if *to == a => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts.len(), 1, "{out:?}");
    let Ok(Message::Error(e)) = Message::decode(texts[0]) else {
        panic!("not an error answer: {}", texts[0]);
    };
    assert_eq!(e.id, RequestId::from("q-5"));
    assert_eq!(e.error.code, crate::ErrorCode::INTERNAL_ERROR);
}
