//! The WebSocket profile's per-connection rules: [`Gate`].

use super::{
    check_id_len, check_session_len, decode, session_field, SessionField, DEFAULT_MAX_ID_LENGTH,
};
use crate::acp::{names, Message, RawJson, Request, RequestId};
use crate::remote::RemoteError;

/// What the rules make of one inbound message that may go on.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Checked<'a> {
    /// Pass it on (to the agent, or to a [`Router`](crate::remote::parts::Router)).
    Forward(Message<'a>),
    /// Drop it silently: a response before `initialize`, which answers
    /// nothing the server sent.
    Ignore,
}

/// The per-connection rules of the WebSocket profile, one call per text
/// frame: the first message must be an `initialize` request with an id, a
/// second `initialize` is refused, a batch gets one `-32600`, ids are
/// bounded.
///
/// On `Err`, answer with [`RemoteError::reply`] if it has one, and close
/// the socket with [`RemoteError::close_code`] if it has one; otherwise go
/// on. The gate's state is unchanged by an error.
///
/// ```
/// use acp_codec::remote::parts::{Checked, Gate};
/// use acp_codec::remote::{CloseCode, BATCH_ERROR};
///
/// let mut gate = Gate::new();
/// // A batch is answered, not processed, and the socket stays open.
/// let err = gate.check(r#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#).unwrap_err();
/// let mut line = Vec::new();
/// err.reply().unwrap().encode(&mut line).unwrap();
/// assert_eq!(line, [BATCH_ERROR.as_bytes(), b"\n"].concat());
/// assert_eq!(err.close_code(), None);
///
/// let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
/// assert!(matches!(gate.check(init), Ok(Checked::Forward(_))));
/// assert!(gate.is_initialized());
/// // Once is enough: the second is answered with an error carrying its id.
/// let err = gate.check(init).unwrap_err();
/// let reply = err.reply().unwrap();
/// assert_eq!((reply.id.to_string(), reply.error.code.0), ("0".to_owned(), -32600));
///
/// // Before initialize, anything else closes the socket.
/// let err = Gate::new().check(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#).unwrap_err();
/// assert_eq!(err.close_code(), Some(CloseCode::PROTOCOL_ERROR));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    initialized: bool,
    max_id_len: usize,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    /// A gate for a new connection, with the default id limit
    /// ([`DEFAULT_MAX_ID_LENGTH`]).
    pub const fn new() -> Self {
        Self {
            initialized: false,
            max_id_len: DEFAULT_MAX_ID_LENGTH,
        }
    }

    /// Sets the longest session id or string request id accepted.
    #[must_use]
    pub const fn with_max_id_len(mut self, limit: usize) -> Self {
        self.max_id_len = limit;
        self
    }

    /// Whether the connection's `initialize` went through.
    pub const fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// Marks the connection initialized without a message, for a
    /// connection that the Streamable HTTP profile created from its
    /// `initialize` `POST` ([`check_post`](super::check_post)).
    pub fn set_initialized(&mut self) {
        self.initialized = true;
    }

    /// Takes another `initialize`: the last one was refused (for its
    /// protocol version), so the connection is not initialized.
    pub(crate) fn reopen(&mut self) {
        self.initialized = false;
    }

    /// Checks one inbound message (the text of one WebSocket frame).
    ///
    /// # Errors
    ///
    /// Text that is not JSON, a batch, JSON that is not JSON-RPC, a first
    /// message that is not `initialize` (or has no id), a second
    /// `initialize`, an id longer than the limit. See [`RemoteError`] for
    /// what to answer.
    pub fn check<'a>(&mut self, text: &'a str) -> Result<Checked<'a>, RemoteError> {
        self.check_message(decode(text)?, None)
    }

    /// [`check`](Self::check) for a message its caller decoded already
    /// (with the same mapping of decode errors as `check`), so a server
    /// decodes each message once.
    pub(crate) fn check_message<'a>(
        &mut self,
        message: Message<'a>,
        session: Option<&SessionField<'_>>,
    ) -> Result<Checked<'a>, RemoteError> {
        if !self.initialized {
            let request = match message {
                Message::Response(_) | Message::Error(_) => return Ok(Checked::Ignore),
                Message::Notification(n) => {
                    return Err(RemoteError::NotInitialized {
                        method: n.method.into_owned(),
                    })
                }
                Message::Request(r) => r,
            };
            check_initialize(&request)?;
            check_id_len(&request.id, self.max_id_len)?;
            self.initialized = true;
            return Ok(Checked::Forward(Message::Request(request)));
        }
        self.check_open(message, session).map(Checked::Forward)
    }

    /// `session`, when given, is the message's [`session_field`] (read
    /// once, by the caller).
    fn check_open<'a>(
        &self,
        message: Message<'a>,
        session: Option<&SessionField<'_>>,
    ) -> Result<Message<'a>, RemoteError> {
        match &message {
            Message::Request(r) => {
                if r.method == names::INITIALIZE {
                    return Err(RemoteError::AlreadyInitialized {
                        id: r.id.to_owned_id(),
                    });
                }
                check_id_len(&r.id, self.max_id_len)?;
                self.check_session(r.params.as_ref(), session)?;
            }
            Message::Notification(n) => self.check_session(n.params.as_ref(), session)?,
            Message::Response(_) | Message::Error(_) => {}
        }
        Ok(message)
    }
}

impl Gate {
    /// The session's length limit, on `session` when the caller read it
    /// already, else on `params`'.
    fn check_session(
        &self,
        params: Option<&RawJson<'_>>,
        session: Option<&SessionField<'_>>,
    ) -> Result<(), RemoteError> {
        match session {
            Some(s) => check_session_len(s.id(), self.max_id_len),
            None => check_session_len(session_field(params).id(), self.max_id_len),
        }
    }
}

pub(super) fn check_initialize(request: &Request<'_>) -> Result<(), RemoteError> {
    if request.method != names::INITIALIZE {
        return Err(RemoteError::NotInitialized {
            method: request.method.clone().into_owned(),
        });
    }
    if request.id == RequestId::Null {
        return Err(RemoteError::InitializeWithoutId);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_state_survives_errors() {
        let mut gate = Gate::new();
        assert!(gate.check("[]").is_err());
        assert!(gate
            .check(r#"{"jsonrpc":"2.0","id":1,"method":"session/new"}"#)
            .is_err());
        assert!(!gate.initialized);
        gate.set_initialized();
        assert!(matches!(
            gate.check(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#),
            Ok(Checked::Forward(_))
        ));
        // Responses pass once initialized (answers to the agent's requests).
        assert!(matches!(
            gate.check(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Checked::Forward(_))
        ));
    }
}
