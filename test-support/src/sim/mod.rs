//! A deterministic simulator for sessions: in-memory sockets, a virtual
//! clock, and a third driver with a model of the timeout table.
//!
//! - **Sockets.** A connection is two pipes of bounded capacity. A read
//!   takes at most the next read size of its side (and `Config::read_size`),
//!   a write at most the next write size and what the pipe has room for
//!   (partial writes), optionally after a pause (a slow link). Shutting
//!   down the sending half is a FIN; closing with unread input, or being
//!   written to after closing, resets the peer, whose unread input is lost
//!   (what the lingering close is there to prevent).
//! - **Tasks.** The client and each server connection are `async` code
//!   run by a single-threaded executor with a no-op waker: every task is
//!   polled each round, in a fixed order, so a run depends only on its plan.
//! - **Time.** Nothing sleeps. When no task can move, the clock jumps to the
//!   earliest time anything waits for (a session deadline or an application
//!   delay): first to one nanosecond before it, where nothing may happen,
//!   then to it.
//! - **The driver** ([`Endpoint::drive`]) does the I/O a session asks for.
//!   Each time it waits, it checks that the deadline the session announces
//!   is the one the table on `Timeouts` gives for what the session waits
//!   for ([`Model`]), that `handle_timeout` before it changes nothing and at
//!   it acts, and that the buffers stay within their bounds.
#![allow(dead_code)]

pub mod exchange;
pub mod plan;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::{Future, poll_fn};
use std::io::IoSlice;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use h1proto::conn::State;
use h1proto::{ClientSession, Config, Io, ServerSession, Session, SessionError, Step, Timeouts};

/// Prints what a run does, with `SIM_TRACE=1`.
pub fn trace(sim: &Sim, what: std::fmt::Arguments<'_>) {
    // Read once: the fuzz target runs millions of plans.
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("SIM_TRACE").is_some()) {
        eprintln!("{:>12.6?} {what}", sim.elapsed());
    }
}

/// Bytes as a traced string, formatted only when traced: the arguments of
/// [`trace`] are built on every step even when tracing is off.
struct Lossy<'a>(&'a [u8]);

impl fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.0))
    }
}

/// One nanosecond: "just before" a deadline.
pub const TICK: Duration = Duration::from_nanos(1);

/// The longest a run may take on the virtual clock.
const HORIZON: Duration = Duration::from_secs(24 * 3600);

/// Which end of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The end that connects.
    Client,
    /// The end that accepts.
    Server,
}

// ------------------------------------------------------------ sockets

#[derive(Debug)]
struct Pipe {
    data: VecDeque<u8>,
    cap: usize,
    /// The writer sent FIN (shut down or closed).
    fin: bool,
    /// The reader closed its socket.
    reader_gone: bool,
    /// The reader was reset: its unread data is gone, reads fail.
    reset: bool,
    /// Bytes ever written into it.
    total: u64,
}

impl Pipe {
    fn new(cap: usize) -> Self {
        Pipe {
            data: VecDeque::new(),
            cap,
            fin: false,
            reader_gone: false,
            reset: false,
            total: 0,
        }
    }
}

#[derive(Debug)]
struct Conn {
    /// Client to server, server to client.
    pipes: [Pipe; 2],
    closed: [bool; 2],
}

impl Conn {
    fn incoming(&mut self, side: Side) -> &mut Pipe {
        match side {
            Side::Client => &mut self.pipes[1],
            Side::Server => &mut self.pipes[0],
        }
    }

    fn outgoing(&mut self, side: Side) -> &mut Pipe {
        match side {
            Side::Client => &mut self.pipes[0],
            Side::Server => &mut self.pipes[1],
        }
    }
}

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// Everything the tasks share.
pub struct World {
    /// When the run began.
    pub t0: Instant,
    /// The virtual time.
    pub now: Instant,
    conns: Vec<Conn>,
    progress: bool,
    wakeups: Vec<Instant>,
    spawned: Vec<Task>,
}

/// A handle on the world.
#[derive(Clone)]
pub struct Sim(Rc<RefCell<World>>);

/// What a read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// Bytes.
    Data(Vec<u8>),
    /// The peer sent FIN and everything before it was read.
    Eof,
    /// The connection was reset.
    Reset,
    /// Nothing yet.
    WouldBlock,
}

