//! Version negotiation (`version`): the cases the TypeScript SDK's
//! `AgentProtocolRouter` documents (a batch, a request before `initialize`,
//! a repeated `initialize`, a newer and an older version asked, a version
//! that is not an integer), the choice against a naive reference, and the
//! `initialize` rewrite between v1 and v2 there and back.
#![cfg(feature = "std")]

use acp_codec::acp::{Message, RequestId, Side};
use acp_codec::version::{choose, rewrite_initialize, Dialect, Negotiator, Step, VersionError};
use proptest::prelude::*;
use serde_json::{json, Value};

const BOTH: &[Dialect] = &[Dialect::V1, Dialect::V2];

fn init(id: Value, version: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
           "params": {"protocolVersion": version, "info": {"name": "t", "version": "1"}}})
    .to_string()
}

/// The error a step refuses with: (id, code, message, data).
fn refused(step: Step<'_>) -> (RequestId<'static>, i32, String, Option<Value>) {
    let Step::Refuse { id, error } = step else {
        panic!("not refused: {step:?}")
    };
    let data = error.data.map(|d| serde_json::from_str(d.get()).unwrap());
    (
        id.into_owned(),
        error.code.0,
        error.message.into_owned(),
        data,
    )
}

#[test]
fn a_batch_gets_one_invalid_request_with_a_null_id() {
    let mut n = Negotiator::new(BOTH);
    let batch = format!("[{}]", init(json!(0), json!(2)));
    let (id, code, _, _) = refused(n.handle_line(&batch));
    assert_eq!((id, code), (RequestId::Null, -32600));
    // The connection is still open to an initialize.
    assert!(matches!(
        n.handle_line(&init(json!(0), json!(2))),
        Step::Initialize(_)
    ));
}

#[test]
fn a_request_before_initialize_is_refused_and_the_state_kept() {
    let mut n = Negotiator::new(BOTH);
    let new = r#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/"}}"#;
    let (id, code, message, _) = refused(n.handle_line(new));
    assert_eq!((id, code), (RequestId::Number(7), -32600));
    assert_eq!(
        message,
        "the first request must be initialize, got session/new"
    );
    assert_eq!(n.dialect(), None);
    // Notifications and responses are ignored.
    let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#;
    assert_eq!(n.handle_line(cancel), Step::Ignore);
    assert_eq!(
        n.handle_line(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        Step::Ignore
    );
    // Text that is not JSON: -32700, id null.
    let (id, code, _, _) = refused(n.handle_line("Loaded cached credentials."));
    assert_eq!((id, code), (RequestId::Null, -32700));
    assert_eq!(n.dialect(), None);
}

#[test]
fn a_repeated_initialize_is_answered_again_only_in_the_same_dialect() {
    let mut n = Negotiator::new(BOTH);
    let line = init(json!(0), json!(2));
    let Step::Initialize(first) = n.handle_line(&line) else {
        panic!()
    };
    assert!(!first.repeated);
    // After another message, a repeat choosing v2 again is answered.
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}"#;
    let Step::Pass { dialect, message } = n.handle_line(list) else {
        panic!()
    };
    assert_eq!(dialect, Dialect::V2);
    assert_eq!(message.method(), Some("session/list"));
    let line = init(json!(2), json!(5));
    let Step::Initialize(again) = n.handle_line(&line) else {
        panic!()
    };
    assert!(again.repeated);
    assert_eq!((again.asked, again.dialect), (5, Dialect::V2));
    // One that would choose v1 is refused; the connection stays v2.
    let (id, code, message, _) = refused(n.handle_line(&init(json!(3), json!(1))));
    assert_eq!((id, code), (RequestId::Number(3), -32600));
    assert_eq!(
        message,
        "initialize asks for protocol version 1, which chooses v1; this connection speaks v2"
    );
    assert_eq!(n.dialect(), Some(Dialect::V2));
}

#[test]
fn a_newer_version_asked_gets_the_highest_spoken() {
    for (spoken, asked, want) in [
        (BOTH, 3, Dialect::V2),
        (BOTH, 65535, Dialect::V2),
        (&[Dialect::V1][..], 2, Dialect::V1),
        (&[Dialect::V1][..], 9, Dialect::V1),
    ] {
        let mut n = Negotiator::new(spoken);
        let line = init(json!("x"), json!(asked));
        let Step::Initialize(i) = n.handle_line(&line) else {
            panic!("{line}")
        };
        assert_eq!((i.asked, i.dialect), (asked, want));
        // v2's names, whatever was chosen: the rewrite reads them as v1.
        assert_eq!(i.written_as, Dialect::V2);
        assert_eq!(i.id, RequestId::from("x"));
        assert_eq!(n.dialect(), Some(want));
    }
}

