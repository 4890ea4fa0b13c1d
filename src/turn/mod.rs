//! The turn view: a sans-IO state machine that turns an ACP session's
//! `session/update` notifications, permission requests and prompt responses
//! into UI events and UI state.
//!
//! Feed it what the client decoded, in the order it arrived:
//!
//! | call | with |
//! |---|---|
//! | [`TurnView::begin_turn`] | before sending `session/prompt` (or `session/load`) |
//! | [`TurnView::push_update`] | every `session/update` notification of the session |
//! | [`TurnView::push_permission_request`] | every `session/request_permission` request, with its id |
//! | [`TurnView::push_permission_outcome`] | the client's answer to it, with the same id |
//! | [`TurnView::push_prompt_response`] | the `session/prompt` result |
//!
//! Each push returns its [`Events`]: text and thought deltas, tool calls
//! started / updated / finished, permissions requested / resolved, plan,
//! mode and usage updates, the end of the turn, and [`Problem`]s. Events
//! borrow from the view and from what was pushed, so rendering one costs no
//! allocation; tool call events carry the call's current merged state. The
//! view keeps the turn's state for a UI to redraw from: messages, thoughts,
//! tool calls with their parsed [`Title`](crate::title::Title), permission
//! requests, plan, mode, usage and stop reason.
//!
//! # Rules
//!
//! - Message and thought chunks accumulate per `messageId`; chunks without
//!   one accumulate in one message per kind (user, agent, thought) per turn.
//! - A tool call is created by `tool_call` or by a permission request for an
//!   id not seen yet (Gemini CLI sends no `tool_call` for tools that need
//!   permission); a `tool_call` that comes after the permission request
//!   completes the tool call it created (Claude's ACP adapter has sent them
//!   in that order), as a `tool_call_update` would. `tool_call_update` changes only the fields it carries;
//!   `content` and `locations` are replaced whole. A status of `completed`
//!   or `failed` reached from another status emits
//!   [`TurnEvent::ToolCallFinished`]; a `tool_call` that arrives already
//!   finished (a `session/load` replay) emits started, then finished.
//! - Permission outcomes are matched by the id of the permission request
//!   (the agent's numbering; the client's own requests may use the same
//!   numbers).
//! - Nothing is dropped silently and nothing is fatal: an update for an
//!   unknown tool call id, a turn update after the prompt response, a second
//!   `tool_call` for an id (a permission request's tool call not counting), an outcome for no pending request, and every
//!   limit reached are reported as [`TurnEvent::Problem`] with a
//!   [`TurnError`] that says what was done with the input.
//! - The `sessionId` of notifications is not checked: feed one view per
//!   session.
//! - A `session/load` replay works the same way: call
//!   [`TurnView::begin_turn`] before sending `session/load` and push the
//!   replayed updates (Gemini CLI answers the load before most of the replay,
//!   so its response does not end the turn; the next `begin_turn` does).
//!
//! # Bounds
//!
//! [`TurnLimits`] bounds what one turn retains: tool calls tracked, bytes
//! retained by tool calls and permission requests, messages, bytes of text,
//! permission requests. [`TurnView::begin_turn`] frees the previous turn.
//! Besides these the view keeps one plan, one mode id, one usage update and
//! one stop reason, each replaced by the next one (so each is at most one
//! line). Each push does work linear in its input plus a scan of the turn's
//! tracked items of that kind (bounded by the limits). Events are not
//! queued: each push returns its own, every one of them (a handful, kept
//! without allocating).
//!
//! # Example
//!
//! ```
//! use acp_codec::acp::Mode;
//! use acp_codec::acp::{Message, NotificationParams, RequestParams, ResponseResult};
//! use acp_codec::turn::{TurnEvent, TurnLimits, TurnView};
//! use acp_codec::title::WorkingDir;
//!
//! let lines = [
//!     r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me look."}}}}"#,
//!     r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t1","title":"ls -la","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"[in src] (List the files)"}}]},"options":[{"optionId":"ok","name":"Allow","kind":"allow_once"}]}}"#,
//!     r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[]}}}"#,
//! ];
//! let mut view = TurnView::new(TurnLimits::default());
//! view.begin_turn();
//! let mut rendered = Vec::new();
//! for line in lines {
//!     match Message::decode(line).unwrap() {
//!         Message::Notification(n) => {
//!             let NotificationParams::SessionUpdate(update) = n.typed(Mode::Lenient).unwrap().value else { continue };
//!             for event in view.push_update(&update) {
//!                 rendered.push(format!("{event:?}").split([' ', '(']).next().unwrap().to_owned());
//!             }
//!         }
//!         Message::Request(r) => {
//!             let RequestParams::RequestPermission(p) = r.typed(Mode::Lenient).unwrap().value else { continue };
//!             for event in view.push_permission_request(&r.id, &p) {
//!                 if let TurnEvent::PermissionRequested { tool_call: Some(call), .. } = event {
//!                     // The description comes from the explanation block.
//!                     assert_eq!(call.title().description(), "List the files");
//!                     assert_eq!(call.title().working_dir(), Some(WorkingDir::In("src")));
//!                 }
//!                 rendered.push(format!("{event:?}").split([' ', '(']).next().unwrap().to_owned());
//!             }
//!         }
//!         _ => {}
//!     }
//! }
//! assert_eq!(rendered, ["TextDelta", "ToolCallStarted", "PermissionRequested", "ToolCallFinished"]);
//! // The explanation survives the completing update that emptied the content.
//! assert_eq!(view.tool_call("t1").unwrap().title().description(), "List the files");
//! assert_eq!(view.messages()[0].text(), "Let me look.");
//! ```

