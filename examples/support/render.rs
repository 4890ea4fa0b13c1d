//! Prints a streamed ACP turn for a human: message text as it arrives,
//! thoughts dimmed, tool calls with their parsed command, description and
//! directory, plans, permission prompts, `fs/*` traffic, the stop reason.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use acp_codec::acp::{
    ContentBlock, PlanEntryStatus, SessionUpdate, ToolCallContent, ToolCallStatus, ToolKind,
};
use acp_codec::title::{Title, WorkingDir};

/// Which stream the last text belonged to (a switch starts a new line).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    None,
    Message,
    Thought,
}

/// What we know of a tool call, for updates that omit it.
#[derive(Clone, Default)]
struct Tool {
    title: String,
    kind: Option<String>,
    explanation: Option<String>,
}

/// Counts kept for the summary.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub message_chunks: u64,
    pub thought_chunks: u64,
    pub tool_calls: u64,
    pub tool_call_updates: u64,
    pub plans: u64,
    pub updates: u64,
}

/// The turn printer (writes to stdout).
pub struct Render {
    color: bool,
    stream: Stream,
    tools: HashMap<String, Tool>,
    pub counts: Counts,
}

const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

impl Render {
    /// A printer; colors only when stdout is a terminal.
    pub fn new() -> Self {
        Self {
            color: std::io::stdout().is_terminal(),
            stream: Stream::None,
            tools: HashMap::new(),
            counts: Counts::default(),
        }
    }

