//! The server core with its scripted agent (`resume_server.rs`) on a
//! WebSocket, on 127.0.0.1: one text message a JSON-RPC message, the
//! scripted agent stepping every few milliseconds while a client is
//! connected; the core decides what each connection gets. It breaks
//! the connection abruptly (no close frame) instead of sending the
//! messages whose numbers (counted over every connection, from 1) are in
//! `breaks`: the message is lost, the server keeps it in its log, as a
//! real server whose socket died would. Its runtime stops when dropped.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message as WsMessage;

use crate::resume_server::ResumingServer;

/// The running server.
pub struct ResumeWs {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The core and its agent (prompts that reached the agent).
    pub state: Arc<Mutex<ResumingServer>>,
    /// Connections accepted.
    pub connections: Arc<AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

impl ResumeWs {
    /// Starts a server whose turn sends `updates` (a permission request
    /// after the third), breaking at the messages numbered in `breaks`.
    pub fn start(updates: &[&str], breaks: BTreeSet<usize>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let state = Arc::new(Mutex::new(ResumingServer::new(1 << 20, updates, Some(3))));
        let connections = Arc::new(AtomicUsize::new(0));
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let sent = Arc::new(AtomicUsize::new(0));
        let breaks = Arc::new(breaks);
        let (st, conns) = (Arc::clone(&state), Arc::clone(&connections));
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                conns.fetch_add(1, Ordering::Relaxed);
                let (st, sent, breaks) = (Arc::clone(&st), Arc::clone(&sent), Arc::clone(&breaks));
                tokio::spawn(async move {
                    let Ok(ws) = tokio_tungstenite::accept_async(tcp).await else {
                        return;
                    };
                    let (mut tx, mut rx) = ws.split();
                    let conn = st.lock().unwrap().open();
                    let mut tick = tokio::time::interval(Duration::from_millis(3));
                    loop {
                        let out = tokio::select! {
                            m = rx.next() => match m {
                                Some(Ok(WsMessage::Text(text))) => {
                                    st.lock().unwrap().handle(conn, text.as_str())
                                }
                                Some(Ok(_)) => continue,
                                _ => {
                                    st.lock().unwrap().broken(conn);
                                    return;
                                }
                            },
                            _ = tick.tick() => {
                                let mut st = st.lock().unwrap();
                                let _ = st.step();
                                st.take(conn)
                            }
                        };
                        for message in out {
                            let n = sent.fetch_add(1, Ordering::Relaxed) + 1;
                            if breaks.contains(&n)
                                || tx.send(WsMessage::Text(message.into())).await.is_err()
                            {
                                // Gone without a word: the socket drops,
                                // what the core sent after it is lost.
                                st.lock().unwrap().broken(conn);
                                return;
                            }
                        }
                    }
                });
            }
        });
        Self {
            addr,
            state,
            connections,
            _runtime: runtime,
        }
    }
}
