//! What a turn retains: messages, tool calls, permission requests.

use alloc::string::String;
use alloc::vec::Vec;

use crate::acp::{
    ContentBlock, EmbeddedResourceResource, IntoOwned, PermissionOption, RawJson, RequestId,
    RequestPermissionOutcome, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind,
};
use crate::tally::Tally;
use crate::title::{tool_name_from_id, Title};

/// What a message is: the user's, the agent's, or the agent's thought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// `user_message_chunk` (prompts echoed back, `session/load` history).
    User,
    /// `agent_message_chunk`.
    Agent,
    /// `agent_thought_chunk`.
    Thought,
}

/// A message or thought of the turn: the text of all its chunks so far.
///
/// Chunks with the same `messageId` (and kind) accumulate here; chunks
/// without a `messageId` accumulate in one message per kind per turn. Only
/// text content is retained; other content blocks are passed through as
/// [`TurnEvent::MessageContent`](super::TurnEvent::MessageContent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageState {
    pub(super) kind: MessageKind,
    pub(super) id: Option<String>,
    pub(super) text: String,
    pub(super) dropped: usize,
}

impl MessageState {
    /// The kind of message.
    pub fn kind(&self) -> MessageKind {
        self.kind
    }

    /// The `messageId` its chunks carried (`None` for the turn's message
    /// without id).
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The text retained so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Bytes of text not retained for
    /// [`TurnLimits::max_text_bytes`](super::TurnLimits::max_text_bytes)
    /// (0 when [`MessageState::text`] is complete).
    pub fn dropped_bytes(&self) -> usize {
        self.dropped
    }
}

/// A tool call of the turn, with every field the agent sent so far.
///
/// Created by a `tool_call` notification, or by a permission request for an
/// id not seen yet (Gemini CLI sends no `tool_call` for tools that need
/// permission; Claude's ACP adapter has sent it after the permission
/// request), which a later `tool_call` completes. `tool_call_update`s change only the fields they carry; lists
/// (content, locations) are replaced whole, as the ACP spec says.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallState {
    pub(super) id: String,
    pub(super) title: String,
    pub(super) name: Option<String>,
    pub(super) kind: Option<ToolKind<'static>>,
    pub(super) status: ToolCallStatus<'static>,
    pub(super) content: Vec<ToolCallContent<'static>>,
    pub(super) locations: Vec<ToolCallLocation<'static>>,
    pub(super) raw_input: Option<RawJson<'static>>,
    pub(super) raw_output: Option<RawJson<'static>>,
    pub(super) explanation: Option<String>,
    pub(super) bytes: Tally,
    /// Whether its `tool_call` arrived: a tool call created by a permission
    /// request is not announced until then.
    pub(super) announced: bool,
}

impl ToolCallState {
    pub(super) fn new(id: &str, announced: bool) -> Self {
        Self {
            id: id.into(),
            title: String::new(),
            name: None,
            kind: None,
            status: ToolCallStatus::Pending,
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: None,
            raw_output: None,
            explanation: None,
            bytes: Tally::holding(id.len()),
            announced,
        }
    }

    /// The `toolCallId`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The title as the agent sent it (empty until one arrives).
    pub fn raw_title(&self) -> &str {
        &self.title
    }

    /// The title parsed into command, working directory, description and
    /// background flag ([`Title::parse_for_kind`] with the tool call's kind),
    /// combined with the explanation block Gemini CLI 0.36+ sends as the
    /// first text content ([`Title::with_explanation`]).
    ///
    /// The explanation is remembered from the content of the tool call while
    /// it is pending or in progress, so it survives the completing update
    /// that replaces the content with the output (or with nothing).
    pub fn title(&self) -> Title<'_> {
        let title = Title::parse_for_kind(&self.title, self.kind.as_ref().map(ToolKind::as_str));
        match &self.explanation {
            Some(text) => title.with_explanation(text),
            None => title,
        }
    }

    /// The explanation text remembered for [`ToolCallState::title`], if any.
    pub fn explanation(&self) -> Option<&str> {
        self.explanation.as_deref()
    }

    /// The tool's name: the `name` field when the agent sent one, else the
    /// name in a Gemini-generated id ([`tool_name_from_id`]).
    pub fn tool_name(&self) -> Option<&str> {
        self.name.as_deref().or_else(|| tool_name_from_id(&self.id))
    }

    /// The `name` field, when sent.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The `kind`, when sent.
    pub fn kind(&self) -> Option<&ToolKind<'static>> {
        self.kind.as_ref()
    }

    /// The status (`pending` until the agent sends one).
    pub fn status(&self) -> &ToolCallStatus<'static> {
        &self.status
    }

    /// Whether the status is `completed` or `failed`.
    pub fn is_finished(&self) -> bool {
        is_final(&self.status)
    }

    /// The content (the latest list sent).
    pub fn content(&self) -> &[ToolCallContent<'static>] {
        &self.content
    }

    /// The locations (the latest list sent).
    pub fn locations(&self) -> &[ToolCallLocation<'static>] {
        &self.locations
    }

    /// The raw input, when sent.
    pub fn raw_input(&self) -> Option<&RawJson<'static>> {
        self.raw_input.as_ref()
    }

    /// The raw output, when sent.
    pub fn raw_output(&self) -> Option<&RawJson<'static>> {
        self.raw_output.as_ref()
    }

    /// Bytes this tool call counts against
    /// [`TurnLimits::max_tool_bytes`](super::TurnLimits::max_tool_bytes).
    pub fn retained_bytes(&self) -> usize {
        self.bytes.get()
    }
}

