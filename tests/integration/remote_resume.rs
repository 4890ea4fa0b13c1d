//! `remote::ResumeLog` and the resume wire helpers through the public API:
//! scenarios a server meets (a permission request sent while the client was
//! away, a retried prompt, a gap), and proptests holding the log against a
//! plain `Vec` of everything sent (the `resume_log` fuzz check's oracle).
#![cfg(feature = "alloc")]

use acp_codec::acp::RequestId;
use acp_codec::remote::{
    sse_event, stamp, unstamp, Admit, Cursor, Kind, Ledger, Position, PromptKey, ResumeError,
    ResumeLog, Stream, RESUME_GAP,
};
use proptest::prelude::*;

use crate::checks::resume_log::{self, Op, Reached, PROMPT_IDS};

fn collect<'a>(it: impl Iterator<Item = (Position, &'a str)>) -> Vec<(u64, String)> {
    it.map(|(p, t)| (p.0, t.to_owned())).collect()
}

#[test]
fn a_permission_request_sent_while_away_is_delivered_on_resume() {
    let mut log = ResumeLog::new(1024);
    let _ = log.push(Kind::Plain, "chunk 1");
    // The connection breaks here; the client has position 1.
    log.detach(std::time::Duration::from_secs(10));
    let ask = log.push(
        Kind::Owed,
        r#"{"id":0,"method":"session/request_permission"}"#,
    );
    let _ = log.push(Kind::Plain, "chunk 2");
    let missed = collect(log.resume(Position(1)).unwrap());
    assert_eq!(missed.first().map(|m| m.0), Some(ask.0));
    assert_eq!(missed.len(), 2);
    assert_eq!(log.deadline(), None, "the client is back");
}

