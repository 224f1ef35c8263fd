//! An HTTP/1.1 server on io_uring (tokio-uring, Linux only), driving a
//! `ServerSession` directly: the crate's demonstration that a
//! completion-based runtime runs the session as it is.
//!
//! ```sh
//! cargo run --release --example uring_server -- --addr 127.0.0.1:8080
//! curl http://127.0.0.1:8080/
//! ```
//!
//! Routes and flags are those of `hello_server`: `GET` and `HEAD /` answer
//! `Hello, World!`; `POST /echo` streams the request body back (honouring
//! `Expect: 100-continue`); anything else is `404 Not Found`.
//! `--header-timeout SECS` and `--idle-timeout SECS` override two of the
//! session's timeouts; at most `--max-connections N` connections are
//! served at once. On SIGINT or SIGTERM the server stops accepting, lets
//! every connection finish the exchange it is in, and exits. Where io_uring
//! is not available (an old kernel, a seccomp filter,
//! `kernel.io_uring_disabled`), it says so on standard error and exits
//! with status 2.
//!
//! # The driver
//!
//! [`Conn::call`], with `wait`, `arm` and `close_socket` beside it, is
//! the whole driver: it makes a session call and, until the call is
//! ready, keeps a write under way while the session has output and a
//! read while it takes input, both at once, as `docs/sessions.md`
//! ("Writing a driver") describes. What a completion runtime changes:
//!
//! - **Buffers are handed to the kernel, owned.** The read goes into the
//!   session's own read room (`Session::lend_read_buf`, given back with
//!   `return_read_buf`), the write takes the session's output segments
//!   (`lend_output`, a `Vec<Bytes>` for one `writev`, given back with
//!   `return_output`). The driver copies no byte of a request or a
//!   response: the only copies are the session's own, which every driver
//!   has (a response head, and body pieces under the coalescing threshold,
//!   are written into its output buffer).
//! - **A read between requests waits for bytes first.** A read that
//!   begins while no request is in progress (a new connection, a
//!   keep-alive connection waiting for its next request) is preceded by
//!   a wait for the socket to be readable (`IORING_OP_POLL_ADD`), which
//!   holds no buffer; the room is lent once bytes are there. An idle or
//!   silent connection so holds no read buffer in the kernel's hands,
//!   which the session's release of an idle connection's buffers could not
//!   take back (tokio-uring cannot cancel an operation and get its buffer
//!   back).
//! - **Nothing is cancelled to meet a deadline or a shutdown.** When the
//!   session's deadline passes, or the shutdown signal fires, the driver
//!   calls `handle_timeout` (or `shutdown`) with the operations still
//!   under way, and goes on waiting for them if the session still wants
//!   them: an idle connection giving its buffers back costs no cancel and
//!   no resubmit.
//! - **Closing completes what is under way.** tokio-uring does not cancel
//!   an operation whose future is dropped: it holds the descriptor until
//!   the kernel completes it. So before it closes, the driver shuts both
//!   directions of the socket down whenever an operation is under way
//!   (`Conn::close_socket`).

#[cfg(target_os = "linux")]
mod common;

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("uring_server: io_uring is Linux only; run hello_server instead");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    uring::main()
}

#[cfg(target_os = "linux")]
pub mod uring {
    use std::cell::Cell;
    use std::future::poll_fn;
    use std::io;
    use std::net::Shutdown;
    use std::pin::Pin;
    use std::process::ExitCode;
    use std::rc::Rc;
    use std::task::{Context, Poll};
    use std::time::{Duration, Instant};

    use std::os::fd::AsRawFd;

    use bytes::{Bytes, BytesMut};
    use h1proto::adapter::driver::{self, ShutdownSignal, WallClock};
    use h1proto::conn::State;
    use h1proto::{Config, Io, ServerSession, Session, SessionError, Step};
    use io_uring::{cqueue, opcode, types};
    use tokio::sync::{Notify, watch};
    use tokio::time::Sleep;
    use tokio_uring::net::{TcpListener, TcpStream};
    use tokio_uring::{BufResult, InFlightOneshot, OneshotOutputTransform, UnsubmittedOneshot};

