//! A step-by-step harness for the session scenario tests.
//!
//! [`Harness`] runs one [`Session`] against a peer the test plays by hand:
//! the test puts bytes in the session's inbox ([`Harness::send`]), ends
//! the peer's side ([`Harness::send_eof`]), limits what the peer takes
//! ([`Harness::write_budget`], a peer that stops reading) and moves a
//! virtual clock. [`Harness::call`] makes a session call and does the I/O
//! it asks for in memory until the call is ready, fails, or needs I/O the
//! peer cannot give yet (then it returns [`Outcome::Blocked`] and the test
//! decides what happens next: more bytes, or time). Nothing sleeps.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::IoSlice;
use std::time::{Duration, Instant};

use h1proto::{Config, Io, Session, SessionError, Step, Timeouts};

/// One nanosecond: "just before" a deadline.
pub const TICK: Duration = Duration::from_nanos(1);

/// Timeouts that differ from each other, so that a test can tell which
/// one fired, with buffer release earlier than all of them.
pub fn test_config() -> Config {
    let mut timeouts = Timeouts::new();
    timeouts.head = Some(Duration::from_secs(10));
    timeouts.idle = Some(Duration::from_secs(30));
    timeouts.body = Some(Duration::from_secs(15));
    timeouts.write = Some(Duration::from_secs(12));
    timeouts.linger = Duration::from_secs(2);
    let mut config = Config::default();
    config.timeouts = timeouts;
    config.release_after = Duration::from_secs(1);
    config
}

/// What a session call came to.
#[derive(Debug)]
pub enum Outcome<V> {
    /// The call is complete.
    Ready(V),
    /// The call failed.
    Err(SessionError),
    /// The session needs this I/O and the peer cannot give it yet.
    Blocked(Io),
}

impl<V: std::fmt::Debug> Outcome<V> {
    /// The value of a complete call.
    #[track_caller]
    pub fn ready(self) -> V {
        match self {
            Outcome::Ready(v) => v,
            other => panic!("expected Ready, got {other:?}"),
        }
    }

    /// The error of a failed call.
    #[track_caller]
    pub fn err(self) -> SessionError {
        match self {
            Outcome::Err(e) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    /// The I/O a blocked call waits for.
    #[track_caller]
    pub fn blocked(self) -> Io {
        match self {
            Outcome::Blocked(io) => io,
            other => panic!("expected Blocked, got {other:?}"),
        }
    }
}

/// A session, its peer and a virtual clock.
pub struct Harness<S> {
    /// The session under test.
    pub s: S,
    /// When the connection was made.
    pub t0: Instant,
    /// The virtual time.
    pub now: Instant,
    /// Bytes the peer sent that the session has not read.
    pub inbox: VecDeque<u8>,
    /// The peer shut down its sending half.
    pub peer_eof: bool,
    /// Every byte the session wrote.
    pub wire: Vec<u8>,
    /// How many more bytes the peer takes (`None`: any number).
    pub write_budget: Option<usize>,
    /// Most bytes one read returns.
    pub read_size: usize,
    /// Most bytes one write takes.
    pub write_size: usize,
    /// The session shut down its sending half (`Io::Shutdown`), and when.
    pub shut: Option<Instant>,
    /// The session closed the socket (`Io::Close`), and when.
    pub closed: Option<Instant>,
    /// Bytes the session read.
    pub bytes_read: usize,
    /// Which reads go through `read_slice` rather than `read_buf`: read
    /// `k` does when bit `k % 64` is set (0: every read uses `read_buf`).
    pub room_reads: u64,
    /// Reads made so far.
    pub reads: u64,
}

impl<S: Session> Harness<S> {
    /// A harness around `session`, made at `t0`.
    pub fn new(s: S, t0: Instant) -> Self {
        Harness {
            s,
            t0,
            now: t0,
            inbox: VecDeque::new(),
            peer_eof: false,
            wire: Vec::new(),
            write_budget: None,
            read_size: usize::MAX,
            write_size: usize::MAX,
            shut: None,
            closed: None,
            bytes_read: 0,
            room_reads: 0,
            reads: 0,
        }
    }

    /// The peer sends `bytes`.
    pub fn send(&mut self, bytes: impl AsRef<[u8]>) {
        self.inbox.extend(bytes.as_ref());
    }

    /// The peer shuts down its sending half.
    pub fn send_eof(&mut self) {
        self.peer_eof = true;
    }

    /// The wire so far, as text, and empties it.
    pub fn take_wire(&mut self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut self.wire)).into_owned()
    }