#[test]
fn a_gap_still_hands_over_what_is_owed() {
    let mut log = ResumeLog::new(40);
    let answer = log.push(Kind::Owed, r#"{"id":7,"result":{}}"#);
    for _ in 0..4 {
        let _ = log.push(Kind::Plain, "0123456789");
    }
    let err = log.resume(Position::START).err().unwrap();
    assert_eq!(err.code(), RESUME_GAP);
    assert_eq!(err.http_status(), 409);
    assert_eq!(
        collect(log.owed_after(Position::START)),
        [(answer.0, r#"{"id":7,"result":{}}"#.to_owned())]
    );
    // The client acknowledges it: gone.
    log.ack(answer).unwrap();
    assert_eq!(log.owed_after(Position::START).count(), 0);
}

#[test]
fn a_retried_prompt_is_answered_from_the_log_not_run_again() {
    let (mut log, mut ledger) = (ResumeLog::default(), Ledger::default());
    let params = r#"{"sessionId":"s","prompt":[],"_meta":{"acp-codec/idempotencyKey":"turn-1"}}"#;
    // The first attempt and its retry (another id, the same key).
    let id = |n| PromptKey::of(&RequestId::Number(n), None);
    let first = PromptKey::of(&RequestId::Number(3), Some(params));
    let retry = PromptKey::of(&RequestId::Number(9), Some(params));
    assert_eq!(ledger.admit(id(3), first), Admit::Run);
    assert_eq!(ledger.admit(id(9), retry.clone()), Admit::Running);
    let at = log.push(Kind::Owed, r#"{"id":3,"result":{"stopReason":"end_turn"}}"#);
    let stream = Stream::Session("s".into());
    ledger.answered(&id(3), &stream, at);
    assert_eq!(
        ledger.admit(id(9), retry.clone()),
        Admit::Answered(stream.clone(), at)
    );
    assert!(log.message(at).unwrap().contains("end_turn"));
    // Acknowledged: the log forgets the answer, the ledger does not (the
    // server answers the retry with -32012, it never runs it again).
    log.ack(at).unwrap();
    assert_eq!(log.message(at), None);
    assert_eq!(ledger.admit(id(9), retry), Admit::Answered(stream, at));
}

#[test]
fn wire_helpers_name_positions_in_each_profile() {
    assert_eq!(sse_event(Position(12), "{}"), "id: 12\ndata: {}\n\n");
    assert_eq!(Position::parse("12"), Ok(Position(12)));
    assert_eq!(Position::parse("1x"), Err(ResumeError::BadCursor));
    let init =
        r#"{"protocolVersion":1,"_meta":{"acp-codec/cursor":{"connection":"c-1","position":4}}}"#;
    let cursor = Cursor::from_params(init).unwrap().unwrap();
    assert_eq!(
        (cursor.connection.as_deref(), cursor.position),
        (Some("c-1"), Position(4))
    );
    assert_eq!(Cursor::from_params("3"), Err(ResumeError::BadCursor));
}

proptest! {
    #[test]
    fn stamps_round_trip(
        session in proptest::option::of("\\PC{0,12}"),
        position in any::<u64>(),
        members in proptest::collection::btree_map("[a-z]{1,6}", any::<i32>(), 0..4),
    ) {
        let message = serde_json::to_string(&members).unwrap();
        let stamped = stamp(&message, session.as_deref(), Position(position));
        // Still one JSON object, with the members it had.
        let value: serde_json::Value = serde_json::from_str(&stamped).unwrap();
        prop_assert_eq!(value.as_object().unwrap().len(), members.len() + 1);
        let (stream, at, original) = unstamp(&stamped).unwrap();
        prop_assert_eq!(stream, session);
        prop_assert_eq!(at, Position(position));
        prop_assert_eq!(original, message);
    }

    /// Any sequence of sends, disconnects and resumes delivers every
    /// message exactly once and in order, or reports the gap.
    #[test]
    fn every_message_once_in_order_or_a_gap(
        budget in 16usize..600,
        ops in proptest::collection::vec(
            prop_oneof![
                4 => (any::<bool>(), 0usize..80).prop_map(|(owed, len)| Op::Push { owed, len }),
                1 => Just(Op::Disconnect),
                1 => Just(Op::Resume),
                1 => Just(Op::Ack),
                1 => any::<u8>().prop_map(Op::ResumeAhead),
                1 => (0u8..6).prop_map(Op::Prompt),
                1 => (0u8..6).prop_map(Op::Answer),
            ],
            0..200,
        ),
    ) {
        let _ = resume_log::run(budget, &ops);
    }

    /// The prompt ledger past its bound: seventy prompts fill it past its
    /// bound, then any prompts over more ids than it keeps, answers,
    /// acknowledgements and resumes; every admission is what the
    /// eviction rule says.
    #[test]
    fn the_prompt_ledger_keeps_its_rule_past_its_bound(
        rest in proptest::collection::vec(
            prop_oneof![
                1 => (any::<bool>(), 0usize..40).prop_map(|(owed, len)| Op::Push { owed, len }),
                1 => Just(Op::Disconnect),
                1 => Just(Op::Resume),
                1 => Just(Op::Ack),
                8 => (0..PROMPT_IDS).prop_map(Op::Prompt),
                4 => any::<u8>().prop_map(Op::Answer),
            ],
            0..400,
        ),
    ) {
        let mut ops: Vec<Op> = (0..70).map(Op::Prompt).collect();
        ops.extend(rest);
        let reached = resume_log::run(4096, &ops);
        prop_assert!(reached.evicted >= 6, "{reached:?}");
    }
}

/// The check is not vacuous: it sees gaps, and resumes that hand over.
#[test]
fn the_scenarios_reach_gaps_and_replays() {
    let mut ops = vec![
        Op::Push {
            owed: false,
            len: 10,
        },
        Op::Disconnect,
    ];
    ops.extend(
        [Op::Push {
            owed: true,
            len: 30,
        }; 5],
    );
    ops.push(Op::Resume);
    let reached = |gaps, replayed| Reached {
        gaps,
        replayed,
        evicted: 0,
        gone: 0,
    };
    assert_eq!(resume_log::run(1000, &ops), reached(0, 5));
    // With a 64-byte budget the same scenario needs a gap: the check's
    // oracle accepts it only because the missed bytes exceed the budget.
    assert_eq!(resume_log::run(64, &ops), reached(1, 0));
}

/// The prompt ledger past its bound: sixty-four prompts fill it, the
/// eleventh is answered, a sixty-fifth comes: it is run, the answered one
/// stays answered (a retry is not run) and the oldest running one too;
/// then eighty more ids push the oldest running ones out, every running
/// one is answered and eighty more ids again push the oldest answers out;
/// an acknowledgement and retries. The check's oracle applies the
/// eviction rule and asserts each admission; on a 256-byte budget the
/// oldest answers leave the log, so retries of them meet `-32012`.
#[test]
fn the_scenarios_go_past_the_ledger_bound() {
    let mut ops: Vec<Op> = (0..64).map(Op::Prompt).collect();
    ops.extend([
        Op::Answer(10),
        Op::Prompt(64),
        Op::Prompt(0),
        Op::Prompt(10),
    ]);
    ops.extend([Op::Answer(0); 10]);
    ops.extend((0..PROMPT_IDS).map(Op::Prompt));
    ops.extend([Op::Answer(0); 80]);
    ops.extend((0..PROMPT_IDS).map(Op::Prompt));
    ops.extend([Op::Ack, Op::Prompt(3), Op::Prompt(69), Op::Prompt(79)]);
    let reached = resume_log::run(256, &ops);
    assert!(reached.evicted >= 10, "{reached:?}");
    assert!(reached.gone >= 10, "{reached:?}");
    // The committed seeds go past the bound too (the fuzz target's start).
    let seed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fuzz/seeds/resume_log/ledger_past_its_bound"
    ))
    .unwrap();
    let (budget, ops) = resume_log::decode(&seed);
    let reached = resume_log::run(budget, &ops);
    assert!(reached.evicted > 0, "{reached:?}");
}

/// The memory of one session's log at the default budget, filled with
/// 512-byte updates (the figure BENCHMARKS.md gives): the text plus a
/// bounded overhead a message, measured by the allocator.
#[test]
fn memory_per_session_at_the_default_budget() {
    use acp_codec::remote::DEFAULT_RESUME_BUDGET;
    let message = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"text":"{}"}}}}"#,
        "x".repeat(512 - 64)
    );
    assert_eq!(message.len(), 512);
    let mut kept = None;
    let info = allocation_counter::measure(|| {
        let mut log = ResumeLog::default();
        // Twice the budget: the oldest half is pushed out as it goes.
        for _ in 0..2 * DEFAULT_RESUME_BUDGET / 512 {
            let _ = log.push(Kind::Plain, &message);
        }
        kept = Some(log);
    });
    let log = kept.unwrap();
    let messages = DEFAULT_RESUME_BUDGET / 512;
    assert_eq!(log.bytes(), DEFAULT_RESUME_BUDGET);
    // Measured inside the closure: the log was still alive at its end only
    // through `kept`, so its memory is the peak once it is full.
    let overhead = info.bytes_max as usize - DEFAULT_RESUME_BUDGET;
    eprintln!(
        "resume log at the default budget: {} bytes for {messages} messages of 512 bytes ({} bytes a message over the text)",
        info.bytes_max,
        overhead / messages
    );
    assert!(overhead / messages <= 96, "{overhead} bytes of overhead");
}

