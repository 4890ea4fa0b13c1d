//! Prints a streamed ACP turn for a human, from the crate's turn view
//! ([`TurnView`]): message text as it arrives, thoughts dimmed, tool calls
//! with their parsed command, description and directory, plans, permission
//! prompts, the stop reason.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use acp_codec::acp::{
    ContentBlock, PlanEntryStatus, PromptResponse, RequestId, RequestPermissionRequest,
    RequestPermissionResponse, SessionNotification, SessionUpdate, ToolCallContent,
};
use acp_codec::title::WorkingDir;
use acp_codec::turn::{MessageKind, ToolCallState, TurnEvent, TurnLimits, TurnView};

/// Counts kept for the summary.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub message_chunks: u64,
    pub thought_chunks: u64,
    pub tool_call_updates: u64,
    pub plans: u64,
    pub updates: u64,
    pub problems: u64,
}

/// The turn printer (writes to stdout): a [`TurnView`] and what it printed.
pub struct Render {
    view: TurnView,
    out: Printer,
}

impl Default for Render {
    fn default() -> Self {
        Self::new()
    }
}

/// Which stream the last text belonged to (a switch starts a new line).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    None,
    Message,
    Thought,
}

struct Printer {
    /// Where the turn is printed (stdout, or a buffer in tests).
    w: Box<dyn Write + Send>,
    color: bool,
    /// A terminal: a tool call's status line is rewritten in place when it
    /// is still the last line printed.
    in_place: bool,
    /// The tool call whose status line is the last line printed.
    last_tool: Option<String>,
    stream: Stream,
    /// The last status printed per tool call (updates that change nothing
    /// visible print nothing).
    shown: HashMap<String, String>,
    counts: Counts,
    /// The agent's slash commands, as last announced.
    commands: Vec<(String, String)>,
}

const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

impl Render {
    /// A printer on stdout; colors only when stdout is a terminal, tool
    /// calls updated in place only when `in_place` is asked too.
    pub fn new() -> Self {
        Self::to(
            Box::new(std::io::stdout()),
            std::io::stdout().is_terminal(),
            false,
        )
    }

    /// A printer on `w`: with escape codes for colors when `color`, and a
    /// tool call's status line rewritten when its status changes while it
    /// is still the last line (`in_place`; else each change is a line).
    pub fn to(w: Box<dyn Write + Send>, color: bool, in_place: bool) -> Self {
        Self {
            view: TurnView::new(TurnLimits::default()),
            out: Printer {
                w,
                color,
                in_place,
                last_tool: None,
                stream: Stream::None,
                shown: HashMap::new(),
                counts: Counts::default(),
                commands: Vec::new(),
            },
        }
    }

    /// The agent's slash commands (`available_commands_update`): name and
    /// description.
    pub fn commands(&self) -> &[(String, String)] {
        &self.out.commands
    }

    /// Prints `text` as it is (a prompt's answer, a list) and flushes.
    pub fn raw(&mut self, text: &str) {
        self.out.break_line();
        self.out.last_tool = None;
        let _ = self.out.w.write_all(text.as_bytes());
        let _ = self.out.w.flush();
    }

    /// The counts so far.
    pub fn counts(&self) -> &Counts {
        &self.out.counts
    }

    /// Tool calls seen in this turn (by `tool_call` or a permission request).
    pub fn tool_calls(&self) -> usize {
        self.view.tool_calls().len()
    }

    /// Call before sending `session/prompt`.
    pub fn begin_turn(&mut self) {
        self.view.begin_turn();
    }

    /// Ends a running text stream with a newline.
    pub fn break_line(&mut self) {
        self.out.break_line();
    }

    /// Prints a line of our own (status, fs, permission), on its own line.
    pub fn note(&mut self, text: &str) {
        self.out.note(text);
    }

    /// A problem of the turn met outside the agent's updates (a message
    /// from the agent too long to read): counted and printed as the turn's
    /// own problems are.
    pub fn problem(&mut self, what: &str) {
        self.out.break_line();
        self.out.counts.problems += 1;
        eprintln!("acp-client: turn: {what}");
    }

    /// One `session/update`.
    pub fn update(&mut self, n: &SessionNotification<'_>) {
        let Self { view, out } = self;
        out.counts.updates += 1;
        match &n.update {
            SessionUpdate::ToolCallUpdate(_) => out.counts.tool_call_updates += 1,
            SessionUpdate::Plan(_) => out.counts.plans += 1,
            _ => {}
        }
        for event in view.push_update(n) {
            out.event(event);
        }
    }

    /// One `session/request_permission`; returns how to describe its tool
    /// call to the user.
    pub fn permission_request(
        &mut self,
        id: &RequestId<'_>,
        req: &RequestPermissionRequest<'_>,
    ) -> String {
        let Self { view, out } = self;
        for event in view.push_permission_request(id, req) {
            out.event(event);
        }
        view.tool_call(&req.tool_call.tool_call_id)
            .map_or_else(|| req.tool_call.tool_call_id.to_string(), describe)
    }