    use super::common::{self, AcceptPolicy, Answer, parse_args};

    /// The exit status when io_uring cannot be used here.
    const UNAVAILABLE: u8 = 2;

    pub fn main() -> ExitCode {
        let args = parse_args("uring_server", std::env::args().skip(1));
        let rt = match runtime() {
            Ok(rt) => rt,
            Err(err) => {
                eprintln!(
                    "uring_server: io_uring is not available here ({err}); it needs Linux 5.10 \
                     or later, no seccomp filter refusing io_uring_setup, and \
                     kernel.io_uring_disabled = 0. hello_server serves the same routes."
                );
                return ExitCode::from(UNAVAILABLE);
            }
        };
        match rt.block_on(start(args)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("uring_server: {err}");
                ExitCode::FAILURE
            }
        }
    }

    /// The runtime, on a ring that runs completions when the thread next
    /// enters the kernel rather than interrupting it
    /// (`IORING_SETUP_COOP_TASKRUN`, with the one thread that submits
    /// declared: `SINGLE_ISSUER`); on a kernel without them (before 6.0),
    /// a plain ring.
    fn runtime() -> io::Result<tokio_uring::Runtime> {
        let mut ring = tokio_uring::uring_builder();
        ring.setup_coop_taskrun().setup_single_issuer();
        tokio_uring::Runtime::new(tokio_uring::builder().uring_builder(&ring))
            .or_else(|_| tokio_uring::Runtime::new(&tokio_uring::builder()))
    }

    /// Listens, prints the address, and serves until SIGINT or SIGTERM.
    async fn start(args: common::Args) -> io::Result<()> {
        // tokio (which tokio-uring runs on) makes the listener with the
        // examples' backlog and installs the signal handlers.
        let std_listener = common::listen(&args.addr).await?.into_std()?;
        std_listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(std_listener);
        let (stop, stopped) = watch::channel(false);
        let signal = common::stop_signal()?;
        tokio_uring::spawn(async move {
            signal.await;
            let _ = stop.send(true);
        });
        println!("Listening on http://{}/", listener.local_addr()?);
        let policy = AcceptPolicy::new(args.max_connections);
        run(listener, args.config, policy, stopped).await
    }

    /// The connections being served, and a way to wait for one to end.
    #[derive(Default)]
    struct Live {
        count: Cell<usize>,
        ended: Notify,
    }

    /// Accepts connections, each served by its own task, until `stop`
    /// turns true; then waits (up to 30 s) for the connections to finish.
    /// The `policy` caps the connections served at once and paces the
    /// loop when accepting fails (`common::AcceptPolicy`).
    pub async fn run(
        listener: TcpListener,
        config: Config,
        mut policy: AcceptPolicy,
        mut stop: watch::Receiver<bool>,
    ) -> io::Result<()> {
        let live = Rc::new(Live::default());
        // What tells every connection to shut down: a signal each, 16
        // bytes in the connection, where a watch receiver's wait would be
        // a boxed future ten times that.
        let shutdown = driver::Shutdown::new();
        loop {
            if !policy.may_accept(live.count.get(), Instant::now()) {
                tokio::select! {
                    _ = live.ended.notified() => continue,
                    () = stopped(&mut stop) => break,
                }
            }
            let pause = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        policy.accepted(Instant::now());
                        live.count.set(live.count.get() + 1);
                        let live = live.clone();
                        tokio_uring::spawn(handle(stream, config.clone(), shutdown.signal(), move || {
                            live.count.set(live.count.get() - 1);
                            live.ended.notify_waiters();
                        }));
                        continue;
                    }
                    Err(err) => policy.accept_failed(&err, Instant::now()),
                },
                () = stopped(&mut stop) => break,
            };
            // Paused: until the back-off passes, or one of the
            // connections ends and gives its descriptor back.
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = live.ended.notified() => {}
                () = stopped(&mut stop) => break,
            }
        }
        drop(listener);
        shutdown.begin();
        let drain = async {
            while live.count.get() > 0 {
                live.ended.notified().await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
        Ok(())
    }

    /// Serves one connection to its end, then closes it and calls
    /// `ended`; a graceful shutdown starts when `stop` fires.
    ///
    /// The connection is made before the future, so that the future holds
    /// it once, not also the arguments it is made from (an `async fn`
    /// keeps its arguments for its whole life): every connection's task
    /// holds this future while it waits.
    pub fn handle(
        stream: TcpStream,
        config: Config,
        stop: ShutdownSignal,
        ended: impl FnOnce() + 'static,
    ) -> impl Future<Output = ()> {
        let _ = stream.set_nodelay(true);
        let mut conn = Conn::new(stream, config, stop);
        async move {
            if let Err(err) = serve(&mut conn).await {
                if common::worth_logging(&err) {
                    eprintln!("connection: {err}");
                }
            }
            conn.close().await;
            ended();
        }
    }

    /// Answers requests until the connection is over.
    async fn serve(conn: &mut Conn) -> io::Result<()> {
        loop {
            // The request lives in this block only: nothing of it is held
            // while the echo below waits for the body.
            let head = {
                let Some(mut req) = conn.call(ServerSession::next_request).await? else {
                    break;
                };
                match common::answer(&req) {
                    Answer::Page(page) => {
                        conn.session
                            .sender()
                            .send_response(page.response(&mut req))?;
                        continue;
                    }
                    Answer::Echo(head) => head,
                }
            };
            // The head first, then the body streamed back: reading the
            // body sends a client that waits for it `100 Continue`, ahead
            // of the head, which is still queued.
            conn.session.sender().send_head(head)?;
            // `let else`, not `while let`: the `?`'s result is not kept
            // while the piece is written, so the task every connection
            // holds is no larger for the echo.
            loop {
                let Some(data) = conn.call(ServerSession::read_data).await? else {
                    break;
                };
                conn.session.sender().send_data(data)?;
                conn.call(ServerSession::poll_flush).await?;
            }
            conn.session.sender().finish(None)?;
        }
        Ok(())
    }

    /// An operation submitted to the kernel, owning its buffer until it
    /// completes.
    type Op<T> = Pin<Box<dyn Future<Output = BufResult<usize, T>>>>;

    /// A wait for the socket to be readable (`IORING_OP_POLL_ADD`): an
    /// operation that holds no buffer. It keeps the socket with it, as a
    /// read does, until it completes.
    type PollOp = Pin<Box<InFlightOneshot<Rc<TcpStream>, Readable>>>;

    /// How a readiness wait completed: the poll events, or the error.
    struct Readable;

    impl OneshotOutputTransform for Readable {
        type Output = io::Result<usize>;
        type StoredData = Rc<TcpStream>;

        fn transform_oneshot_output(self, _: Rc<TcpStream>, cqe: cqueue::Entry) -> Self::Output {
            match cqe.result() {
                err if err < 0 => Err(io::Error::from_raw_os_error(-err)),
                events => Ok(events as usize),
            }
        }
    }

    /// `POLLIN`, from `<poll.h>`.
    const POLLIN: u32 = 0x0001;

    /// What a wait ended with.
    enum Woke {
        /// The write under way completed.
        Wrote(io::Result<usize>, Vec<Bytes>),
        /// The read under way completed.
        Read(io::Result<usize>, BytesMut),
        /// The socket became readable (or failed).
        Readable(io::Result<usize>),
        /// The session's deadline passed.
        Deadline,
        /// The shutdown signal fired.
        Stop,
    }

    /// One connection: the socket, its session, and the operations under
    /// way.
    pub struct Conn {
        /// The socket; `None` once the session said to close it.
        stream: Option<Rc<TcpStream>>,
        /// The session: every protocol decision is its.
        pub session: ServerSession,
        /// The read under way, with the session's read room.
        reading: Option<Op<BytesMut>>,
        /// The write under way, with the session's output.
        writing: Option<Op<Vec<Bytes>>>,
        /// The wait for the socket to be readable, before a read that
        /// begins between requests.
        polling: Option<PollOp>,
        /// That wait completed: the next read is submitted at once.
        readable: bool,
        /// The timer for the session's deadlines (see [`arm`]).
        timer: Option<Pin<Box<Sleep>>>,
        /// The shutdown signal, until it fires.
        stop: Option<ShutdownSignal>,
        /// When the wall clock is read next, for `Date`.
        wall: WallClock,
    }

    impl Conn {
        /// A session for a connection made now, over `stream`.
        pub fn new(stream: TcpStream, config: Config, stop: ShutdownSignal) -> Self {
            Conn {
                stream: Some(Rc::new(stream)),
                session: ServerSession::new(config, Instant::now()),
                reading: None,
                writing: None,
                polling: None,
                readable: false,
                timer: None,
                stop: Some(stop),
                wall: WallClock::new(),
            }
        }

        /// Makes a session call until it is ready. While it is not, keeps
        /// a write under way while the session has output and a read
        /// while it takes input, both at once, and reports each as it
        /// completes; the session's deadline and the shutdown signal are
        /// raced against them, and neither cancels anything.
        pub async fn call<V>(
            &mut self,
            mut call: impl FnMut(&mut ServerSession, Instant) -> Result<Step<V>, SessionError>,
        ) -> io::Result<V> {
            let mut now = Instant::now();
            loop {
                match call(&mut self.session, now)? {
                    Step::Ready(value) => return Ok(value),
                    Step::Io(Io::Shutdown) => {
                        if let Some(stream) = &self.stream {
                            let _ = stream.shutdown(Shutdown::Write);
                        }
                        continue;
                    }
                    Step::Io(Io::Read | Io::Write) => {}
                    Step::Io(_) => {
                        self.close_socket();
                        continue;
                    }
                }
                let Some(stream) = &self.stream else {
                    return Err(io::ErrorKind::NotConnected.into());
                };
                if self.writing.is_none() && self.session.wants_write() {
                    // The output's segments, owned: no copy.
                    let (stream, out) = (stream.clone(), self.session.lend_output());
                    self.writing = Some(Box::pin(async move { stream.writev(out).await }));
                }
                if self.reading.is_none() && self.polling.is_none() && self.session.wants_read() {
                    if !self.readable && self.session.connection().recv_state() == State::Idle {
                        // Between requests: the room is lent only once
                        // bytes are there, so that a connection waiting
                        // for its next request (an idle one, for a
                        // minute) holds no read buffer.
                        let fd = types::Fd(stream.as_raw_fd());
                        let sqe = opcode::PollAdd::new(fd, POLLIN).build();
                        let poll = UnsubmittedOneshot::new(stream.clone(), Readable, sqe);
                        self.polling = Some(Box::pin(poll.submit()));
                    } else {
                        // The session's read room, owned: the kernel
                        // reads into the session's buffer.
                        self.readable = false;
                        let (stream, room) = (stream.clone(), self.session.lend_read_buf());
                        self.reading = Some(Box::pin(async move { stream.read(room).await }));
                    }
                }
                let idle =
                    self.reading.is_none() && self.writing.is_none() && self.polling.is_none();
                if idle && self.session.poll_timeout().is_none() {
                    // The session asked for I/O it neither reads nor writes
                    // for, with no deadline: waiting would never end.
                    return Err(io::Error::other(
                        "the session asked for I/O it does not want",
                    ));
                }
                let woke = self.wait().await;
                now = Instant::now();
                // Each I/O is reported through the wall clock, which hands
                // the session the `Date` of what a read or a timeout leads
                // to, reading the wall clock at most once a second.
                let wall = &mut self.wall;
                match woke {
                    Woke::Wrote(result, out) => {
                        self.writing = None;
                        self.session.return_output(out);
                        wall.report(&mut self.session, Io::Write, result, now)?;
                    }
                    Woke::Read(result, room) => {
                        self.reading = None;
                        self.session.return_read_buf(room);
                        wall.report(&mut self.session, Io::Read, result, now)?;
                    }
                    Woke::Readable(result) => {
                        self.polling = None;
                        match result {
                            Ok(_) => self.readable = true,
                            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                            Err(err) => return Err(err),
                        }
                    }
                    Woke::Deadline => {
                        let timeout = Err(io::ErrorKind::TimedOut.into());
                        wall.report(&mut self.session, Io::Read, timeout, now)?;
                    }
                    Woke::Stop => self.session.shutdown(now),
                }
            }
        }

        /// Writes what is left, lingers if the session says so, and
        /// closes. Errors are ignored: the connection is over either way.
        pub async fn close(&mut self) {
            let _ = self.call(ServerSession::close).await;
            self.close_socket();
        }

        /// `Io::Close`. An operation dropped before it completes is not
        /// cancelled by tokio-uring: it keeps the descriptor open until
        /// the kernel completes it, which a read from a silent peer, or a
        /// write to one that stopped reading, never does. Shutting both
        /// directions down first completes it (a read of 0 bytes, a write
        /// with an error), so that the close happens now.
        fn close_socket(&mut self) {
            if let Some(stream) = self.stream.take() {
                let reading = self.reading.take().is_some();
                let writing = self.writing.take().is_some();
                let polling = self.polling.take().is_some();
                if reading || writing || polling {
                    let _ = stream.shutdown(Shutdown::Both);
                }
            }
        }

        /// Waits until the write or the read under way completes, the
        /// session's deadline passes or (once) the shutdown signal fires.
        /// The operations are only polled here: they stay under way.
        async fn wait(&mut self) -> Woke {
            arm(&mut self.timer, self.session.poll_timeout());
            // The closure borrows the connection whole: the future every
            // connection's task holds while it waits stays small.
            let woke = poll_fn(|cx| self.poll_wait(cx)).await;
            if let Woke::Stop = woke {
                // Once: the session is shutting down.
                self.stop = None;
            }
            woke
        }

        /// One poll of [`wait`](Self::wait).
        fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<Woke> {
            if let Some(Poll::Ready((r, out))) =
                self.writing.as_mut().map(|op| op.as_mut().poll(cx))
            {
                return Poll::Ready(Woke::Wrote(r, out));
            }
            if let Some(Poll::Ready((r, room))) =
                self.reading.as_mut().map(|op| op.as_mut().poll(cx))
            {
                return Poll::Ready(Woke::Read(r, room));
            }
            if let Some(Poll::Ready(r)) = self.polling.as_mut().map(|op| op.as_mut().poll(cx)) {
                return Poll::Ready(Woke::Readable(r));
            }
            if let Some(Poll::Ready(())) = self.timer.as_mut().map(|t| t.as_mut().poll(cx)) {
                return Poll::Ready(Woke::Deadline);
            }
            if let Some(Poll::Ready(())) = self.stop.as_mut().map(|s| Pin::new(s).poll(cx)) {
                return Poll::Ready(Woke::Stop);
            }
            Poll::Pending
        }
    }

    /// Arms `timer` for `at` (drops it without a deadline) unless it is
    /// armed early enough already. Registering a timer for every wait
    /// would cost more than the request waited for; going off early costs
    /// a `handle_timeout` that does nothing before the deadline, and
    /// nothing under way is cancelled.
    fn arm(timer: &mut Option<Pin<Box<Sleep>>>, at: Option<Instant>) {
        let Some(at) = at.map(tokio::time::Instant::from_std) else {
            *timer = None;
            return;
        };
        match timer {
            Some(armed) if armed.deadline() <= at && !armed.is_elapsed() => {}
            Some(armed) => armed.as_mut().reset(at),
            None => *timer = Some(Box::pin(tokio::time::sleep_until(at))),
        }
    }

    /// Completes when `stop` turns true; never once its sender is gone
    /// (no shutdown will ever be asked for).
    async fn stopped(stop: &mut watch::Receiver<bool>) {
        if stop.wait_for(|&stop| stop).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
