//! What the v1 and the v2 mock share: the sessions an agent keeps (made,
//! numbered, listed, their turns stopped) and the loop that reads a
//! connection's lines.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use acp_codec::acp::RequestId;
use acp_codec::codec::LineCodec;
use acp_codec::ErrorCode;
use serde_json::{json, Value};
use tokio::io::AsyncRead;
use tokio::sync::watch;
use tokio_util::codec::FramedRead;

use super::{peeked_id, session_number, Session, Store};
use crate::lines::LineSource;

/// The sessions of one agent, by id, and how many it has made.
#[derive(Default)]
pub(super) struct Sessions {
    map: HashMap<String, Session>,
    made: u64,
    /// Turns started, in every session: a turn's number.
    turns: u64,
}

/// A turn just started by [`Sessions::start_turn`].
pub(super) struct Started {
    /// The turn's number, counted over every session.
    pub(super) n: u64,
    /// Where the session works.
    pub(super) cwd: PathBuf,
    /// Turns `true` when the turn is cancelled.
    pub(super) cancel: watch::Receiver<bool>,
    /// The session's title, when this prompt gave it one (to save).
    pub(super) title: Option<String>,
}

impl Sessions {
    /// The sessions saved in `store` (its directory made when missing),
    /// numbering new ones after the highest saved.
    pub(super) fn open(store: Option<&Store>) -> io::Result<Self> {
        let mut sessions = Self::default();
        if let Some(store) = store {
            std::fs::create_dir_all(&store.dir)?;
            for (sid, session) in store.load()? {
                sessions.made = sessions.made.max(session_number(&sid));
                sessions.map.insert(sid, session);
            }
        }
        Ok(sessions)
    }

    /// A new session in `cwd`, its id `mock-session-N` claimed in `store`
    /// (another process sharing the directory, another server's agent of
    /// the same user, may have taken the next number).
    pub(super) fn create(
        &mut self,
        store: Option<&Store>,
        cwd: PathBuf,
        mcp: Vec<Value>,
    ) -> String {
        self.made += 1;
        while let Some(store) = store {
            if store.claim(&format!("mock-session-{}", self.made)) {
                break;
            }
            self.made += 1;
        }
        let sid = format!("mock-session-{}", self.made);
        let session = Session {
            cwd,
            turn: None,
            title: None,
            history: Vec::new(),
            mcp,
        };
        self.map.insert(sid.clone(), session);
        sid
    }

    /// `session/list`'s `sessions`: every session (in `cwd`, when given),
    /// oldest first.
    pub(super) fn list(&self, cwd: Option<&str>) -> Vec<Value> {
        let mut listed: Vec<(&String, &Session)> = self
            .map
            .iter()
            .filter(|(_, s)| cwd.is_none_or(|c| s.cwd == Path::new(c)))
            .collect();
        listed.sort_by_key(|(sid, _)| session_number(sid));
        listed
            .into_iter()
            .map(|(sid, s)| {
                let mut info = json!({"sessionId": sid, "cwd": s.cwd.display().to_string()});
                if let Some(title) = &s.title {
                    info["title"] = json!(title);
                }
                info
            })
            .collect()
    }

    /// A turn of `sid` starts on `prompt` (its first 80 characters are the
    /// session's title if it has none): a new cancel switch, and the
    /// running turn cancelled (a new prompt cancels the running one, as
    /// Gemini does). `None` when there is no such session.
    pub(super) fn start_turn(&mut self, sid: &str, prompt: &str) -> Option<Started> {
        // Counted even for a session that is not there, as the numbers
        // in tool call ids have always been.
        self.turns += 1;
        let s = self.map.get_mut(sid)?;
        let titled = s.title.is_none();
        s.title
            .get_or_insert_with(|| prompt.chars().take(80).collect());
        let (tx, cancel) = watch::channel(false);
        if let Some(old) = s.turn.replace(tx) {
            let _ = old.send(true);
        }
        Some(Started {
            n: self.turns,
            cwd: s.cwd.clone(),
            cancel,
            title: s.title.clone().filter(|_| titled),
        })
    }

    /// The turn of `sid` has ended: its cancel switch is cleared, if it is
    /// still the one `cancel` listens to (a newer prompt has its own).
    pub(super) fn end_turn(&mut self, sid: &str, cancel: &watch::Receiver<bool>) {
        if let Some(s) = self.map.get_mut(sid) {
            if s.turn
                .as_ref()
                .is_some_and(|t| t.subscribe().same_channel(cancel))
            {
                s.turn = None;
            }
        }
    }

    /// Every running turn cancelled: the connection is gone.
    pub(super) fn cancel_all(&mut self) {
        for s in self.map.values_mut() {
            if let Some(t) = s.turn.take() {
                let _ = t.send(true);
            }
        }
    }

    pub(super) fn get(&self, sid: &str) -> Option<&Session> {
        self.map.get(sid)
    }

    pub(super) fn get_mut(&mut self, sid: &str) -> Option<&mut Session> {
        self.map.get_mut(sid)
    }

    pub(super) fn insert(&mut self, sid: String, session: Session) -> Option<Session> {
        self.map.insert(sid, session)
    }

    pub(super) fn contains_key(&self, sid: &str) -> bool {
        self.map.contains_key(sid)
    }

    pub(super) fn remove(&mut self, sid: &str) -> Option<Session> {
        self.map.remove(sid)
    }
}

/// What [`serve_lines`] needs of an agent, v1 or v2.
pub(super) trait LineAgent: Send + Sync {
    /// Handles one line; an error means the output is gone.
    fn take_line(self: &Arc<Self>, line: &str) -> impl Future<Output = io::Result<()>> + Send;
    /// Answers the request `id` with an error (a line too long to read).
    fn refuse(
        &self,
        id: &RequestId<'_>,
        code: ErrorCode,
        message: &str,
    ) -> impl Future<Output = io::Result<()>> + Send;
    /// The connection ended: every running turn is cancelled.
    fn stop_turns(&self);
}

/// Reads `reader`'s lines into `agent` until it ends or the agent's output
/// is gone. A bad line is skipped (a request too long to read still gets
/// its answer); only a read error is an error.
pub(super) async fn serve_lines<A, R>(agent: Arc<A>, reader: R) -> io::Result<()>
where
    A: LineAgent,
    R: AsyncRead + Unpin,
{
    let mut reader = FramedRead::new(reader, LineCodec::new());
    let result = loop {
        let line = match reader.next_line().await {
            Ok(Some(Ok(line))) => line,
            Ok(Some(Err(e))) => {
                eprintln!("acp-mock-agent: skipped a bad line: {e}");
                if let Some(id) = match &e {
                    acp_codec::FrameError::LineTooLong(long) => long.request_id(),
                    _ => None,
                } {
                    if agent
                        .refuse(&peeked_id(&id), e.code(), &e.to_string())
                        .await
                        .is_err()
                    {
                        break Ok(());
                    }
                }
                continue;
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        if let Err(e) = agent.take_line(&line).await {
            // Our output is gone: nobody is listening any more.
            eprintln!("acp-mock-agent: {e}");
            break Ok(());
        }
    };
    agent.stop_turns();
    result
}