/// What a write did.
#[derive(Debug, PartialEq, Eq)]
pub enum Write {
    /// This many bytes went into the pipe.
    Wrote(usize),
    /// The connection was reset or the peer is gone.
    Broken,
    /// The pipe is full.
    WouldBlock,
}

impl Sim {
    /// A world whose clock starts now.
    pub fn new() -> Self {
        let t0 = Instant::now();
        Sim(Rc::new(RefCell::new(World {
            t0,
            now: t0,
            conns: Vec::new(),
            progress: false,
            wakeups: Vec::new(),
            spawned: Vec::new(),
        })))
    }

    /// The virtual time.
    pub fn now(&self) -> Instant {
        self.0.borrow().now
    }

    /// The virtual time since the run began.
    pub fn elapsed(&self) -> Duration {
        let w = self.0.borrow();
        w.now - w.t0
    }

    /// A new connection whose client-to-server pipe holds `c2s` bytes and
    /// server-to-client pipe `s2c`; returns the client's and the server's
    /// sockets.
    pub fn connect(&self, c2s: usize, s2c: usize) -> (Socket, Socket) {
        let mut w = self.0.borrow_mut();
        w.conns.push(Conn {
            pipes: [Pipe::new(c2s), Pipe::new(s2c)],
            closed: [false; 2],
        });
        let id = w.conns.len() - 1;
        w.progress = true;
        let socket = |side| Socket {
            sim: self.clone(),
            id,
            side,
        };
        (socket(Side::Client), socket(Side::Server))
    }

    /// Runs `task` alongside the others.
    pub fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        self.0.borrow_mut().spawned.push(Box::pin(task));
    }

    fn progressed(&self) {
        self.0.borrow_mut().progress = true;
    }

    fn wake_at(&self, at: Instant) {
        self.0.borrow_mut().wakeups.push(at);
    }

    /// Runs `main` and everything it spawns until all are done.
    pub fn run(&self, main: impl Future<Output = ()> + 'static) {
        let mut tasks: Vec<Task> = vec![Box::pin(main)];
        let mut cx = Context::from_waker(Waker::noop());
        let mut poll_all = |tasks: &mut Vec<Task>| {
            {
                let mut w = self.0.borrow_mut();
                w.progress = false;
                w.wakeups.clear();
            }
            tasks.retain_mut(|t| t.as_mut().poll(&mut cx).is_pending());
            let mut w = self.0.borrow_mut();
            let spawned = std::mem::take(&mut w.spawned);
            if !spawned.is_empty() {
                w.progress = true;
            }
            tasks.extend(spawned);
            w.progress
        };
        loop {
            let progressed = poll_all(&mut tasks);
            if tasks.is_empty() {
                return;
            }
            if progressed {
                continue;
            }
            let (now, next) = {
                let w = self.0.borrow();
                (w.now, w.wakeups.iter().min().copied())
            };
            let next = next.unwrap_or_else(|| {
                panic!(
                    "stuck at {:?}: every task waits and nothing has a deadline",
                    self.elapsed()
                )
            });
            assert!(
                next > now,
                "a wake-up at {next:?} was not acted on at {now:?}"
            );
            if next - TICK > now {
                self.0.borrow_mut().now = next - TICK;
                assert!(
                    !poll_all(&mut tasks),
                    "something happened just before {:?}",
                    next - self.0.borrow().t0
                );
            }
            let mut w = self.0.borrow_mut();
            w.now = next;
            assert!(w.now - w.t0 < HORIZON, "the run does not end");
        }
    }

    /// Waits for `d` on the virtual clock.
    pub async fn sleep(&self, d: Duration) {
        let until = self.now() + d;
        poll_fn(|_| {
            if self.now() >= until {
                self.progressed();
                Poll::Ready(())
            } else {
                self.wake_at(until);
                Poll::Pending
            }
        })
        .await;
    }
}

impl Default for Sim {
    fn default() -> Self {
        Sim::new()
    }
}

/// One end of a connection.
#[derive(Clone)]
pub struct Socket {
    sim: Sim,
    id: usize,
    side: Side,
}