    /// The virtual time elapsed since the connection was made.
    pub fn elapsed(&self) -> Duration {
        self.now - self.t0
    }

    /// Makes a session call, doing the I/O it asks for while the peer can
    /// give it.
    pub fn call<V>(
        &mut self,
        mut f: impl FnMut(&mut S, Instant) -> Result<Step<V>, SessionError>,
    ) -> Outcome<V> {
        for _ in 0..1_000_000 {
            match f(&mut self.s, self.now) {
                Err(e) => return Outcome::Err(e),
                Ok(Step::Ready(v)) => return Outcome::Ready(v),
                Ok(Step::Io(io)) => {
                    if !self.perform(io) {
                        return Outcome::Blocked(io);
                    }
                }
            }
        }
        panic!("a session call asked for I/O a million times");
    }

    /// Does `io` if the peer allows it now; `false` if it would block.
    pub fn perform(&mut self, io: Io) -> bool {
        assert!(self.closed.is_none(), "{io:?} asked for after Io::Close");
        match io {
            Io::Read => {
                if !self.inbox.is_empty() {
                    let mut n = self.read_size.min(self.inbox.len());
                    if self.room_reads >> (self.reads % 64) & 1 == 1 {
                        // As `std::io::Read` does: into initialized room.
                        let room = self.s.read_slice();
                        n = n.min(room.len());
                        for (at, byte) in self.inbox.drain(..n).enumerate() {
                            room[at] = byte;
                        }
                    } else {
                        let bytes: Vec<u8> = self.inbox.drain(..n).collect();
                        self.s.read_buf().extend_from_slice(&bytes);
                    }
                    self.reads += 1;
                    self.bytes_read += n;
                    self.s.handle_read(n, self.now);
                    true
                } else if self.peer_eof {
                    self.s.handle_read(0, self.now);
                    true
                } else {
                    false
                }
            }
            Io::Write => {
                assert!(self.shut.is_none(), "a write after Io::Shutdown");
                let budget = self.write_budget.unwrap_or(usize::MAX);
                let out = self.s.output();
                assert!(!out.is_empty(), "Io::Write with nothing to write");
                let want = budget.min(self.write_size).min(out.len());
                if want == 0 {
                    return false;
                }
                let mut slices = [IoSlice::new(&[]); 64];
                let k = out.io_slices(&mut slices);
                let mut n = 0;
                for slice in &slices[..k] {
                    let take = slice.len().min(want - n);
                    self.wire.extend_from_slice(&slice[..take]);
                    n += take;
                    if n == want {
                        break;
                    }
                }
                if let Some(b) = &mut self.write_budget {
                    *b -= n;
                }
                self.s.handle_write(n, self.now);
                true
            }
            Io::Shutdown => {
                self.shut = Some(self.now);
                true
            }
            Io::Close => {
                self.closed = Some(self.now);
                true
            }
            _ => unreachable!("an Io this harness does not know"),
        }
    }

    /// Moves the clock to `t` and tells the session.
    pub fn advance_to(&mut self, t: Instant) {
        assert!(t >= self.now, "the clock goes forward");
        self.now = t;
        self.s.handle_timeout(t);
    }

    /// The deadline the session announces, as time since the connection
    /// was made.
    pub fn deadline(&self) -> Option<Duration> {
        self.s.poll_timeout().map(|at| at - self.t0)
    }

    /// Lets the session's deadline pass: just before it nothing happens
    /// (the same deadline is still announced), at it the session acts (it
    /// announces another one, or none). Returns the deadline, as time
    /// since the connection was made.
    #[track_caller]
    pub fn expire(&mut self) -> Duration {
        let at = self.s.poll_timeout().expect("a deadline");
        assert!(at >= self.now, "a deadline in the past");
        if at > self.now {
            self.advance_to(at - TICK);
            assert_eq!(
                self.s.poll_timeout(),
                Some(at),
                "nothing fires before the deadline"
            );
        }
        self.advance_to(at);
        assert_ne!(self.s.poll_timeout(), Some(at), "the deadline fired");
        at - self.t0
    }
}

/// A whole request with a `Content-Length` body.
pub fn post(path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A `GET` without a body.
pub fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: a\r\n\r\n")
}

/// Seconds.
pub fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}
