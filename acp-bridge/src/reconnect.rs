//! A connection to a server that comes back by itself: a relay task
//! between the client's lines and the current [`Connection`], which, when
//! the connection ends, dials again with exponential backoff and jitter
//! for up to a budget of time and resumes through [`Rejoin`] (positions,
//! sessions, unanswered requests). The client sees one unbroken stream.
//! When the new connection's server does not know the old one (the server
//! that served it died and another took its address, or the grace is
//! over), the relay replaces it at once by a clean connection on which
//! [`Rejoin`] loads the sessions again (`session/load`); a prompt that was
//! running fails for the client, as its turn died with its server.
//!
//! On Streamable HTTP the transport resumes by itself (`Last-Event-ID`,
//! see [`crate::remote::connect_resuming`]); the relay steps in only when
//! the server refuses that ([`Connection::forgotten`]: it does not know
//! the connection, or a stream's gap is larger than what it keeps), with
//! the same clean connection and `session/load`.
//!
//! When the server cannot resume a session without losing messages (a
//! gap larger than what it keeps), the relay starts over the same way: a
//! clean connection, every session loaded.
//!
//! A server that does not advertise resume is not redialed: its
//! connection's end is the end, as before. The relay gives up, and the
//! client's source ends with the reason, when the budget is spent, when
//! the server refuses the new connection, or when the client stops
//! sending (its half is dropped).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_codec::remote::{Rejoin, RejoinError};
use acp_codec::FrameError;
use tokio::sync::{mpsc, oneshot};

use crate::lines::{LineSender, LineSource};
pub use crate::remote::Policy;
use crate::remote::{Closed, Connection};

/// Opens one connection (the same target each time).
pub type Dial =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<Connection, String>> + Send>> + Send + Sync>;

/// The client's halves of a reconnecting connection.
pub struct Reconnecting {
    /// Messages from the server, stamps removed, nothing twice.
    pub source: RejoinedSource,
    /// The client's lines.
    pub sink: LineSender,
    /// Resolves with the reason once the relay has given up.
    pub closed: Closed,
    /// How many times a broken connection was replaced.
    pub reconnects: Arc<AtomicU64>,
    /// The relay: ends once the client's half is dropped and the
    /// connection said goodbye (or it gave up).
    pub relay: tokio::task::JoinHandle<()>,
}

/// What the relay hands the client: a message, one skipped for its size
/// (the transport's error, which the client shows as a problem of its
/// turn and answers when it was a request), or why the relay gave up.
type ToClient = Result<Result<String, FrameError>, String>;

/// The receiving half of a [`Reconnecting`] connection.
pub struct RejoinedSource {
    rx: mpsc::Receiver<ToClient>,
}

impl LineSource for RejoinedSource {
    async fn next_line(&mut self) -> io::Result<Option<Result<String, FrameError>>> {
        match self.rx.recv().await {
            Some(Ok(message)) => Ok(Some(message)),
            Some(Err(_)) | None => Ok(None),
        }
    }
}

/// Dials once (an error is returned as is), then relays and redials as
/// the [module docs](self) say.
///
/// # Errors
///
/// The first connection's error.
pub async fn connect(dial: Dial, policy: Policy) -> Result<Reconnecting, String> {
    connect_counting(dial, policy, Arc::default()).await
}

/// [`connect`], counting the connections replaced in `reconnects` (which
/// a transport that resumes by itself, as Streamable HTTP's, counts in
/// too).
///
/// # Errors
///
/// The first connection's error.
pub async fn connect_counting(
    dial: Dial,
    policy: Policy,
    reconnects: Arc<AtomicU64>,
) -> Result<Reconnecting, String> {
    let first = dial().await?;
    let (sink, from_client) = LineSender::channel();
    let (to_client, rx) = mpsc::channel(256);
    let (ended_tx, ended_rx) = oneshot::channel::<String>();
    let relay = Relay {
        dial,
        policy,
        rejoin: Rejoin::new(),
        reconnects: Arc::clone(&reconnects),
        to_client,
    };
    let relay = tokio::spawn(async move {
        let reason = relay.run(first, from_client).await;
        let _ = ended_tx.send(reason);
    });
    Ok(Reconnecting {
        source: RejoinedSource { rx },
        sink,
        closed: Box::pin(async move {
            ended_rx
                .await
                .unwrap_or_else(|_| "connection closed".to_owned())
        }),
        reconnects,
        relay,
    })
}