    fn style(&self, code: &'static str) -> &'static str {
        if self.color {
            code
        } else {
            ""
        }
    }

    /// Ends a running text stream with a newline.
    pub fn break_line(&mut self) {
        if self.stream != Stream::None {
            println!();
            self.stream = Stream::None;
        }
    }

    /// Prints a line of our own (status, fs, permission), on its own line.
    pub fn note(&mut self, text: &str) {
        self.break_line();
        println!("{}{text}{}", self.style(DIM), self.style(RESET));
    }

    fn text(&mut self, stream: Stream, text: &str) {
        if self.stream != stream {
            self.break_line();
            if stream == Stream::Thought {
                print!("{}💭 ", self.style(DIM));
            }
            self.stream = stream;
        }
        if stream == Stream::Thought {
            // Keep every line of a thought dimmed.
            print!("{}{text}{}", self.style(DIM), self.style(RESET));
        } else {
            print!("{text}");
        }
        let _ = std::io::stdout().flush();
    }

    /// Prints one `session/update`.
    pub fn update(&mut self, update: &SessionUpdate<'_>) {
        self.counts.updates += 1;
        match update {
            SessionUpdate::AgentMessageChunk(c) => {
                self.counts.message_chunks += 1;
                self.text(Stream::Message, &block_text(&c.content));
            }
            SessionUpdate::AgentThoughtChunk(c) => {
                self.counts.thought_chunks += 1;
                self.text(Stream::Thought, &block_text(&c.content));
            }
            SessionUpdate::UserMessageChunk(c) => {
                self.note(&format!("you: {}", block_text(&c.content)));
            }
            SessionUpdate::ToolCall(t) => {
                self.counts.tool_calls += 1;
                let tool = Tool {
                    title: t.title.to_string(),
                    kind: t.kind.as_ref().map(|k| k.as_str().to_owned()),
                    explanation: explanation(t.content.as_deref()),
                };
                self.tools.insert(t.tool_call_id.to_string(), tool.clone());
                let status = t.status.as_ref().map_or("pending", ToolCallStatus::as_str);
                self.tool_line(&tool, status);
                self.tool_output(t.status.as_ref(), t.content.as_deref());
            }
            SessionUpdate::ToolCallUpdate(u) => {
                self.counts.tool_call_updates += 1;
                let known = self.tools.contains_key(&*u.tool_call_id);
                let tool = self.tools.entry(u.tool_call_id.to_string()).or_default();
                if let Some(title) = &u.title {
                    tool.title = title.to_string();
                }
                if let Some(kind) = &u.kind {
                    tool.kind = Some(kind.as_str().to_owned());
                }
                if let Some(e) = explanation(u.content.as_deref()) {
                    tool.explanation.get_or_insert(e);
                }
                let tool = tool.clone();
                if !known {
                    // Gemini announces permission-gated tools only in the
                    // permission request, then sends updates.
                    self.counts.tool_calls += 1;
                }
                if let Some(status) = &u.status {
                    self.tool_line(&tool, status.as_str());
                }
                self.tool_output(u.status.as_ref(), u.content.as_deref());
            }
            SessionUpdate::Plan(p) => {
                self.counts.plans += 1;
                self.break_line();
                println!("{}plan:{}", self.style(BOLD), self.style(RESET));
                for e in &p.entries {
                    let mark = match e.status {
                        PlanEntryStatus::Completed => "[x]",
                        PlanEntryStatus::InProgress => "[>]",
                        _ => "[ ]",
                    };
                    println!("  {mark} {}", e.content);
                }
            }
            SessionUpdate::AvailableCommandsUpdate(c) => {
                let names: Vec<&str> = c.available_commands.iter().map(|c| &*c.name).collect();
                self.note(&format!("commands: /{}", names.join(" /")));
            }
            SessionUpdate::CurrentModeUpdate(m) => {
                self.note(&format!("mode: {}", m.current_mode_id));
            }
            _ => {}
        }
    }

    /// Records a tool call first seen in a permission request.
    pub fn permission_tool(
        &mut self,
        id: &str,
        title: Option<&str>,
        kind: Option<&ToolKind<'_>>,
        content: Option<&[ToolCallContent<'_>]>,
    ) -> String {
        let known = self.tools.contains_key(id);
        let tool = self.tools.entry(id.to_owned()).or_default();
        if let Some(t) = title {
            tool.title = t.to_owned();
        }
        if let Some(k) = kind {
            tool.kind = Some(k.as_str().to_owned());
        }
        if let Some(e) = explanation(content) {
            tool.explanation = Some(e);
        }
        let tool = tool.clone();
        if !known {
            self.counts.tool_calls += 1;
        }
        describe(&tool)
    }

    fn tool_line(&mut self, tool: &Tool, status: &str) {
        self.break_line();
        let icon = match status {
            "completed" => "✓",
            "failed" => "✗",
            "in_progress" => "▶",
            _ => "•",
        };
        println!(
            "{icon} {}{}{} {}({status}){}",
            self.style(BOLD),
            describe(tool),
            self.style(RESET),
            self.style(DIM),
            self.style(RESET)
        );
    }

    fn tool_output(
        &mut self,
        status: Option<&ToolCallStatus<'_>>,
        content: Option<&[ToolCallContent<'_>]>,
    ) {
        let done = matches!(
            status,
            Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
        );
        let Some(content) = content.filter(|_| done) else {
            return;
        };
        for c in content {
            let line = match c {
                ToolCallContent::Content(c) => {
                    let text = block_text(&c.content);
                    let lines = text.lines().count();
                    let first = text.lines().next().unwrap_or_default();
                    if lines > 1 {
                        format!(
                            "{} (+{} lines, {} bytes)",
                            clip(first, 100),
                            lines - 1,
                            text.len()
                        )
                    } else {
                        clip(first, 100)
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
            println!("    {}{line}{}", self.style(DIM), self.style(RESET));
        }
    }

    /// Prints the stop reason.
    pub fn stop(&mut self, reason: &str) {
        self.break_line();
        println!(
            "{}■ stop reason: {reason}{}",
            self.style(BOLD),
            self.style(RESET)
        );
    }
}

/// The explanation block Gemini 0.36+ puts first in a tool call's content.
fn explanation(content: Option<&[ToolCallContent<'_>]>) -> Option<String> {
    match content?.first()? {
        ToolCallContent::Content(c) => match &c.content {
            ContentBlock::Text(t) => Some(t.text.to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// `command — description (in DIR) [background]` from the parsed title.
fn describe(tool: &Tool) -> String {
    let mut title = Title::parse_for_kind(&tool.title, tool.kind.as_deref());
    if let Some(e) = &tool.explanation {
        title = title.with_explanation(e);
    }
    let mut out = String::new();
    if let Some(kind) = &tool.kind {
        out.push_str(&format!("[{kind}] "));
    }
    out.push_str(if title.command().is_empty() {
        "(untitled)"
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
