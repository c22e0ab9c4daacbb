//! A connection whose client stops taking its answer is closed: hyper
//! waits for ever on a socket whose send buffer is full, holding the
//! answer (up to megabytes for a batch) in memory. [`WriteStall`] wraps a
//! connection's stream and fails a write that has made no progress for
//! [`WRITE_STALL`]; hyper then drops the connection and the answer.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Longest time a client may leave the server's writes waiting (taking no
/// byte of its answer), after which its connection is closed.
pub const WRITE_STALL: Duration = Duration::from_secs(10);

/// Bytes of a connection's send buffer. Linux wakes a waiting writer once
/// about a third of the buffer has drained: with the buffer it tunes by
/// itself (up to 4 MB), a client taking its answer at a steady 100 KB/s
/// left the writes waiting past [`WRITE_STALL`] and was cut off. With
/// 256 KiB (which the kernel doubles) a writer is woken after about
/// 170 KB, so a client taking 20 KB/s or more is never cut off.
const SEND_BUFFER: libc::c_int = 256 << 10;

/// Sets `stream`'s send buffer to [`SEND_BUFFER`]; a hint, fine if refused.
pub fn limit_send_buffer(stream: &impl std::os::fd::AsRawFd) {
    let bytes = SEND_BUFFER;
    // SAFETY: setsockopt reads the `c_int` it is pointed at, nothing else.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&raw const bytes).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// A stream whose writes fail once they have waited [`WRITE_STALL`]
/// without progress; reads pass through (hyper times those itself).
pub struct WriteStall<S> {
    inner: S,
    /// Armed while a write waits: when it fails.
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteStall<S> {
    /// `inner`, its writes timed.
    pub fn new(inner: S) -> WriteStall<S> {
        WriteStall {
            inner,
            deadline: None,
        }
    }

    /// What a write's poll says, with the stall timed: progress disarms the
    /// deadline, waiting arms it (once) and fails when it passes.
    fn timed<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.deadline = None;
            return poll;
        }
        let deadline = self.deadline.get_or_insert_with(|| {
            Box::pin(tokio::time::sleep_until(Instant::now() + WRITE_STALL))
        });
        ready!(deadline.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took none of its answer for 10 s",
        )))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteStall<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteStall<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.timed(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.timed(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.timed(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.timed(cx, poll)
    }
}
