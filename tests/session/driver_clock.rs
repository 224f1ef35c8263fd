//! The runtime-neutral driver hands its session the time of the clock its
//! runtime's timer runs on (`RuntimeIo::now`): on a runtime that keeps
//! time of its own, as a simulation's or a paused one, a deadline the
//! timer says has come is acted on, whatever the system's clock says.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Buf;
use h1proto::adapter::driver::{Conn, RuntimeIo};
use h1proto::{Config, ServerSession, Session};

/// A peer that sent `input` and waits, on a clock that moves only when the
/// driver sleeps: to the deadline it sleeps until, at once.
struct Virtual {
    input: Vec<u8>,
    sent: Vec<u8>,
    clock: Instant,
}

impl RuntimeIo for Virtual {
    fn poll_read(&mut self, _: &mut Context<'_>, s: &mut dyn Session) -> Poll<io::Result<usize>> {
        if self.input.is_empty() {
            return Poll::Pending;
        }
        let n = self.input.len().min(s.read_slice().len());
        s.read_slice()[..n].copy_from_slice(&self.input[..n]);
        self.input.drain(..n);
        Poll::Ready(Ok(n))
    }

    fn poll_write(&mut self, _: &mut Context<'_>, s: &mut dyn Session) -> Poll<io::Result<usize>> {
        let out = s.output();
        self.sent.extend_from_slice(out.chunk());
        Poll::Ready(Ok(out.chunk().len()))
    }

    fn poll_shutdown_write(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_sleep_until(&mut self, _: &mut Context<'_>, at: Instant) -> Poll<()> {
        self.clock = self.clock.max(at);
        Poll::Ready(())
    }

    fn now(&self) -> Instant {
        self.clock
    }
}

/// Polls `fut` to its end: each poll either makes progress or sleeps on
/// the virtual clock, which never waits.
fn block_on<T>(fut: impl Future<Output = T>) -> T {
    let mut cx = Context::from_waker(Waker::noop());
    let mut fut = pin!(fut);
    for _ in 0..100 {
        if let Poll::Ready(value) = fut.as_mut().poll(&mut cx) {
            return value;
        }
    }
    panic!("no deadline came");
}

#[test]
fn a_timeout_comes_at_the_runtimes_time() {
    // An hour by the runtime's clock: no test waits that long for real.
    let mut config = Config::default();
    config.timeouts.head = Some(Duration::from_secs(3600));
    let start = Instant::now();
    let io = Virtual {
        input: b"GET / HTTP/1.1\r\nHo".to_vec(),
        sent: Vec::new(),
        clock: start,
    };
    // On a thread of its own: a driver that acted on the system's clock
    // would go round the expired timer for ever, inside one poll.
    let (done, outcome) = mpsc::channel();
    std::thread::spawn(move || {
        let mut conn = Conn::new(io, ServerSession::new(config, start));
        let got = block_on(conn.call(ServerSession::next_request)).map(|req| req.is_some());
        // The 408 the session queued, written as the connection closes
        // (after a linger, timed by the same clock).
        block_on(conn.call(ServerSession::close)).expect("a close");
        let _ = done.send((got, conn.into_parts().0));
    });
    let (got, io) = outcome
        .recv_timeout(Duration::from_secs(20))
        .expect("the call ends");
    // The session's error for a head that came too slowly, and its 408.
    got.expect_err("the head was cut short");
    let sent = String::from_utf8(io.sent).unwrap();
    assert!(sent.starts_with("HTTP/1.1 408 "), "{sent}");
    // The head timeout, then the linger of the close, on the runtime's
    // clock alone.
    let linger = Config::default().timeouts.linger;
    assert_eq!(io.clock, start + Duration::from_secs(3600) + linger);
}