/// Streamable HTTP through the server core: a connection with session
/// `s1` and its session stream open, `updates` sent by the agent; the
/// server, the agent's run and the connection.
fn http_session(
    budget: usize,
    updates: u32,
) -> (
    acp_codec::remote::Server,
    acp_codec::remote::ConnectionId,
    Vec<(Position, String)>,
) {
    use acp_codec::remote::{Action, PostOutcome, Principal, Server, ServerConfig};
    use std::time::Duration;
    let t = Duration::ZERO;
    let mut config = ServerConfig::new();
    config.replay_bytes = budget;
    let mut server = Server::new(config, t);
    let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
        panic!("no agent")
    };
    server.handle_agent_started(t, run, 1);
    let me = Principal::anonymous();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"acp-codec/resume":{}}}}"#;
    let Ok(PostOutcome::Opened(conn)) = server.handle_post(t, &me, None, None, init, Some([1; 16]))
    else {
        panic!("not opened")
    };
    let new =
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
    server
        .handle_post(t, &me, Some(conn), None, new, None)
        .unwrap();
    // The agent answers both (its ids are the router's: 0 and 1).
    server.handle_agent_line(
        t,
        run,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
    );
    server.handle_agent_line(
        t,
        run,
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
    );
    server
        .handle_stream_opened(t, &me, conn, Some("s1"), None)
        .unwrap();
    for n in 1..=updates {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"n":{n}}}}}}}"#
        );
        server.handle_agent_line(t, run, &line);
    }
    let mut sent = Vec::new();
    while let Some(action) = server.poll_action() {
        if let Action::Send {
            stream: acp_codec::remote::Stream::Session(_),
            text,
            position,
            ..
        } = action
        {
            server.handle_sent(t, conn, text.len());
            sent.push((position.expect("an SSE id"), text));
        }
    }
    (server, conn, sent)
}

