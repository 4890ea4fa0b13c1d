//! An async line reader over any `AsyncRead`, framed by the crate's
//! [`LineSplitter`] (limits, recovery after a bad line), and a writer task
//! that sends encoded lines in order.
//!
//! This is the whole transport of the examples: a pair of "next line" /
//! "send line" halves, so the protocol logic above it does not care whether
//! the bytes come from a child's stdio, an in-process pipe or a WebSocket.
#![allow(dead_code)]

use std::io;

use acp_codec::{FrameError, Limits, LineSplitter};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Bytes asked for per read.
const READ_SIZE: usize = 64 * 1024;

/// A source of incoming lines: a byte stream split by [`LineReader`], or a
/// message-based transport (one WebSocket message is one line).
pub trait LineSource {
    /// The next line, an error item for a bad line (the stream goes on), or
    /// `None` at the end of input.
    fn next_line(
        &mut self,
    ) -> impl std::future::Future<Output = io::Result<Option<Result<String, FrameError>>>>;
}

impl<R: AsyncRead + Unpin> LineSource for LineReader<R> {
    async fn next_line(&mut self) -> io::Result<Option<Result<String, FrameError>>> {
        LineReader::next_line(self).await
    }
}

/// Reads `\n`-delimited lines with the crate's limits.
///
/// The buffer never holds more than `max_line_len` plus one read: the
/// splitter reports an oversized line once and drops its bytes.
pub struct LineReader<R> {
    inner: R,
    splitter: LineSplitter,
    buf: Vec<u8>,
    /// Bytes at the front of `buf` already consumed by the splitter.
    start: usize,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader with the default limits.
    pub fn new(inner: R) -> Self {
        Self::with_limits(inner, &Limits::default())
    }

    /// A reader with the given limits.
    pub fn with_limits(inner: R, limits: &Limits) -> Self {
        Self {
            inner,
            splitter: LineSplitter::with_limits(limits),
            buf: Vec::new(),
            start: 0,
            eof: false,
        }
    }

    /// The next line (owned), an error item for a bad line (the stream goes
    /// on), or `None` at the end of input. Cancel-safe: dropping the
    /// future loses no bytes.
    ///
    /// # Errors
    ///
    /// Only I/O errors of the underlying reader.
    pub async fn next_line(&mut self) -> io::Result<Option<Result<String, FrameError>>> {
        loop {
            let rest = self.buf.get(self.start..).unwrap_or_default();
            let decoded = if self.eof {
                self.splitter.decode_eof(rest)
            } else {
                self.splitter.decode(rest)
            };
            self.start += decoded.consumed;
            match decoded.item {
                Some(Ok(line)) => return Ok(Some(Ok(line.as_str().to_owned()))),
                Some(Err(e)) => return Ok(Some(Err(e))),
                None if self.eof => return Ok(None),
                None => {}
            }
            self.buf.drain(..self.start);
            self.start = 0;
            // `read_buf` appends only what was read, so dropping this
            // future mid-read (a `select!` branch losing) loses nothing.
            self.buf.reserve(READ_SIZE);
            let n = self.inner.read_buf(&mut self.buf).await?;
            self.eof = n == 0;
        }
    }
}

/// The sending half: encoded lines (each ending in `\n`) go through a
/// bounded channel to a task that writes and flushes them in order.
#[derive(Clone)]
pub struct LineSender {
    tx: mpsc::Sender<Vec<u8>>,
}

impl LineSender {
    /// A sender and the receiving end of its queue, for a transport that
    /// writes lines its own way (one WebSocket message a line, say).
    pub fn channel() -> (Self, mpsc::Receiver<Vec<u8>>) {
        let (tx, rx) = mpsc::channel::<Vec<u8>>(256);
        (Self { tx }, rx)
    }

    /// Spawns the writer task over `writer`.
    pub fn spawn<W: AsyncWrite + Unpin + Send + 'static>(mut writer: W) -> Self {
        let (this, mut rx) = Self::channel();
        tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if writer.write_all(&line).await.is_err() {
                    break;
                }
                // Flush per batch: drain what is queued, then flush once.
                while let Ok(more) = rx.try_recv() {
                    if writer.write_all(&more).await.is_err() {
                        return;
                    }
                }
                if writer.flush().await.is_err() {
                    break;
                }
            }
            let _ = writer.shutdown().await;
        });
        this
    }

    /// Queues one encoded line.
    ///
    /// # Errors
    ///
    /// `BrokenPipe` when the writer task has stopped (the peer is gone).
    pub async fn send(&self, line: Vec<u8>) -> io::Result<()> {
        self.tx
            .send(line)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "peer closed its input"))
    }
}
