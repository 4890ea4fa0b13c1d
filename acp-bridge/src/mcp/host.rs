//! The I/O around the [`Relay`]: the user's command servers started as
//! processes (in the session directory, each in its own process group,
//! killed with it), their stdout read line by line into one channel, and
//! lines written to their stdin. What goes to the agent comes back to the
//! caller as [`ToAgent`]s, which it encodes with its own tracker.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_codec::acp::RequestId;
use acp_codec::codec::LineCodec;
use tokio::io::AsyncBufReadExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::FramedRead;

use super::relay::{Action, Relay};
use super::{Server, Servers};
use crate::lines::{LineSender, LineSource};

/// What a server's process did, for [`Host::handle_event`].
#[derive(Debug)]
pub enum Event {
    /// A line it wrote.
    Line {
        /// The connection.
        connection: String,
        /// The line, without its newline.
        line: String,
    },
    /// It exited, or its output ended.
    Exited {
        /// The connection.
        connection: String,
        /// Its exit status and the last line it wrote on stderr.
        why: String,
    },
}

pub use super::relay::ToAgent;

/// A running server.
struct Running {
    stdin: LineSender,
    /// Dropped or fired: the process group is killed.
    _kill: oneshot::Sender<()>,
}

/// The user's servers offered over ACP, and those running.
pub struct Host {
    /// The relay's rules.
    pub relay: Relay,
    /// `serverId` to the server's name and configuration.
    declared: BTreeMap<String, (String, Server)>,
    running: HashMap<String, Running>,
    events: mpsc::Sender<Event>,
    cwd: PathBuf,
}

impl Host {
    /// A host of the command servers of `servers`, started in `cwd`, each
    /// wait bounded by `timeout`; their output goes to `events`. Each gets
    /// a `serverId` made of `prefix` and its name.
    pub fn new(
        servers: &Servers,
        prefix: &str,
        cwd: PathBuf,
        timeout: Duration,
        events: mpsc::Sender<Event>,
    ) -> Self {
        let mut relay = Relay::new(timeout);
        let mut declared = BTreeMap::new();
        for (name, server) in servers {
            if let Server::Command { .. } = server {
                let id = format!("{prefix}{name}");
                relay.declare(&id, name);
                declared.insert(id, (name.clone(), server.clone()));
            }
        }
        Self {
            relay,
            declared,
            running: HashMap::new(),
            events,
            cwd,
        }
    }

    /// The servers offered: `(serverId, name)`.
    pub fn offered(&self) -> impl Iterator<Item = (&str, &str)> {
        self.declared
            .iter()
            .map(|(id, (name, _))| (id.as_str(), name.as_str()))
    }

    /// A server's process: what the relay asked carried out; what goes to
    /// the agent returned.
    pub fn handle_event(&mut self, event: Event) {
        match event {
            Event::Line { connection, line } => self.relay.handle_server_line(&connection, &line),
            Event::Exited { connection, why } => {
                self.running.remove(&connection);
                self.relay.handle_server_exit(&connection, &why);
            }
        }
    }

    /// The caller sent the relay's request with `id`.
    pub fn request_sent(
        &mut self,
        id: RequestId<'static>,
        connection: &str,
        server_request: &str,
        now: Duration,
    ) {
        self.relay
            .handle_request_sent(id, connection, server_request, now);
    }

    /// Carries out the relay's actions on the servers; returns what goes
    /// to the agent.
    pub async fn drain(&mut self) -> Vec<ToAgent> {
        let mut out = Vec::new();
        while let Some(action) = self.relay.poll_action() {
            match action {
                Action::Start { connection, server } => {
                    if let Err(why) = self.start(&connection, &server) {
                        self.relay.handle_server_exit(&connection, &why);
                    }
                }
                Action::ToServer { connection, line } => {
                    let Some(r) = self.running.get(&connection) else {
                        continue;
                    };
                    let mut bytes = line.into_bytes();
                    bytes.push(b'\n');
                    if r.stdin.send(bytes).await.is_err() {
                        self.running.remove(&connection);
                        self.relay
                            .handle_server_exit(&connection, "its input is closed");
                    }
                }
                Action::Stop { connection } => {
                    self.running.remove(&connection);
                }
                Action::Agent(to_agent) => out.push(to_agent),
            }
        }
        out
    }

    /// Starts the server declared as `server` for `connection`.
    fn start(&mut self, connection: &str, server: &str) -> Result<(), String> {
        let Some((name, Server::Command { command, args, env })) = self.declared.get(server) else {
            return Err("not a command server".to_owned());
        };
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args)
            .envs(env)
            .current_dir(&self.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {command:?}: {e}"))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("its stdio was not captured".to_owned());
        };
        let (kill, killed) = oneshot::channel();
        self.running.insert(
            connection.to_owned(),
            Running {
                stdin: LineSender::spawn(stdin),
                _kill: kill,
            },
        );
        // The last line of its stderr, for the reason it exited.
        let last_words = Arc::new(Mutex::new(String::new()));
        let words = Arc::clone(&last_words);
        let stderr_done = tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if !line.trim().is_empty() {
                    *words.lock().unwrap_or_else(|p| p.into_inner()) = line;
                }
            }
        });
        let events = self.events.clone();
        let connection = connection.to_owned();
        let name = name.clone();
        tokio::spawn(async move {
            let mut reader = FramedRead::new(stdout, LineCodec::new());
            let pid = child.id();
            let mut killed = killed;
            loop {
                tokio::select! {
                    line = reader.next_line() => match line {
                        Ok(Some(Ok(line))) => {
                            let event = Event::Line { connection: connection.clone(), line };
                            if events.send(event).await.is_err() {
                                break;
                            }
                        }
                        Ok(Some(Err(e))) => {
                            let line = format!("(a line of {name} skipped: {e})");
                            let _ = events.send(Event::Line { connection: connection.clone(), line }).await;
                        }
                        Ok(None) | Err(_) => break,
                    },
                    _ = &mut killed => break,
                }
            }
            // The whole group: a server started by `npx` or a shell has
            // children of its own.
            #[cfg(unix)]
            if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let status = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            let mut why = match status {
                Ok(Ok(s)) => format!("{s}"),
                Ok(Err(e)) => e.to_string(),
                Err(_) => "its output ended".to_owned(),
            };
            // Its last words come on another pipe: read them to its end
            // (briefly: a child it left behind may hold it open).
            let _ = tokio::time::timeout(Duration::from_millis(500), stderr_done).await;
            let words = last_words.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if !words.is_empty() {
                why.push_str(&format!(" ({words})"));
            }
            let _ = events.send(Event::Exited { connection, why }).await;
        });
        Ok(())
    }
}