/// Every event on a session's stream has the next position; a `GET`
/// with `Last-Event-ID` gets exactly what followed (and may take the
/// stream over from a reader the server still counts); `400` for a
/// `Last-Event-ID` that is not a position, `409` for one the stream never
/// reached.
#[test]
fn a_reopened_http_stream_gets_exactly_what_followed() {
    use acp_codec::remote::Principal;
    let t = std::time::Duration::ZERO;
    let (mut server, conn, sent) = http_session(4096, 5);
    let positions: Vec<u64> = sent.iter().map(|(p, _)| p.0).collect();
    assert_eq!(positions, [1, 2, 3, 4, 5]);
    let me = Principal::anonymous();
    // The reader is still counted (no FIN): a plain GET is refused...
    let busy = server
        .handle_stream_opened(t, &me, conn, Some("s1"), None)
        .unwrap_err();
    assert_eq!(busy.status, 409);
    // ...a resume takes the stream over.
    let opened = server
        .handle_stream_opened(t, &me, conn, Some("s1"), Some("2"))
        .unwrap();
    assert_eq!(
        replacing(&mut server, opened.reader),
        Some(sent[2..].to_vec())
    );
    let bad = server
        .handle_stream_opened(t, &me, conn, Some("s1"), Some("two"))
        .unwrap_err();
    assert_eq!(bad.status, 400, "{}", bad.body);
    let ahead = server
        .handle_stream_opened(t, &me, conn, Some("s1"), Some("9"))
        .unwrap_err();
    assert_eq!(ahead.status, 409, "{}", ahead.body);
    assert!(ahead.body.contains("session/load"), "{}", ahead.body);
    // Everything up to 2 was acknowledged by the resume: from 1 is a gap.
    let gap = server
        .handle_stream_opened(t, &me, conn, Some("s1"), Some("1"))
        .unwrap_err();
    assert_eq!(gap.status, 409, "{}", gap.body);
    // From the last position: nothing more.
    let opened = server
        .handle_stream_opened(t, &me, conn, Some("s1"), Some("5"))
        .unwrap();
    assert_eq!(replacing(&mut server, opened.reader), Some(Vec::new()));
}

/// What the stream's queue becomes for `reader` (its [`Action::Read`]):
/// `None` when it stays as it is.
fn replacing(
    server: &mut acp_codec::remote::Server,
    reader: u64,
) -> Option<Vec<(acp_codec::remote::Position, String)>> {
    let mut read = None;
    while let Some(action) = server.poll_action() {
        if let acp_codec::remote::Action::Read {
            reader: r, replace, ..
        } = action
        {
            assert_eq!(r, reader, "the read of another reader");
            assert!(read.is_none(), "two reads for one open");
            read = Some(replace);
        }
    }
    read.expect("no read for the reader")
}

/// Past the budget the oldest events go: a client that missed them gets
/// `409`, never a stream with a silent hole.
#[test]
fn a_gap_larger_than_the_budget_is_409() {
    use acp_codec::remote::Principal;
    let t = std::time::Duration::ZERO;
    let (mut server, conn, sent) = http_session(200, 8);
    assert_eq!(sent.len(), 8);
    let gap = server
        .handle_stream_opened(t, &Principal::anonymous(), conn, Some("s1"), Some("1"))
        .unwrap_err();
    assert_eq!(gap.status, 409);
    assert!(
        gap.body.contains("cannot resume after position 1"),
        "{}",
        gap.body
    );
}

