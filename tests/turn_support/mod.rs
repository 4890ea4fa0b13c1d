//! Drives a `TurnView` from a recorded transcript, the way a client would:
//! `begin_turn` on its own `session/prompt` and `session/load`, permission
//! requests and their answers matched by the agent's request id, the prompt
//! response matched by the client's request id.
#![allow(dead_code)]

use acp_codec::acp::Mode;
use std::collections::BTreeSet;
use std::fmt::Write as _;

use acp_codec::acp::{
    Message, NotificationParams, PromptResponse, RequestId, RequestParams,
    RequestPermissionOutcome, RequestPermissionResponse,
};
use acp_codec::turn::{TurnEvent, TurnLimits, TurnView};
use serde_json::Value;

/// One message of a transcript: who sent it and its compact JSON line.
pub fn transcript(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let from = v["from"].as_str().unwrap().to_owned();
            (from, serde_json::to_string(&v["msg"]).unwrap())
        })
        .collect()
}

/// A client-side driver around a view.
pub struct Driver {
    pub view: TurnView,
    /// The agent's permission requests not answered yet.
    permission_ids: BTreeSet<RequestId<'static>>,
    /// The client's `session/prompt` requests not answered yet.
    prompt_ids: BTreeSet<RequestId<'static>>,
    /// Rendered events.
    pub log: Vec<String>,
    /// All text deltas of user, agent and thought messages, concatenated.
    pub texts: [String; 3],
    /// Begin a turn on `session/prompt` / `session/load`.
    pub turns_on_prompts: bool,
}

impl Driver {
    pub fn new(limits: TurnLimits) -> Self {
        Self {
            view: TurnView::new(limits),
            permission_ids: BTreeSet::new(),
            prompt_ids: BTreeSet::new(),
            log: Vec::new(),
            texts: Default::default(),
            turns_on_prompts: true,
        }
    }

    pub fn feed(&mut self, from: &str, line: &str) {
        let msg = Message::decode(line).unwrap();
        match (from, &msg) {
            ("client", Message::Request(r)) => {
                if matches!(r.method.as_ref(), "session/prompt" | "session/load") {
                    if r.method == "session/prompt" {
                        self.prompt_ids.insert(r.id.to_owned_id());
                    }
                    if self.turns_on_prompts {
                        self.view.begin_turn();
                        self.log
                            .push(format!("-- begin turn {} ({})", self.view.turn(), r.method));
                    }
                }
            }
            ("agent", Message::Notification(n)) => {
                if let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value
                {
                    let events: Vec<_> = self.view.push_update(&u).collect();
                    for e in &events {
                        collect_text(&mut self.texts, e);
                        self.log.push(render(e));
                    }
                }
            }
            ("agent", Message::Request(r)) => {
                if let RequestParams::RequestPermission(p) = r.typed(Mode::Lenient).unwrap().value {
                    self.permission_ids.insert(r.id.to_owned_id());
                    let events: Vec<_> = self.view.push_permission_request(&r.id, &p).collect();
                    self.log.extend(events.iter().map(render));
                }
            }
            ("client", Message::Response(r)) if self.permission_ids.remove(&r.id.to_owned_id()) => {
                let resp: RequestPermissionResponse<'_> = r.result.parse().unwrap();
                let events: Vec<_> = self.view.push_permission_outcome(&r.id, &resp).collect();
                self.log.extend(events.iter().map(render));
            }
            ("agent", Message::Response(r)) if self.prompt_ids.remove(&r.id.to_owned_id()) => {
                let resp: PromptResponse<'_> = r.result.parse().unwrap();
                let events: Vec<_> = self.view.push_prompt_response(&resp).collect();
                self.log.extend(events.iter().map(render));
            }
            _ => {}
        }
    }
}