#[test]
fn an_older_version_asked_gets_unsupported_with_what_is_spoken() {
    let mut n = Negotiator::new(&[Dialect::V2]);
    let (id, code, message, data) = refused(n.handle_line(&init(json!(4), json!(1))));
    assert_eq!((id, code), (RequestId::Number(4), -32022));
    assert_eq!(message, "Unsupported protocol version");
    assert_eq!(data, Some(json!({"requested": 1, "supported": [2]})));
    // v1 only, asked 0: the SDK's router answers v1; here, -32022.
    let mut n = Negotiator::new(&[Dialect::V1]);
    let (_, code, _, data) = refused(n.handle_line(&init(json!(4), json!(0))));
    assert_eq!(code, -32022);
    assert_eq!(data, Some(json!({"requested": 0, "supported": [1]})));
    // The client may ask again.
    assert!(matches!(
        n.handle_line(&init(json!(5), json!(1))),
        Step::Initialize(_)
    ));
}

#[test]
fn a_version_that_is_not_an_integer_is_invalid_params() {
    for version in [
        json!(2.0),
        json!(1.5),
        json!("2"),
        json!(-1),
        json!(65536),
        json!(null),
        json!([2]),
    ] {
        let mut n = Negotiator::new(BOTH);
        let (id, code, message, _) = refused(n.handle_line(&init(json!(1), version.clone())));
        assert_eq!((id, code), (RequestId::Number(1), -32602), "{version}");
        assert!(
            message.starts_with("protocolVersion must be an integer"),
            "{message}"
        );
    }
    let mut n = Negotiator::new(BOTH);
    for params in [r#""params":[1]"#, r#""params":{}"#, r#""x":1"#] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize",{params}}}"#);
        let (_, code, _, _) = refused(n.handle_line(&line));
        assert_eq!(code, -32602, "{line}");
    }
}

#[test]
fn a_v2_initialize_needs_an_id_that_is_not_null() {
    let mut n = Negotiator::new(BOTH);
    let (id, code, _, _) = refused(n.handle_line(&init(json!(null), json!(2))));
    assert_eq!((id, code), (RequestId::Null, -32600));
    // v1 takes it.
    assert!(matches!(
        n.handle_line(&init(json!(null), json!(1))),
        Step::Initialize(_)
    ));
}

#[test]
fn after_negotiation_every_line_passes_with_the_dialect() {
    let mut n = Negotiator::new(BOTH);
    let _ = n.handle_line(&init(json!(0), json!(1)));
    let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#;
    let Step::Pass { dialect, message } = n.handle_line(update) else {
        panic!()
    };
    assert_eq!(dialect, Dialect::V1);
    assert!(matches!(message, Message::Notification(_)));
    // A batch is still refused: the crate reads no batches.
    let (_, code, _, _) = refused(n.handle_line("[]"));
    assert_eq!(code, -32600);
}

#[test]
fn the_agent_side_is_renamed_too_and_conflicts_refused() {
    let v1 = r#"{"protocolVersion": 1, "agentCapabilities":{"loadSession":true}, "authMethods":[], "agentInfo":{"name":"a","version":"1"}}"#;
    let mut v2 = String::new();
    rewrite_initialize(v1, Side::Agent, Dialect::V1, Dialect::V2, &mut v2).unwrap();
    assert_eq!(
        v2,
        r#"{"protocolVersion": 2, "capabilities":{"loadSession":true}, "authMethods":[], "info":{"name":"a","version":"1"}}"#
    );
    let mut back = String::new();
    rewrite_initialize(&v2, Side::Agent, Dialect::V2, Dialect::V1, &mut back).unwrap();
    assert_eq!(back, v1);
    // A v1 result with an unknown `info`: the rewrite would merge it.
    let mut out = String::from("x");
    let taken = r#"{"agentInfo":{},"info":1}"#;
    let e = rewrite_initialize(taken, Side::Agent, Dialect::V1, Dialect::V2, &mut out);
    assert_eq!(e, Err(VersionError::Taken { name: "info" }));
    assert_eq!(out, "x");
    assert_eq!(
        e.unwrap_err().to_string(),
        "member `info` is already taken by a member the rewrite leaves alone"
    );
    // The client's names are left alone in a result, and the reverse.
    let mut out = String::new();
    rewrite_initialize(
        r#"{"clientInfo":1}"#,
        Side::Agent,
        Dialect::V1,
        Dialect::V2,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, r#"{"clientInfo":1}"#);
    for bad in ["[]", "{", r#"{"a":1} x"#, r#"{"a" 1}"#, ""] {
        let e = rewrite_initialize(bad, Side::Client, Dialect::V1, Dialect::V2, &mut out);
        assert!(
            matches!(
                e,
                Err(VersionError::NotAnObject { .. } | VersionError::Trailing { .. })
            ),
            "{bad}: {e:?}"
        );
    }
}

/// The naive reference: every version from `asked` down, the first spoken.
fn reference(spoken: &[u16], asked: u16) -> Option<u16> {
    let mut v = asked;
    loop {
        if spoken.contains(&v) {
            return Some(v);
        }
        if v == 0 {
            return None;
        }
        v -= 1;
    }
}

/// A small JSON value, written with varied whitespace.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        any::<i32>().prop_map(|n| n.to_string()),
        Just("1.50".to_owned()),
        "[a-z \\\\\"é]{0,6}".prop_map(|s| serde_json::to_string(&s).unwrap()),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(("[a-z]{1,3}", inner), 0..4).prop_map(|m| {
                let members: Vec<String> = m
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\" :{v}"))
                    .collect();
                format!("{{ {} }}", members.join(","))
            }),
        ]
    })
}