    /// Our answer to a permission request.
    pub fn permission_outcome(&mut self, id: &RequestId<'_>, resp: &RequestPermissionResponse<'_>) {
        let Self { view, out } = self;
        for event in view.push_permission_outcome(id, resp) {
            out.event(event);
        }
    }

    /// The `session/prompt` result: prints the stop reason.
    pub fn prompt_response(&mut self, resp: &PromptResponse<'_>) {
        let Self { view, out } = self;
        for event in view.push_prompt_response(resp) {
            out.event(event);
        }
    }
}

impl Printer {
    fn style(&self, code: &'static str) -> &'static str {
        if self.color {
            code
        } else {
            ""
        }
    }

    fn break_line(&mut self) {
        if self.stream != Stream::None {
            let _ = writeln!(self.w);
            self.stream = Stream::None;
        }
    }

    /// One whole line (after any running text).
    fn line(&mut self, text: &str) {
        self.break_line();
        self.last_tool = None;
        let _ = writeln!(self.w, "{text}");
        let _ = self.w.flush();
    }

    fn note(&mut self, text: &str) {
        self.line(&format!("{}{text}{}", self.style(DIM), self.style(RESET)));
    }

    fn text(&mut self, stream: Stream, text: &str) {
        self.last_tool = None;
        if self.stream != stream {
            self.break_line();
            if stream == Stream::Thought {
                let _ = write!(self.w, "{}💭 {}", self.style(DIM), self.style(RESET));
            }
            self.stream = stream;
        }
        if stream == Stream::Thought {
            let _ = write!(self.w, "{}{text}{}", self.style(DIM), self.style(RESET));
        } else {
            let _ = write!(self.w, "{text}");
        }
        let _ = self.w.flush();
    }

    fn event(&mut self, event: TurnEvent<'_>) {
        match event {
            TurnEvent::TextDelta {
                kind: MessageKind::User,
                text,
                ..
            } => self.note(&format!("you: {text}")),
            TurnEvent::TextDelta { text, .. } => {
                self.counts.message_chunks += 1;
                self.text(Stream::Message, text);
            }
            TurnEvent::ThoughtDelta { text, .. } => {
                self.counts.thought_chunks += 1;
                self.text(Stream::Thought, text);
            }
            TurnEvent::MessageContent { content, .. } => self.note(&block_text(content)),
            TurnEvent::ToolCallStarted(t) | TurnEvent::ToolCallUpdated(t) => self.tool(t, false),
            TurnEvent::ToolCallFinished(t) => self.tool(t, true),
            // Printed with the decision by the client.
            TurnEvent::PermissionRequested { .. } | TurnEvent::PermissionResolved { .. } => {}
            TurnEvent::PlanUpdated(entries) => {
                self.line(&format!("{}plan:{}", self.style(BOLD), self.style(RESET)));
                for e in entries {
                    let mark = match e.status {
                        PlanEntryStatus::Completed => "[x]",
                        PlanEntryStatus::InProgress => "[>]",
                        _ => "[ ]",
                    };
                    self.line(&format!("  {mark} {}", e.content));
                }
            }
            TurnEvent::ModeChanged(mode) => self.note(&format!("mode: {mode}")),
            TurnEvent::UsageUpdated(u) => {
                self.note(&format!("context: {} of {} tokens", u.used, u.size))
            }
            TurnEvent::TurnFinished(reason) => {
                self.line(&format!(
                    "{}■ stop reason: {}{}",
                    self.style(BOLD),
                    reason.as_str(),
                    self.style(RESET)
                ));
            }
            TurnEvent::Other(SessionUpdate::AvailableCommandsUpdate(c)) => {
                self.commands = c
                    .available_commands
                    .iter()
                    .map(|c| (c.name.to_string(), c.description.to_string()))
                    .collect();
                let names: Vec<&str> = c.available_commands.iter().map(|c| &*c.name).collect();
                self.note(&format!("commands: /{}", names.join(" /")));
            }
            TurnEvent::Other(_) => {}
            TurnEvent::Problem(p) => {
                self.counts.problems += 1;
                eprintln!("acp-client: turn: {p}");
            }
            _ => {}
        }
    }

    /// A tool call line when its status changed, and its output once done.
    fn tool(&mut self, t: &ToolCallState, finished: bool) {
        let status = t.status().as_str();
        if self.shown.get(t.id()).is_some_and(|s| s == status) {
            return;
        }
        self.shown.insert(t.id().to_owned(), status.to_owned());
        self.break_line();
        // Its previous status line is the last line: rewrite it.
        if self.in_place && self.last_tool.as_deref() == Some(t.id()) {
            let _ = write!(self.w, "\x1b[1A\r\x1b[2K");
        }
        let icon = match status {
            "completed" => "✓",
            "failed" => "✗",
            "in_progress" => "▶",
            _ => "•",
        };
        let line = format!(
            "{icon} {}{}{} {}({status}){}",
            self.style(BOLD),
            describe(t),
            self.style(RESET),
            self.style(DIM),
            self.style(RESET)
        );
        self.line(&line);
        self.last_tool = Some(t.id().to_owned());
        if !finished {
            return;
        }
        for c in t.content() {
            let line = match c {
                ToolCallContent::Content(c) => {
                    let text = block_text(&c.content);
                    // The explanation block is in the title line already.
                    if t.explanation() == Some(text.as_str()) {
                        continue;
                    }
                    let lines = text.lines().count();
                    let first = clip(text.lines().next().unwrap_or_default(), 100);
                    if lines > 1 {
                        format!("{first} (+{} lines, {} bytes)", lines - 1, text.len())
                    } else {
                        first
                    }
                }
                ToolCallContent::Diff(d) => format!(
                    "diff {} ({} -> {} bytes)",
                    d.path,
                    d.old_text.as_deref().map_or(0, str::len),
                    d.new_text.len()
                ),
                ToolCallContent::Terminal(t) => format!("terminal {}", t.terminal_id),
                _ => continue,
            };
            self.line(&format!(
                "    {}{line}{}",
                self.style(DIM),
                self.style(RESET)
            ));
        }
    }
}

/// `[kind] command — description (in DIR) [background]` from the tool
/// call's parsed title (and Gemini's explanation block).
fn describe(t: &ToolCallState) -> String {
    let title = t.title();
    let mut out = String::new();
    if let Some(kind) = t.kind() {
        out.push_str(&format!("[{}] ", kind.as_str()));
    }
    out.push_str(if title.command().is_empty() {
        t.id()
    } else {
        title.command()
    });
    if !title.description().is_empty() {
        out.push_str(&format!(" — {}", title.description()));
    }
    match title.working_dir() {
        Some(WorkingDir::In(d)) => out.push_str(&format!(" (in {d})")),
        Some(WorkingDir::Current(d)) => out.push_str(&format!(" (cwd {d})")),
        _ => {}
    }
    if title.is_background() {
        out.push_str(" [background]");
    }
    out
}

/// The text of a content block (other kinds described briefly).
pub fn block_text(block: &ContentBlock<'_>) -> String {
    match block {
        ContentBlock::Text(t) => t.text.to_string(),
        ContentBlock::ResourceLink(l) => format!("[{}]", l.uri),
        ContentBlock::Image(_) => "[image]".to_owned(),
        ContentBlock::Audio(_) => "[audio]".to_owned(),
        ContentBlock::Resource(_) => "[resource]".to_owned(),
        _ => "[content]".to_owned(),
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().map(|b| b.clone()).unwrap_or_default())
                .into_owned()
        }
    }

    fn update(json: &str) -> SessionNotification<'static> {
        let text = format!(r#"{{"sessionId":"s","update":{json}}}"#);
        let n: SessionNotification<'_> = serde_json::from_str(&text).expect("a session/update");
        n.into_owned()
    }

    /// A tool call pending, running, done; between the second and third,
    /// a message when `chatter`.
    fn tool_call_turn(color: bool, in_place: bool, chatter: bool) -> String {
        let out = Shared::default();
        let mut r = Render::to(Box::new(out.clone()), color, in_place);
        r.begin_turn();
        r.update(&update(
            r#"{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls -la","status":"pending","kind":"execute"}"#,
        ));
        r.update(&update(
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress"}"#,
        ));
        if chatter {
            r.update(&update(
                r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"listing"}}"#,
            ));
        }
        r.update(&update(
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}"#,
        ));
        out.text()
    }

    const UP: &str = "\x1b[1A\r\x1b[2K";

    #[test]
    fn a_tool_call_line_is_rewritten_in_place_while_it_is_the_last() {
        let got = tool_call_turn(true, true, false);
        assert_eq!(got.matches(UP).count(), 2, "{got:?}");
        assert!(got.contains("(in_progress)") && got.contains("(completed)"));
        // Something printed after it: the next status is a line of its own.
        let got = tool_call_turn(true, true, true);
        assert_eq!(got.matches(UP).count(), 1, "{got:?}");
    }

    #[test]
    fn without_a_terminal_each_status_is_a_plain_line() {
        let got = tool_call_turn(false, false, false);
        assert!(!got.contains('\x1b'), "{got:?}");
        assert_eq!(
            got,
            "• [execute] ls -la (pending)\n▶ [execute] ls -la (in_progress)\n✓ [execute] ls -la (completed)\n"
        );
    }

    #[test]
    fn thoughts_are_dimmed_and_commands_kept() {
        let out = Shared::default();
        let mut r = Render::to(Box::new(out.clone()), true, true);
        r.update(&update(
            r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}"#,
        ));
        r.update(&update(
            r#"{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"memory","description":"Manage memory."}]}"#,
        ));
        assert!(
            out.text()
                .starts_with(&format!("{DIM}💭 {RESET}{DIM}hmm{RESET}\n")),
            "{:?}",
            out.text()
        );
        assert_eq!(
            r.commands(),
            [("memory".to_owned(), "Manage memory.".to_owned())]
        );
    }
}
