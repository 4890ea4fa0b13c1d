//! The events a push returns: what a UI renders.

use alloc::vec::Vec;

use super::TurnError;
use crate::acp::{
    ContentBlock, PlanEntry, RequestId, RequestPermissionRequest, SessionUpdate, StopReason,
    UsageUpdate,
};

use super::state::{MessageKind, MessageState, Permission, ToolCallState};
use super::TurnView;

/// One thing for a UI to render, borrowed from the [`TurnView`] and from
/// what was pushed, valid until the next push.
///
/// Tool call and permission events hand out the *current* state (every
/// field merged so far), so a UI redraws the item from the event alone;
/// text events hand out the delta (borrowed from the notification, emitted
/// in full even when a limit stops the view from retaining it) and the
/// message it was appended to.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum TurnEvent<'a> {
    /// Text of a user or agent message (`user_message_chunk`,
    /// `agent_message_chunk` with a text block).
    TextDelta {
        /// [`MessageKind::User`] or [`MessageKind::Agent`].
        kind: MessageKind,
        /// The chunk's `messageId`.
        message_id: Option<&'a str>,
        /// The new text.
        text: &'a str,
        /// The message with the text appended (`None` when
        /// [`TurnLimits::max_messages`](super::TurnLimits::max_messages)
        /// stopped the view from retaining it).
        message: Option<&'a MessageState>,
    },
    /// Text of a thought (`agent_thought_chunk` with a text block).
    ThoughtDelta {
        /// The chunk's `messageId`.
        message_id: Option<&'a str>,
        /// The new text.
        text: &'a str,
        /// The thought with the text appended (`None` when not retained).
        message: Option<&'a MessageState>,
    },
    /// A message or thought chunk whose content is not text (an image, a
    /// resource link, …): passed through, not retained.
    MessageContent {
        /// The kind of message.
        kind: MessageKind,
        /// The chunk's `messageId`.
        message_id: Option<&'a str>,
        /// The content block.
        content: &'a ContentBlock<'a>,
    },
    /// A tool call appeared (by `tool_call`, or by a permission request for
    /// an id not seen before).
    ToolCallStarted(&'a ToolCallState),
    /// A tool call changed and is not finished (or changed again after it
    /// finished).
    ToolCallUpdated(&'a ToolCallState),
    /// A tool call's status became `completed` or `failed`.
    ToolCallFinished(&'a ToolCallState),
    /// The agent asked for permission (`session/request_permission`).
    PermissionRequested {
        /// The request.
        permission: &'a Permission,
        /// The tool call it asks about (`None` when not tracked for a limit).
        tool_call: Option<&'a ToolCallState>,
    },
    /// The client answered a permission request.
    PermissionResolved {
        /// The request, with its outcome.
        permission: &'a Permission,
        /// The tool call it asked about, when still tracked.
        tool_call: Option<&'a ToolCallState>,
    },
    /// The agent sent its plan (the whole list, replacing the previous one).
    PlanUpdated(&'a [PlanEntry<'a>]),
    /// The session's mode changed (`current_mode_update`): the mode id.
    ModeChanged(&'a str),
    /// Context window and cost (`usage_update`).
    UsageUpdated(&'a UsageUpdate<'a>),
    /// The prompt response arrived: the turn is over.
    TurnFinished(&'a StopReason<'a>),
    /// Any other update (`available_commands_update`,
    /// `config_option_update`, `session_info_update`, `notice`, compaction
    /// updates, and variants this version does not know), passed through.
    Other(&'a SessionUpdate<'a>),
    /// Something that does not fit the turn, or a limit reached; never
    /// fatal (see [`TurnError`] for what was done with the input).
    Problem(Problem<'a>),
}

/// A problem reported by a push, with the ids it concerns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Problem<'a> {
    /// What happened.
    pub error: TurnError,
    /// The tool call concerned, if any.
    pub tool_call_id: Option<&'a str>,
    /// The permission request concerned, if any.
    pub request_id: Option<&'a RequestId<'a>>,
}

impl core::fmt::Display for Problem<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&self.error, f)?;
        if let Some(id) = self.tool_call_id {
            write!(f, " (tool call {id:?})")?;
        }
        if let Some(id) = self.request_id {
            write!(f, " (request {id})")?;
        }
        Ok(())
    }
}

/// What was pushed, for events that borrow from it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source<'s> {
    Update(&'s SessionUpdate<'s>),
    Permission(&'s RequestId<'s>, &'s RequestPermissionRequest<'s>),
    Outcome(&'s RequestId<'s>),
    Prompt(&'s StopReason<'s>),
}

/// An event before it is resolved against the view and the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Code {
    Delta(Option<usize>),
    Content,
    ToolStarted(usize),
    ToolUpdated(usize),
    ToolFinished(usize),
    PermissionRequested(usize),
    PermissionResolved(usize),
    Plan,
    Mode,
    Usage,
    Finished,
    Other,
    Problem(TurnError),
}

/// Events of one push kept without allocating: every push path emits at
/// most this many today.
pub(super) const INLINE: usize = 8;

/// The events of one push, in order: the first [`INLINE`] in place, any
/// more in a list (allocated only when a push emits that many), so none is
/// ever lost.
#[derive(Debug, Clone, Default)]
pub(super) struct Codes {
    inline: [Option<Code>; INLINE],
    more: Vec<Code>,
}

impl Codes {
    pub(super) fn push(&mut self, code: Code) {
        match self.inline.iter_mut().find(|slot| slot.is_none()) {
            Some(slot) => *slot = Some(code),
            None => self.more.push(code),
        }
    }

    pub(super) fn problem(&mut self, error: TurnError) {
        self.push(Code::Problem(error));
    }

