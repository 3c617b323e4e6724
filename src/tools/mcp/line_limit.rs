//! A stdio server's output, read with a cap on one line.
//!
//! Over stdio one JSON-RPC message is one line. The SDK drops a line longer than 16 MiB and keeps
//! the connection open, so a call answered that way would wait out its whole timeout and then
//! say the server did not answer. keel reads the server's stdout through [`LineLimited`]
//! instead: the moment a line passes [`MAX_LINE_BYTES`], it fires its [`CancellationToken`] (the
//! hub answers the waiting call at once, saying why, and stops the server) and ends the stream
//! with an error.

use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// The longest line keel reads from a stdio server, newline included: the SDK's own cap, so
/// that no line the SDK would drop in silence gets past keel.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// What a call or the server's status says when a line was too long.
pub fn too_long() -> String {
    format!(
        "it sent a message longer than {} MiB on one line, more than keel reads, so keel \
         stopped it",
        MAX_LINE_BYTES / (1024 * 1024)
    )
}

/// What a call says when its connection closed under it: over Streamable HTTP the SDK closes
/// it on a message past the same 16 MiB, and says no more.
pub fn closed_mid_call() -> String {
    format!(
        "the connection to it closed during the call (a message over {} MiB, more than keel \
         reads, closes it)",
        MAX_LINE_BYTES / (1024 * 1024)
    )
}

/// `inner`, with the length of its current line watched.
pub struct LineLimited<R> {
    inner: R,
    /// Bytes of the current line so far, its newline not yet seen.
    line: usize,
    tripped: CancellationToken,
}

impl<R> LineLimited<R> {
    /// Reads `inner`; fires `tripped` when a line is too long.
    pub fn new(inner: R, tripped: CancellationToken) -> Self {
        Self { inner, line: 0, tripped }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineLimited<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let too_long = || std::io::Error::new(std::io::ErrorKind::InvalidData, too_long());
        if self.tripped.is_cancelled() {
            return Poll::Ready(Err(too_long()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let mut line = self.line;
        for byte in &buf.filled()[before..] {
            line = if *byte == b'\n' { 0 } else { line + 1 };
            // With its newline still to come, the line is longer than the cap.
            if line >= MAX_LINE_BYTES {
                self.tripped.cancel();
                // A read that fails hands over nothing.
                buf.set_filled(before);
                return Poll::Ready(Err(too_long()));
            }
        }
        self.line = line;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn read_all(bytes: Vec<u8>) -> (std::io::Result<usize>, bool) {
        let tripped = CancellationToken::new();
        let mut reader = LineLimited::new(std::io::Cursor::new(bytes), tripped.clone());
        let mut out = Vec::new();
        (reader.read_to_end(&mut out).await, tripped.is_cancelled())
    }

    #[tokio::test]
    async fn a_line_at_the_cap_passes_and_one_byte_more_trips() {
        let mut longest = vec![b'x'; MAX_LINE_BYTES - 1];
        longest.push(b'\n');
        longest.extend_from_slice(b"next\n");
        let (read, tripped) = read_all(longest).await;
        assert_eq!(read.unwrap(), MAX_LINE_BYTES + 5);
        assert!(!tripped);
        let (read, tripped) = read_all(vec![b'x'; MAX_LINE_BYTES]).await;
        assert!(read.unwrap_err().to_string().contains("longer than 16 MiB"));
        assert!(tripped);
    }
}