impl Socket {
    /// The world.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    fn with<R>(&self, f: impl FnOnce(&mut Conn, Side) -> R) -> R {
        let mut w = self.sim.0.borrow_mut();
        f(&mut w.conns[self.id], self.side)
    }

    /// Reads at most `max` bytes.
    pub fn try_read(&self, max: usize) -> Read {
        let r = self.with(|c, side| {
            let pipe = c.incoming(side);
            if pipe.reset {
                Read::Reset
            } else if !pipe.data.is_empty() {
                let n = max.min(pipe.data.len());
                let (front, back) = pipe.data.as_slices();
                let mut bytes = Vec::with_capacity(n);
                bytes.extend_from_slice(&front[..n.min(front.len())]);
                bytes.extend_from_slice(&back[..n - bytes.len()]);
                pipe.data.drain(..n);
                Read::Data(bytes)
            } else if pipe.fin {
                Read::Eof
            } else {
                Read::WouldBlock
            }
        });
        if r != Read::WouldBlock {
            self.sim.progressed();
        }
        r
    }

    /// Writes at most `max` bytes of `bytes`.
    pub fn try_write(&self, bytes: &[u8], max: usize) -> Write {
        let r = self.with(|c, side| {
            assert!(!c.outgoing(side).fin, "a write after shutting down");
            if c.incoming(side).reset {
                return Write::Broken;
            }
            let out = c.outgoing(side);
            if out.reader_gone {
                // The peer answers with a reset: what it sent and this
                // side has not read is gone.
                let inc = c.incoming(side);
                inc.reset = true;
                inc.data.clear();
                return Write::Broken;
            }
            let n = max.min(bytes.len()).min(out.cap - out.data.len());
            if n == 0 {
                return Write::WouldBlock;
            }
            out.data.extend(&bytes[..n]);
            out.total += n as u64;
            Write::Wrote(n)
        });
        if r != Write::WouldBlock {
            self.sim.progressed();
        }
        r
    }

    /// Shuts down the sending half (FIN).
    pub fn shutdown_write(&self) {
        self.with(|c, side| c.outgoing(side).fin = true);
        self.sim.progressed();
    }

    /// Closes the socket. Unread input makes it a reset for the peer.
    pub fn close(&self) {
        self.with(|c, side| {
            let idx = side as usize;
            if c.closed[idx] {
                return;
            }
            c.closed[idx] = true;
            let unread = !c.incoming(side).data.is_empty();
            let inc = c.incoming(side);
            inc.reader_gone = true;
            inc.data.clear();
            let out = c.outgoing(side);
            out.fin = true;
            if unread {
                out.reset = true;
                out.data.clear();
            }
        });
        self.sim.progressed();
    }

    /// `true` once this end has closed.
    pub fn is_closed(&self) -> bool {
        self.with(|c, side| c.closed[side as usize])
    }

    /// `true` once the peer has closed its socket.
    pub fn peer_closed(&self) -> bool {
        self.with(|c, side| c.closed[1 - side as usize])
    }

    /// `true` once the peer sent FIN (shut down or closed).
    pub fn peer_fin(&self) -> bool {
        self.with(|c, side| c.incoming(side).fin)
    }

    /// Bytes this end has written in all.
    pub fn written(&self) -> u64 {
        self.with(|c, side| c.outgoing(side).total)
    }

    /// Waits until `cond` holds.
    pub async fn until(&self, mut cond: impl FnMut(&Socket) -> bool) {
        poll_fn(|_| {
            if cond(self) {
                self.sim.progressed();
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }

    /// Reads everything until EOF or a reset; returns the bytes and
    /// whether the end was a clean EOF.
    pub async fn read_to_end(&self) -> (Vec<u8>, bool) {
        let mut all = Vec::new();
        loop {
            let r = poll_fn(|_| match self.try_read(usize::MAX) {
                Read::WouldBlock => Poll::Pending,
                r => Poll::Ready(r),
            })
            .await;
            match r {
                Read::Data(d) => all.extend(d),
                Read::Eof => return (all, true),
                Read::Reset => return (all, false),
                Read::WouldBlock => unreachable!(),
            }
        }
    }

    /// Writes all of `bytes`, waiting for room.
    pub async fn write_all(&self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            let r = poll_fn(|_| match self.try_write(bytes, usize::MAX) {
                Write::WouldBlock => Poll::Pending,
                r => Poll::Ready(r),
            })
            .await;
            match r {
                Write::Wrote(n) => bytes = &bytes[n..],
                _ => return false,
            }
        }
        true
    }
}

// ------------------------------------------------------------ the model

/// What a session waits for when a deadline passes (the rows of the
/// table on `Timeouts`, and giving the buffers back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// Server: a keep-alive connection between exchanges. Client: a
    /// pooled connection with nothing in flight.
    Idle,
    /// A head (server: a request's; client: a response's).
    Head,
    /// Progress of a body.
    Body,
    /// Progress of a write.
    Write,
    /// The end of the lingering close.
    Linger,
    /// Giving the buffers back.
    Release,
}