    /// The `i`th code pushed.
    fn get(&self, i: usize) -> Option<Code> {
        match i.checked_sub(INLINE) {
            None => self.inline.get(i).copied().flatten(),
            Some(j) => self.more.get(j).copied(),
        }
    }

    /// How many codes were pushed.
    fn len(&self) -> usize {
        let inline = self.inline.iter().flatten().count();
        // At most `INLINE` plus a list's length, which fits in memory.
        inline.saturating_add(self.more.len())
    }
}

/// The events of one push: an iterator of [`TurnEvent`]s that borrow from the
/// view and from what was pushed.
///
/// Returned by every `push_*` method instead of being queued: there is no
/// queue to bound or to forget to drain, nothing is allocated per event,
/// and the borrow guarantees the state an event shows is the state right
/// after that push. Dropping it unread loses nothing from the view's state.
#[derive(Debug, Clone)]
#[must_use = "the events of a push are only available from its return value"]
pub struct Events<'s> {
    view: &'s TurnView,
    source: Source<'s>,
    codes: Codes,
    next: usize,
}

impl<'s> Events<'s> {
    pub(super) fn new(view: &'s TurnView, source: Source<'s>, codes: Codes) -> Self {
        Self {
            view,
            source,
            codes,
            next: 0,
        }
    }

    fn tool_call_id(&self) -> Option<&'s str> {
        match self.source {
            Source::Update(SessionUpdate::ToolCall(t)) => Some(&t.tool_call_id),
            Source::Update(SessionUpdate::ToolCallUpdate(t)) => Some(&t.tool_call_id),
            Source::Permission(_, p) => Some(&p.tool_call.tool_call_id),
            _ => None,
        }
    }

    fn request_id(&self) -> Option<&'s RequestId<'s>> {
        match self.source {
            Source::Permission(id, _) | Source::Outcome(id) => Some(id),
            _ => None,
        }
    }

    fn resolve(&self, code: Code) -> Option<TurnEvent<'s>> {
        let view = self.view;
        Some(match code {
            Code::Delta(index) => {
                let Source::Update(update) = self.source else {
                    return None;
                };
                let (kind, chunk) = chunk_of(update)?;
                let ContentBlock::Text(text) = &chunk.content else {
                    return None;
                };
                let message = index.and_then(|i| view.message_at(kind, i));
                let message_id = chunk.message_id.as_deref();
                match kind {
                    MessageKind::Thought => TurnEvent::ThoughtDelta {
                        message_id,
                        text: &text.text,
                        message,
                    },
                    _ => TurnEvent::TextDelta {
                        kind,
                        message_id,
                        text: &text.text,
                        message,
                    },
                }
            }
            Code::Content => {
                let Source::Update(update) = self.source else {
                    return None;
                };
                let (kind, chunk) = chunk_of(update)?;
                TurnEvent::MessageContent {
                    kind,
                    message_id: chunk.message_id.as_deref(),
                    content: &chunk.content,
                }
            }
            Code::ToolStarted(i) => TurnEvent::ToolCallStarted(view.tool_calls.get(i)?),
            Code::ToolUpdated(i) => TurnEvent::ToolCallUpdated(view.tool_calls.get(i)?),
            Code::ToolFinished(i) => TurnEvent::ToolCallFinished(view.tool_calls.get(i)?),
            Code::PermissionRequested(i) => {
                let permission = view.permissions.get(i)?;
                TurnEvent::PermissionRequested {
                    permission,
                    tool_call: view.tool_call(&permission.tool_call_id),
                }
            }
            Code::PermissionResolved(i) => {
                let permission = view.permissions.get(i)?;
                TurnEvent::PermissionResolved {
                    permission,
                    tool_call: view.tool_call(&permission.tool_call_id),
                }
            }
            Code::Plan => match self.source {
                Source::Update(SessionUpdate::Plan(p)) => TurnEvent::PlanUpdated(&p.entries),
                _ => return None,
            },
            Code::Mode => match self.source {
                Source::Update(SessionUpdate::CurrentModeUpdate(m)) => {
                    TurnEvent::ModeChanged(&m.current_mode_id)
                }
                _ => return None,
            },
            Code::Usage => match self.source {
                Source::Update(SessionUpdate::UsageUpdate(u)) => TurnEvent::UsageUpdated(u),
                _ => return None,
            },
            Code::Finished => match self.source {
                Source::Prompt(reason) => TurnEvent::TurnFinished(reason),
                _ => return None,
            },
            Code::Other => match self.source {
                Source::Update(update) => TurnEvent::Other(update),
                _ => return None,
            },
            Code::Problem(error) => TurnEvent::Problem(Problem {
                error,
                tool_call_id: self.tool_call_id(),
                request_id: self.request_id(),
            }),
        })
    }
}

fn chunk_of<'s>(
    update: &'s SessionUpdate<'s>,
) -> Option<(MessageKind, &'s crate::acp::ContentChunk<'s>)> {
    match update {
        SessionUpdate::UserMessageChunk(c) => Some((MessageKind::User, c)),
        SessionUpdate::AgentMessageChunk(c) => Some((MessageKind::Agent, c)),
        SessionUpdate::AgentThoughtChunk(c) => Some((MessageKind::Thought, c)),
        _ => None,
    }
}

impl<'s> Iterator for Events<'s> {
    type Item = TurnEvent<'s>;

    fn next(&mut self) -> Option<TurnEvent<'s>> {
        while let Some(code) = self.codes.get(self.next) {
            // One step per code pushed, so it stays below their count.
            self.next = self.next.saturating_add(1);
            if let Some(event) = self.resolve(code) {
                return Some(event);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.codes.len().saturating_sub(self.next)))
    }
}
