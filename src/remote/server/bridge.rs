//! Bridging versions (feature `v2`): a client of one protocol version in
//! front of an agent of another, through one translator per connection
//! ([`Translator`]: a v1 client in front of a v2 agent, or a v2 client
//! in front of a v1 agent).
//!
//! How a connection comes to be bridged: its client's `initialize` is
//! kept until it is answered. When the answer is a `-32022` ("unsupported
//! protocol version"), from the router (the agent's version is known
//! from an earlier answer, or the agent answered this one with its own
//! version) or from the agent (a v2-only agent refusing v1), and its
//! `data.supported` lists the other version (or says nothing), the
//! refusal never reaches the client: the same `initialize` goes to the
//! agent again through the translator, in the other version, and its
//! answer, translated, is the client's. From then on every line of the
//! connection goes through the translator, both ways. Any other answer
//! (the same version, another error) settles the connection unbridged. A
//! second refusal (the agent speaks neither version) reaches the client,
//! which may ask again; the connection stays bridged (a translator
//! answers some requests itself, so a connection never goes back to
//! relaying: a request could get two answers).
//! This is how `acp-client --protocol auto` decides, on the other side
//! of the connection.
//!
//! Where the translator sits: a line from the client goes through the
//! resume rules first (they read the client's own version: its
//! `session/load` or `session/resume` cursor, its retried prompts), then
//! the translator, then the MCP rules and the router, which see the
//! client speak the agent's version. A line for the client goes through
//! the router and the MCP rules, then the translator, then the resume
//! rules (the logs keep what the client sees, in its version) and flow
//! control. A line the translator writes for the client itself (an
//! answer it makes, an update it adds) goes the same way from the
//! translator on; one it writes for the agent goes to the router as the
//! client's. A connection that breaks and is resumed keeps its
//! translator (it waits with the detached connection). The translator is
//! the connection's alone: it goes when the connection goes.
//!
//! What cannot be bridged is the translator's (see [`crate::translate`]):
//! a v1 agent's `fs/*` and `terminal/*` requests to a v2 client are
//! answered `-32601` by the translator (a v2 client has no client
//! methods, and the agent was told the client offers neither).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;

use super::{ConnectionId, Server};
use crate::acp::{Message, RequestId};
use crate::framing::peek::peek;
use crate::remote::router::{Inbound, MessageKind};
use crate::remote::transport::{decode, Stream};
use crate::translate::{Out, Translator};
use crate::version::{Dialect, Negotiator, Step};
use crate::ErrorCode;

/// A connection's bridge between versions.
#[derive(Debug, Default)]
pub(super) struct Bridge {
    state: State,
    /// The refusal of the client's `initialize` was taken and asked
    /// again: the refusal's reopening of the gate is not the client's.
    asked_again: bool,
}

#[derive(Debug, Default)]
enum State {
    /// Nothing translated.
    #[default]
    Direct,
    /// The client's `initialize`, until it is answered.
    Asking {
        id: RequestId<'static>,
        line: String,
        asked: Dialect,
    },
    /// Every line through the translator, for the rest of the connection
    /// (a translator answers some requests itself: the connection never
    /// goes back to relaying, or such a request could get two answers).
    Translating(Translator),
}

impl Bridge {
    /// The version the client speaks when it is bridged.
    pub(super) fn client_dialect(&self) -> Option<Dialect> {
        match &self.state {
            State::Translating(Translator::V1ClientV2Agent(_)) => Some(Dialect::V1),
            State::Translating(Translator::V2ClientV1Agent(_)) => Some(Dialect::V2),
            _ => None,
        }
    }

    /// Whether the gate's reopening after a refused `initialize` is to be
    /// skipped (the refusal was taken, the `initialize` asked again);
    /// once.
    pub(super) fn take_asked_again(&mut self) -> bool {
        core::mem::take(&mut self.asked_again)
    }
}

/// Whether `text` is a `-32022` refusal listing `other` in its
/// `data.supported` (or saying nothing of what is supported). Read by the
/// one-pass decoder; only a refusal's `data` is parsed further.
fn refuses_for(text: &str, other: Dialect) -> bool {
    // The code is a JSON integer, which no escape can write otherwise: an
    // answer without these bytes (every successful `initialize`) is not
    // read further.
    let code = ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0.to_string();
    if !text.contains(code.as_str()) {
        return false;
    }
    let Ok(Message::Error(e)) = Message::decode(text) else {
        return false;
    };
    if e.error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        return false;
    }
    let Some(data) = e.error.data else {
        return true;
    };
    let Ok(data) = serde_json::from_str::<serde_json::Value>(data.get()) else {
        return true;
    };
    data.get("supported")
        .and_then(serde_json::Value::as_array)
        .is_none_or(|s| {
            s.iter()
                .any(|v| v.as_u64() == Some(u64::from(other.version())))
        })
}

