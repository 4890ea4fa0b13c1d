//! The limits of the framing and chunk layers ([`Limits`]), with their
//! documented defaults.
//!
//! Every default is part of the public API: changing one is called out in the
//! changelog. All limit arithmetic in the crate is overflow-safe, so any value
//! (including `usize::MAX`) is accepted; the limits only bound what a peer can
//! make the codec hold or do.
//!
//! Which component reads which field:
//!
//! | field | read by | when exceeded |
//! |---|---|---|
//! | [`max_line_len`](Limits::max_line_len), [`id_peek_window`](Limits::id_peek_window) | [`LineSplitter::with_limits`](crate::LineSplitter::with_limits), and the tokio-util codecs | [`FrameError::LineTooLong`](crate::FrameError::LineTooLong), once per line; the line is skipped |
//! | [`frame_len`](Limits::frame_len) | the sender, which passes it to `ChunkEncoder::new` | never: no longer line is written |
//! | [`max_result_bytes`](Limits::max_result_bytes), [`max_buffered_bytes`](Limits::max_buffered_bytes), [`max_chunks_per_transfer`](Limits::max_chunks_per_transfer), [`max_open_transfers`](Limits::max_open_transfers) | `Reassembler::with_limits` | a `ChunkError` that aborts that transfer only |
//!
//! The [crate docs](crate#limits) say why each default was chosen. The
//! layers above keep their bounds beside their state, each with its
//! documented default: the turn view in `turn::TurnLimits`, the request
//! tracker its timeout and peer-request cap (`acp::DEFAULT_TIMEOUT`,
//! `acp::DEFAULT_MAX_PEER_PENDING`), the remote transport its sizes and
//! counts (`remote::DEFAULT_*`, listed in the `remote` module docs; all
//! with feature `alloc`). `Limits` is what the splitter, the codecs and the
//! reassembler are built with, the one place a reader sets them.
//!
//! ```
//! use acp_codec::limits::{Limits, DEFAULT_MAX_LINE_LEN};
//! use acp_codec::LineSplitter;
//!
//! // A reader on a small board: 1 MiB lines, everything else as default.
//! const LIMITS: Limits = Limits::new().with_max_line_len(1 << 20);
//! let splitter = LineSplitter::with_limits(&LIMITS);
//! assert_eq!(splitter.max_line_len(), 1 << 20);
//! assert_eq!(Limits::default().max_line_len, DEFAULT_MAX_LINE_LEN);
//! ```

/// Default longest line, in bytes, excluding the terminating `\n`: 64 MiB.
///
/// What the peers accept: the official TypeScript SDK takes 32 MiB,
/// Codex, Qwen Code and the protocol's conformance kit 64 MiB, and agents
/// answer a resumed session with lines of tens of megabytes. A peer can
/// never make a reader hold more than this plus one read.
pub const DEFAULT_MAX_LINE_LEN: usize = 64 * 1024 * 1024;

/// How many bytes at the start of an oversized line are searched for its
/// JSON-RPC `"id"`: 4 KiB.
pub const DEFAULT_ID_PEEK_WINDOW: usize = 4 * 1024;

/// Default longest line of the chunked tool-result protocol, in bytes,
/// excluding the `\n`: 32 KiB = 32,768 bytes, half of the 64 KiB line
/// limit of asyncio's default stream reader.
pub const DEFAULT_FRAME_LEN: usize = 32 * 1024;

/// Default largest reassembled tool result, in bytes of decoded output:
/// 50 MiB = 52,428,800 bytes.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 50 * 1024 * 1024;

/// Default budget for the output of all open transfers buffered at once:
/// 50 MiB, shared by every open transfer (the chunk reassembler's; the
/// remote transport's per-connection output limit is
/// `remote::DEFAULT_MAX_BACKLOG_BYTES`).
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 50 * 1024 * 1024;

