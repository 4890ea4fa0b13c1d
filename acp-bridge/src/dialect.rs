//! Which ACP version the agent speaks, and the translator in front of it
//! when that is not the client's. `acp-client`'s own turn logic speaks v1,
//! and so does an editor on `acp-client --stdio` that asks for version 1;
//! a v2 agent is reached through the codec's [`V1ClientV2Agent`], so a
//! v2 turn is shown, answered and cancelled exactly as a v1 turn is.
//!
//! How the version is settled ([`Protocol`], `acp-client --protocol`):
//!
//! - `auto` (the default): the client's `initialize` goes to the agent as
//!   it was written. An agent that answers it (any v1 agent, and one that
//!   speaks both) is spoken to unchanged from then on. An agent that
//!   refuses it with `-32022` ("Unsupported protocol version") whose
//!   `data.supported` lists 2 (or that says nothing of what it supports)
//!   gets the same `initialize` again through the translator, which asks
//!   for version 2, and the rest of the connection is translated; the
//!   refusal never reaches the client. A v1 agent sees exactly what it
//!   saw before there was a v2, at the cost of one parse per line until
//!   the `initialize` answer; a v2-only agent costs one more round trip.
//! - `2`: the translator from the first line (for an agent that speaks
//!   both, to talk v2 to it). It asks for version 2 in v2's words; an
//!   agent that answers with version 1 is then relayed unchanged, but it
//!   was offered no `fs` nor `terminal` (v2 has no such client methods).
//! - `1`: nothing is translated; a v2-only agent's `-32022` is the
//!   client's error.
//!
//! A line the client sends before the `initialize` answer goes to the
//! agent as it is (a v2 agent refuses anything before `initialize`).
//!
//! [`Negotiation`] is the state of one connection, sans-IO: feed it every
//! line from either side and send what it returns where it says. It is
//! the one place that holds the connection's translator, if any (one
//! variant a direction the codec translates); [`spawn`] runs it between a
//! line transport and the client as a task. Once settled on v1 a line
//! passes as it is, moved, not copied.

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use acp_codec::translate::{Out, V1ClientV2Agent};
use acp_codec::FrameError;
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::lines::{LineSender, LineSource};

/// The error code of an `initialize` asking for a version the agent does
/// not speak.
const UNSUPPORTED_VERSION: i64 = -32022;

/// Which protocol version to speak to the agent (`--protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Protocol {
    /// v1 only: nothing translated.
    #[value(name = "1")]
    V1,
    /// v2 through the translator from the first line.
    #[value(name = "2")]
    V2,
    /// v1 first, v2 through the translator when the agent refuses v1.
    #[default]
    Auto,
}

/// The translator of a connection: one variant a direction the codec
/// translates.
#[derive(Debug)]
enum Translator {
    /// A v1 client in front of a v2 agent.
    V1ClientV2Agent(V1ClientV2Agent),
}

impl Translator {
    /// The translator for a client whose `initialize` asked for `asked`,
    /// refused by an agent that speaks `supported` (`None`: it did not
    /// say); `None` when no translator bridges the two.
    fn for_refusal(asked: u64, supported: Option<&[Value]>) -> Option<Self> {
        let offers = |v: u64| supported.is_none_or(|s| s.iter().any(|x| x.as_u64() == Some(v)));
        // A v2 client in front of a v1-only agent would take the other
        // direction here, once the codec translates it.
        (asked < 2 && offers(2)).then(|| Self::V1ClientV2Agent(V1ClientV2Agent::new()))
    }

    fn client_line(&mut self, line: &str) -> Vec<Out> {
        match self {
            Self::V1ClientV2Agent(t) => t.client_line(line),
        }
    }

    fn agent_line(&mut self, line: &str) -> Vec<Out> {
        match self {
            Self::V1ClientV2Agent(t) => t.agent_line(line),
        }
    }

    /// The version the agent speaks, once it answered `initialize`;
    /// `None` when the translator relays it unchanged.
    fn agent_version(&self) -> Option<u16> {
        match self {
            Self::V1ClientV2Agent(t) => (!t.is_passthrough()).then_some(2),
        }
    }
}

/// The id and the `protocolVersion` of `line` when it is an `initialize`
/// request.
fn initialize_request(line: &str) -> Option<(Value, u64)> {
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    if m.get("method").and_then(Value::as_str) != Some("initialize") {
        return None;
    }
    let version = m
        .get("params")
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Some((m.get("id")?.clone(), version))
}

#[derive(Debug)]
enum State {
    /// `auto`: the client's `initialize` (its id and line, its version)
    /// once sent, until the agent answers it.
    Asking(Option<(Value, String, u64)>),
    /// Lines pass unchanged.
    Direct,
    /// Lines go through the translator.
    Translating(Translator),
}

