//! The front door: connections accepted but not yet authenticated, capped
//! in all and per peer address, each with a deadline. A connection past a
//! cap is closed at once, before anything is allocated for it beyond the
//! accept; one not authenticated (TLS handshake, request head, token)
//! within `--handshake-secs` is dropped.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use acp_codec::remote::Refusal;

/// The front door's limits.
#[derive(Debug, Clone, Copy)]
pub struct DoorLimits {
    /// Longest time from the accept to an authenticated request (TLS
    /// handshake and request head included).
    pub handshake: Duration,
    /// Longest wait for a WebSocket client's first message.
    pub first_message: Duration,
    /// Most connections not yet authenticated, in all.
    pub max_unauthenticated: usize,
    /// Most connections not yet authenticated from one address.
    pub max_per_address: usize,
}

#[derive(Default)]
struct Counts {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// The connections not yet authenticated.
pub struct Door {
    limits: DoorLimits,
    counts: Mutex<Counts>,
}

impl Door {
    /// An empty front door with `limits`.
    pub fn new(limits: DoorLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            counts: Mutex::new(Counts::default()),
        })
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A place for a new connection from `ip`, unless a cap is reached
    /// (then the connection is to be closed at once: the cap's refusal).
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Ticket, Refusal> {
        let mut c = self.counts();
        if c.total >= self.limits.max_unauthenticated {
            return Err(Refusal::Unauthenticated);
        }
        let from = c.by_address.entry(ip).or_insert(0);
        if *from >= self.limits.max_per_address {
            return Err(Refusal::PerAddress);
        }
        *from += 1;
        c.total += 1;
        Ok(Ticket {
            door: self.clone(),
            ip,
            passed: AtomicBool::new(false),
        })
    }

    fn release(&self, ip: IpAddr) {
        let mut c = self.counts();
        c.total -= 1;
        if let Some(n) = c.by_address.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                c.by_address.remove(&ip);
            }
        }
    }

    /// Resolves when `ticket`'s connection has not been authenticated
    /// within `--handshake-secs` (never, once it has).
    pub async fn expired(&self, ticket: &Ticket) {
        tokio::time::sleep(self.limits.handshake).await;
        if ticket.is_passed() {
            std::future::pending::<()>().await;
        }
    }

    /// Its limits.
    pub fn limits(&self) -> DoorLimits {
        self.limits
    }
}

/// One unauthenticated connection's place at the door, given back once it
/// authenticates ([`pass`](Self::pass)) or closes.
pub struct Ticket {
    door: Arc<Door>,
    ip: IpAddr,
    passed: AtomicBool,
}

impl Ticket {
    /// The connection presented a valid token (or needs none).
    pub fn pass(&self) {
        if !self.passed.swap(true, Ordering::AcqRel) {
            self.door.release(self.ip);
        }
    }

    fn is_passed(&self) -> bool {
        self.passed.load(Ordering::Acquire)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.pass();
    }
}