/// The stream of a line the translator wrote for the client (a
/// notification's or a request's session, else `default`, where the
/// line it came from went) and its kind: the translator's lines were
/// routed by no router, so their first bytes say.
fn stream_of(line: &str, default: &Stream) -> (Stream, MessageKind) {
    let head = line.as_bytes().get(..1024).unwrap_or(line.as_bytes());
    let p = peek(head);
    let kind = super::oversize::kind_of(&p);
    let stream = match p.session {
        Some(s) if p.id.is_none() || p.is_request => Stream::Session(s.as_str().into()),
        _ => default.clone(),
    };
    (stream, kind)
}

impl Server {
    /// A message of `conn` after the resume rules: `true` when the
    /// connection is bridged and the translator took it (what it wrote
    /// went on); an `initialize` is kept until it is answered.
    pub(super) fn bridge_inbound(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        text: &str,
        message: &Message<'_>,
    ) -> bool {
        let Some(bridge) = self.bridge_of(conn) else {
            return false;
        };
        let initialize = match message {
            Message::Request(r) if r.method == crate::acp::names::INITIALIZE => Some(r),
            _ => None,
        };
        match &mut bridge.state {
            State::Translating(translator) => {
                let outs = translator.client_line(text);
                let stream = match message {
                    Message::Request(r) => crate::remote::error_stream(
                        &r.method,
                        crate::remote::session_field(r.params.as_ref())
                            .into_id()
                            .as_deref(),
                    ),
                    _ => Stream::Connection,
                };
                self.bridged(now, conn, &stream, outs);
                true
            }
            state => {
                if let Some(r) = initialize {
                    if let Step::Initialize(init) = Negotiator::new(&Dialect::ALL).handle_line(text)
                    {
                        *state = State::Asking {
                            id: r.id.to_owned_id(),
                            line: text.into(),
                            asked: init.dialect,
                        };
                    }
                }
                false
            }
        }
    }

    /// A message for `conn` (from the router or the MCP rules) before
    /// the resume rules and flow control: `None` when the bridge took it
    /// (translated, what the translator wrote went on; or a refusal of
    /// the client's `initialize`, asked again through a translator).
    pub(super) fn bridge_outbound(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        stream: &Stream,
        text: String,
        kind: &MessageKind,
    ) -> Option<String> {
        let bridge = match self.bridge_of(conn) {
            Some(b) => b,
            None => match self.resume_detached_bridge(conn) {
                Some(b) => b,
                None => return Some(text),
            },
        };
        match &mut bridge.state {
            State::Direct => Some(text),
            State::Asking { id, asked, .. } => {
                if !kind.answers(id) {
                    return Some(text);
                }
                let asked = *asked;
                let other = Dialect::ALL.into_iter().find(|d| *d != asked);
                let translator = other
                    .filter(|o| refuses_for(&text, *o))
                    .and_then(|o| Translator::between(asked, o));
                let (Some(mut translator), Some(other)) = (translator, other) else {
                    bridge.state = State::Direct;
                    return Some(text);
                };
                let State::Asking { line, .. } = core::mem::take(&mut bridge.state) else {
                    return Some(text);
                };
                let outs = translator.client_line(&line);
                bridge.state = State::Translating(translator);
                bridge.asked_again = true;
                self.log(format!(
                    "{conn}: its client asked for protocol {asked}, which the agent does not speak: bridged to {other} through a translator"
                ));
                self.bridged(now, conn, &Stream::Connection, outs);
                None
            }
            State::Translating(translator) => {
                let outs = translator.agent_line(&text);
                self.bridged(now, conn, stream, outs);
                None
            }
        }
    }