struct Relay {
    dial: Dial,
    policy: Policy,
    rejoin: Rejoin,
    reconnects: Arc<AtomicU64>,
    to_client: mpsc::Sender<ToClient>,
}

impl Relay {
    /// Relays until the end; returns why it ended.
    async fn run(mut self, first: Connection, mut from_client: mpsc::Receiver<Vec<u8>>) -> String {
        let mut conn = first;
        'relay: loop {
            tokio::select! {
                line = from_client.recv() => {
                    let Some(line) = line else {
                        // The connection's own goodbye (a close frame, or
                        // Streamable HTTP's DELETE), briefly.
                        let Connection { source, sink, writer, .. } = conn;
                        drop((source, sink));
                        let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
                        return "the client is done".to_owned();
                    };
                    let text = String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(&line)).into_owned();
                    let wire = self.rejoin.outgoing(&text);
                    // A failed send shows up as the connection's end.
                    let _ = conn.sink.send(with_newline(wire)).await;
                }
                message = conn.source.next_line() => {
                    let detail = match message {
                        Ok(Some(Ok(text))) => 'message: {
                            match self.rejoin.incoming(&text) {
                                Ok(Some(line)) => {
                                    if self.to_client.send(Ok(Ok(line))).await.is_err() {
                                        return "the client is done".to_owned();
                                    }
                                }
                                Ok(None) => {}
                                Err(e @ RejoinError::Gap { .. }) => {
                                    // What the session missed is no longer on
                                    // the server: the sessions are loaded on a
                                    // clean connection (as after Streamable
                                    // HTTP's 409).
                                    self.rejoin.start_over();
                                    break 'message e.to_string();
                                }
                                Err(e) => return self.give_up(e.to_string()).await,
                            }
                            for line in self.rejoin.poll_to_server() {
                                let _ = conn.sink.send(with_newline(line)).await;
                            }
                            for line in self.rejoin.poll_to_client() {
                                if self.to_client.send(Ok(Ok(line))).await.is_err() {
                                    return "the client is done".to_owned();
                                }
                            }
                            if !self.rejoin.take_restart() {
                                continue 'relay;
                            }
                            // Another server (or the same after its grace):
                            // a clean connection, where the sessions are loaded.
                            "the server does not know this connection (another server, or too late to resume)".to_owned()
                        }
                        Ok(Some(Err(e))) => {
                            // A message over the client's own limit (the
                            // transport skipped it as it came): the client
                            // shows it as a problem of its turn, and
                            // answers it when it was a request.
                            if self.to_client.send(Ok(Err(e))).await.is_err() {
                                return "the client is done".to_owned();
                            }
                            continue;
                        }
                        Ok(None) => (&mut conn.closed).await,
                        Err(e) => e.to_string(),
                    };
                    if conn.forgotten.load(Ordering::Relaxed) {
                        // A transport that resumes by itself (Streamable
                        // HTTP) was refused: nothing to resume, the
                        // sessions are loaded on a new connection.
                        self.rejoin.start_over();
                    }
                    let restart = self.rejoin.take_restart() || self.rejoin.is_starting_over();
                    if !restart && (!self.rejoin.is_resumable() || self.policy.budget.is_zero()) {
                        return self.give_up(detail).await;
                    }
                    if !restart {
                        // A connection given up on to resume is dropped,
                        // not closed: a close frame that still reached the
                        // server would tell it the client is done, and it
                        // would keep nothing to resume.
                        conn.writer.abort();
                    }
                    // One line a reconnect, once it is done (what the
                    // broken connection delivered is still being
                    // printed meanwhile).
                    match self.redial().await {
                        Ok(next) => {
                            conn = next;
                            // Starting over after a reconnect is part of that
                            // reconnect.
                            if !restart {
                                self.reconnects.fetch_add(1, Ordering::Relaxed);
                            }
                            for line in self.rejoin.reconnected(None) {
                                let _ = conn.sink.send(with_newline(line)).await;
                            }
                            if restart {
                                eprintln!("acp-client: {detail}; reconnected; loading the sessions again (a turn in progress is lost)");
                            } else {
                                eprintln!("acp-client: {detail}; reconnected; resuming");
                            }
                        }
                        Err(why) => {
                            let secs = self.policy.budget.as_secs();
                            return self
                                .give_up(format!("{detail}; no new connection within {secs} s (--reconnect-secs): {why}"))
                                .await;
                        }
                    }
                }
            }
        }
    }

    async fn redial(&self) -> Result<Connection, String> {
        self.policy.redial(Instant::now(), || (self.dial)()).await
    }

    /// Ends the client's stream with `reason` (its pending requests then
    /// fail with it).
    async fn give_up(&self, reason: String) -> String {
        let _ = self.to_client.send(Err(reason.clone())).await;
        reason
    }
}