mod error;
mod event;
mod limits;
mod state;
mod tool;

use alloc::string::String;
use alloc::vec::Vec;

use crate::acp::{
    ContentBlock, ContentChunk, PlanEntry, PromptResponse, RequestId, RequestPermissionRequest,
    RequestPermissionResponse, SessionNotification, SessionUpdate, StopReason, UsageUpdate,
};

pub use error::{TurnError, TurnLimit};
pub use event::{Events, Problem, TurnEvent};
pub use limits::{
    TurnLimits, DEFAULT_MAX_MESSAGES, DEFAULT_MAX_PERMISSIONS, DEFAULT_MAX_TEXT_BYTES,
    DEFAULT_MAX_TOOL_BYTES, DEFAULT_MAX_TOOL_CALLS,
};
pub use state::{MessageKind, MessageState, Permission, ToolCallState};

use crate::tally::Tally;
use event::{Code, Codes, Source};
use tool::{Budget, Fields};

/// The state of an ACP session's current turn, fed with decoded messages,
/// returning the events a UI renders (see the [module docs](self)).
///
/// # Bounds
///
/// Per turn, at most [`TurnLimits::max_tool_calls`] tool calls,
/// [`TurnLimits::max_permissions`] permission requests and
/// [`TurnLimits::max_messages`] messages and thoughts are tracked; their
/// text is bounded by [`TurnLimits::max_text_bytes`] (message and thought
/// text and ids, see [`TurnView::text_bytes`]) and
/// [`TurnLimits::max_tool_bytes`] (every string and raw JSON value of the
/// tool calls and permission requests, plus 16 bytes per list item, see
/// [`TurnView::tool_bytes`]). Whatever does not fit is not retained and is
/// reported by the push as [`TurnEvent::Problem`] with
/// [`TurnError::LimitExceeded`]; the events themselves are never cut. The
/// session-level plan, mode, usage and stop reason are each replaced by the
/// next one. No events are queued.
#[derive(Debug, Clone)]
pub struct TurnView {
    limits: TurnLimits,
    turn: u64,
    finished: bool,
    stop_reason: Option<StopReason<'static>>,
    messages: Vec<MessageState>,
    thoughts: Vec<MessageState>,
    text_bytes: Tally,
    tool_calls: Vec<ToolCallState>,
    tool_bytes: Tally,
    permissions: Vec<Permission>,
    plan: Option<Vec<PlanEntry<'static>>>,
    mode: Option<String>,
    usage: Option<UsageUpdate<'static>>,
}

impl TurnView {
    /// A view with the given limits, ready for a first turn (updates that
    /// arrive before [`TurnView::begin_turn`], such as Gemini CLI's
    /// `available_commands_update`, are accepted).
    pub fn new(limits: TurnLimits) -> Self {
        Self {
            limits,
            turn: 0,
            finished: false,
            stop_reason: None,
            messages: Vec::new(),
            thoughts: Vec::new(),
            text_bytes: Tally::default(),
            tool_calls: Vec::new(),
            tool_bytes: Tally::default(),
            permissions: Vec::new(),
            plan: None,
            mode: None,
            usage: None,
        }
    }

