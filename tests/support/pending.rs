//! A `Tracker` with one request pending at a chosen id, for the code that
//! decodes responses with it: the integration tests, the `acp_message`
//! fuzz check and the real-traffic benches. Test code only.

use acp_codec::acp::{RequestId, Tracker};

/// A tracker with request `id` pending as `method` (a tracker's ids count
/// from 0: the ones before it are pending as an extension method).
pub fn tracker_with(id: i64, method: &str) -> Tracker {
    let mut tracker = Tracker::new();
    for _ in 0..id {
        tracker.start("_other", std::time::Duration::ZERO);
    }
    assert_eq!(
        tracker.start(method, std::time::Duration::ZERO),
        RequestId::Number(id)
    );
    tracker
}
