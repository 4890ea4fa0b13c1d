//! Lines in and out: any `AsyncRead` read with tokio-util's `FramedRead` and
//! the crate's own [`LineCodec`] (limits, recovery after a bad line), and a
//! writer task that sends encoded lines in order.
//!
//! This is the whole transport of the examples: a pair of "next line" /
//! "send line" halves, so the protocol logic above it does not care whether
//! the bytes come from a child's stdio, an in-process pipe or a WebSocket.

use std::io;

use acp_codec::codec::LineCodec;
use acp_codec::FrameError;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

/// A source of incoming lines: a byte stream split by a [`LineReader`], or a
/// message-based transport (one WebSocket message is one line).
pub trait LineSource {
    /// The next line, an error item for a bad line (the stream goes on), or
    /// `None` at the end of input.
    fn next_line(
        &mut self,
    ) -> impl std::future::Future<Output = io::Result<Option<Result<String, FrameError>>>>;

    /// The protocol version of the agent when this source translates its
    /// lines into v1 ([`dialect`](crate::dialect)), once known; `None`
    /// when nothing is translated.
    fn translated_version(&self) -> Option<u16> {
        None
    }
}

/// `source` as a stream of items (a line, or a line refused), ending at
/// the end of input or after an error.
pub fn stream<S: LineSource>(
    source: S,
) -> impl futures_util::Stream<Item = io::Result<Result<String, FrameError>>> {
    futures_util::stream::unfold(Some(source), |source| async move {
        let mut source = source?;
        match source.next_line().await {
            Ok(Some(item)) => Some((Ok(item), Some(source))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    })
}

/// A byte stream split into lines by the crate's [`LineCodec`]: its limits
/// (an oversized line is reported once, its bytes dropped, never buffered
/// whole), recovery after a bad line. Cancel-safe: a `select!` branch that
/// loses drops no bytes (they stay in the `FramedRead`'s buffer).
pub type LineReader<R> = FramedRead<R, LineCodec>;

impl<R: AsyncRead + Unpin> LineSource for LineReader<R> {
    async fn next_line(&mut self) -> io::Result<Option<Result<String, FrameError>>> {
        Ok(match self.next().await.transpose()? {
            // The codec hands out valid UTF-8 only: nothing is replaced.
            Some(Ok(line)) => Some(Ok(String::from_utf8_lossy(&line).into_owned())),
            Some(Err(e)) => Some(Err(e)),
            None => None,
        })
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
