//! What a new connection sends: `initialize` again with the cursor, then,
//! once it is answered, the sessions resumed (or loaded, on a clean
//! connection), the answers and the unanswered requests again.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Value};

use super::{set_member, set_meta, Rejoin, OWN_ID, TURN_LOST};
use crate::acp::RequestId;
use crate::remote::{META_CURSOR, META_RESUME, REPLAY_CURSOR};

impl Rejoin {
    /// A reconnect's `initialize` was answered: what goes next.
    pub(super) fn follow_up(&mut self) {
        if self.fresh {
            // A clean connection (or a server that never resumes): the
            // sessions are loaded from what the agent keeps.
            self.fresh = false;
            self.load_sessions();
        } else if self.resumable {
            self.resume_sessions();
        } else {
            // The server does not know the connection the cursor named: a
            // clean one, where positions start again.
            self.positions.clear();
            self.connection = None;
            self.fresh = true;
            self.restart = true;
        }
    }

    /// The sessions the client holds, with their directories, to take up
    /// again on a new connection.
    fn sessions_held(&self) -> Vec<(String, String)> {
        self.sessions
            .iter()
            .map(|(s, cwd)| (s.clone(), cwd.clone()))
            .collect()
    }

    /// The server took the connection over: the answers again, each
    /// session resumed at its position, the unanswered requests again.
    fn resume_sessions(&mut self) {
        // The answers again (a server drops one whose request is no longer
        // pending), each with a new place on the wire.
        let answers = core::mem::take(&mut self.answers);
        for (_, answer) in answers {
            let seq = self.tick();
            self.to_server.push(answer.clone());
            self.answers.push((seq, answer));
        }
        for (session, cwd) in self.sessions_held() {
            let position = self.positions.resume_from(Some(&session));
            let mut params = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
            if self.v2 {
                let from = json!({"type": REPLAY_CURSOR, "position": position.0});
                set_member(&mut params, "replayFrom", from);
            } else {
                set_meta(&mut params, META_CURSOR, json!({ "position": position.0 }));
            }
            let line = self.own_request(Some(session), "session/resume", &params);
            self.to_server.push(line);
        }
        self.send_pending_again();
    }

    /// A server that does not know the connection: each session loaded,
    /// a prompt in flight failed for the client, the rest sent again.
    fn load_sessions(&mut self) {
        // The agent that asked is gone with its server.
        self.answers.clear();
        for (session, cwd) in self.sessions_held() {
            let mut params = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
            let method = if self.v2 {
                set_member(&mut params, "replayFrom", json!({"type": "start"}));
                "session/resume"
            } else {
                "session/load"
            };
            self.loading.insert(session.clone());
            let line = self.own_request(Some(session), method, &params);
            self.to_server.push(line);
        }
        let lost: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| p.method == "session/prompt")
            .map(|(id, _)| id.clone())
            .collect();
        for id in lost {
            self.pending.remove(&id);
            // `id` is JSON text, as read.
            let message = Value::from(TURN_LOST);
            self.lost.push(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":{message}}}}}"#
            ));
        }
        self.send_pending_again();
        self.loaded();
    }

    /// Once every session is loaded, the client learns of its lost turns.
    pub(super) fn loaded(&mut self) {
        if self.loading.is_empty() {
            self.to_client.append(&mut self.lost);
        }
    }

    fn send_pending_again(&mut self) {
        let mut seq = self.seq;
        for pending in self.pending.values_mut() {
            if pending.method != "initialize" {
                seq = seq.saturating_add(1);
                pending.seq = seq;
                self.to_server.push(pending.line.clone());
            }
        }
        self.seq = seq;
    }

    /// A new connection is up (`connection`: its id, when known): the lines
    /// to send on it before anything else (`initialize` again, with the
    /// cursor; what follows comes from [`poll_to_server`](Self::poll_to_server)
    /// once it is answered).
    pub fn reconnected(&mut self, connection: Option<String>) -> Vec<String> {
        let mut lines = Vec::new();
        // (`own` stays: a resumed stream may hand over the answer to an
        // earlier connection's request of ours.)
        self.to_server.clear();
        self.loading.clear();
        self.to_client.append(&mut self.lost);
        // A connection whose initialize answer never came has no id of
        // its own to the client: the one before it is still the one to name.
        let previous = match connection {
            Some(id) => self.connection.replace(id),
            None => self.connection.clone(),
        };
        let Some(init) = self.init.clone() else {
            // Nothing to initialize: nothing to resume either.
            self.send_pending_again();
            lines.append(&mut self.to_server);
            return lines;
        };
        let mut params = init;
        set_meta(&mut params, META_RESUME, json!({}));
        if !self.fresh {
            let position = self.positions.resume_from(None);
            let mut cursor = json!({ "position": position.0 });
            if let Some(previous) = previous {
                set_member(&mut cursor, "connection", Value::from(previous));
            }
            set_meta(&mut params, META_CURSOR, cursor);
        }
        // The client's own initialize when its answer never came (the
        // answer is the client's), else ours.
        let seq = self.tick();
        let unanswered = self
            .pending
            .iter_mut()
            .find(|(_, p)| p.method == "initialize");
        match unanswered {
            Some((id, pending)) => {
                // `id` is JSON text, as read.
                pending.line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{params}}}"#
                );
                pending.seq = seq;
                lines.push(pending.line.clone());
            }
            None => lines.push(self.own_request(None, "initialize", &params)),
        }
        // The answers did not arrive through this connection: its
        // initialize's answer does not settle them (they go again after it).
        let mut seq = self.seq;
        for (at, _) in &mut self.answers {
            seq = seq.saturating_add(1);
            *at = seq;
        }
        self.seq = seq;
        self.awaiting = true;
        lines
    }

    fn own_request(&mut self, session: Option<String>, method: &str, params: &Value) -> String {
        self.next_own = self.next_own.saturating_add(1);
        let id = format!("{OWN_ID}{}", self.next_own);
        let seq = self.tick();
        let key = RequestId::from(id.as_str()).to_string();
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{key},"method":"{method}","params":{params}}}"#);
        self.own.insert(key, (session, seq));
        line
    }
}