/// Appends a text delta to the user, agent or thought text.
pub fn collect_text(texts: &mut [String; 3], e: &TurnEvent<'_>) {
    match e {
        TurnEvent::TextDelta {
            kind: acp_codec::turn::MessageKind::User,
            text,
            ..
        } => texts[0].push_str(text),
        TurnEvent::TextDelta { text, .. } => texts[1].push_str(text),
        TurnEvent::ThoughtDelta { text, .. } => texts[2].push_str(text),
        _ => {}
    }
}

fn short(text: &str) -> String {
    let mut out: String = text.chars().take(60).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    format!("{out:?}")
}

/// One line per event, with what a UI would show.
pub fn render(e: &TurnEvent<'_>) -> String {
    match e {
        TurnEvent::TextDelta {
            kind,
            message_id,
            text,
            message,
        } => format!(
            "text {kind:?}{} {} (message {})",
            message_id.map(|m| format!(" [{m}]")).unwrap_or_default(),
            short(text),
            message.map_or("not retained".to_owned(), |m| format!(
                "{} bytes",
                m.text().len()
            ))
        ),
        TurnEvent::ThoughtDelta {
            message_id,
            text,
            message,
        } => format!(
            "thought{} {} (thought {})",
            message_id.map(|m| format!(" [{m}]")).unwrap_or_default(),
            short(text),
            message.map_or("not retained".to_owned(), |m| format!(
                "{} bytes",
                m.text().len()
            ))
        ),
        TurnEvent::MessageContent { kind, content, .. } => {
            format!("content {kind:?} {}", content.tag().unwrap_or("unknown"))
        }
        TurnEvent::ToolCallStarted(t)
        | TurnEvent::ToolCallUpdated(t)
        | TurnEvent::ToolCallFinished(t) => {
            let verb = match e {
                TurnEvent::ToolCallStarted(_) => "started",
                TurnEvent::ToolCallUpdated(_) => "updated",
                _ => "finished",
            };
            let title = t.title();
            let mut s = format!(
                "tool {verb} {} {} {} cmd={}",
                t.id(),
                t.status().as_str(),
                t.kind().map_or("-", |k| k.as_str()),
                short(title.command())
            );
            if let Some(dir) = title.working_dir() {
                let _ = write!(s, " dir={dir}");
            }
            if !title.description().is_empty() {
                let _ = write!(s, " desc={}", short(title.description()));
            }
            if title.is_background() {
                s.push_str(" background");
            }
            let _ = write!(
                s,
                " content={} locations={}",
                t.content().len(),
                t.locations().len()
            );
            s
        }
        TurnEvent::PermissionRequested {
            permission,
            tool_call,
        } => format!(
            "permission requested {} for {} ({} options){}",
            permission.request_id(),
            permission.tool_call_id(),
            permission.options().len(),
            if tool_call.is_some() {
                ""
            } else {
                " untracked tool call"
            }
        ),
        TurnEvent::PermissionResolved { permission, .. } => format!(
            "permission resolved {} -> {}",
            permission.request_id(),
            match permission.outcome() {
                Some(RequestPermissionOutcome::Selected(s)) => format!("selected {}", s.option_id),
                Some(RequestPermissionOutcome::Cancelled(_)) => "cancelled".to_owned(),
                Some(_) => "unknown".to_owned(),
                None => "not retained".to_owned(),
            }
        ),
        TurnEvent::PlanUpdated(entries) => format!(
            "plan {}",
            entries
                .iter()
                .map(|e| format!("[{}] {}", e.status.as_str(), e.content))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        TurnEvent::ModeChanged(m) => format!("mode {m}"),
        TurnEvent::UsageUpdated(u) => format!("usage {}/{}", u.used, u.size),
        TurnEvent::TurnFinished(r) => format!("turn finished {}", r.as_str()),
        TurnEvent::Other(u) => format!("other {}", u.tag().unwrap_or("unknown")),
        TurnEvent::Problem(p) => format!("problem: {p}"),
        _ => format!("{e:?}"),
    }
}
