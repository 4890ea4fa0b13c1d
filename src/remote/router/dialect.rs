//! Protocol versions: each client's, read from its `initialize` (a
//! [`Negotiator`] over every version the router routes), and the agent's,
//! read from its answers to them. A client and an agent that speak the
//! same version are routed by that version's method table; a client of
//! another version than the agent's is refused at `initialize`, with
//! `-32022` and the version the agent speaks (with feature `v2` the team
//! server's core takes that refusal and bridges the client through a
//! translator in front of the router, which then sees the client speak
//! the agent's version: `server/bridge.rs`).

use alloc::format;

use serde::Deserialize;

use super::{ClientId, Out, Router, Stream};
use crate::acp::{encode_error, RawJson, RequestId, RpcError};
use crate::remote::routing::{table, Table};
use crate::version::{Dialect, Negotiator, Step};
use crate::ErrorCode;

/// What a client's `initialize` asked: the version, and the dialect the
/// rest of its connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Asked {
    pub(super) version: u16,
    pub(super) dialect: Dialect,
}

impl Default for Asked {
    /// A client whose `initialize` named no version the router reads
    /// (the agent answers it): routed as v1, as before versions were read.
    fn default() -> Self {
        Self {
            version: Dialect::V1.version(),
            dialect: Dialect::V1,
        }
    }
}

#[derive(Deserialize)]
struct VersionOf {
    #[serde(rename = "protocolVersion")]
    protocol_version: u16,
}

/// The `-32022` answer to `id`: the client asked for `requested`, the
/// agent speaks `agent`.
fn unsupported(id: &RequestId<'_>, requested: u16, agent: Dialect) -> alloc::string::String {
    let msg = format!(
        "unsupported protocol version {requested}: the agent behind this server speaks version {}",
        agent.version()
    );
    let mut error = RpcError::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, msg);
    let data = format!(
        r#"{{"requested":{requested},"supported":[{}]}}"#,
        agent.version()
    );
    error.data = Some(RawJson::from_validated(&data).into_owned());
    let mut out = alloc::vec::Vec::new();
    // An id and a plain message always encode.
    let _ = encode_error(id, &error, &mut out);
    super::line_to_text(out)
}

/// `-32022` (`refusal`) to `to`, whose connection may then ask again.
pub(super) fn refuse_initialize(
    out: &mut alloc::vec::Vec<Out>,
    to: ClientId,
    id: &RequestId<'_>,
    refusal: alloc::string::String,
) {
    out.push(Out::Client {
        to,
        stream: Stream::Connection,
        text: refusal,
        kind: super::MessageKind::answer(id),
    });
    out.push(Out::InitializeRefused { to });
}

impl Router {
    /// The dialect `client` speaks (v1 until its `initialize` says
    /// otherwise), while it is connected.
    pub fn dialect_of(&self, client: ClientId) -> Option<Dialect> {
        self.clients.get(&client).map(|c| c.asked.dialect)
    }

    /// The dialect the agent answered `initialize` with, once it has.
    pub fn agent_dialect(&self) -> Option<Dialect> {
        self.agent_dialect
    }