/// The names a v1 client's params may hold: its own, v2's (which conflict),
/// the agent's, and others.
const NAMES: [&str; 9] = [
    "clientCapabilities",
    "clientInfo",
    "capabilities",
    "info",
    "agentInfo",
    "_meta",
    "protocolVersion",
    "x",
    "client\\u0049nfo",
];

proptest! {
    #[test]
    fn the_choice_is_the_references(spoken in prop::collection::vec(any::<bool>(), 2), asked in any::<u16>()) {
        let dialects: Vec<Dialect> = Dialect::ALL.iter().zip(&spoken).filter(|(_, s)| **s).map(|(d, _)| *d).collect();
        let versions: Vec<u16> = dialects.iter().map(|d| d.version()).collect();
        let want = reference(&versions, asked);
        prop_assert_eq!(choose(&dialects, asked).map(Dialect::version), want);
        let mut n = Negotiator::new(&dialects);
        let line = init(json!(1), json!(asked));
        let step = n.handle_line(&line);
        match want {
            Some(v) => prop_assert!(matches!(step, Step::Initialize(i) if i.dialect.version() == v), "{}", asked),
            None => prop_assert!(matches!(step, Step::Refuse { error, .. } if error.code.0 == -32022), "{}", asked),
        }
    }

    #[test]
    fn v1_to_v2_and_back_gives_the_same_bytes(
        members in prop::collection::vec((0..NAMES.len(), value(), "[ ]{0,2}"), 0..8),
        agent in any::<bool>(),
    ) {
        let side = if agent { Side::Agent } else { Side::Client };
        let v1_names: [&str; 2] = if agent { ["agentCapabilities", "agentInfo"] } else { ["clientCapabilities", "clientInfo"] };
        let text = format!("{{{}}}", members.iter().map(|(k, v, ws)| {
            let value = if NAMES[*k] == "protocolVersion" { "1" } else { v.as_str() };
            format!("{ws}\"{}\"{ws}:{ws}{value}", NAMES[*k])
        }).collect::<Vec<_>>().join(","));
        let mut v2 = String::new();
        let result = rewrite_initialize(&text, side, Dialect::V1, Dialect::V2, &mut v2);
        let holds = |name: &str| members.iter().any(|(k, _, _)| NAMES[*k] == name);
        if holds("capabilities") || holds("info") {
            prop_assert!(matches!(result, Err(VersionError::Taken { .. })), "{}", text);
            return Ok(());
        }
        prop_assert!(result.is_ok(), "{}: {:?}", text, result);
        // The renamed keys as v2 names them; every other member as it was.
        let (parsed_v1, parsed_v2): (Value, Value) = (serde_json::from_str(&text).unwrap(), serde_json::from_str(&v2).unwrap());
        let mut want = parsed_v1.as_object().unwrap().clone();
        for (old, new) in v1_names.iter().zip(["capabilities", "info"]) {
            if let Some(v) = want.remove(*old) {
                want.insert(new.to_owned(), v);
            }
        }
        if let Some(v) = want.get_mut("protocolVersion") {
            *v = json!(2);
        }
        prop_assert_eq!(parsed_v2, Value::Object(want));
        let mut back = String::new();
        rewrite_initialize(&v2, side, Dialect::V2, Dialect::V1, &mut back).unwrap();
        // Byte for byte, but an escaped renamed key comes back plain.
        let want = if agent { text.clone() } else { text.replace("client\\u0049nfo", "clientInfo") };
        prop_assert_eq!(back, want);
    }
}