/// The Streamable HTTP check of the `server_resume` fuzz target reaches
/// its cases: events read whole, a break with events lost in flight and
/// a resume, a refused resume, a retried prompt.
#[test]
fn the_http_check_meets_breaks_gaps_and_retries() {
    use crate::checks::server_resume_http::{check, Seen};
    let seed = |name: &str| {
        std::fs::read(format!(
            "{}/fuzz/seeds/server_resume/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    // Events lost in a break come back in the resume's replay.
    let seen = check(&seed("http_break_then_resume"));
    assert!(seen.replayed >= 3 && seen.gaps == 0, "{seen:?}");
    // More missed than the budget holds: refused with 409.
    assert!(check(&seed("http_gap_past_the_budget")).gaps >= 1);
    // A reader the server still counts is replaced by the resume.
    let seen = check(&seed("http_stale_reader_takeover"));
    assert!(seen.replayed > 0 && seen.gaps == 0, "{seen:?}");
    // The prompt sent again after its answer: it runs once (asserted
    // inside), and nothing is refused.
    assert_eq!(check(&seed("http_retry_after_the_answer")).gaps, 0);
    assert_eq!(check(&[]), Seen::default());
}

/// The Streamable HTTP check past the retry ledger's bound: the turn
/// ends, 128 other requests are answered, then the prompt and three of
/// the others (the last, the 49th and the 73rd from the end) are sent
/// again. The ledger keeps the last 64 answers: the prompt and the 73rd
/// were forgotten and run again (as the check's oracle says), the other
/// two are answered from the log, not run (a ledger of 32 fails here, and
/// so does one that never forgets).
#[test]
fn the_http_check_goes_past_the_retry_ledger_bound() {
    use crate::checks::server_resume_http::check;
    let seed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fuzz/seeds/server_resume/http_ledger_past_its_bound"
    ))
    .unwrap();
    let seen = check(&seed);
    assert!(seen.evicted >= 64, "{seen:?}");
    assert!(
        seen.retried_kept >= 2 && seen.retried_forgotten >= 2,
        "{seen:?}"
    );
}

/// The WebSocket check of the `server_resume` fuzz target reaches its
/// cases on the committed seeds: some resume meets a gap (`-32012`), some
/// gets messages replayed, and every seed runs the prompt exactly once
/// (asserted inside).
#[test]
fn the_websocket_check_meets_gaps_and_replays() {
    use crate::checks::server_resume::{check, Seen};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/server_resume");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    seeds.sort();
    let seen: Vec<(String, Seen)> = seeds
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, check(&std::fs::read(p).unwrap()))
        })
        .collect();
    let with = |f: fn(&Seen) -> bool| seen.iter().filter(|(_, s)| f(s)).count();
    assert!(with(|s| s.gaps > 0) >= 1, "no seed meets a gap: {seen:?}");
    assert!(
        with(|s| s.replayed > 0) >= 1,
        "no seed meets a replay: {seen:?}"
    );
    assert!(
        with(|s| s.replayed > 0 && s.gaps == 0) >= 1,
        "no seed resumes without a gap: {seen:?}"
    );
    assert!(
        with(|s| s.refused_retries > 0) >= 1,
        "no seed retries the prompt after its answer left the log: {seen:?}"
    );
    assert_eq!(check(&[]), Seen::default());
}

proptest! {
    /// WebSocket, through the server core: any breaks, reconnects, waits
    /// past the grace and retries deliver every update once and in order,
    /// or report the gap; the prompt runs exactly once.
    #[test]
    fn websocket_streams_deliver_every_update_once_or_report_a_gap(
        data in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let _ = crate::checks::server_resume::check(&data);
    }

    /// Streamable HTTP, through the server core and the bridge's queues:
    /// any breaks (events lost in flight, noticed or not), resumes with
    /// `Last-Event-ID`, retries and permission requests deliver every
    /// event once and in order, or refuse the resume with `409`; the
    /// prompt runs once.
    #[test]
    fn http_streams_deliver_every_event_once_or_refuse_a_gap(
        data in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        crate::checks::server_resume_http::check(&data);
    }

    /// Streamable HTTP past the retry ledger's bound: the turn ends and
    /// 128 other requests are answered first, then any events, retries of
    /// the prompt and of the others included; each runs again exactly
    /// when the ledger forgot it.
    #[test]
    fn http_retries_past_the_ledger_bound_run_as_the_ledger_says(
        rest in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut data = vec![0xff, 0x06, 0xbd, 0xbd];
        data.extend(rest);
        let seen = crate::checks::server_resume_http::check(&data);
        prop_assert!(seen.evicted >= 64, "{seen:?}");
    }
}

