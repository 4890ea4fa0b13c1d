//! The interactive client: a conversation at a terminal. Each line typed
//! at the prompt is a turn of the current session, or one of the client's
//! slash commands ([`Command`]); a slash command the client does not know
//! is the agent's (`available_commands_update`) and goes to it as a
//! prompt, as ACP says. The turn is printed while no prompt is shown.

use acp_codec::acp::{SessionConfigOption, SessionConfigSelectOptions, SessionInfo};

use crate::client::{Client, Failure, SessionState};
use crate::editor::{Input, LineEditor};
use crate::lines::LineSource;

/// One line typed at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A prompt for the agent (the agent's own slash commands included).
    Prompt(String),
    /// `/sessions`: `session/list`.
    Sessions,
    /// `/load ID` or `/resume ID`: continue that session.
    Load(String),
    /// `/new`: a new session.
    New,
    /// `/mode`: list the modes; `/mode ID`: switch.
    Mode(Option<String>),
    /// `/config`: list the options; `/config ID VALUE`: set one.
    Config(Option<(String, String)>),
    /// `/help`.
    Help,
    /// `/quit` (or `/exit`).
    Quit,
    /// An empty line.
    Nothing,
    /// A client command used wrongly: how to use it.
    Usage(&'static str),
}

/// The client's own commands, for `/help`.
pub const CLIENT_COMMANDS: &str = "\
  /sessions            list the agent's sessions
  /load ID, /resume ID continue a session
  /new                 start a new session
  /mode [ID]           list the session's modes, or switch to one
  /config [ID VALUE]   list the session's options, or set one
  /help                this list
  /quit                quit (also Ctrl-D, or Ctrl-C at an empty prompt)
Ctrl-C during a turn cancels it; a second one quits.
Ctrl-\\ during a turn cancels its latest running tool call that offers it
(ACP v2 tool_call/cancel; the turn goes on).
";

/// Reads a line typed at the prompt.
pub fn parse(line: &str) -> Command {
    let trimmed = line.trim();
    let Some(rest) = trimmed.strip_prefix('/') else {
        return if trimmed.is_empty() {
            Command::Nothing
        } else {
            Command::Prompt(line.to_owned())
        };
    };
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or_default();
    let args: Vec<&str> = words.collect();
    match (name, args.as_slice()) {
        ("sessions", []) => Command::Sessions,
        ("sessions", _) => Command::Usage("usage: /sessions"),
        ("load" | "resume", [id]) => Command::Load((*id).to_owned()),
        ("load" | "resume", _) => Command::Usage("usage: /load ID (or /resume ID)"),
        ("new", []) => Command::New,
        ("new", _) => Command::Usage("usage: /new"),
        ("mode", []) => Command::Mode(None),
        ("mode", [id]) => Command::Mode(Some((*id).to_owned())),
        ("mode", _) => Command::Usage("usage: /mode [ID]"),
        ("config", []) => Command::Config(None),
        ("config", [id, value]) => Command::Config(Some(((*id).to_owned(), (*value).to_owned()))),
        ("config", _) => Command::Usage("usage: /config [ID VALUE]"),
        ("help", _) => Command::Help,
        ("quit" | "exit", _) => Command::Quit,
        // The agent's own command (or one it does not know: it says so).
        _ => Command::Prompt(trimmed.to_owned()),
    }
}

/// `/help`: the client's commands and the agent's.
pub fn help_text(agent_commands: &[(String, String)]) -> String {
    let mut out = format!("client commands:\n{CLIENT_COMMANDS}");
    if agent_commands.is_empty() {
        out.push_str("the agent has announced no commands\n");
    } else {
        out.push_str("agent commands (sent to the agent as a prompt):\n");
        for (name, description) in agent_commands {
            out.push_str(&format!("  /{name:<19} {description}\n"));
        }
    }
    out
}