/// One connection's version negotiation and translation, sans-IO: see the
/// [module docs](self).
#[derive(Debug)]
pub struct Negotiation {
    state: State,
    /// The id of the translated `initialize`, until the agent answers it.
    awaiting: Option<Value>,
    /// The agent's version once it answered through the translator.
    translated: Option<u16>,
}

impl Negotiation {
    /// The state of a new connection.
    pub fn new(protocol: Protocol) -> Self {
        let state = match protocol {
            Protocol::V1 => State::Direct,
            Protocol::V2 => State::Translating(Translator::V1ClientV2Agent(V1ClientV2Agent::new())),
            Protocol::Auto => State::Asking(None),
        };
        Self {
            state,
            awaiting: None,
            translated: None,
        }
    }

    /// The protocol version of an agent reached through a translator,
    /// once its `initialize` answer said so; `None` when nothing is
    /// translated.
    pub fn translated_version(&self) -> Option<u16> {
        self.translated
    }

    /// What to send for `line`, a line from the client.
    pub fn client_line(&mut self, line: String) -> Vec<Out> {
        match &mut self.state {
            State::Direct => vec![Out::Agent(line)],
            State::Translating(t) => {
                if self.translated.is_none() {
                    if let Some((id, _)) = initialize_request(&line) {
                        self.awaiting = Some(id);
                    }
                }
                t.client_line(&line)
            }
            State::Asking(asked) => {
                if let Some((id, version)) = initialize_request(&line) {
                    *asked = Some((id, line.clone(), version));
                }
                vec![Out::Agent(line)]
            }
        }
    }

    /// What to send for `line`, a line from the agent.
    pub fn agent_line(&mut self, line: String) -> Vec<Out> {
        match &mut self.state {
            State::Direct | State::Asking(None) => vec![Out::Client(line)],
            State::Translating(t) => {
                let answered = self.awaiting.as_ref().is_some_and(|id| {
                    serde_json::from_str::<Value>(&line)
                        .is_ok_and(|m| m.get("method").is_none() && m.get("id") == Some(id))
                });
                let out = t.agent_line(&line);
                if answered {
                    self.awaiting = None;
                    self.translated = t.agent_version();
                }
                out
            }
            State::Asking(Some((id, init, asked))) => {
                let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&line) else {
                    return vec![Out::Client(line)];
                };
                if m.contains_key("method") || m.get("id") != Some(id) {
                    return vec![Out::Client(line)];
                }
                let error = m.get("error");
                let refused = error
                    .and_then(|e| e.get("code"))
                    .and_then(Value::as_i64)
                    .is_some_and(|c| c == UNSUPPORTED_VERSION);
                let supported = error
                    .and_then(|e| e.get("data"))
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .map(Vec::as_slice);
                match refused.then(|| Translator::for_refusal(*asked, supported)) {
                    Some(Some(mut translator)) => {
                        let again = translator.client_line(init);
                        self.awaiting = Some(id.clone());
                        self.state = State::Translating(translator);
                        again
                    }
                    _ => {
                        self.state = State::Direct;
                        vec![Out::Client(line)]
                    }
                }
            }
        }
    }
}

/// An item of a line source: a line, or a line that was refused.
pub type Item = io::Result<Result<String, FrameError>>;

/// The client's side of a negotiated connection: the lines for it, after
/// translation.
pub struct Negotiated {
    lines: mpsc::Receiver<Item>,
    version: Arc<AtomicU16>,
}

impl LineSource for Negotiated {
    async fn next_line(&mut self) -> io::Result<Option<Result<String, FrameError>>> {
        self.lines.recv().await.transpose()
    }

    fn translated_version(&self) -> Option<u16> {
        Some(self.version.load(Ordering::Relaxed)).filter(|v| *v != 0)
    }
}

