//! Tool calls in the turn view: creating one from a `tool_call`, applying a
//! `tool_call_update`, and the byte accounting both go through.

use alloc::string::String;
use alloc::vec::Vec;

use super::event::{Code, Codes};
use super::state::{self, is_final, ToolCallState as Tc};
use super::TurnView;
use super::{TurnError, TurnLimit};
use crate::acp::{
    RawJson, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolKind,
};
use crate::tally::Tally;

/// The fields of a `tool_call` or `tool_call_update`, each `None` when not
/// sent.
#[derive(Default)]
pub(super) struct Fields<'u> {
    title: Option<&'u str>,
    name: Option<&'u str>,
    kind: Option<&'u ToolKind<'u>>,
    status: Option<&'u ToolCallStatus<'u>>,
    content: Option<&'u [ToolCallContent<'u>]>,
    locations: Option<&'u [ToolCallLocation<'u>]>,
    raw_input: Option<&'u RawJson<'u>>,
    raw_output: Option<&'u RawJson<'u>>,
}

/// The [`Fields`] of `$t`, a `ToolCall` or a `ToolCallUpdate` (their members
/// but `title` share names and types), with `$title` for the title.
macro_rules! fields_of {
    ($t:expr, $title:expr) => {
        Fields {
            title: $title,
            name: $t.name.as_deref(),
            kind: $t.kind.as_ref(),
            status: $t.status.as_ref(),
            content: $t.content.as_deref(),
            locations: $t.locations.as_deref(),
            raw_input: $t.raw_input.as_ref(),
            raw_output: $t.raw_output.as_ref(),
        }
    };
}

impl<'u> Fields<'u> {
    /// A `tool_call`: its title is required.
    pub(super) fn of_call(t: &'u ToolCall<'u>) -> Self {
        fields_of!(t, Some(&t.title))
    }

    /// A `tool_call_update`: every member optional.
    pub(super) fn of_update(t: &'u ToolCallUpdate<'u>) -> Self {
        fields_of!(t, t.title.as_deref())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.name.is_none()
            && self.kind.is_none()
            && self.status.is_none()
            && self.content.is_none()
            && self.locations.is_none()
            && self.raw_input.is_none()
            && self.raw_output.is_none()
    }
}

/// Byte accounting against one budget.
pub(super) struct Budget<'b> {
    pub(super) total: &'b mut Tally,
    pub(super) limit: usize,
    pub(super) dropped: usize,
}

impl Budget<'_> {
    /// Replaces `old` retained bytes of an item by `new`: true when they fit.
    /// On false the caller clears the item (its old bytes are released) and
    /// the new bytes count as dropped.
    pub(super) fn admit(&mut self, item_bytes: &mut Tally, old: usize, new: usize) -> bool {
        self.total.release(old);
        item_bytes.release(old);
        if new <= self.total.room(self.limit) {
            self.total.add(new);
            item_bytes.add(new);
            true
        } else {
            // A count of bytes refused over the turn: it cannot pass the
            // bytes that went by, which fit in memory one message at a time.
            self.dropped = self.dropped.saturating_add(new);
            false
        }
    }

    /// [`admit`](Self::admit) for a list: the list `make` builds when its
    /// `new` bytes fit, else an empty one.
    pub(super) fn admit_list<T>(
        &mut self,
        item_bytes: &mut Tally,
        old: usize,
        new: usize,
        make: impl FnOnce() -> Vec<T>,
    ) -> Vec<T> {
        if self.admit(item_bytes, old, new) {
            make()
        } else {
            Vec::new()
        }
    }
}

impl TurnView {
    pub(super) fn announce(&mut self, call: &ToolCall<'_>, codes: &mut Codes) {
        let fields = Fields::of_call(call);
        let Some(i) = self.find_tool(&call.tool_call_id) else {
            self.create(&call.tool_call_id, &fields, true, codes);
            return;
        };
        let Some(t) = self.tool_calls.get_mut(i) else {
            return;
        };
        if !t.announced {
            // Created by a permission request that came first: the
            // `tool_call` completes it, field by field.
            t.announced = true;
            self.apply(i, &fields, codes);
            return;
        }
        codes.problem(TurnError::DuplicateToolCall);
        let was_final = t.is_finished();
        // A `tool_call` is the whole state: start from scratch.
        let fresh = Tc::new(&call.tool_call_id, true);
        self.tool_bytes.release(t.bytes.get());
        self.tool_bytes.add(fresh.bytes.get());
        *t = fresh;
        self.apply_fields(i, &fields, codes);
        self.transition(i, was_final, codes);
    }