/// `/mode`: the session's modes, the current one marked `*`.
pub fn modes_text(session: &SessionState) -> String {
    let Some(modes) = &session.modes else {
        return "the agent offers no modes for this session\n".to_owned();
    };
    let mut out = String::from("modes:\n");
    for m in &modes.available_modes {
        let mark = if m.id == modes.current_mode_id {
            '*'
        } else {
            ' '
        };
        out.push_str(&format!("{mark} {} ({})", m.id, m.name));
        if let Some(d) = &m.description {
            out.push_str(&format!(": {d}"));
        }
        out.push('\n');
    }
    out
}

/// `/config`: the session's options, each with its value and choices.
pub fn config_text(session: &SessionState) -> String {
    if session.config.is_empty() {
        return "the agent offers no configuration options for this session\n".to_owned();
    }
    let mut out = String::from("options:\n");
    for option in &session.config {
        match option {
            SessionConfigOption::Select(s) => {
                let values: Vec<&str> = match &s.options {
                    SessionConfigSelectOptions::Ungrouped(o) => {
                        o.iter().map(|o| &*o.value).collect()
                    }
                    SessionConfigSelectOptions::Grouped(g) => g
                        .iter()
                        .flat_map(|g| g.options.iter().map(|o| &*o.value))
                        .collect(),
                    _ => Vec::new(),
                };
                out.push_str(&format!(
                    "  {} = {} ({}; one of: {})\n",
                    s.id,
                    s.current_value,
                    s.name,
                    values.join(", ")
                ));
            }
            SessionConfigOption::Boolean(b) => out.push_str(&format!(
                "  {} = {} ({}; true or false)\n",
                b.id, b.current_value, b.name
            )),
            _ => out.push_str("  (an option of a kind this client does not know)\n"),
        }
    }
    out
}

