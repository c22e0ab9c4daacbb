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

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::io::Read;

    use super::*;

    /// A connection's send buffer is [`SEND_BUFFER`] as the socket reports
    /// it: Linux caps a request at `net.core.wmem_max` and doubles it (for
    /// its bookkeeping). Left alone, it would be the default the kernel
    /// then tunes up to megabytes.
    #[test]
    fn the_send_buffer_is_limited_to_256_kib() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        limit_send_buffer(&stream);
        let mut bytes: libc::c_int = 0;
        let mut len = size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes to the `c_int`.
        let got = unsafe {
            libc::getsockopt(
                std::os::fd::AsRawFd::as_raw_fd(&stream),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                (&raw mut bytes).cast(),
                &mut len,
            )
        };
        assert_eq!(got, 0, "{}", io::Error::last_os_error());
        let max: libc::c_int = std::fs::read_to_string("/proc/sys/net/core/wmem_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(bytes, 2 * (256 << 10).min(max));
    }

    /// What is written through a [`WriteStall`] and then shut down reaches
    /// the client whole, followed by the end of the stream, while the
    /// server still holds the connection.
    #[test]
    fn a_shutdown_reaches_the_client_as_the_end_of_the_stream() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let _held = rt.block_on(async {
            let mut w = WriteStall::new(listener.accept().await.unwrap().0);
            let sent = poll_fn(|cx| Pin::new(&mut w).poll_write(cx, b"answer")).await;
            assert_eq!(sent.unwrap(), 6);
            poll_fn(|cx| Pin::new(&mut w).poll_flush(cx)).await.unwrap();
            poll_fn(|cx| Pin::new(&mut w).poll_shutdown(cx))
                .await
                .unwrap();
            w
        });
        client
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut got = Vec::new();
        client.read_to_end(&mut got).expect("the end of the stream");
        assert_eq!(got, b"answer");
    }
}