/// A Streamable HTTP `initialize` that asks for positions gets the
/// capability in its answer's `_meta`; one that does not, the agent's
/// answer as it was.
#[test]
fn an_http_initialize_that_asks_gets_the_capability() {
    use acp_codec::remote::{Action, PostOutcome, Principal, Server, ServerConfig};
    let t = std::time::Duration::ZERO;
    let mut server = Server::new(ServerConfig::new(), t);
    let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
        panic!("no agent")
    };
    server.handle_agent_started(t, run, 1);
    let me = Principal::anonymous();
    let asks = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"acp-codec/resume":{}}}}"#;
    let plain = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;
    let mut answers = Vec::new();
    for (n, body) in [asks, plain].into_iter().enumerate() {
        let Ok(PostOutcome::Opened(_)) =
            server.handle_post(t, &me, None, None, body, Some([n as u8; 16]))
        else {
            panic!("not opened")
        };
        let line = format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"protocolVersion":1}}}}"#);
        server.handle_agent_line(t, run, &line);
        while let Some(action) = server.poll_action() {
            if let Action::Answer { text, .. } = action {
                answers.push(text);
            }
        }
    }
    let v: serde_json::Value = serde_json::from_str(&answers[0]).unwrap();
    assert_eq!(
        v["result"]["_meta"]["acp-codec/resume"]["budget"],
        acp_codec::remote::DEFAULT_RESUME_BUDGET
    );
    assert_eq!(
        answers[1],
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#
    );
}

/// A Streamable HTTP client that did not ask for positions sends each
/// request once and may use an id again once its request is answered, as
/// JSON-RPC lets it: each request goes to the agent and gets its own
/// answer. (One that asked for positions resends what it did not see
/// answered: there the same id again is a retry, run once.)
#[test]
fn a_plain_http_client_may_use_an_id_again() {
    use acp_codec::remote::{Action, PostOutcome, Principal, Server, ServerConfig};
    let t = std::time::Duration::ZERO;
    for asks in [false, true] {
        let mut server = Server::new(ServerConfig::new(), t);
        let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
            panic!("no agent")
        };
        server.handle_agent_started(t, run, 1);
        let me = Principal::anonymous();
        let meta = if asks {
            r#","_meta":{"acp-codec/resume":{}}"#
        } else {
            ""
        };
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1{meta}}}}}"#
        );
        let Ok(PostOutcome::Opened(conn)) =
            server.handle_post(t, &me, None, None, &init, Some([3; 16]))
        else {
            panic!("not opened")
        };
        server.handle_agent_line(
            t,
            run,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
        );
        while server.poll_action().is_some() {}
        // The same request twice, the second after the first's answer.
        let list = r#"{"jsonrpc":"2.0","id":5,"method":"session/list","params":{}}"#;
        let mut to_agent = 0;
        let mut answers = Vec::new();
        for agent_id in [1, 2] {
            server
                .handle_post(t, &me, Some(conn), None, list, None)
                .unwrap();
            while let Some(action) = server.poll_action() {
                match action {
                    Action::WriteAgent { .. } => to_agent += 1,
                    Action::Send { text, .. } => answers.push(text),
                    _ => {}
                }
            }
            let answer = format!(
                r#"{{"jsonrpc":"2.0","id":{agent_id},"result":{{"sessions":[],"n":{agent_id}}}}}"#
            );
            server.handle_agent_line(t, run, &answer);
            while let Some(action) = server.poll_action() {
                if let Action::Send { text, .. } = action {
                    answers.push(text);
                }
            }
        }
        if asks {
            // A retry: run once. Its answer is not queued again: the
            // stream has it at its position (the client reads it there,
            // or gets it back by resuming the stream).
            assert_eq!(to_agent, 1, "{answers:?}");
            assert_eq!(
                answers,
                [r#"{"jsonrpc":"2.0","id":5,"result":{"sessions":[],"n":1}}"#]
            );
        } else {
            assert_eq!(to_agent, 2, "{answers:?}");
            assert_eq!(
                answers,
                [
                    r#"{"jsonrpc":"2.0","id":5,"result":{"sessions":[],"n":1}}"#,
                    r#"{"jsonrpc":"2.0","id":5,"result":{"sessions":[],"n":2}}"#
                ]
            );
        }
    }
}