    /// A new tool call: `announced` by a `tool_call`, or created by a
    /// permission request for an id not seen yet.
    pub(super) fn create(
        &mut self,
        id: &str,
        fields: &Fields<'_>,
        announced: bool,
        codes: &mut Codes,
    ) {
        if self.tool_calls.len() >= self.limits.max_tool_calls {
            self.limit(TurnLimit::ToolCalls, 1, codes);
            return;
        }
        let call = Tc::new(id, announced);
        let bytes = call.bytes.get();
        if bytes > self.tool_bytes.room(self.limits.max_tool_bytes) {
            self.limit(TurnLimit::ToolBytes, bytes, codes);
            return;
        }
        self.tool_bytes.add(bytes);
        let i = self.tool_calls.len();
        self.tool_calls.push(call);
        codes.push(Code::ToolStarted(i));
        self.apply_fields(i, fields, codes);
        if self.tool_calls.get(i).is_some_and(Tc::is_finished) {
            codes.push(Code::ToolFinished(i));
        }
    }

    pub(super) fn apply(&mut self, i: usize, fields: &Fields<'_>, codes: &mut Codes) {
        let was_final = self.tool_calls.get(i).is_some_and(Tc::is_finished);
        self.apply_fields(i, fields, codes);
        self.transition(i, was_final, codes);
    }

    /// Emits finished when the tool call just reached a final status,
    /// updated otherwise.
    fn transition(&self, i: usize, was_final: bool, codes: &mut Codes) {
        let is_final = self.tool_calls.get(i).is_some_and(Tc::is_finished);
        codes.push(if is_final && !was_final {
            Code::ToolFinished(i)
        } else {
            Code::ToolUpdated(i)
        });
    }

    fn apply_fields(&mut self, i: usize, f: &Fields<'_>, codes: &mut Codes) {
        let Some(t) = self.tool_calls.get_mut(i) else {
            return;
        };
        let mut b = Budget {
            total: &mut self.tool_bytes,
            limit: self.limits.max_tool_bytes,
            dropped: 0,
        };
        if let Some(status) = f.status {
            let (old, new) = (state::status_len(&t.status), state::status_len(status));
            // A status too long to retain (an unknown one) leaves `pending`.
            t.status = if b.admit(&mut t.bytes, old, new) {
                status.clone().into_owned()
            } else {
                ToolCallStatus::Pending
            };
        }
        if let Some(kind) = f.kind {
            let old = t.kind.as_ref().map_or(0, state::kind_len);
            let new = state::kind_len(kind);
            t.kind = b
                .admit(&mut t.bytes, old, new)
                .then(|| kind.clone().into_owned());
        }
        if let Some(title) = f.title {
            if b.admit(&mut t.bytes, t.title.len(), title.len()) {
                t.title.clear();
                t.title.push_str(title);
            } else {
                t.title = String::new();
            }
        }
        if let Some(name) = f.name {
            let old = t.name.as_ref().map_or(0, String::len);
            t.name = b.admit(&mut t.bytes, old, name.len()).then(|| name.into());
        }
        if let Some(content) = f.content {
            if !is_final(&t.status) {
                if let Some(text) = state::explanation_of(content) {
                    let old = t.explanation.as_ref().map_or(0, String::len);
                    t.explanation = b.admit(&mut t.bytes, old, text.len()).then(|| text.into());
                }
            }
        }
        if let Some(locations) = f.locations {
            let old = state::locations_len(&t.locations);
            let new = state::locations_len(locations);
            t.locations = b.admit_list(&mut t.bytes, old, new, || state::owned_vec(locations));
        }
        if let Some(raw) = f.raw_input {
            let old = t.raw_input.as_ref().map_or(0, |r| r.get().len());
            t.raw_input = b
                .admit(&mut t.bytes, old, raw.get().len())
                .then(|| raw.clone().into_owned());
        }
        if let Some(raw) = f.raw_output {
            let old = t.raw_output.as_ref().map_or(0, |r| r.get().len());
            t.raw_output = b
                .admit(&mut t.bytes, old, raw.get().len())
                .then(|| raw.clone().into_owned());
        }
        if let Some(content) = f.content {
            let old = state::contents_len(&t.content);
            let new = state::contents_len(content);
            t.content = b.admit_list(&mut t.bytes, old, new, || state::owned_vec(content));
        }
        let dropped = b.dropped;
        self.limit(TurnLimit::ToolBytes, dropped, codes);
    }
}
