//! The fuzz targets' checks (`fuzz/checks/<target>.rs`), loaded once each
//! and gated as their targets; the suites that replay seeds or generated
//! input through them import them from here.

#[cfg(feature = "tokio-util")]
#[path = "../../fuzz/checks/acp_codec.rs"]
pub mod acp_codec;
#[cfg(feature = "alloc")]
#[path = "../../fuzz/checks/acp_lossless.rs"]
pub mod acp_lossless;
#[cfg(feature = "alloc")]
#[path = "../../fuzz/checks/acp_message.rs"]
pub mod acp_message;
#[cfg(feature = "std")]
#[path = "../../fuzz/checks/acp_oracle.rs"]
pub mod acp_oracle;
#[cfg(all(feature = "arbitrary", feature = "v2"))]
#[path = "../../fuzz/checks/acp_v2.rs"]
pub mod acp_v2;
#[cfg(feature = "remote")]
#[path = "../../fuzz/checks/bridge_router.rs"]
pub mod bridge_router;
#[cfg(feature = "alloc")]
#[path = "../../fuzz/checks/chunk_reassembler.rs"]
pub mod chunk_reassembler;
#[cfg(feature = "arbitrary")]
#[path = "../../fuzz/checks/hostile_stream.rs"]
pub mod hostile_stream;
#[path = "../../fuzz/checks/line_splitter.rs"]
pub mod line_splitter;
#[cfg(feature = "alloc")]
#[path = "../../fuzz/checks/observer.rs"]
pub mod observer;
#[cfg(feature = "remote")]
#[path = "../../fuzz/checks/remote_transport.rs"]
pub mod remote_transport;
#[cfg(feature = "remote")]
#[path = "../../fuzz/checks/resume_log.rs"]
pub mod resume_log;
#[cfg(feature = "arbitrary")]
#[path = "../../fuzz/checks/round_trip.rs"]
pub mod round_trip;
#[cfg(feature = "remote")]
#[path = "../../fuzz/checks/server_core.rs"]
pub mod server_core;
#[cfg(feature = "remote")]
#[path = "../../fuzz/checks/server_resume.rs"]
pub mod server_resume;
#[cfg(feature = "remote")]
#[path = "../../fuzz/checks/server_resume_http.rs"]
pub mod server_resume_http;
#[path = "../../fuzz/checks/title.rs"]
pub mod title;
#[cfg(feature = "alloc")]
#[path = "../../fuzz/checks/turn_view.rs"]
pub mod turn_view;
#[cfg(feature = "std")]
#[path = "../../fuzz/checks/version.rs"]
pub mod version;
// Holds the crate's two unescapers (`fuzzing::unescape_string*`) too.
#[cfg(feature = "arbitrary")]
#[path = "../../fuzz/checks/unescape.rs"]
pub mod unescape;