// ---------------------------------------------------------------- a reattach without positions

mod without_positions {
    use crate::checks::remote_transport::Away;
    use acp_codec::remote::REPLAY_DROPPED;
    use serde_json::{json, Value};

    /// A client that reattaches a left session without positions gets
    /// what the session missed, from the first message kept, before the
    /// answer, once: the next update is live.
    #[test]
    fn a_reattaching_client_gets_what_its_session_missed() {
        let mut away = Away::new(1 << 20, &["sa"]);
        let missed = [away.update("sa", "one"), away.update("sa", "two")];
        let (conn, got, answer) = away.reattach("sa", json!({"result": {}}));
        assert_eq!(got, missed);
        assert_eq!(answer, json!({"jsonrpc":"2.0","id":1,"result":{}}));
        let line = json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sa","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"three"}}}}).to_string();
        let live = away.agent(&line);
        assert_eq!(live.len(), 1);
        assert_eq!((live[0].0, &live[0].2), (conn, &line));
    }

    /// Past the budget the oldest are dropped and reported first; a
    /// failed reattach hands over nothing and leaves it all for the next.
    #[test]
    fn what_did_not_fit_is_reported_and_a_failed_reattach_keeps_the_rest() {
        let one_len = {
            let mut away = Away::new(0, &["sa"]);
            away.update("sa", "0123456789").len()
        };
        // Room for two updates.
        let mut away = Away::new(2 * one_len + 1, &["sa"]);
        let lines: Vec<String> = (0..5).map(|_| away.update("sa", "0123456789")).collect();
        let gone = json!({"error": {"code": -32002, "message": "no such session"}});
        let (conn, got, answer) = away.reattach("sa", gone);
        assert!(got.is_empty(), "{got:?}");
        assert_eq!(answer["error"]["code"], -32002);
        away.leave(conn);
        let (_, got, answer) = away.reattach("sa", json!({"result": {}}));
        assert_eq!(answer["result"], json!({}));
        assert_eq!(got.len(), 3, "{got:?}");
        let note: Value = serde_json::from_str(&got[0]).unwrap();
        assert_eq!(note["method"], REPLAY_DROPPED);
        assert_eq!(
            note["params"],
            json!({"sessionId":"sa","droppedMessages":3,"droppedBytes":3 * one_len})
        );
        assert_eq!(got[1..], lines[3..]);
    }

    /// Without a budget nothing is kept; an agent that exits forgets what
    /// its sessions missed (the restarted agent's sessions are new).
    #[test]
    fn nothing_is_kept_without_a_budget_nor_across_an_agent_exit() {
        let mut away = Away::new(0, &["sa"]);
        away.update("sa", "lost");
        let (_, got, _) = away.reattach("sa", json!({"result": {}}));
        assert!(got.is_empty(), "{got:?}");

        let mut away = Away::new(1 << 20, &["sa"]);
        let x = away.update("sa", "x");
        let logged = away.logs.len();
        away.agent_restarts();
        // What was kept and is now lost is said once in the server's log.
        let forgotten = format!(
            "session sa: what its client missed is forgotten unsent ({} bytes kept, 0 bytes dropped before)",
            x.len()
        );
        assert_eq!(
            away.logs[logged..]
                .iter()
                .filter(|l| l.starts_with("session sa:"))
                .collect::<Vec<_>>(),
            [&forgotten]
        );
        away.update("sa", "y");
        let (_, got, answer) = away.reattach("sa", json!({"result": {}}));
        assert!(answer.get("result").is_some(), "{answer}");
        assert!(got.is_empty(), "{got:?}");
    }
}