/// The timeout table, applied to what a driver can see: which I/O the
/// session waits for and since when, the connection's state, the bytes
/// in the read buffer, and what the application was handed.
#[derive(Debug)]
pub struct Model {
    side: Side,
    timeouts: Timeouts,
    release_after: Duration,
    started: Instant,
    /// The wait under way: the I/O and when it began.
    wait: Option<(Io, Instant)>,
    released: bool,
    /// Server: since when the head being received is counted. Client:
    /// since when the head of the response due is waited for.
    head_start: Option<Instant>,
    /// Server: request heads handed to the application.
    requests: u64,
    /// Server: the lingering close ends then.
    linger_until: Option<Instant>,
    /// Client: since when nothing is in flight.
    idle_since: Instant,
    /// Every deadline that fired, with what it was.
    pub fired: Vec<(Instant, Timer)>,
}

fn after(since: Instant, d: Option<Duration>, what: Timer) -> Option<(Instant, Timer)> {
    d.map(|d| (since + d, what))
}

fn earliest(a: Option<(Instant, Timer)>, b: Option<(Instant, Timer)>) -> Option<(Instant, Timer)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
        (a, b) => a.or(b),
    }
}

impl Model {
    /// The model of a session made at `started` with `config`.
    pub fn new(side: Side, config: &Config, started: Instant) -> Self {
        Model {
            side,
            timeouts: config.timeouts,
            release_after: config.release_after,
            started,
            wait: None,
            released: false,
            head_start: None,
            requests: 0,
            linger_until: None,
            idle_since: started,
            fired: Vec::new(),
        }
    }

    /// Server: the application was handed a request head.
    pub fn request_head(&mut self) {
        self.requests += 1;
        self.head_start = None;
    }

    /// Client: the application was handed a response head (interim or
    /// final).
    pub fn response_head(&mut self) {
        self.head_start = None;
    }

    /// Client: a response ended; `idle` if nothing else is in flight.
    pub fn response_end(&mut self, now: Instant, idle: bool) {
        if idle {
            self.idle_since = now;
        }
    }

    /// A wait for `io` begins; `sending`: a body is being sent.
    fn begin(&mut self, io: Io, now: Instant, recv: State, sending: bool, held: usize) {
        if io == Io::Shutdown {
            self.linger_until = Some(now + self.timeouts.linger);
        }
        if matches!(io, Io::Shutdown | Io::Close) {
            return;
        }
        match self.wait {
            Some((kind, _)) if kind == io => {}
            _ => self.wait = Some((io, now)),
        }
        let waiting_for_head = match self.side {
            Side::Server => {
                self.requests > 0 && held > 0 && matches!(recv, State::Idle | State::Head)
            }
            // Not before the request is out: its body may be what the
            // server waits for.
            Side::Client => io == Io::Read && recv != State::Body && !sending,
        };
        if waiting_for_head && self.head_start.is_none() {
            self.head_start = Some(now);
        }
    }

    fn read(&mut self, n: usize, now: Instant, recv: State, held: usize) {
        self.wait = None;
        if n > 0 {
            self.released = false;
            if self.side == Side::Server && recv == State::Idle && held == n {
                self.head_start = Some(now);
            }
        }
    }

    fn wrote(&mut self) {
        self.wait = None;
    }

    fn fire(&mut self, at: Instant, timer: Timer) {
        self.fired.push((at, timer));
        if timer == Timer::Release {
            self.released = true;
        } else {
            self.wait = None;
        }
    }

