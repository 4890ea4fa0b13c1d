//! What an ACP client needs beside the messages, sans-IO.
//!
//! - [`quirks`]: what a client answers differently to a known agent (keyed
//!   by the `agentInfo` of its `initialize` result), such as the answer to
//!   a read of a missing file that lets Gemini CLI create files;
//! - [`terminal::TerminalOutput`]: the bounded output of a command run for
//!   `terminal/*`, and the answer to `terminal/output`.

pub mod quirks;
pub mod terminal;
