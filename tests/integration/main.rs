//! The codec's integration tests, through its public API: one test binary
//! (one link, and one instantiation of the crate's generic decoders, where
//! a binary per file built them some thirty times over). Each module is
//! one suite; a suite that needs a feature says so in its first line
//! (`#![cfg(feature = ...)]`). Run one suite with its module name as the
//! filter: `cargo test --all-features --test integration acp_oracle::`.
//!
//! Allocations are counted per thread by the `allocation-counter`
//! dev-dependency's global allocator, so the suites that count them run
//! beside the others.

// Helpers shared by several suites.
/// The fuzz targets' checks, loaded once each.
#[allow(dead_code)]
mod checks;

mod acp_alloc;
mod acp_client_side;
mod acp_decode_line;
mod acp_lossless;
mod acp_messages;
mod acp_oracle;
mod acp_proptest;
mod acp_schema;
mod acp_sessions;
#[cfg(feature = "std")]
#[path = "../acp_support/mod.rs"]
mod acp_support;
mod acp_tag_layouts;
mod acp_tracker;
mod acp_translate;
mod acp_translate_v2;
mod acp_unstable;
mod acp_v2;
mod acp_version;
mod alloc_framing;
mod arbitrary_round_trip;
mod chunk;
mod chunk_alloc;
mod codec;
mod examples;
mod framing;
mod fuzz_corpus;
#[cfg(feature = "remote")]
mod remote_agent_line;
#[cfg(feature = "remote")]
mod remote_limits;
#[cfg(feature = "remote")]
mod remote_rejoin;
#[cfg(feature = "remote")]
mod remote_resume;
#[cfg(feature = "remote")]
mod remote_router;
#[cfg(feature = "remote")]
mod remote_server;
#[cfg(feature = "remote")]
mod remote_stats;
#[cfg(feature = "remote")]
mod remote_transport;
#[cfg(feature = "remote")]
mod remote_users;
mod schema_check;
mod seed000;
mod title;
mod title_alloc;
mod title_props;
mod turn;
mod turn_alloc;
mod turn_props;
#[cfg(feature = "std")]
#[path = "../turn_support/mod.rs"]
mod turn_support;
#[cfg(feature = "std")]
#[path = "../support/update_lines.rs"]
mod update_lines;