    /// The deadline of a wait, by the table.
    fn expected(&self, recv: State, held: usize) -> Option<(Instant, Timer)> {
        let t = &self.timeouts;
        let (io, since) = self.wait?;
        if let Some(until) = self.linger_until {
            return Some((until, Timer::Linger));
        }
        if io == Io::Write {
            return after(since, t.write, Timer::Write);
        }
        let expiry = match self.side {
            Side::Server => {
                let between = recv == State::Idle && held == 0;
                match recv {
                    _ if self.requests == 0 && (between || recv == State::Head) => {
                        after(self.started, t.head, Timer::Head)
                    }
                    _ if between => after(since, t.idle, Timer::Idle),
                    State::Idle | State::Head => {
                        after(self.head_start.unwrap_or(since), t.head, Timer::Head)
                    }
                    State::Body => after(since, t.body, Timer::Body),
                    _ => None,
                }
            }
            Side::Client if recv == State::Body => after(since, t.body, Timer::Body),
            Side::Client => after(self.head_start.unwrap_or(since), t.head, Timer::Head),
        };
        let release = (!self.released).then_some((since + self.release_after, Timer::Release));
        earliest(expiry, release)
    }

    /// Client: the deadline of a pooled connection with nothing in flight.
    fn expected_idle(&self) -> Option<(Instant, Timer)> {
        let close = after(self.idle_since, self.timeouts.idle, Timer::Idle);
        let release =
            (!self.released).then_some((self.idle_since + self.release_after, Timer::Release));
        earliest(close, release)
    }
}

// ------------------------------------------------------------ the driver

/// The sessions the driver runs, with what it needs to see of them.
pub trait Observe: Session {
    /// The receiving direction's state.
    fn recv_state(&self) -> State;
    /// `true` while a message body is being sent.
    fn sending_body(&self) -> bool;
}

impl Observe for ServerSession {
    fn recv_state(&self) -> State {
        self.connection().recv_state()
    }
    fn sending_body(&self) -> bool {
        self.connection().send_state() == State::Body
    }
}

impl Observe for ClientSession {
    fn recv_state(&self) -> State {
        self.connection().recv_state()
    }
    fn sending_body(&self) -> bool {
        self.connection().send_state() == State::Body
    }
}

/// Why a driven call did not complete.
#[derive(Debug)]
pub enum Failure {
    /// The session said so.
    Session(SessionError),
    /// The socket was reset or broken.
    Socket,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Session(e) => write!(f, "{e}"),
            Failure::Socket => f.write_str("connection reset"),
        }
    }
}

/// Sizes taken in turn.
#[derive(Debug, Clone)]
pub struct Sizes {
    sizes: Vec<usize>,
    next: usize,
}

impl Sizes {
    /// `sizes` in turn, over and over.
    pub fn new(sizes: Vec<usize>) -> Self {
        assert!(!sizes.is_empty());
        Sizes { sizes, next: 0 }
    }

    /// The next size, without taking it.
    pub fn peek(&self) -> usize {
        self.sizes[self.next % self.sizes.len()]
    }

    /// The next size.
    pub fn take(&mut self) -> usize {
        let n = self.peek();
        self.next += 1;
        n
    }
}

/// Memory bounds a session must keep while it is driven.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Most bytes the read buffer may hold.
    pub held: usize,
    /// Most bytes of capacity the read buffer may have.
    pub capacity: usize,
    /// Most bytes the output may hold.
    pub output: usize,
}

/// A session's end of a connection, driven: the socket, the model of its
/// deadlines, its read and write sizes.
pub struct Endpoint {
    /// The socket.
    pub sock: Socket,
    /// The deadlines the session must announce.
    pub model: Model,
    reads: Sizes,
    writes: Sizes,
    read_size: usize,
    /// The memory bounds checked at every step.
    pub bounds: Bounds,
    /// Server: a graceful shutdown is signalled at this time.
    pub shutdown_at: Option<Instant>,
    /// When the shutdown was signalled, and the bytes written by then.
    pub shutdown_done: Option<(Instant, u64)>,
    /// Most bytes the read buffer held, and most output queued.
    pub peak: (usize, usize),
    /// A slow link: pauses before writes (ms, in turn), within a budget
    /// for the whole connection.
    write_pauses: Option<(Sizes, Duration)>,
    /// The write under way waits until then.
    pause_until: Option<Instant>,
    /// `Io::Shutdown` and `Io::Close`, with when.
    pub ends: Vec<(Instant, Io)>,
}

