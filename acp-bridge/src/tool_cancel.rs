//! Which of the agent's running tool calls the user may cancel with
//! `tool_call/cancel` (ACP v2): those whose latest update advertises
//! `capabilities.cancel`, until an update clears it or the tool call
//! reaches a final status. Fed every tool call update; asked which one to
//! cancel (the latest, or one by id) and which ones `--tool-timeout` has
//! run out for.
//!
//! v2's rules: `capabilities` omitted leaves the advertisement as it was,
//! `null` clears it, an object replaces it; `cancel` in it advertises the
//! request when it is an object (an omitted, `null` or malformed `cancel`
//! does not); a new tool call starts with none. A v1 client (this one,
//! in front of a translated v2 agent) reads `capabilities` among the
//! members its v1 types do not hold.

use std::time::Duration;

/// Tool calls tracked at most; past it the oldest is forgotten (it can
/// no longer be cancelled from here).
const MAX_TRACKED: usize = 256;

/// A tool call that advertises `tool_call/cancel`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cancellable {
    /// Its session.
    pub session: String,
    /// Its `toolCallId`.
    pub id: String,
    /// Its title, for the user.
    pub title: String,
    /// When it was first seen advertising it (the client's clock).
    since: Duration,
    /// Whether we asked the agent to cancel it already.
    asked: bool,
}

/// The tool calls that advertise `tool_call/cancel`, oldest first.
#[derive(Debug, Default)]
pub struct ToolCancels {
    calls: Vec<Cancellable>,
}

/// What one tool call update says, read for [`ToolCancels::observe`].
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub session: &'a str,
    pub id: &'a str,
    /// Its title, when the update carries one.
    pub title: Option<&'a str>,
    /// Its status's wire name, when the update carries one.
    pub status: Option<&'a str>,
    /// The raw JSON of its `capabilities` member, when present.
    pub capabilities: Option<&'a str>,
    /// Whether this update creates the tool call (v1's `tool_call`).
    pub creates: bool,
}

/// Whether the raw `capabilities` value advertises `cancel`.
fn advertises_cancel(capabilities: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(capabilities)
        .ok()
        .and_then(|c| c.get("cancel").map(serde_json::Value::is_object))
        .unwrap_or(false)
}

impl ToolCancels {
    /// Takes one tool call update into account, at `now`.
    pub fn observe(&mut self, seen: Seen<'_>, now: Duration) {
        let at = self
            .calls
            .iter()
            .position(|c| c.session == seen.session && c.id == seen.id);
        let last = matches!(seen.status, Some("completed" | "failed" | "cancelled"));
        let advertised = match seen.capabilities {
            _ if last => false,
            Some(raw) => advertises_cancel(raw),
            None if seen.creates => false,
            None => at.is_some(),
        };
        match (at, advertised) {
            (Some(i), true) => {
                if let (Some(c), Some(title)) = (self.calls.get_mut(i), seen.title) {
                    title.clone_into(&mut c.title);
                }
            }
            (Some(i), false) => {
                self.calls.remove(i);
            }
            (None, true) => {
                if self.calls.len() >= MAX_TRACKED {
                    self.calls.remove(0);
                }
                self.calls.push(Cancellable {
                    session: seen.session.to_owned(),
                    id: seen.id.to_owned(),
                    title: seen.title.unwrap_or(seen.id).to_owned(),
                    since: now,
                    asked: false,
                });
            }
            (None, false) => {}
        }
    }

    /// The tool call to cancel in `session`: the one of id `id`, else the
    /// latest not asked yet; marked asked. `Err` says to the user why
    /// there is none (nothing is to be sent then).
    ///
    /// # Errors
    ///
    /// When no such tool call advertises `tool_call/cancel`, or its cancel
    /// was asked already.
    pub fn pick(&mut self, session: &str, id: Option<&str>) -> Result<Cancellable, String> {
        let found = match id {
            Some(id) => {
                let Some(c) = self
                    .calls
                    .iter_mut()
                    .find(|c| c.session == session && c.id == id)
                else {
                    return Err(format!(
                        "tool call {id} is not running or does not offer to be cancelled"
                    ));
                };
                if c.asked {
                    return Err(format!("tool call {id}: cancel already asked"));
                }
                c
            }
            None => self
                .calls
                .iter_mut()
                .rev()
                .find(|c| c.session == session && !c.asked)
                .ok_or_else(|| "no running tool call offers to be cancelled".to_owned())?,
        };
        found.asked = true;
        Ok(found.clone())
    }

