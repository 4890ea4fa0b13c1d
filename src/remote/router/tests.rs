//! Unit tests of the router's internal state.

use super::*;

fn up_with_replay() -> Router {
    let mut r = Router::new().with_replay(ReplayBuffer::new(1024));
    r.agent_started(1, 0, &mut Vec::new());
    r
}

#[test]
fn detached_sessions_are_forgotten_when_reused_or_reattached() {
    let mut r = up_with_replay();
    let a = r.connect();
    let mut out = Vec::new();
    r.handle_client(
        a,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#,
        Duration::ZERO,
        &mut out,
    );
    r.handle_agent(
        r#"{"jsonrpc":"2.0","id":0,"result":{"sessionId":"s"}}"#,
        Duration::ZERO,
        &mut out,
    );
    r.disconnect(a, &mut out);
    assert!(r.replaying.iter().any(|d| d == "s"));
    // A new session of the same name (an agent reusing ids) is not a
    // reattach: nothing to replay, no longer detached.
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
    assert_eq!(r.sessions.holder("s"), Some(b));
    // Pending counts come back to zero.
    assert_eq!(r.clients.get(&b).map(|c| c.pending.get()), Some(0));
    assert_eq!(r.pending(), (0, 0));
    // At most the replay buffer's session limit is kept: the oldest go.
    let mut r = Router::new().with_replay(ReplayBuffer::new(1024).with_max_sessions(2));
    r.agent_started(1, 0, &mut Vec::new());
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
    }
    assert_eq!(r.replaying, ["s1", "s2"]);
    assert_eq!(r.replay().map(ReplayBuffer::sessions), Some(2));
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
    shared.handle_client(
        ana,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#,
        Duration::ZERO,
        &mut out,
    );
    shared.handle_agent(
        r#"{"jsonrpc":"2.0","id":0,"result":{"sessionId":"s"}}"#,
        Duration::ZERO,
        &mut out,
    );
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
    assert!(line.starts_with(br#"{"jsonrpc":"2.0","id":0,"method":"initialize""#));
}
