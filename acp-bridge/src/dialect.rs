//! Which ACP version the agent speaks, and the translator in front of it
//! when that is not the client's. The client is `acp-client`'s own turn
//! logic, which speaks v1, or the editor on `acp-client --stdio`, which
//! speaks the version its `initialize` asks for (read with the codec's
//! [`Negotiator`]: v1 for 1, v2 from 2 up). When the agent speaks the other
//! one, the codec's [`Translator`] sits between them ([`Translator::between`],
//! either direction): a v2 agent's turn is shown, answered and cancelled
//! exactly as a v1 turn is, and a v2 editor drives a v1 agent.
//!
//! How the agent's version is settled ([`Protocol`], `acp-client --protocol`):
//!
//! - `auto` (the default): the client's `initialize` goes to the agent as
//!   it was written. An agent that answers it in the client's version is
//!   spoken to unchanged from then on. An agent that answers in the other
//!   version (a v1 agent answers a v2 `initialize` with version 1, as v1's
//!   rule says) gets the translator from then on, its answer translated
//!   for the client; it read the client's `initialize` in the other
//!   version's words, so it saw neither the client's capabilities nor its
//!   name (a v1 agent takes the absent capabilities as "no `fs`, no
//!   `terminal`", which is what a v2 client offers). An agent that
//!   refuses it with `-32022` ("Unsupported protocol version") whose
//!   `data.supported` lists the other version (or that says nothing of
//!   what it supports) gets the same `initialize` again through the
//!   translator, and the rest of the connection is translated; the refusal
//!   never reaches the client. An agent of the client's version sees
//!   exactly what it saw before there was a translator, at the cost of one
//!   parse per line until the `initialize` answer; an agent that refuses
//!   costs one more round trip.
//! - `1` or `2`: the agent speaks that version, and the translator sits
//!   between from the client's `initialize` when the client speaks the
//!   other. It asks for the agent's version in that version's words; an
//!   agent that answers with another version is then relayed unchanged.
//!
//! A line the client sends before its `initialize` goes to the agent as it
//! is (an agent refuses anything before `initialize`), and so does an
//! `initialize` the codec's negotiation refuses (a version below 1).
//!
//! [`Negotiation`] is the state of one connection, sans-IO: feed it every
//! line from either side and send what it returns where it says. It is
//! the one place that holds the connection's translator, if any; [`spawn`]
//! runs it between a line transport and the client as a task. Once settled
//! on one version a line passes as it is, moved, not copied.

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use acp_codec::translate::{Out, Translator};
use acp_codec::version::{Dialect, Negotiator, Step};
use acp_codec::FrameError;
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::lines::{LineSender, LineSource};

/// The error code of an `initialize` asking for a version the agent does
/// not speak.
const UNSUPPORTED_VERSION: i64 = -32022;

/// Which protocol version the agent speaks (`--protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Protocol {
    /// v1: a v2 client is translated from its `initialize`.
    #[value(name = "1")]
    V1,
    /// v2: a v1 client is translated from its `initialize`.
    #[value(name = "2")]
    V2,
    /// The client's version first, the other through the translator when
    /// the agent answers in it or refuses the client's.
    #[default]
    Auto,
}

impl Protocol {
    /// The agent's version, when it is given.
    fn agent(self) -> Option<Dialect> {
        match self {
            Self::V1 => Some(Dialect::V1),
            Self::V2 => Some(Dialect::V2),
            Self::Auto => None,
        }
    }
}

/// The version `translator` speaks to the agent, unless it relays
/// unchanged (the agent answered in another).
fn agent_version(translator: &Translator) -> Option<u16> {
    let version = match translator {
        Translator::V1ClientV2Agent(_) => 2,
        Translator::V2ClientV1Agent(_) => 1,
    };
    (!translator.is_passthrough()).then_some(version)
}

/// The translator for a `client` whose `initialize` an agent refused, the
/// agent speaking `supported` (`None`: it did not say): the newest
/// version it speaks that a translator reaches; `None` when there is none.
fn for_refusal(client: Dialect, supported: Option<&[Value]>) -> Option<Translator> {
    let offers = |d: Dialect| {
        supported.is_none_or(|s| s.iter().any(|x| x.as_u64() == Some(u64::from(d.version()))))
    };
    Dialect::ALL
        .iter()
        .rev()
        .filter(|&&d| d != client && offers(d))
        .find_map(|&agent| Translator::between(client, agent))
}

/// The id and the version of `line` when it is the client's `initialize`
/// that the codec's negotiation accepts.
fn initialize_request(line: &str) -> Option<(Value, Dialect)> {
    let Step::Initialize(init) = Negotiator::new(&Dialect::ALL).handle_line(line) else {
        return None;
    };
    Some((serde_json::to_value(&init.id).ok()?, init.dialect))
}

/// The answer to request `id` in `line`, as an object.
fn answer_to(line: &str, id: &Value) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(m)) if !m.contains_key("method") && m.get("id") == Some(id) => Some(m),
        _ => None,
    }
}

