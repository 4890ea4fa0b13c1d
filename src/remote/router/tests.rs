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
