//! `/metrics`: the Prometheus text exposition (format 0.0.4), by
//! prometheus-client. What the core decides (connections, turns,
//! resumes, refusals, agents) is read from its counters and census at
//! each scrape, under its lock; what only this program sees (messages
//! and bytes each way, the refusals at the front door and of the token
//! check) is counted here with one relaxed atomic add each, no label
//! built; the first update's latency is a histogram fed once per turn.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use acp_codec::remote::{Census, Refusal, Stats};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// What `/metrics` reads: the core's counters and census (a snapshot
/// under its lock), and this program's counters.
pub trait Source: Send + Sync + 'static {
    /// The core's counters and what exists now.
    fn snapshot(&self) -> (Stats, Census);
    /// This program's counters.
    fn counts(&self) -> &Counts;
}

/// The counters this program keeps itself.
#[derive(Debug, Default)]
pub struct Counts {
    /// Lines written to agents (client to agent), and their bytes.
    pub to_agent: Flow,
    /// Messages queued for clients (agent to client, and the server's
    /// own answers), and their bytes.
    pub to_client: Flow,
    /// Refusals decided here (front door, token, `Origin`, body size),
    /// at [`Refusal::index`].
    refusals: [AtomicU64; Refusal::COUNT],
}

/// Messages and bytes one way.
#[derive(Debug, Default)]
pub struct Flow {
    messages: AtomicU64,
    bytes: AtomicU64,
}