impl Endpoint {
    /// An endpoint for a session made now with `config`.
    pub fn new(
        sock: Socket,
        side: Side,
        config: &Config,
        reads: Sizes,
        writes: Sizes,
        bounds: Bounds,
    ) -> Self {
        let now = sock.sim().now();
        Endpoint {
            model: Model::new(side, config, now),
            sock,
            reads,
            writes,
            read_size: config.read_size,
            bounds,
            shutdown_at: None,
            shutdown_done: None,
            peak: (0, 0),
            ends: Vec::new(),
            write_pauses: None,
            pause_until: None,
        }
    }

    /// Makes each write wait first, for the next of `pauses` (ms), as
    /// long as their sum stays within `budget`.
    pub fn slow_writes(&mut self, pauses: Vec<usize>, budget: Duration) {
        self.write_pauses = Some((Sizes::new(pauses), budget));
    }

    /// The virtual time.
    pub fn now(&self) -> Instant {
        self.sock.sim().now()
    }

    fn check_bounds<T: Observe>(&mut self, s: &mut T) {
        let out = s.output().len();
        let buf = s.read_buf();
        let (held, capacity) = (buf.len(), buf.capacity());
        self.peak = (self.peak.0.max(held), self.peak.1.max(out));
        let side = self.model.side;
        assert!(
            held <= self.bounds.held,
            "{side:?}: the read buffer holds {held} bytes, bound {}",
            self.bounds.held
        );
        assert!(
            capacity <= self.bounds.capacity,
            "{side:?}: the read buffer has {capacity} bytes of capacity, bound {}",
            self.bounds.capacity
        );
        assert!(
            out <= self.bounds.output,
            "{side:?}: {out} bytes of output queued, bound {}",
            self.bounds.output
        );
    }

    /// Makes a session call until it is ready, doing the I/O it asks for.
    pub async fn drive<T: Observe, V>(
        &mut self,
        s: &mut T,
        mut call: impl FnMut(&mut T, Instant) -> Result<Step<V>, SessionError>,
    ) -> Result<V, Failure> {
        loop {
            self.check_bounds(s);
            match call(s, self.now()).map_err(Failure::Session)? {
                Step::Ready(v) => return Ok(v),
                Step::Io(io) => self.perform(s, io).await?,
            }
        }
    }

    /// One I/O, or the deadline, or the shutdown signal, whichever comes
    /// first.
    async fn perform<T: Observe>(&mut self, s: &mut T, io: Io) -> Result<(), Failure> {
        {
            let now = self.now();
            let held = s.read_buf().len();
            self.model
                .begin(io, now, s.recv_state(), s.sending_body(), held);
            if let (Io::Write, Some((pauses, budget))) = (io, &mut self.write_pauses) {
                let pause = Duration::from_millis(pauses.take() as u64);
                if pause <= *budget {
                    *budget -= pause;
                    self.pause_until = Some(now + pause);
                }
            }
        }
        poll_fn(|_| self.poll_io(s, io)).await
    }