    /// The method table `client` is routed by.
    pub(crate) fn table_of(&self, client: ClientId) -> &'static Table {
        table(self.dialect_of(client).unwrap_or(Dialect::V1))
    }

    /// `client`'s `initialize` (the line `text`, with id `id`): the
    /// version it asks for becomes its dialect. `Err` with the `-32022`
    /// answer when the agent is known to speak another version. An
    /// `initialize` the negotiation refuses (no `protocolVersion`, a
    /// version no dialect serves) goes to the agent as it is, which
    /// answers it; the client stays v1.
    pub(super) fn negotiate(
        &mut self,
        client: ClientId,
        id: &RequestId<'_>,
        text: &str,
    ) -> Result<(), alloc::string::String> {
        let Step::Initialize(init) = Negotiator::new(&Dialect::ALL).handle_line(text) else {
            return Ok(());
        };
        let asked = Asked {
            version: init.asked,
            dialect: init.dialect,
        };
        match self.agent_dialect {
            Some(agent) if agent != asked.dialect => Err(unsupported(id, asked.version, agent)),
            _ => {
                if let Some(c) = self.clients.get_mut(&client) {
                    c.asked = asked;
                }
                Ok(())
            }
        }
    }

    /// The agent answered `client`'s `initialize` with `result`: its
    /// version is the agent's dialect from now on. `Some` with the
    /// `-32022` answer to send in its place when the client asked for
    /// another (the first clients, before the agent's version was known).
    pub(super) fn initialized(
        &mut self,
        client: ClientId,
        id: &RequestId<'_>,
        result: &RawJson<'_>,
    ) -> Option<alloc::string::String> {
        let answered = serde_json::from_str::<VersionOf>(result.get())
            .ok()
            .and_then(|v| Dialect::from_version(v.protocol_version))?;
        self.agent_dialect = Some(answered);
        let asked = self.clients.get(&client)?.asked;
        (asked.dialect != answered).then(|| unsupported(id, asked.version, answered))
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::vec::Vec;
    use core::time::Duration;

    use super::super::{ClientId, Out, Router};
    use crate::version::Dialect;

    const T: Duration = Duration::ZERO;

    fn init(version: u16) -> alloc::string::String {
        format!(
            r#"{{"jsonrpc":"2.0","id":"i","method":"initialize","params":{{"protocolVersion":{version}}}}}"#
        )
    }

    /// The text of the one message to a client in `out` (a refused
    /// `initialize` is followed by its connection's reopening).
    fn to_client(out: &[Out]) -> &str {
        match out {
            [Out::Client { text, .. }]
            | [Out::Client { text, .. }, Out::InitializeRefused { .. }] => text,
            _ => panic!("{out:?}"),
        }
    }

    /// `out` refuses `client`'s `initialize` and reopens its connection.
    fn refused(out: &[Out], client: ClientId) -> bool {
        matches!(out, [Out::Client { to, .. }, Out::InitializeRefused { to: again }] if *to == client && *again == client)
    }

    /// A client of one version and an agent of another: the first such
    /// client's answer becomes `-32022` naming the agent's version, the
    /// next is refused without reaching the agent; a client of the
    /// agent's version goes through.
    #[test]
    fn a_client_of_another_version_than_the_agents_is_refused_at_initialize() {
        for (client, agent) in [(1u16, 2u16), (2, 1)] {
            let mut router = Router::new();
            let mut out = Vec::new();
            router.agent_started(1, 0, &mut out);
            let first = router.connect();
            router.handle_client(first, &init(client), T, &mut out);
            assert_eq!(
                out.len(),
                1,
                "forwarded while the agent's version is unknown"
            );
            out.clear();
            let answer =
                format!(r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":{agent}}}}}"#);
            router.handle_agent(&answer, T, &mut out);
            let want = format!(
                r#""error":{{"code":-32022,"message":"unsupported protocol version {client}: the agent behind this server speaks version {agent}","data":{{"requested":{client},"supported":[{agent}]}}}}"#
            );
            assert!(to_client(&out).contains(&want), "{out:?}");
            assert!(to_client(&out).contains(r#""id":"i""#), "{out:?}");
            assert!(refused(&out, first), "{out:?}");
            assert_eq!(router.agent_dialect(), Dialect::from_version(agent));
            out.clear();
            let second = router.connect();
            router.handle_client(second, &init(client), T, &mut out);
            assert!(to_client(&out).contains(&want), "{out:?}");
            assert!(refused(&out, second), "{out:?}");
            out.clear();
            let same = router.connect();
            router.handle_client(same, &init(agent), T, &mut out);
            assert!(matches!(&out[..], [Out::Agent(_)]), "{out:?}");
            assert_eq!(router.dialect_of(same), Dialect::from_version(agent));
        }
    }

    /// The v2 table routes v2's methods: `session/resume` reattaches (and
    /// a read-only user may send it), `session/load` is no v2 method.
    #[test]
    fn each_dialect_is_routed_by_its_own_table() {
        let (v1, v2) = (super::table(Dialect::V1), super::table(Dialect::V2));
        assert!(v1.is_reattach("session/load") && !v2.is_reattach("session/load"));
        assert!(v2.is_reattach("session/resume") && v2.read_only_allows("session/resume"));
        assert!(
            v2.is_session_scoped("tool_call/cancel") && !v1.is_session_scoped("tool_call/cancel")
        );
        assert!(v2.opens_session("session/new") && !v2.read_only_allows("session/close"));
    }

    /// The v2 table against v2's method table: every stable
    /// client-to-agent request is routed, session-scoped exactly when the
    /// schema's params name a session (read off the schema by hand).
    #[cfg(feature = "v2")]
    #[test]
    fn the_v2_table_covers_v2s_method_table() {
        use crate::acp::{Direction, MethodKind};
        // Read off the schema: the requests whose params have a required
        // `sessionId`, and the others.
        let with_session: Vec<&str> = "session/close session/delete session/prompt session/resume \
             session/set_config_option terminal/cancel tool_call/cancel"
            .split_whitespace()
            .collect();
        let without = [
            "initialize",
            "auth/login",
            "auth/logout",
            "session/new",
            "session/list",
        ];
        let v2 = super::table(Dialect::V2);
        let mut seen = 0;
        for m in crate::acp::v2::METHODS {
            if m.direction != Direction::ClientToAgent
                || m.kind != MethodKind::Request
                || m.unstable
            {
                continue;
            }
            assert!(
                with_session.contains(&m.name) || without.contains(&m.name),
                "{}",
                m.name
            );
            assert_eq!(
                v2.is_session_scoped(m.name),
                with_session.contains(&m.name),
                "{}",
                m.name
            );
            seen += 1;
        }
        assert_eq!(seen, with_session.len() + without.len());
    }
}