/// Runs `negotiation` as a task between the agent (`from_agent`,
/// `to_agent`) and the client: the client reads the returned source and
/// writes to the returned sender. The task ends when the client's sender
/// is dropped (the agent's input closes with it), when the client stops
/// reading, or at the end of the agent's lines.
pub fn spawn<A>(
    mut negotiation: Negotiation,
    mut from_agent: A,
    to_agent: LineSender,
) -> (Negotiated, LineSender)
where
    A: Stream<Item = Item> + Send + Unpin + 'static,
{
    // One line ahead at most: a line may be 64 MiB, and the client's
    // reading is what paces the agent's, as without the task.
    let (to_client, lines) = mpsc::channel::<Item>(1);
    let (sink, mut from_client) = LineSender::channel();
    let version = Arc::new(AtomicU16::new(0));
    let seen = Arc::clone(&version);
    tokio::spawn(async move {
        loop {
            let outs = tokio::select! {
                line = from_client.recv() => match line {
                    Some(mut bytes) => {
                        if bytes.last() == Some(&b'\n') {
                            bytes.pop();
                        }
                        let line = String::from_utf8(bytes)
                            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                        negotiation.client_line(line)
                    }
                    None => break,
                },
                item = from_agent.next() => match item {
                    Some(Ok(Ok(line))) => {
                        let outs = negotiation.agent_line(line);
                        seen.store(negotiation.translated_version().unwrap_or(0), Ordering::Relaxed);
                        outs
                    }
                    Some(Ok(Err(refused))) => {
                        if to_client.send(Ok(Err(refused))).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Some(Err(e)) => {
                        let _ = to_client.send(Err(e)).await;
                        break;
                    }
                    None => break,
                },
            };
            for out in outs {
                let sent = match out {
                    Out::Agent(mut line) => {
                        line.push('\n');
                        // An agent gone is the client's to notice (its
                        // lines end).
                        let _ = to_agent.send(line.into_bytes()).await;
                        true
                    }
                    Out::Client(line) => to_client.send(Ok(Ok(line))).await.is_ok(),
                };
                if !sent {
                    return;
                }
            }
        }
    });
    (Negotiated { lines, version }, sink)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}"#;

    fn agent(outs: &[Out]) -> Vec<Value> {
        outs.iter()
            .filter_map(|o| match o {
                Out::Agent(l) => Some(serde_json::from_str(l).unwrap()),
                Out::Client(_) => None,
            })
            .collect()
    }

    #[test]
    fn a_refusal_naming_v2_sends_initialize_again_in_v2_and_is_not_relayed() {
        let mut n = Negotiation::new(Protocol::Auto);
        assert_eq!(
            n.client_line(V1_INIT.to_owned()),
            vec![Out::Agent(V1_INIT.to_owned())]
        );
        let refusal = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":1,"supported":[2]}}}"#;
        let again = n.agent_line(refusal.to_owned());
        let sent = agent(&again);
        assert_eq!(sent.len(), again.len(), "nothing for the client: {again:?}");
        assert_eq!(sent[0]["method"], "initialize");
        assert_eq!(sent[0]["id"], 0);
        assert_eq!(sent[0]["params"]["protocolVersion"], 2);
        assert!(sent[0]["params"]["info"].is_object());
        assert_eq!(n.translated_version(), None, "not before the answer");
        let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{"session":{}}}}"#;
        let outs = n.agent_line(answer.to_owned());
        let Some(Out::Client(line)) = outs.first() else {
            panic!("{outs:?}")
        };
        let v1: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v1["result"]["protocolVersion"], 1);
        assert_eq!(v1["result"]["agentInfo"]["name"], "a");
        assert_eq!(n.translated_version(), Some(2));
    }

    #[test]
    fn an_answer_or_another_error_settles_on_v1_unchanged() {
        for answer in [
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"bad"}}"#,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no","data":{"supported":[3]}}}"#,
        ] {
            let mut n = Negotiation::new(Protocol::Auto);
            let _ = n.client_line(V1_INIT.to_owned());
            assert_eq!(
                n.agent_line(answer.to_owned()),
                vec![Out::Client(answer.to_owned())]
            );
            let later = r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{}}"#;
            assert_eq!(
                n.client_line(later.to_owned()),
                vec![Out::Agent(later.to_owned())]
            );
            assert_eq!(n.translated_version(), None);
        }
    }

    #[test]
    fn a_refusal_of_another_request_or_before_initialize_passes() {
        let mut n = Negotiation::new(Protocol::Auto);
        let refusal = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no"}}"#;
        assert_eq!(
            n.agent_line(refusal.to_owned()),
            vec![Out::Client(refusal.to_owned())]
        );
        let _ = n.client_line(V1_INIT.to_owned());
        let other = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"no"}}"#;
        assert_eq!(
            n.agent_line(other.to_owned()),
            vec![Out::Client(other.to_owned())]
        );
        // Still asking: the initialize's own refusal (no data) switches.
        assert_eq!(agent(&n.agent_line(refusal.to_owned())).len(), 1);
    }

    #[test]
    fn protocol_one_never_translates_and_two_always_does() {
        let refusal = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no","data":{"supported":[2]}}}"#;
        let mut n = Negotiation::new(Protocol::V1);
        assert_eq!(
            n.client_line(V1_INIT.to_owned()),
            vec![Out::Agent(V1_INIT.to_owned())]
        );
        assert_eq!(
            n.agent_line(refusal.to_owned()),
            vec![Out::Client(refusal.to_owned())]
        );
        let mut n = Negotiation::new(Protocol::V2);
        assert_eq!(
            agent(&n.client_line(V1_INIT.to_owned()))[0]["params"]["protocolVersion"],
            2
        );
        // An agent answering version 1 is relayed, and not called translated.
        let v1 = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;
        assert_eq!(
            n.agent_line(v1.to_owned()),
            vec![Out::Client(v1.to_owned())]
        );
        assert_eq!(n.translated_version(), None);
    }
}