    /// Starts a new turn: frees the previous turn's messages, thoughts, tool
    /// calls, permission requests and stop reason. The plan, mode and usage
    /// are the session's and stay.
    pub fn begin_turn(&mut self) {
        self.turn = self.turn.saturating_add(1);
        self.finished = false;
        self.stop_reason = None;
        self.messages.clear();
        self.thoughts.clear();
        self.text_bytes = Tally::default();
        self.tool_calls.clear();
        self.tool_bytes = Tally::default();
        self.permissions.clear();
    }

    /// Applies one `session/update` notification.
    ///
    /// ```
    /// use acp_codec::acp::Mode;
    /// use acp_codec::acp::{Message, NotificationParams};
    /// use acp_codec::turn::{TurnEvent, TurnLimits, TurnView};
    ///
    /// let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"Hmm"}}}}"#;
    /// let Message::Notification(n) = Message::decode(line).unwrap() else { unreachable!() };
    /// let NotificationParams::SessionUpdate(update) = n.typed(Mode::Lenient).unwrap().value else { unreachable!() };
    /// let mut view = TurnView::new(TurnLimits::default());
    /// let events: Vec<_> = view.push_update(&update).collect();
    /// assert!(matches!(events[..], [TurnEvent::ThoughtDelta { text: "Hmm", .. }]));
    /// ```
    pub fn push_update<'s>(&'s mut self, notification: &'s SessionNotification<'_>) -> Events<'s> {
        let update: &'s SessionUpdate<'s> = &notification.update;
        let mut codes = Codes::default();
        if self.finished && is_turn_update(update) {
            codes.problem(TurnError::AfterTurnEnd);
        }
        match update {
            SessionUpdate::UserMessageChunk(c) => self.chunk(MessageKind::User, c, &mut codes),
            SessionUpdate::AgentMessageChunk(c) => self.chunk(MessageKind::Agent, c, &mut codes),
            SessionUpdate::AgentThoughtChunk(c) => {
                self.chunk(MessageKind::Thought, c, &mut codes);
            }
            SessionUpdate::ToolCall(t) => self.announce(t, &mut codes),
            SessionUpdate::ToolCallUpdate(u) => match self.find_tool(&u.tool_call_id) {
                Some(i) => {
                    let fields = Fields::of_update(u);
                    self.apply(i, &fields, &mut codes);
                }
                None => codes.problem(TurnError::UnknownToolCall),
            },
            SessionUpdate::Plan(p) => {
                self.plan = Some(state::owned_vec(&p.entries));
                codes.push(Code::Plan);
            }
            SessionUpdate::CurrentModeUpdate(m) => {
                self.mode = Some(String::from(&*m.current_mode_id));
                codes.push(Code::Mode);
            }
            SessionUpdate::UsageUpdate(u) => {
                self.usage = Some(u.clone().into_owned());
                codes.push(Code::Usage);
            }
            _ => codes.push(Code::Other),
        }
        Events::new(self, Source::Update(update), codes)
    }

    /// Applies a `session/request_permission` request the agent sent with
    /// request id `id`. Its tool call is created when the turn does not
    /// track it yet, and otherwise updated with the fields the request
    /// carries.
    pub fn push_permission_request<'s>(
        &'s mut self,
        id: &'s RequestId<'_>,
        request: &'s RequestPermissionRequest<'_>,
    ) -> Events<'s> {
        let id: &'s RequestId<'s> = id;
        let request: &'s RequestPermissionRequest<'s> = request;
        let mut codes = Codes::default();
        if self.finished {
            codes.problem(TurnError::AfterTurnEnd);
        }
        let call = &request.tool_call;
        let fields = Fields::of_update(call);
        match self.find_tool(&call.tool_call_id) {
            Some(_) if fields.is_empty() => {}
            Some(i) => self.apply(i, &fields, &mut codes),
            None => self.create(&call.tool_call_id, &fields, false, &mut codes),
        }
        self.add_permission(id, request, &mut codes);
        Events::new(self, Source::Permission(id, request), codes)
    }

    /// Applies the client's answer to the permission request with id `id`.
    ///
    /// ```
    /// use acp_codec::acp::Mode;
    /// use acp_codec::acp::{
    ///     Message, RequestParams, RequestPermissionOutcome, RequestPermissionResponse,
    ///     SelectedPermissionOutcome,
    /// };
    /// use acp_codec::turn::{TurnEvent, TurnLimits, TurnView};
    ///
    /// let line = r#"{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t1","title":"rm -rf build (Clean)","kind":"execute"},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}}"#;
    /// let Message::Request(req) = Message::decode(line)? else { unreachable!() };
    /// let RequestParams::RequestPermission(ask) = req.typed(Mode::Lenient)?.value else { unreachable!() };
    /// let mut view = TurnView::new(TurnLimits::default());
    /// view.begin_turn();
    /// let _ = view.push_permission_request(&req.id, &ask).count();
    /// assert_eq!(view.pending_permissions().count(), 1);
    ///
    /// // The client's answer (by policy or from the user), matched by the agent's id.
    /// let answer = RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
    ///     SelectedPermissionOutcome::new("no"),
    /// ));
    /// let events: Vec<_> = view.push_permission_outcome(&req.id, &answer).collect();
    /// let [TurnEvent::PermissionResolved { permission, tool_call: Some(call) }] = events[..] else { panic!() };
    /// assert_eq!(permission.selected().unwrap().name, "Reject");
    /// assert_eq!(call.title().description(), "Clean");
    /// assert_eq!(view.pending_permissions().count(), 0);
    /// # Ok::<(), acp_codec::Error>(())
    /// ```
    pub fn push_permission_outcome<'s>(
        &'s mut self,
        id: &'s RequestId<'_>,
        response: &'s RequestPermissionResponse<'_>,
    ) -> Events<'s> {
        let id: &'s RequestId<'s> = id;
        let mut codes = Codes::default();
        let found = self
            .permissions
            .iter()
            .rposition(|p| !p.resolved && p.request_id == *id);
        match found {
            None => codes.problem(TurnError::UnknownPermission),
            Some(i) => {
                let mut budget = Budget {
                    total: &mut self.tool_bytes,
                    limit: self.limits.max_tool_bytes,
                    dropped: 0,
                };
                if let Some(p) = self.permissions.get_mut(i) {
                    p.resolved = true;
                    let new = state::outcome_len(&response.outcome);
                    p.outcome = budget
                        .admit(&mut p.bytes, 0, new)
                        .then(|| response.outcome.clone().into_owned());
                }
                let dropped = budget.dropped;
                self.limit(TurnLimit::ToolBytes, dropped, &mut codes);
                codes.push(Code::PermissionResolved(i));
            }
        }
        Events::new(self, Source::Outcome(id), codes)
    }

    /// Applies the `session/prompt` response: the turn is over.
    ///
    /// ```
    /// use acp_codec::acp::Mode;
    /// use acp_codec::acp::{Message, ResponseResult, StopReason};
    /// use acp_codec::turn::{TurnEvent, TurnLimits, TurnView};
    /// use acp_codec::TurnError;
    ///
    /// let line = r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#;
    /// let Message::Response(resp) = Message::decode(line)? else { unreachable!() };
    /// // The request was `session/prompt` (the `Tracker` says which method an id was).
    /// let ResponseResult::Prompt(done) = resp.typed("session/prompt", Mode::Lenient)?.value else { unreachable!() };
    /// let mut view = TurnView::new(TurnLimits::default());
    /// view.begin_turn();
    /// let events: Vec<_> = view.push_prompt_response(&done).collect();
    /// assert!(matches!(events[..], [TurnEvent::TurnFinished(StopReason::Cancelled)]));
    /// assert!(view.is_finished());
    /// // A second response for the same turn is a problem, not a failure.
    /// let again: Vec<_> = view.push_prompt_response(&done).collect();
    /// assert!(matches!(&again[0], TurnEvent::Problem(p) if p.error == TurnError::AlreadyFinished));
    /// # Ok::<(), acp_codec::Error>(())
    /// ```
    pub fn push_prompt_response<'s>(&'s mut self, response: &'s PromptResponse<'_>) -> Events<'s> {
        let reason: &'s StopReason<'s> = &response.stop_reason;
        let mut codes = Codes::default();
        if self.finished {
            codes.problem(TurnError::AlreadyFinished);
        }
        self.finished = true;
        self.stop_reason = Some(reason.clone().into_owned());
        codes.push(Code::Finished);
        Events::new(self, Source::Prompt(reason), codes)
    }

    /// The limits.
    pub fn limits(&self) -> &TurnLimits {
        &self.limits
    }

    /// How many times [`TurnView::begin_turn`] was called.
    pub fn turn(&self) -> u64 {
        self.turn
    }

    /// Whether the turn's prompt response arrived.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The turn's stop reason, once its prompt response arrived.
    pub fn stop_reason(&self) -> Option<&StopReason<'static>> {
        self.stop_reason.as_ref()
    }

    /// The turn's user and agent messages, in the order their first chunk
    /// arrived.
    pub fn messages(&self) -> &[MessageState] {
        &self.messages
    }

    /// The turn's thoughts, in the order their first chunk arrived.
    pub fn thoughts(&self) -> &[MessageState] {
        &self.thoughts
    }

    /// The turn's tool calls, in the order they appeared.
    pub fn tool_calls(&self) -> &[ToolCallState] {
        &self.tool_calls
    }

    /// The tool call with this id, when the turn tracks it.
    pub fn tool_call(&self, id: &str) -> Option<&ToolCallState> {
        self.tool_calls.iter().rev().find(|t| t.id == id)
    }

    /// The turn's permission requests, in the order they arrived.
    pub fn permissions(&self) -> &[Permission] {
        &self.permissions
    }

    /// The permission requests the client has not answered yet.
    pub fn pending_permissions(&self) -> impl Iterator<Item = &Permission> + '_ {
        self.permissions.iter().filter(|p| p.is_pending())
    }

    /// The latest plan.
    pub fn plan(&self) -> Option<&[PlanEntry<'static>]> {
        self.plan.as_deref()
    }

    /// The current mode id, once a `current_mode_update` arrived.
    pub fn mode(&self) -> Option<&str> {
        self.mode.as_deref()
    }

    /// The latest usage update.
    pub fn usage(&self) -> Option<&UsageUpdate<'static>> {
        self.usage.as_ref()
    }

    /// Bytes of text (and message ids) the turn retains, at most
    /// [`TurnLimits::max_text_bytes`].
    pub fn text_bytes(&self) -> usize {
        self.text_bytes.get()
    }

    /// Bytes the turn's tool calls and permission requests retain, at most
    /// [`TurnLimits::max_tool_bytes`].
    pub fn tool_bytes(&self) -> usize {
        self.tool_bytes.get()
    }

    fn message_at(&self, kind: MessageKind, i: usize) -> Option<&MessageState> {
        match kind {
            MessageKind::Thought => self.thoughts.get(i),
            _ => self.messages.get(i),
        }
    }

    fn find_tool(&self, id: &str) -> Option<usize> {
        self.tool_calls.iter().rposition(|t| t.id == id)
    }

    fn limit(&self, limit: TurnLimit, dropped: usize, codes: &mut Codes) {
        if dropped == 0 {
            return;
        }
        let max = match limit {
            TurnLimit::ToolCalls => self.limits.max_tool_calls,
            TurnLimit::ToolBytes => self.limits.max_tool_bytes,
            TurnLimit::Messages => self.limits.max_messages,
            TurnLimit::TextBytes => self.limits.max_text_bytes,
            _ => self.limits.max_permissions,
        };
        codes.problem(TurnError::LimitExceeded {
            limit,
            max,
            dropped,
        });
    }

    fn chunk(&mut self, kind: MessageKind, chunk: &ContentChunk<'_>, codes: &mut Codes) {
        let ContentBlock::Text(text) = &chunk.content else {
            codes.push(Code::Content);
            return;
        };
        let text = &*text.text;
        let id = chunk.message_id.as_deref();
        let list = match kind {
            MessageKind::Thought => &mut self.thoughts,
            _ => &mut self.messages,
        };
        let mut index = list
            .iter()
            .rposition(|m| m.kind == kind && m.id.as_deref() == id);
        if index.is_none() {
            let count = self.messages.len().saturating_add(self.thoughts.len());
            let id_bytes = id.map_or(0, str::len);
            if count >= self.limits.max_messages {
                self.limit(TurnLimit::Messages, 1, codes);
            } else if id_bytes > self.text_bytes.room(self.limits.max_text_bytes) {
                self.limit(
                    TurnLimit::TextBytes,
                    id_bytes.saturating_add(text.len()),
                    codes,
                );
            } else {
                self.text_bytes.add(id_bytes);
                let list = match kind {
                    MessageKind::Thought => &mut self.thoughts,
                    _ => &mut self.messages,
                };
                index = Some(list.len());
                list.push(MessageState {
                    kind,
                    id: id.map(String::from),
                    text: String::new(),
                    dropped: 0,
                });
            }
        }
        if let Some(i) = index {
            let room = self.text_bytes.room(self.limits.max_text_bytes);
            // A character boundary within the text, so the split holds.
            let (kept, cut) = text.split_at(floor_char_boundary(text, room));
            let list = match kind {
                MessageKind::Thought => &mut self.thoughts,
                _ => &mut self.messages,
            };
            if let Some(m) = list.get_mut(i) {
                m.text.push_str(kept);
                let dropped = cut.len();
                m.dropped = m.dropped.saturating_add(dropped);
                self.text_bytes.add(kept.len());
                self.limit(TurnLimit::TextBytes, dropped, codes);
            }
        }
        codes.push(Code::Delta(index));
    }

    fn add_permission(
        &mut self,
        id: &RequestId<'_>,
        request: &RequestPermissionRequest<'_>,
        codes: &mut Codes,
    ) {
        let duplicate = self
            .permissions
            .iter()
            .rposition(|p| !p.resolved && p.request_id == *id);
        if duplicate.is_none() && self.permissions.len() >= self.limits.max_permissions {
            self.limit(TurnLimit::Permissions, 1, codes);
            return;
        }
        let old = duplicate
            .and_then(|i| self.permissions.get(i))
            .map_or(0, |p| p.bytes.get());
        let new = state::id_len(id)
            .saturating_add(request.tool_call.tool_call_id.len())
            .saturating_add(state::options_len(&request.options));
        let mut budget = Budget {
            total: &mut self.tool_bytes,
            limit: self.limits.max_tool_bytes,
            dropped: 0,
        };
        let mut bytes = Tally::holding(old);
        let fits = budget.admit(&mut bytes, old, new);
        let dropped = budget.dropped;
        if let Some(i) = duplicate {
            codes.problem(TurnError::DuplicatePermission);
            if !fits {
                // The old request is outdated and the new one does not fit.
                self.permissions.remove(i);
            }
        }
        if !fits {
            self.limit(TurnLimit::ToolBytes, dropped, codes);
            return;
        }
        let permission = Permission {
            request_id: id.to_owned_id(),
            tool_call_id: String::from(&*request.tool_call.tool_call_id),
            options: state::owned_vec(&request.options),
            outcome: None,
            resolved: false,
            bytes,
        };
        let i = match duplicate.and_then(|i| self.permissions.get_mut(i).map(|p| (i, p))) {
            Some((i, slot)) => {
                *slot = permission;
                i
            }
            None => {
                let i = self.permissions.len();
                self.permissions.push(permission);
                i
            }
        };
        codes.push(Code::PermissionRequested(i));
    }
}

impl Default for TurnView {
    fn default() -> Self {
        Self::new(TurnLimits::default())
    }
}

/// Whether an update belongs to a turn (reported when it arrives after the
/// turn's end) rather than to the session.
fn is_turn_update(update: &SessionUpdate<'_>) -> bool {
    matches!(
        update,
        SessionUpdate::UserMessageChunk(_)
            | SessionUpdate::AgentMessageChunk(_)
            | SessionUpdate::AgentThoughtChunk(_)
            | SessionUpdate::ToolCall(_)
            | SessionUpdate::ToolCallUpdate(_)
            | SessionUpdate::Plan(_)
    )
}

/// The largest `n <= max` that is a character boundary of `text`.
fn floor_char_boundary(text: &str, max: usize) -> usize {
    if max >= text.len() {
        return text.len();
    }
    let mut n = max;
    while n > 0 && !text.is_char_boundary(n) {
        n = n.saturating_sub(1);
    }
    n
}

#[cfg(test)]
mod tests;