fn with_newline(line: String) -> Vec<u8> {
    let mut bytes = line.into_bytes();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::FakeServer;
    use acp_codec::remote::TURN_LOST;
    use serde_json::{json, Value};

    async fn read(server: &mut FakeServer) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), server.from_client.recv())
            .await
            .expect("a line within 5 s")
            .expect("the client's line");
        serde_json::from_slice(&line).unwrap()
    }

    async fn answer(server: &FakeServer, message: Value) {
        server
            .to_client
            .send(Ok(Ok(message.to_string())))
            .await
            .unwrap();
    }

    async fn next(source: &mut RejoinedSource) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), source.next_line())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .expect("the stream goes on")
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// Streamable HTTP's transport resumes by itself; when the server
    /// refuses (a `409` gap, or a `404` for a connection it does not
    /// know), it marks the connection forgotten and ends it. The relay
    /// then opens a new one, without a cursor, loads the session there,
    /// keeps the replayed history from the client, fails the running
    /// prompt with `TURN_LOST` and sends the other unanswered request again.
    #[tokio::test]
    async fn a_refused_http_resume_loads_the_sessions_on_a_new_connection() {
        let (first, mut a) = Connection::fake();
        let (second, mut b) = Connection::fake();
        // The first dial gets `a`, the redial `b`.
        let servers = std::sync::Mutex::new(vec![second, first]);
        let dial: Dial = Arc::new(move || {
            let next = servers.lock().unwrap().pop();
            Box::pin(async move { next.ok_or_else(|| "no more servers".to_owned()) })
        });
        let mut policy = Policy::new(Duration::from_secs(5));
        policy.first_delay = Duration::from_millis(10);
        let counted = Arc::new(AtomicU64::new(0));
        let mut conn = connect_counting(dial, policy, Arc::clone(&counted))
            .await
            .unwrap();
        let send = |line: Value| line.to_string().into_bytes();

        // An HTTP connection: no positions on the messages.
        conn.sink
            .send(send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            ))
            .await
            .unwrap();
        let init = read(&mut a).await;
        assert!(init["params"]["_meta"].get("acp-codec/resume").is_some());
        answer(
            &a,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}),
        )
        .await;
        assert_eq!(next(&mut conn.source).await["id"], 1);
        let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/p", "mcpServers": []}});
        conn.sink.send(send(new)).await.unwrap();
        let _ = read(&mut a).await;
        answer(
            &a,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1"}}),
        )
        .await;
        assert_eq!(next(&mut conn.source).await["result"]["sessionId"], "s1");
        let prompt = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": []}});
        conn.sink.send(send(prompt)).await.unwrap();
        let mode = json!({"jsonrpc": "2.0", "id": 4, "method": "session/set_mode", "params": {"sessionId": "s1", "modeId": "ask"}});
        conn.sink.send(send(mode)).await.unwrap();
        assert_eq!(read(&mut a).await["id"], 3);
        assert_eq!(read(&mut a).await["id"], 4);

        // A stream's Last-Event-ID refused with 409: the transport gives up.
        a.forgotten.store(true, Ordering::Relaxed);
        a.to_client
            .send(Err("refused an event stream: HTTP 409".to_owned()))
            .await
            .unwrap();

        // A new connection: initialize without a cursor, then the load.
        let init = read(&mut b).await;
        assert_eq!(init["method"], "initialize");
        assert!(init["params"]["_meta"].get("acp-codec/cursor").is_none());
        answer(
            &b,
            json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}}),
        )
        .await;
        let load = read(&mut b).await;
        assert_eq!(load["method"], "session/load");
        assert_eq!(load["params"]["sessionId"], "s1");
        assert_eq!(load["params"]["cwd"], "/p");
        // The other request again; the prompt not.
        let again = read(&mut b).await;
        assert_eq!(
            (&again["id"], &again["method"]),
            (&json!(4), &json!("session/set_mode"))
        );
        let history = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"n": 0}}});
        answer(&b, history).await;
        answer(
            &b,
            json!({"jsonrpc": "2.0", "id": load["id"], "result": {}}),
        )
        .await;
        // The client sees the lost turn, then what follows; not the history.
        let lost = next(&mut conn.source).await;
        assert_eq!(lost["id"], 3);
        assert_eq!(lost["error"]["message"], TURN_LOST);
        answer(&b, json!({"jsonrpc": "2.0", "id": 4, "result": {}})).await;
        assert_eq!(
            next(&mut conn.source).await,
            json!({"jsonrpc": "2.0", "id": 4, "result": {}})
        );
        let live = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"n": 1}}});
        answer(&b, live.clone()).await;
        assert_eq!(next(&mut conn.source).await, live);
        // Starting over is not a reconnect of the relay's (the transport
        // counts its own).
        assert_eq!(counted.load(Ordering::Relaxed), 0);
        drop(conn.sink);
    }

    /// A message the transport skipped for the client's own limit reaches
    /// the client as that error (a problem of its turn, answered when it
    /// was a request), between the messages around it; the relay goes on.
    #[tokio::test]
    async fn a_message_over_the_clients_limit_reaches_it_as_the_error() {
        use acp_codec::framing::LineTooLong;
        let (first, a) = Connection::fake();
        let servers = std::sync::Mutex::new(vec![first]);
        let dial: Dial = Arc::new(move || {
            let next = servers.lock().unwrap().pop();
            Box::pin(async move { next.ok_or_else(|| "no more servers".to_owned()) })
        });
        let mut conn = connect(dial, Policy::new(Duration::from_secs(5)))
            .await
            .unwrap();
        let before = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"n": 1}}});
        let after = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"n": 2}}});
        answer(&a, before.clone()).await;
        let skipped = FrameError::LineTooLong(LineTooLong::new(100, 300, None, false));
        a.to_client.send(Ok(Err(skipped))).await.unwrap();
        answer(&a, after.clone()).await;
        assert_eq!(next(&mut conn.source).await, before);
        let got = tokio::time::timeout(Duration::from_secs(5), conn.source.next_line())
            .await
            .expect("the error within 5 s")
            .unwrap()
            .expect("the stream goes on");
        match got {
            Err(FrameError::LineTooLong(e)) => {
                assert_eq!((e.limit(), e.seen()), (100, 300), "{e}");
            }
            other => panic!("not the skipped message's error: {other:?}"),
        }
        assert_eq!(next(&mut conn.source).await, after);
        drop(conn.sink);
    }

    /// On WebSocket a reattach refused for a gap (the server no longer
    /// holds what the session missed) starts over too: a clean
    /// connection, the session loaded, the running prompt `TURN_LOST`.
    #[tokio::test]
    async fn a_gap_on_resume_loads_the_sessions_on_a_clean_connection() {
        use acp_codec::remote::{stamp, Position, RESUME_GAP};
        let (first, mut a) = Connection::fake();
        let (second, mut b) = Connection::fake();
        let (third, mut c) = Connection::fake();
        let servers = std::sync::Mutex::new(vec![third, second, first]);
        let dial: Dial = Arc::new(move || {
            let next = servers.lock().unwrap().pop();
            Box::pin(async move { next.ok_or_else(|| "no more servers".to_owned()) })
        });
        let mut policy = Policy::new(Duration::from_secs(5));
        policy.first_delay = Duration::from_millis(10);
        let mut conn = connect(dial, policy).await.unwrap();
        let send = |line: Value| line.to_string().into_bytes();
        let stamped = |server: &FakeServer, m: Value, s: Option<&str>, at: u64| {
            let text = stamp(&m.to_string(), s, Position(at));
            let tx = server.to_client.clone();
            async move { tx.send(Ok(Ok(text))).await.unwrap() }
        };
        let resume = json!({"acp-codec/resume": {"connection": "7"}});

        conn.sink
            .send(send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            ))
            .await
            .unwrap();
        let _ = read(&mut a).await;
        stamped(
            &a,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"_meta": resume}}),
            None,
            1,
        )
        .await;
        assert_eq!(next(&mut conn.source).await["id"], 1);
        let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/p", "mcpServers": []}});
        conn.sink.send(send(new)).await.unwrap();
        let _ = read(&mut a).await;
        stamped(
            &a,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1"}}),
            None,
            2,
        )
        .await;
        assert_eq!(next(&mut conn.source).await["id"], 2);
        let prompt = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": []}});
        conn.sink.send(send(prompt)).await.unwrap();
        let _ = read(&mut a).await;
        let update = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"n": 1}}});
        stamped(&a, update, Some("s1"), 1).await;
        assert_eq!(next(&mut conn.source).await["params"]["update"]["n"], 1);

        // The connection breaks; the next one resumes, the session's
        // reattach is refused for a gap.
        a.to_client.send(Err("reset".to_owned())).await.unwrap();
        let init = read(&mut b).await;
        assert_eq!(
            init["params"]["_meta"]["acp-codec/cursor"]["connection"],
            "7"
        );
        stamped(
            &b,
            json!({"jsonrpc": "2.0", "id": init["id"], "result": {"_meta": resume}}),
            None,
            3,
        )
        .await;
        let reattach = read(&mut b).await;
        assert_eq!(reattach["method"], "session/resume");
        let gap = json!({"jsonrpc": "2.0", "id": reattach["id"], "error": {"code": RESUME_GAP.0, "message": "gap"}});
        stamped(&b, gap, None, 4).await;

        // A clean connection: no cursor, the session loaded.
        let init = read(&mut c).await;
        assert!(
            init["params"]["_meta"].get("acp-codec/cursor").is_none(),
            "{init}"
        );
        stamped(
            &c,
            json!({"jsonrpc": "2.0", "id": init["id"], "result": {"_meta": resume}}),
            None,
            1,
        )
        .await;
        let load = read(&mut c).await;
        assert_eq!(load["method"], "session/load");
        stamped(
            &c,
            json!({"jsonrpc": "2.0", "id": load["id"], "result": {}}),
            Some("s1"),
            1,
        )
        .await;
        let lost = next(&mut conn.source).await;
        assert_eq!(
            (&lost["id"], &lost["error"]["message"]),
            (&json!(3), &json!(TURN_LOST))
        );
        drop(conn.sink);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter() {
        let p = Policy::new(Duration::from_secs(120));
        assert_eq!(p.delay(0, 999), Duration::from_micros(249_875));
        assert_eq!(p.delay(0, 0), Duration::from_millis(125));
        assert_eq!(p.delay(2, 0), Duration::from_millis(500));
        assert_eq!(p.delay(30, 0), Duration::from_secs(4));
        assert!(p.delay(30, 999) <= Duration::from_secs(8));
    }
}