impl Flow {
    /// One message of `bytes` bytes.
    pub fn add(&self, bytes: usize) {
        self.messages.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

impl Counts {
    /// One refusal this program decided.
    pub fn refused(&self, reason: Refusal) {
        if let Some(n) = self.refusals.get(reason.index()) {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Buckets of the first update's latency (seconds): 5 ms to 2 min.
const LATENCY_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// The first update's latency histogram.
pub fn first_update_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// The registry `/metrics` encodes: `source`'s counters and census, and
/// the first update's latency histogram.
pub fn registry<S: Source>(source: &Arc<S>, first_update: Histogram) -> Registry {
    let mut registry = Registry::with_prefix("acp_bridge");
    registry.register(
        "first_update_seconds",
        "Time from a prompt to the agent's first message for its session",
        first_update,
    );
    registry.register_collector(Box::new(View {
        source: Arc::downgrade(source),
    }));
    registry
}

/// The Prometheus text of `registry`.
pub fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing into a `String` cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, registry);
    out
}

/// Reads the core and the counters at each scrape.
struct View<S> {
    source: Weak<S>,
}

impl<S> std::fmt::Debug for View<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("View")
    }
}

fn counter(e: &mut DescriptorEncoder<'_>, name: &str, help: &str, v: u64) -> std::fmt::Result {
    let m = e.encode_descriptor(name, help, None, MetricType::Counter)?;
    ConstCounter::new(v).encode(m)
}

fn gauge(e: &mut DescriptorEncoder<'_>, name: &str, help: &str, v: usize) -> std::fmt::Result {
    let m = e.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(i64::try_from(v).unwrap_or(i64::MAX)).encode(m)
}

/// One metric with one label, a value per label value.
fn family<M: EncodeMetric>(
    e: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    kind: MetricType,
    label: &str,
    values: &[(&str, M)],
) -> std::fmt::Result {
    let mut m = e.encode_descriptor(name, help, None, kind)?;
    for (value, metric) in values {
        let labels = [(label, *value)];
        metric.encode(m.encode_family(&labels)?)?;
    }
    Ok(())
}

fn load(n: &AtomicU64) -> u64 {
    n.load(Ordering::Relaxed)
}

impl<S: Source> Collector for View<S> {
    fn encode(&self, mut e: DescriptorEncoder<'_>) -> std::fmt::Result {
        let Some(source) = self.source.upgrade() else {
            return Ok(());
        };
        let (stats, census) = source.snapshot();
        let counts = source.counts();
        let g = |n: usize| ConstGauge::new(i64::try_from(n).unwrap_or(i64::MAX));
        let c = ConstCounter::new;
        let ws = Stats::profile_index(acp_codec::remote::Profile::WebSocket);
        let http = Stats::profile_index(acp_codec::remote::Profile::StreamableHttp);
        family(
            &mut e,
            "connections",
            "Open connections by transport profile",
            MetricType::Gauge,
            "profile",
            &[
                ("websocket", g(census.websocket)),
                ("http", g(census.streamable_http)),
            ],
        )?;
        family(
            &mut e,
            "connections_opened",
            "Connections opened by transport profile",
            MetricType::Counter,
            "profile",
            &[
                ("websocket", c(stats.connections[ws])),
                ("http", c(stats.connections[http])),
            ],
        )?;
        gauge(
            &mut e,
            "connections_detached",
            "Connections waiting for their client to resume them",
            census.detached,
        )?;
        gauge(
            &mut e,
            "users_connected",
            "Users with at least one open connection",
            census.users,
        )?;
        gauge(
            &mut e,
            "queued_bytes",
            "Bytes queued, unsent, for all connections",
            census.queued_bytes,
        )?;
        family(
            &mut e,
            "agents",
            "Agent processes by state",
            MetricType::Gauge,
            "state",
            &[
                ("starting", g(census.agents_starting)),
                ("running", g(census.agents_running)),
                ("restarting", g(census.agents_restarting)),
                ("stopping", g(census.agents_stopping)),
            ],
        )?;
        family(
            &mut e,
            "agent_starts",
            "Agent processes started, by reason",
            MetricType::Counter,
            "reason",
            &[
                ("shared", c(stats.agent_starts[0])),
                ("first_message", c(stats.agent_starts[1])),
                ("restart", c(stats.agent_starts[2])),
            ],
        )?;
        family(
            &mut e,
            "agent_stops",
            "Agent processes ended, by reason (exited: on their own, then restarted)",
            MetricType::Counter,
            "reason",
            &[
                ("idle", c(stats.agent_stops[0])),
                ("evicted", c(stats.agent_stops[1])),
                ("user_removed", c(stats.agent_stops[2])),
                ("exited", c(stats.agent_exits)),
            ],
        )?;
        counter(
            &mut e,
            "turns",
            "Prompts (session/prompt) taken for an agent",
            stats.turns,
        )?;
        family(
            &mut e,
            "messages",
            "Messages relayed, by direction",
            MetricType::Counter,
            "direction",
            &[
                ("client_to_agent", c(load(&counts.to_agent.messages))),
                ("agent_to_client", c(load(&counts.to_client.messages))),
            ],
        )?;
        family(
            &mut e,
            "bytes",
            "Bytes of messages relayed, by direction",
            MetricType::Counter,
            "direction",
            &[
                ("client_to_agent", c(load(&counts.to_agent.bytes))),
                ("agent_to_client", c(load(&counts.to_client.bytes))),
            ],
        )?;
        family(
            &mut e,
            "lines_dropped",
            "Agent output dropped: over the size limit, or not routable (not JSON-RPC, no session)",
            MetricType::Counter,
            "why",
            &[
                ("too_long", c(stats.agent_lines_too_long)),
                ("unroutable", c(census.dropped)),
            ],
        )?;
        counter(
            &mut e,
            "resumes",
            "Connections and sessions resumed from a position",
            stats.resumes,
        )?;
        counter(
            &mut e,
            "resume_gaps",
            "Resumes that found a gap (what was missed no longer kept)",
            stats.gaps,
        )?;
        let refusals: Vec<(&str, ConstCounter)> = Refusal::ALL
            .iter()
            .map(|r| {
                let core = stats.refusals.get(r.index()).copied().unwrap_or(0);
                let here = counts.refusals.get(r.index()).map_or(0, load);
                (r.as_str(), c(core.saturating_add(here)))
            })
            .collect();
        family(
            &mut e,
            "refusals",
            "Connections and requests refused, by reason",
            MetricType::Counter,
            "reason",
            &refusals,
        )?;
        counter(
            &mut e,
            "events_dropped",
            "Events of the core not logged: its queue was full",
            stats.events_dropped,
        )
    }
}