/// `/sessions`: one line each, the current one marked `*`.
pub fn sessions_text(sessions: &[SessionInfo<'_>], current: Option<&str>) -> String {
    if sessions.is_empty() {
        return "no sessions\n".to_owned();
    }
    let mut out = String::from("sessions:\n");
    for s in sessions {
        let mark = if current == Some(&*s.session_id) {
            '*'
        } else {
            ' '
        };
        out.push_str(&format!("{mark} {}  {}", s.session_id, s.cwd));
        if let Some(title) = &s.title {
            out.push_str(&format!("  {title}"));
        }
        out.push('\n');
    }
    out
}

/// The conversation: `initialize` and the session (done by the caller's
/// [`Client::start`]), then `first` as a turn when given, then one line at
/// a time until `/quit`, Ctrl-D or Ctrl-C at an empty prompt.
///
/// # Errors
///
/// What ends the conversation early: the agent or the connection gone,
/// a turn's silence past the timeout, a second Ctrl-C in a turn
/// ([`Failure::Interrupted`]). An agent's error answer to one command is
/// printed and the conversation goes on.
pub async fn converse<S: LineSource>(
    client: &mut Client<S>,
    editor: &LineEditor,
    first: Option<String>,
) -> Result<(), Failure> {
    client
        .render
        .note("type a prompt, /help for commands, Ctrl-D to quit");
    let mut pending = first;
    loop {
        let line = match pending.take() {
            Some(line) => line,
            None => match editor.read("> ", true).await {
                Input::Line(line) => line,
                Input::Interrupted => continue,
                Input::Eof => {
                    // The shell's prompt on a line of its own.
                    client.render.raw("\n");
                    return Ok(());
                }
            },
        };
        let done = match parse(&line) {
            Command::Nothing => continue,
            Command::Quit => return Ok(()),
            Command::Usage(usage) => {
                client.render.raw(&format!("{usage}\n"));
                Ok(())
            }
            Command::Help => {
                let help = help_text(client.render.commands());
                client.render.raw(&help);
                Ok(())
            }
            Command::Prompt(text) => client.turn(&text).await.map(drop),
            Command::Sessions => client.list_sessions().await.map(|list| {
                let current = client.stats.session_id.as_deref();
                let text = sessions_text(&list, current);
                client.render.raw(&text);
            }),
            Command::Load(id) => client.continue_session(&id).await.map(drop),
            Command::New => client.new_session().await.map(drop),
            Command::Mode(None) => {
                client.render.raw(&modes_text(&client.session));
                Ok(())
            }
            Command::Mode(Some(id)) => client
                .set_mode(&id)
                .await
                .map(|()| client.render.note(&format!("mode: {id}"))),
            Command::Config(None) => {
                client.render.raw(&config_text(&client.session));
                Ok(())
            }
            Command::Config(Some((id, value))) => client
                .set_config(&id, &value)
                .await
                .map(|()| client.render.raw(&config_text(&client.session))),
        };
        client.render.break_line();
        match done {
            Ok(()) => {}
            // The agent refused this one thing: say so, go on.
            Err(e @ (Failure::Agent { .. } | Failure::Local(_))) => {
                client.render.note(&format!("error: {e}"));
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prompts_or_commands() {
        assert_eq!(parse("  "), Command::Nothing);
        assert_eq!(parse("hello /x"), Command::Prompt("hello /x".to_owned()));
        assert_eq!(parse("/sessions"), Command::Sessions);
        assert_eq!(parse("/load s-1"), Command::Load("s-1".to_owned()));
        assert_eq!(parse(" /resume s-2 "), Command::Load("s-2".to_owned()));
        assert!(matches!(parse("/load"), Command::Usage(_)));
        assert!(matches!(parse("/load a b"), Command::Usage(_)));
        assert_eq!(parse("/new"), Command::New);
        assert_eq!(parse("/mode"), Command::Mode(None));
        assert_eq!(parse("/mode yolo"), Command::Mode(Some("yolo".to_owned())));
        assert_eq!(parse("/config"), Command::Config(None));
        assert_eq!(
            parse("/config model deep"),
            Command::Config(Some(("model".to_owned(), "deep".to_owned())))
        );
        assert!(matches!(parse("/config model"), Command::Usage(_)));
        assert_eq!(parse("/help"), Command::Help);
        assert_eq!(parse("/quit"), Command::Quit);
        assert_eq!(parse("/exit"), Command::Quit);
        // The agent's own commands go to it as they were typed.
        assert_eq!(
            parse("/memory add x"),
            Command::Prompt("/memory add x".to_owned())
        );
    }

    #[test]
    fn listings_mark_the_current_entry() {
        let session: SessionState = SessionState {
            modes: serde_json::from_str(
                r#"{"currentModeId":"yolo","availableModes":[
                    {"id":"default","name":"Default"},
                    {"id":"yolo","name":"YOLO","description":"Auto-approves"}]}"#,
            )
            .ok(),
            config: serde_json::from_str(
                r#"[{"type":"select","id":"model","name":"Model","currentValue":"fast",
                     "options":[{"value":"fast","name":"Fast"},{"value":"deep","name":"Deep"}]},
                    {"type":"boolean","id":"web","name":"Web","currentValue":false}]"#,
            )
            .unwrap_or_default(),
        };
        assert_eq!(
            modes_text(&session),
            "modes:\n  default (Default)\n* yolo (YOLO): Auto-approves\n"
        );
        assert_eq!(
            config_text(&session),
            "options:\n  model = fast (Model; one of: fast, deep)\n  web = false (Web; true or false)\n"
        );
        let none = SessionState::default();
        assert!(modes_text(&none).contains("no modes"));
        assert!(config_text(&none).contains("no configuration"));
        let list: Vec<SessionInfo<'_>> = serde_json::from_str(
            r#"[{"sessionId":"a","cwd":"/p"},{"sessionId":"b","cwd":"/q","title":"T"}]"#,
        )
        .unwrap_or_default();
        assert_eq!(
            sessions_text(&list, Some("b")),
            "sessions:\n  a  /p\n* b  /q  T\n"
        );
        let help = help_text(&[("memory".to_owned(), "Manage memory.".to_owned())]);
        assert!(
            help.contains("/sessions") && help.contains("/memory"),
            "{help}"
        );
    }
}