    fn poll_io<T: Observe>(&mut self, s: &mut T, io: Io) -> Poll<Result<(), Failure>> {
        let sim = self.sock.sim().clone();
        let now = sim.now();
        if matches!(io, Io::Shutdown | Io::Close) {
            trace(
                &sim,
                format_args!("{:?} {}: {io:?}", self.model.side, self.sock.id),
            );
        }
        match io {
            Io::Shutdown => {
                self.ends.push((now, io));
                self.sock.shutdown_write();
                return Poll::Ready(Ok(()));
            }
            Io::Close => {
                self.ends.push((now, io));
                self.sock.close();
                return Poll::Ready(Ok(()));
            }
            _ => {}
        }
        if let Some(at) = self.shutdown_at {
            if now >= at {
                trace(&sim, format_args!("server {}: shutdown", self.sock.id));
                self.shutdown_at = None;
                self.shutdown_done = Some((now, self.sock.written()));
                s.shutdown(now);
                sim.progressed();
                return Poll::Ready(Ok(()));
            }
            sim.wake_at(at);
        }
        // The deadline: the table's, not before, and at it.
        let held = s.read_buf().len();
        let expected = self.model.expected(s.recv_state(), held);
        let announced = s.poll_timeout();
        assert_eq!(
            announced,
            expected.map(|(at, _)| at),
            "{:?} session waiting for {io:?} at {:?}: announced {:?}, the table says {:?}",
            self.model.side,
            now - sim.0.borrow().t0,
            announced.map(|at| at - sim.0.borrow().t0),
            expected.map(|(at, what)| (at - sim.0.borrow().t0, what)),
        );
        if let Some((at, timer)) = expected {
            s.handle_timeout(now);
            if now < at {
                assert_eq!(s.poll_timeout(), Some(at), "{timer:?} acted before {at:?}");
                sim.wake_at(at);
            } else {
                assert_ne!(
                    s.poll_timeout(),
                    Some(at),
                    "{timer:?} did not act at {at:?}"
                );
                trace(
                    &sim,
                    format_args!("{:?} {}: {timer:?} fired", self.model.side, self.sock.id),
                );
                self.model.fire(at, timer);
                sim.progressed();
                return Poll::Ready(Ok(()));
            }
        }
        match io {
            Io::Read => {
                let buf = s.read_buf();
                let room = buf.capacity() - buf.len();
                assert!(room > 0, "a read asked for with no room");
                // At most one read of `read_size` (as the blocking adapter
                // reads), and no more than the room the session offers.
                let max = self.reads.peek().max(1).min(room).min(self.read_size);
                match self.sock.try_read(max) {
                    Read::WouldBlock => Poll::Pending,
                    Read::Reset => Poll::Ready(Err(Failure::Socket)),
                    Read::Eof => {
                        trace(
                            &sim,
                            format_args!("{:?} {}: EOF", self.model.side, self.sock.id),
                        );
                        s.handle_read(0, now);
                        self.model.read(0, now, s.recv_state(), 0);
                        Poll::Ready(Ok(()))
                    }
                    Read::Data(bytes) => {
                        trace(
                            &sim,
                            format_args!(
                                "{:?} {}: read {}",
                                self.model.side,
                                self.sock.id,
                                Lossy(&bytes)
                            ),
                        );
                        self.reads.take();
                        let n = bytes.len();
                        s.read_buf().extend_from_slice(&bytes);
                        let held = s.read_buf().len();
                        let recv = s.recv_state();
                        s.handle_read(n, now);
                        self.model.read(n, now, recv, held);
                        Poll::Ready(Ok(()))
                    }
                }
            }
            Io::Write => {
                if let Some(until) = self.pause_until {
                    if now < until {
                        sim.wake_at(until);
                        return Poll::Pending;
                    }
                    self.pause_until = None;
                }
                let max = self.writes.peek().max(1);
                let out = s.output();
                assert!(!out.is_empty(), "Io::Write with nothing queued");
                let mut slices = [IoSlice::new(&[]); 64];
                let k = out.io_slices(&mut slices);
                let mut bytes = Vec::with_capacity(max.min(out.len()));
                for slice in &slices[..k] {
                    let take = slice.len().min(max - bytes.len());
                    bytes.extend_from_slice(&slice[..take]);
                    if bytes.len() == max {
                        break;
                    }
                }
                match self.sock.try_write(&bytes, max) {
                    Write::WouldBlock => Poll::Pending,
                    Write::Broken => Poll::Ready(Err(Failure::Socket)),
                    Write::Wrote(n) => {
                        trace(
                            &sim,
                            format_args!(
                                "{:?} {}: wrote {}",
                                self.model.side,
                                self.sock.id,
                                Lossy(&bytes[..n])
                            ),
                        );
                        self.writes.take();
                        s.handle_write(n, now);
                        self.model.wrote();
                        Poll::Ready(Ok(()))
                    }
                }
            }
            _ => unreachable!("an Io the simulator does not know"),
        }
    }

    /// Client: holds a connection with nothing in flight in a pool until
    /// it closes, acting on each deadline it announces (checked against
    /// the table, just before and at it).
    pub async fn pool(&mut self, s: &mut ClientSession) {
        poll_fn(|_| {
            let sim = self.sock.sim().clone();
            let now = sim.now();
            let expected = self.model.expected_idle();
            assert_eq!(
                s.poll_timeout(),
                expected.map(|(at, _)| at),
                "pooled client at {:?}",
                now - sim.0.borrow().t0
            );
            let Some((at, timer)) = expected else {
                return Poll::Ready(());
            };
            s.handle_timeout(now);
            if now < at {
                assert_eq!(s.poll_timeout(), Some(at), "{timer:?} acted early");
                sim.wake_at(at);
                return Poll::Pending;
            }
            self.model.fire(at, timer);
            sim.progressed();
            if s.is_closed() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
}