    /// When the next tool call runs out of `limit` (not asked yet).
    pub fn next_due(&self, limit: Duration) -> Option<Duration> {
        self.calls
            .iter()
            .filter(|c| !c.asked)
            .map(|c| c.since.saturating_add(limit))
            .min()
    }

    /// The tool calls that have run `limit` by `now` (not asked yet);
    /// marked asked.
    pub fn due(&mut self, limit: Duration, now: Duration) -> Vec<Cancellable> {
        self.calls
            .iter_mut()
            .filter(|c| !c.asked && c.since.saturating_add(limit) <= now)
            .map(|c| {
                c.asked = true;
                c.clone()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen<'a>(id: &'a str, status: Option<&'a str>, caps: Option<&'a str>) -> Seen<'a> {
        Seen {
            session: "s",
            id,
            title: Some("sleep"),
            status,
            capabilities: caps,
            creates: false,
        }
    }

    const T: Duration = Duration::ZERO;

    #[test]
    fn only_an_advertised_running_tool_call_is_picked() {
        let mut t = ToolCancels::default();
        // Not advertised: nothing to send.
        t.observe(seen("a", Some("in_progress"), None), T);
        assert!(t.pick("s", None).is_err());
        assert!(t.pick("s", Some("a")).is_err());
        // Malformed or null `cancel`: unsupported.
        for caps in [
            r#"{"cancel":null}"#,
            r#"{"cancel":true}"#,
            "{}",
            "7",
            "null",
        ] {
            t.observe(seen("a", Some("in_progress"), Some(caps)), T);
            assert!(t.pick("s", None).is_err(), "{caps}");
        }
        t.observe(seen("a", Some("in_progress"), Some(r#"{"cancel":{}}"#)), T);
        // An update without `capabilities` leaves it advertised.
        t.observe(seen("a", None, None), T);
        assert!(t.pick("other", None).is_err(), "of its session only");
        assert_eq!(t.pick("s", None).map(|c| c.id), Ok("a".to_owned()));
        // Asked once: not again.
        assert!(t.pick("s", None).is_err());
        assert!(t.pick("s", Some("a")).is_err());
    }

    #[test]
    fn a_later_upsert_or_a_final_status_withdraws_the_offer() {
        let mut t = ToolCancels::default();
        let caps = Some(r#"{"cancel":{}}"#);
        t.observe(seen("a", Some("in_progress"), caps), T);
        t.observe(seen("b", Some("in_progress"), caps), T);
        // `null` clears it; an object without `cancel` replaces it.
        t.observe(seen("a", None, Some("null")), T);
        assert!(t.pick("s", Some("a")).is_err());
        t.observe(seen("b", None, Some(r#"{"_x":{}}"#)), T);
        assert!(t.pick("s", None).is_err());
        // A final status ends it whatever the capabilities say.
        for status in ["completed", "failed", "cancelled"] {
            t.observe(seen("c", Some("in_progress"), caps), T);
            t.observe(seen("c", Some(status), caps), T);
            assert!(t.pick("s", None).is_err(), "{status}");
        }
        // A tool call created again starts with none.
        t.observe(seen("d", Some("in_progress"), caps), T);
        let mut again = seen("d", Some("pending"), None);
        again.creates = true;
        t.observe(again, T);
        assert!(t.pick("s", None).is_err());
    }

    #[test]
    fn the_latest_is_picked_and_the_timeout_picks_each_once() {
        let mut t = ToolCancels::default();
        let caps = Some(r#"{"cancel":{}}"#);
        let second = Duration::from_secs(1);
        t.observe(seen("a", Some("in_progress"), caps), T);
        t.observe(seen("b", Some("in_progress"), caps), second);
        assert_eq!(t.next_due(second), Some(second));
        let due: Vec<String> = t.due(second, second).into_iter().map(|c| c.id).collect();
        assert_eq!(due, ["a"]);
        assert_eq!(t.next_due(second), Some(2 * second));
        assert_eq!(t.pick("s", None).map(|c| c.id), Ok("b".to_owned()));
        assert!(t.due(second, 10 * second).is_empty());
        assert_eq!(t.next_due(second), None);
    }
}