/// A permission request of the turn and, once the client answered, its
/// outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Permission {
    pub(super) request_id: RequestId<'static>,
    pub(super) tool_call_id: String,
    pub(super) options: Vec<PermissionOption<'static>>,
    pub(super) outcome: Option<RequestPermissionOutcome<'static>>,
    pub(super) resolved: bool,
    pub(super) bytes: Tally,
}

impl Permission {
    /// The id of the `session/request_permission` request (the agent's
    /// numbering).
    pub fn request_id(&self) -> &RequestId<'static> {
        &self.request_id
    }

    /// The tool call it asks about.
    pub fn tool_call_id(&self) -> &str {
        &self.tool_call_id
    }

    /// The options offered.
    pub fn options(&self) -> &[PermissionOption<'static>] {
        &self.options
    }

    /// The client's answer: `None` while pending, and when it was not
    /// retained for [`TurnLimits::max_tool_bytes`](super::TurnLimits::max_tool_bytes)
    /// (reported when it arrived).
    pub fn outcome(&self) -> Option<&RequestPermissionOutcome<'static>> {
        self.outcome.as_ref()
    }

    /// Whether the client has not answered yet.
    pub fn is_pending(&self) -> bool {
        !self.resolved
    }

    /// Bytes this request counts against
    /// [`TurnLimits::max_tool_bytes`](super::TurnLimits::max_tool_bytes).
    pub fn retained_bytes(&self) -> usize {
        self.bytes.get()
    }

    /// The option the client selected, when it selected one of the offered
    /// options.
    pub fn selected(&self) -> Option<&PermissionOption<'static>> {
        match &self.outcome {
            Some(RequestPermissionOutcome::Selected(s)) => {
                self.options.iter().find(|o| o.option_id == s.option_id)
            }
            _ => None,
        }
    }
}

/// Bytes a status retains: only an unknown one holds text.
pub(super) fn status_len(status: &ToolCallStatus<'_>) -> usize {
    match status {
        ToolCallStatus::Unknown(s) => s.len(),
        _ => 0,
    }
}

/// Bytes a kind retains: only an unknown one holds text.
pub(super) fn kind_len(kind: &ToolKind<'_>) -> usize {
    match kind {
        ToolKind::Unknown(s) => s.len(),
        _ => 0,
    }
}

pub(super) fn is_final(status: &ToolCallStatus<'_>) -> bool {
    matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed)
}

/// Fixed cost counted for each list item, so that lists of empty items are
/// bounded too.
const ITEM: usize = 16;

fn raw_len(raw: &Option<RawJson<'_>>) -> usize {
    raw.as_ref().map_or(0, |r| r.get().len())
}

fn opt_len(s: &Option<alloc::borrow::Cow<'_, str>>) -> usize {
    s.as_ref().map_or(0, |s| s.len())
}

fn sum(parts: &[usize]) -> usize {
    parts.iter().fold(0usize, |a, b| a.saturating_add(*b))
}