    /// What a translator wrote: lines for the agent
    /// to the router as the client's, lines for the client past the
    /// translator, on `stream` or their session's.
    ///
    /// What goes to the client goes first: the router may answer a line
    /// for the agent at once (a refusal), and that answer must follow what
    /// the translator already told the client of the same message (a v2
    /// prompt's acceptance and `running` before its idle `error` update).
    fn bridged(&mut self, now: Duration, conn: ConnectionId, stream: &Stream, outs: Vec<Out>) {
        let (to_client, to_agent): (Vec<Out>, Vec<Out>) =
            outs.into_iter().partition(|o| matches!(o, Out::Client(_)));
        for out in to_client.into_iter().chain(to_agent) {
            match out {
                Out::Agent(line) => match decode(&line) {
                    Ok(message) => self.onward(now, conn, &line, Inbound::default(), message),
                    Err(e) => self.log(format!(
                        "{conn}: the translator wrote a line the server cannot read: {e}"
                    )),
                },
                Out::Client(line) => {
                    let (mut stream, kind) = stream_of(&line, stream);
                    // A line goes on a session's stream (and into its log,
                    // which the session's holder resumes from) only when
                    // the session is the client's: what the translator
                    // makes of a request the router has not yet checked,
                    // or of the router's refusal of another user's
                    // session, goes on the connection's.
                    if let Stream::Session(s) = &stream {
                        if !self.holds(conn, s) {
                            stream = Stream::Connection;
                        }
                    }
                    self.send_translated(now, conn, stream, line, kind);
                }
            }
        }
    }

    /// Whether `session` is held by `conn`'s client (also while `conn`
    /// is detached).
    fn holds(&self, conn: ConnectionId, session: &str) -> bool {
        let (agent, client) = match self.conns.get(&conn) {
            Some(c) => (&c.agent, c.client),
            None => match self.resume_detached_client(conn) {
                Some(d) => d,
                None => return false,
            },
        };
        self.agents
            .get(agent)
            .is_some_and(|a| a.router.owner(session) == Some(client))
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;

    use super::{refuses_for, stream_of};
    use crate::acp::RequestId;
    use crate::remote::router::MessageKind;
    use crate::remote::transport::Stream;
    use crate::version::Dialect;

    /// A refusal is taken when it lists the other version or lists none;
    /// another error, or a refusal listing only a third version, is the
    /// client's.
    #[test]
    fn only_a_version_refusal_that_allows_the_other_version_is_taken() {
        let refusal = |data: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":0,"error":{{"code":-32022,"message":"no"{data}}}}}"#)
        };
        assert!(refuses_for(&refusal(""), Dialect::V2));
        assert!(refuses_for(
            &refusal(r#","data":{"supported":[2]}"#),
            Dialect::V2
        ));
        assert!(!refuses_for(
            &refusal(r#","data":{"supported":[3]}"#),
            Dialect::V2
        ));
        assert!(!refuses_for(
            &refusal(r#","data":{"supported":[2]}"#),
            Dialect::V1
        ));
        let other = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"no"}}"#;
        assert!(!refuses_for(other, Dialect::V2));
        assert!(!refuses_for(
            r#"{"jsonrpc":"2.0","id":0,"result":{}}"#,
            Dialect::V2
        ));
        assert!(!refuses_for("not json", Dialect::V2));
        // `data` that says nothing of what is supported: taken.
        assert!(refuses_for(&refusal(r#","data":"try v2""#), Dialect::V2));
        assert!(refuses_for(
            &refusal(r#","data":{"supported":"2"}"#),
            Dialect::V2
        ));
        // Read as JSON past the search for the code: an escaped key is
        // the same key, and the code's digits elsewhere refuse nothing.
        assert!(refuses_for(
            r#"{"jsonrpc":"2.0","id":0,"err\u006fr":{"code":-32022,"message":"no"}}"#,
            Dialect::V2
        ));
        assert!(!refuses_for(
            r#"{"jsonrpc":"2.0","id":0,"result":{"note":"-32022"}}"#,
            Dialect::V2
        ));
        assert!(!refuses_for(
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-3.2022e4,"message":"no"}}"#,
            Dialect::V2
        ));
    }

    /// A notification or request naming a session goes on its stream; an
    /// answer where the line it came from went.
    #[test]
    fn a_translated_line_goes_on_its_sessions_stream_unless_it_answers() {
        let default = Stream::Connection;
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
        assert_eq!(
            stream_of(update, &default),
            (Stream::Session("s1".into()), MessageKind::Notification)
        );
        let answer = r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s1"}}"#;
        assert_eq!(
            stream_of(answer, &default),
            (default.clone(), MessageKind::Answer(RequestId::Number(3)))
        );
        let plain = r#"{"jsonrpc":"2.0","method":"_x","params":{}}"#;
        assert_eq!(
            stream_of(plain, &default),
            (default.clone(), MessageKind::Notification)
        );
        let ask = r#"{"jsonrpc":"2.0","id":"a","method":"fs/read_text_file","params":{"sessionId":"s1"}}"#;
        assert_eq!(
            stream_of(ask, &default),
            (
                Stream::Session("s1".into()),
                MessageKind::Request(RequestId::Str("a".into()))
            )
        );
    }
}