/// Default most chunks in one transfer: 65,536 (50 MiB in chunks of 800
/// bytes on average; the encoder's chunks carry at least 5 KiB each).
pub const DEFAULT_MAX_CHUNKS_PER_TRANSFER: u64 = 65_536;

/// Default most transfers open at once: 32.
pub const DEFAULT_MAX_OPEN_TRANSFERS: usize = 32;

/// The limits of every layer, in one value.
///
/// `#[non_exhaustive]`: build it from [`Limits::default`] (or
/// [`Limits::new`], the same in `const` contexts) and the `with_*` setters,
/// so new limits can be added without breaking callers.
///
/// ```
/// use acp_codec::Limits;
///
/// let limits = Limits::default().with_max_line_len(1 << 20);
/// assert_eq!(limits.max_line_len, 1 << 20);
/// assert_eq!(limits.frame_len, acp_codec::limits::DEFAULT_FRAME_LEN);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// Longest line in bytes, excluding the `\n` (a `\r` before it counts).
    /// Default [`DEFAULT_MAX_LINE_LEN`].
    pub max_line_len: usize,
    /// Bytes at the start of an oversized line searched for its `"id"`.
    /// Default [`DEFAULT_ID_PEEK_WINDOW`].
    pub id_peek_window: usize,
    /// Longest line the chunk encoder emits, excluding the `\n`.
    /// Default [`DEFAULT_FRAME_LEN`].
    pub frame_len: usize,
    /// Largest reassembled tool result. Default [`DEFAULT_MAX_RESULT_BYTES`].
    pub max_result_bytes: usize,
    /// Budget shared by all open transfers. Default
    /// [`DEFAULT_MAX_BUFFERED_BYTES`].
    pub max_buffered_bytes: usize,
    /// Most chunks in one transfer. Default
    /// [`DEFAULT_MAX_CHUNKS_PER_TRANSFER`].
    pub max_chunks_per_transfer: u64,
    /// Most transfers open at once. Default [`DEFAULT_MAX_OPEN_TRANSFERS`].
    pub max_open_transfers: usize,
}

impl Limits {
    /// The default limits, usable in `const` contexts.
    pub const fn new() -> Self {
        Self {
            max_line_len: DEFAULT_MAX_LINE_LEN,
            id_peek_window: DEFAULT_ID_PEEK_WINDOW,
            frame_len: DEFAULT_FRAME_LEN,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            max_buffered_bytes: DEFAULT_MAX_BUFFERED_BYTES,
            max_chunks_per_transfer: DEFAULT_MAX_CHUNKS_PER_TRANSFER,
            max_open_transfers: DEFAULT_MAX_OPEN_TRANSFERS,
        }
    }

    /// Sets [`Limits::max_line_len`].
    #[must_use]
    pub const fn with_max_line_len(mut self, bytes: usize) -> Self {
        self.max_line_len = bytes;
        self
    }

    /// Sets [`Limits::id_peek_window`].
    #[must_use]
    pub const fn with_id_peek_window(mut self, bytes: usize) -> Self {
        self.id_peek_window = bytes;
        self
    }

    /// Sets [`Limits::frame_len`].
    #[must_use]
    pub const fn with_frame_len(mut self, bytes: usize) -> Self {
        self.frame_len = bytes;
        self
    }

    /// Sets [`Limits::max_result_bytes`].
    #[must_use]
    pub const fn with_max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// Sets [`Limits::max_buffered_bytes`].
    #[must_use]
    pub const fn with_max_buffered_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_bytes = bytes;
        self
    }

    /// Sets [`Limits::max_chunks_per_transfer`].
    #[must_use]
    pub const fn with_max_chunks_per_transfer(mut self, chunks: u64) -> Self {
        self.max_chunks_per_transfer = chunks;
        self
    }

    /// Sets [`Limits::max_open_transfers`].
    #[must_use]
    pub const fn with_max_open_transfers(mut self, transfers: usize) -> Self {
        self.max_open_transfers = transfers;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::new()
    }
}