/// Bytes of the text a content block holds (approximately its JSON size:
/// every string and raw JSON member, plus a fixed cost).
pub(super) fn block_len(block: &ContentBlock<'_>) -> usize {
    let own = match block {
        ContentBlock::Text(t) => sum(&[t.text.len(), raw_len(&t.meta)]),
        ContentBlock::Image(i) => sum(&[
            i.data.len(),
            i.mime_type.len(),
            opt_len(&i.uri),
            raw_len(&i.meta),
        ]),
        ContentBlock::Audio(a) => sum(&[a.data.len(), a.mime_type.len(), raw_len(&a.meta)]),
        ContentBlock::ResourceLink(l) => sum(&[
            l.name.len(),
            l.uri.len(),
            opt_len(&l.description),
            opt_len(&l.mime_type),
            opt_len(&l.title),
            raw_len(&l.meta),
        ]),
        ContentBlock::Resource(r) => {
            let inner = match &r.resource {
                EmbeddedResourceResource::Text(t) => sum(&[
                    t.text.len(),
                    t.uri.len(),
                    opt_len(&t.mime_type),
                    raw_len(&t.meta),
                ]),
                EmbeddedResourceResource::Blob(b) => sum(&[
                    b.blob.len(),
                    b.uri.len(),
                    opt_len(&b.mime_type),
                    raw_len(&b.meta),
                ]),
                EmbeddedResourceResource::Unknown(raw) => raw.get().len(),
            };
            sum(&[inner, raw_len(&r.meta)])
        }
        ContentBlock::Unknown(raw) => raw.get().len(),
    };
    let annotations = match block {
        ContentBlock::Text(t) => t.annotations.as_ref(),
        ContentBlock::Image(i) => i.annotations.as_ref(),
        ContentBlock::Audio(a) => a.annotations.as_ref(),
        ContentBlock::ResourceLink(l) => l.annotations.as_ref(),
        ContentBlock::Resource(r) => r.annotations.as_ref(),
        _ => None,
    };
    let annotations = annotations.map_or(0, |a| {
        let audience = a.audience.as_ref().map_or(0, |v| {
            v.iter().fold(0usize, |n, r| {
                n.saturating_add(r.as_str().len()).saturating_add(ITEM)
            })
        });
        sum(&[audience, opt_len(&a.last_modified), raw_len(&a.meta), ITEM])
    });
    sum(&[own, annotations, ITEM])
}

/// Bytes a tool call content item retains (see [`block_len`]).
pub(super) fn content_len(item: &ToolCallContent<'_>) -> usize {
    let own = match item {
        ToolCallContent::Content(c) => sum(&[block_len(&c.content), raw_len(&c.meta)]),
        ToolCallContent::Diff(d) => sum(&[
            d.path.len(),
            opt_len(&d.old_text),
            d.new_text.len(),
            raw_len(&d.meta),
        ]),
        ToolCallContent::Terminal(t) => sum(&[t.terminal_id.len(), raw_len(&t.meta)]),
        ToolCallContent::Unknown(raw) => raw.get().len(),
    };
    sum(&[own, ITEM])
}

pub(super) fn contents_len(items: &[ToolCallContent<'_>]) -> usize {
    items
        .iter()
        .fold(0usize, |n, c| n.saturating_add(content_len(c)))
}

pub(super) fn locations_len(items: &[ToolCallLocation<'_>]) -> usize {
    items.iter().fold(0usize, |n, l| {
        n.saturating_add(sum(&[l.path.len(), raw_len(&l.meta), ITEM]))
    })
}

pub(super) fn options_len(items: &[PermissionOption<'_>]) -> usize {
    items.iter().fold(0usize, |n, o| {
        n.saturating_add(sum(&[
            o.option_id.len(),
            o.name.len(),
            o.kind.as_str().len(),
            raw_len(&o.meta),
            ITEM,
        ]))
    })
}

pub(super) fn outcome_len(outcome: &RequestPermissionOutcome<'_>) -> usize {
    let own = match outcome {
        RequestPermissionOutcome::Cancelled(m) => raw_len(&m.meta),
        RequestPermissionOutcome::Selected(s) => sum(&[s.option_id.len(), raw_len(&s.meta)]),
        RequestPermissionOutcome::Unknown(raw) => raw.get().len(),
    };
    sum(&[own, ITEM])
}

pub(super) fn id_len(id: &RequestId<'_>) -> usize {
    match id {
        RequestId::Str(s) => sum(&[s.len(), ITEM]),
        _ => ITEM,
    }
}

/// The text of the explanation block: the first text content, when it is
/// one Gemini's explanation grammar accepts.
pub(super) fn explanation_of<'c>(content: &'c [ToolCallContent<'_>]) -> Option<&'c str> {
    content
        .iter()
        .find_map(|c| match c {
            ToolCallContent::Content(c) => match &c.content {
                ContentBlock::Text(t) => Some(&*t.text),
                _ => None,
            },
            _ => None,
        })
        .filter(|text| crate::title::Explanation::parse(text).is_some())
}

pub(super) fn owned_vec<T: IntoOwned + Clone>(items: &[T]) -> Vec<T::Owned> {
    items.iter().map(|i| i.clone().into_owned()).collect()
}