#[derive(Debug)]
enum State {
    /// Until the client's `initialize`: lines pass. The agent's version
    /// when it is given (`--protocol 1|2`).
    Before(Option<Dialect>),
    /// `auto`: the client's `initialize` (its id, its line, its version)
    /// sent as it is, until the agent answers it.
    Asking(Value, String, Dialect),
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
        Self {
            state: State::Before(protocol.agent()),
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
            State::Translating(t) => t.client_line(&line),
            State::Before(agent) => {
                let Some((id, client)) = initialize_request(&line) else {
                    return vec![Out::Agent(line)];
                };
                let Some(agent) = *agent else {
                    self.state = State::Asking(id, line.clone(), client);
                    return vec![Out::Agent(line)];
                };
                match Translator::between(client, agent) {
                    Some(mut t) => {
                        self.awaiting = Some(id);
                        let out = t.client_line(&line);
                        self.state = State::Translating(t);
                        out
                    }
                    None => {
                        self.state = State::Direct;
                        vec![Out::Agent(line)]
                    }
                }
            }
            State::Asking(asked, init, client) => {
                // A second initialize before the first is answered: the
                // later one is the one to follow.
                if let Some((id, again)) = initialize_request(&line) {
                    (*asked, *init, *client) = (id, line.clone(), again);
                }
                vec![Out::Agent(line)]
            }
        }
    }

    /// What to send for `line`, a line from the agent.
    pub fn agent_line(&mut self, line: String) -> Vec<Out> {
        match &mut self.state {
            State::Direct | State::Before(_) => vec![Out::Client(line)],
            State::Translating(t) => {
                let answered = self
                    .awaiting
                    .as_ref()
                    .is_some_and(|id| answer_to(&line, id).is_some());
                let out = t.agent_line(&line);
                if answered {
                    self.awaiting = None;
                    self.translated = agent_version(t);
                }
                out
            }
            State::Asking(id, init, client) => {
                let Some(answer) = answer_to(&line, id) else {
                    return vec![Out::Client(line)];
                };
                let (init, client) = (std::mem::take(init), *client);
                let answered_in = answer
                    .get("result")
                    .and_then(|r| r.get("protocolVersion"))
                    .and_then(Value::as_u64)
                    .and_then(|v| u16::try_from(v).ok())
                    .and_then(Dialect::from_version);
                let error = answer.get("error");
                let refused = error
                    .and_then(|e| e.get("code"))
                    .and_then(Value::as_i64)
                    .is_some_and(|c| c == UNSUPPORTED_VERSION);
                let supported = error
                    .and_then(|e| e.get("data"))
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .map(Vec::as_slice);
                if let Some(mut t) =
                    answered_in.and_then(|agent| Translator::between(client, agent))
                {
                    // The agent took the client's initialize in its own
                    // version: the translator learns both as if it had
                    // sent it, and translates the answer.
                    let mut out: Vec<Out> = t
                        .client_line(&init)
                        .into_iter()
                        .filter(|o| matches!(o, Out::Client(_)))
                        .collect();
                    out.extend(t.agent_line(&line));
                    self.translated = agent_version(&t);
                    self.state = State::Translating(t);
                    return out;
                }
                match refused.then(|| for_refusal(client, supported)).flatten() {
                    Some(mut t) => {
                        let again = t.client_line(&init);
                        self.awaiting = Some(id.clone());
                        self.state = State::Translating(t);
                        again
                    }
                    None => {
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

    /// After `init` and the agent's `answer`, both pass through unchanged
    /// (the answer as it came, a later line of the client's too) and
    /// nothing is translated.
    fn passes_through(init: &str, answer: &str, later: &str) {
        let mut n = Negotiation::new(Protocol::Auto);
        let _ = n.client_line(init.to_owned());
        assert_eq!(
            n.agent_line(answer.to_owned()),
            vec![Out::Client(answer.to_owned())]
        );
        assert_eq!(
            n.client_line(later.to_owned()),
            vec![Out::Agent(later.to_owned())]
        );
        assert_eq!(n.translated_version(), None, "{answer}");
    }

    #[test]
    fn an_answer_or_another_error_settles_on_v1_unchanged() {
        for answer in [
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"bad"}}"#,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no","data":{"supported":[3]}}}"#,
        ] {
            let later = r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{}}"#;
            passes_through(V1_INIT, answer, later);
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

    const V2_INIT: &str = r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":2,"capabilities":{},"info":{"name":"ed","version":"1"}}}"#;
    const V1_ANSWER: &str = r#"{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":1,"agentInfo":{"name":"old","version":"1"},"agentCapabilities":{"loadSession":true}}}"#;

    fn client(outs: &[Out]) -> Vec<Value> {
        outs.iter()
            .filter_map(|o| match o {
                Out::Client(l) => Some(serde_json::from_str(l).unwrap()),
                Out::Agent(_) => None,
            })
            .collect()
    }

    /// A prompt of the v2 client, and what the v1 agent is sent for it.
    fn prompt_reaches_v1(n: &mut Negotiation) {
        let prompt = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}"#;
        let outs = n.client_line(prompt.to_owned());
        let to_agent = agent(&outs);
        assert_eq!(to_agent.len(), 1, "{outs:?}");
        assert_eq!(to_agent[0]["method"], "session/prompt");
        // v2's early answer, which no v1 agent gives.
        let early = client(&outs);
        assert!(early[0]["result"]["messageId"].is_string(), "{outs:?}");
        let done = r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#;
        let idle = client(&n.agent_line(done.to_owned()));
        assert_eq!(idle[0]["params"]["update"]["state"], "idle", "{idle:?}");
        assert_eq!(idle[0]["params"]["update"]["stopReason"], "end_turn");
    }

    #[test]
    fn a_v1_answer_to_a_v2_client_brings_the_translator_in() {
        let mut n = Negotiation::new(Protocol::Auto);
        assert_eq!(
            n.client_line(V2_INIT.to_owned()),
            vec![Out::Agent(V2_INIT.to_owned())],
            "asked as written"
        );
        let outs = n.agent_line(V1_ANSWER.to_owned());
        assert!(agent(&outs).is_empty(), "{outs:?}");
        let answer = client(&outs);
        assert_eq!(answer.len(), 1, "{outs:?}");
        assert_eq!(answer[0]["id"], "i");
        assert_eq!(answer[0]["result"]["protocolVersion"], 2);
        assert_eq!(answer[0]["result"]["info"]["name"], "old");
        assert!(answer[0]["result"].get("agentInfo").is_none(), "{answer:?}");
        assert_eq!(n.translated_version(), Some(1));
        prompt_reaches_v1(&mut n);
        // What a v2 client cannot serve is refused to the agent.
        let read = r#"{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#;
        let refused = agent(&n.agent_line(read.to_owned()));
        assert_eq!(refused[0]["error"]["code"], -32601, "{refused:?}");
    }

    #[test]
    fn a_v2_client_with_a_v2_agent_or_another_answer_is_not_translated() {
        for answer in [
            r#"{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":2,"info":{"name":"new","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":7}}"#,
            r#"{"jsonrpc":"2.0","id":"i","error":{"code":-32602,"message":"bad"}}"#,
            r#"{"jsonrpc":"2.0","id":"i","error":{"code":-32022,"message":"no","data":{"supported":[3]}}}"#,
        ] {
            let later = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#;
            passes_through(V2_INIT, answer, later);
        }
    }

    #[test]
    fn a_refusal_naming_v1_sends_a_v2_clients_initialize_again_in_v1() {
        let mut n = Negotiation::new(Protocol::Auto);
        let _ = n.client_line(V2_INIT.to_owned());
        let refusal = r#"{"jsonrpc":"2.0","id":"i","error":{"code":-32022,"message":"no","data":{"supported":[1]}}}"#;
        let again = n.agent_line(refusal.to_owned());
        let sent = agent(&again);
        assert_eq!(sent.len(), again.len(), "nothing for the client: {again:?}");
        assert_eq!(sent[0]["params"]["protocolVersion"], 1);
        assert_eq!(sent[0]["params"]["clientInfo"]["name"], "ed");
        let answer = client(&n.agent_line(V1_ANSWER.to_owned()));
        assert_eq!(answer[0]["result"]["protocolVersion"], 2, "{answer:?}");
        assert_eq!(n.translated_version(), Some(1));
    }

    #[test]
    fn a_given_version_translates_the_other_clients_from_initialize() {
        // --protocol 1: a v1 client passes; a v2 client is translated.
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
        let mut n = Negotiation::new(Protocol::V1);
        // Before initialize, a line passes as it is.
        let early = r#"{"jsonrpc":"2.0","method":"_hello"}"#;
        assert_eq!(
            n.client_line(early.to_owned()),
            vec![Out::Agent(early.to_owned())]
        );
        let sent = agent(&n.client_line(V2_INIT.to_owned()));
        assert_eq!(sent[0]["params"]["protocolVersion"], 1, "{sent:?}");
        let answer = client(&n.agent_line(V1_ANSWER.to_owned()));
        assert_eq!(answer[0]["result"]["protocolVersion"], 2, "{answer:?}");
        assert_eq!(n.translated_version(), Some(1));
        prompt_reaches_v1(&mut n);

        // --protocol 2: a v1 client is translated; a v2 client passes.
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
        let mut n = Negotiation::new(Protocol::V2);
        assert_eq!(
            n.client_line(V2_INIT.to_owned()),
            vec![Out::Agent(V2_INIT.to_owned())]
        );
    }

    #[test]
    fn an_initialize_the_negotiation_refuses_passes_and_settles_nothing() {
        let mut n = Negotiation::new(Protocol::V1);
        let zero =
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":0}}"#;
        assert_eq!(
            n.client_line(zero.to_owned()),
            vec![Out::Agent(zero.to_owned())]
        );
        let sent = agent(&n.client_line(V2_INIT.to_owned()));
        assert_eq!(sent[0]["params"]["protocolVersion"], 1, "still to settle");
    }
}
