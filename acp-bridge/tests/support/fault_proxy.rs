//! A fault-injecting TCP proxy on 127.0.0.1 for the reconnect tests: it
//! relays each connection to `upstream` byte for byte and breaks it when
//! the bytes sent toward the client (counted over every connection)
//! cross one of its offsets, by a reset (`SO_LINGER` 0: the client reads
//! `ECONNRESET`), a close (FIN both ways) or a stall (silence, no FIN). The offsets and the kind of
//! each break come from a seed, so a failing run can be replayed. Its
//! runtime, and every connection, stops when it is dropped.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How a connection is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A TCP reset.
    Reset,
    /// A clean close, no WebSocket close frame.
    Close,
    /// Nothing more either way, and no FIN: the connection hangs open (a
    /// laptop asleep, a NAT that forgot it) until the proxy is dropped.
    Stall,
}

/// The running proxy.
pub struct FaultProxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    /// How many breaks happened.
    pub broken: Arc<AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

/// `count` breaks at increasing offsets in `from..from + span` bytes, from
/// `seed` (xorshift), each a reset or a close.
pub fn plan(seed: u64, count: usize, from: usize, span: usize) -> Vec<(usize, Fault)> {
    plan_of(seed, count, from, span, &[Fault::Reset, Fault::Close])
}

/// As [`plan`], each break a reset, a close or a stall (a stall costs
/// the client its dead-connection wait, 30 s).
pub fn plan_with_stalls(seed: u64, count: usize, from: usize, span: usize) -> Vec<(usize, Fault)> {
    plan_of(
        seed,
        count,
        from,
        span,
        &[Fault::Reset, Fault::Close, Fault::Stall],
    )
}

fn plan_of(
    seed: u64,
    count: usize,
    from: usize,
    span: usize,
    kinds: &[Fault],
) -> Vec<(usize, Fault)> {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut offsets: Vec<(usize, Fault)> = (0..count)
        .map(|_| {
            let offset = from + (next() % span as u64) as usize + 1;
            let fault = kinds[(next() % kinds.len() as u64) as usize];
            (offset, fault)
        })
        .collect();
    offsets.sort_unstable_by_key(|(o, _)| *o);
    offsets.dedup_by_key(|(o, _)| *o);
    offsets
}

impl FaultProxy {
    /// Starts a proxy to `upstream` breaking as `plan` says.
    pub fn start(upstream: SocketAddr, plan: Vec<(usize, Fault)>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let broken = Arc::new(AtomicUsize::new(0));
        // Bytes sent toward clients so far, and the breaks still to come.
        let state = Arc::new(Mutex::new((0usize, plan)));
        let count = Arc::clone(&broken);
        runtime.spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let (state, count) = (Arc::clone(&state), Arc::clone(&count));
                tokio::spawn(relay(client, server, state, count));
            }
        });
        Self {
            addr,
            broken,
            _runtime: runtime,
        }
    }
}

type Shared = Arc<Mutex<(usize, Vec<(usize, Fault)>)>>;

async fn relay(
    mut client: TcpStream,
    mut server: TcpStream,
    state: Shared,
    broken: Arc<AtomicUsize>,
) {
    let mut up = vec![0u8; 16 * 1024];
    let mut down = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            r = client.read(&mut up) => match r {
                Ok(n) if n > 0 => {
                    if server.write_all(&up[..n]).await.is_err() {
                        return;
                    }
                }
                _ => return,
            },
            r = server.read(&mut down) => {
                let n = match r {
                    Ok(n) if n > 0 => n,
                    _ => return,
                };
                // How much of this read goes out before the next break.
                let (allowed, fault) = {
                    let mut s = state.lock().unwrap();
                    let (sent, plan) = &mut *s;
                    match plan.first().copied() {
                        Some((offset, fault)) if *sent + n >= offset => {
                            plan.remove(0);
                            let allowed = offset.saturating_sub(*sent).min(n);
                            *sent += allowed;
                            (allowed, Some(fault))
                        }
                        _ => {
                            *sent += n;
                            (n, None)
                        }
                    }
                };
                if client.write_all(&down[..allowed]).await.is_err() {
                    return;
                }
                if let Some(fault) = fault {
                    broken.fetch_add(1, Ordering::Relaxed);
                    if fault == Fault::Stall {
                        // Both sockets stay open, unread and unwritten.
                        std::future::pending::<()>().await;
                    }
                    if fault == Fault::Reset {
                        #[allow(deprecated)]
                        let _ = client.set_linger(Some(std::time::Duration::ZERO));
                    }
                    // Dropping both ends: a reset or a FIN to the client,
                    // a FIN to the server.
                    return;
                }
            }
        }
    }
}
