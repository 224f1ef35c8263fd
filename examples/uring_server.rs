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
//! [`Conn::call`] is the whole driver: it makes a session call and does
//! the I/O the call asks for until it is ready, as `src/adapter/tokio.rs`
//! does for a readiness runtime. What a completion runtime changes:
//!
//! - **Buffers are handed to the kernel.** An operation owns its buffer
//!   until it completes, so it cannot read into the session's buffer or
//!   write from its output, which the session only lends. The driver
//!   keeps one owned buffer for reads and one for writes, and copies:
//!   the bytes read into [`Session::read_buf`], the output into the write
//!   buffer. These are the two copies of this driver (the session's own
//!   are every driver's: a response head and body pieces under the
//!   coalescing threshold are copied into its output).
//! - **A read is never cancelled to meet a deadline.** When the session's
//!   deadline passes, or the shutdown signal fires, while a read is in
//!   flight, the driver calls `handle_timeout` (or `shutdown`) with the
//!   read still in flight, and the read stays submitted: if the session
//!   asks for a read again (the buffers were given back after an idle
//!   second; a shutdown lets the exchange finish), the driver goes on
//!   waiting for the same one. A read is dropped only when the connection
//!   closes, after both directions of the socket are shut down (see
//!   [`Conn::close_socket`]). The session sees none of this: its buffer
//!   was never out.
//! - **A write is never abandoned** (the bytes it took are unknown until it
//!   completes), except when the write timeout passes: the session then
//!   drops its output and the connection closes.

#[cfg(target_os = "linux")]
#[path = "common/mod.rs"]
#[allow(clippy::duplicate_mod)] // the interop tests load every server
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

// What the interop tests run in-process (they use `handle` only).
#[cfg(target_os = "linux")]
#[allow(unused_imports)]
pub use uring::{handle, run};

#[cfg(target_os = "linux")]
mod uring {
    use std::cell::Cell;
    use std::io::{self, IoSlice};
    use std::net::Shutdown;
    use std::pin::Pin;
    use std::process::ExitCode;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    use h1proto::{Config, Io, ServerSession, Session, SessionError, Step};
    use tokio::sync::{Notify, watch};
    use tokio_uring::BufResult;
    use tokio_uring::net::{TcpListener, TcpStream};

    use super::common::{self, AcceptPolicy, Answer, parse_args};

    /// The exit status when io_uring cannot be used here.
    const UNAVAILABLE: u8 = 2;

    /// The most output copied into the write buffer for one write: a
    /// write takes what the socket's send buffer has room for anyway.
    const WRITE_MAX: usize = 256 * 1024;

    pub fn main() -> ExitCode {
        let args = match parse_args("uring_server", std::env::args().skip(1)) {
            Ok(args) => args,
            Err(err) => {
                eprintln!("{err}");
                return ExitCode::FAILURE;
            }
        };
        let rt = match tokio_uring::Runtime::new(&tokio_uring::builder()) {
            Ok(rt) => rt,
            Err(err) => {
                eprintln!(
                    "uring_server: io_uring is not available here ({err}); it needs Linux 5.11 \
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
                        let (live, stop, config) = (live.clone(), stop.clone(), config.clone());
                        tokio_uring::spawn(async move {
                            handle(stream, config, stop).await;
                            live.count.set(live.count.get() - 1);
                            live.ended.notify_waiters();
                        });
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
        let drain = async {
            while live.count.get() > 0 {
                live.ended.notified().await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
        Ok(())
    }

    /// Serves one connection to its end, then closes it; a graceful
    /// shutdown starts when `stop` turns true.
    pub async fn handle(stream: TcpStream, config: Config, stop: watch::Receiver<bool>) {
        let _ = stream.set_nodelay(true);
        let mut conn = Conn::new(stream, config, stop);
        if let Err(err) = serve(&mut conn).await {
            if common::worth_logging(&err) {
                eprintln!("connection: {err}");
            }
        }
        conn.close().await;
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
                match common::answer(&mut req) {
                    Answer::Page(res) => {
                        conn.session.send_response(res)?;
                        continue;
                    }
                    Answer::Echo(head) => head,
                }
            };
            // Accept the body before answering: a final response sent to
            // a client that waits for `100 Continue` would refuse it.
            conn.session.send_continue();
            conn.session.send_head(head)?;
            while let Some(data) = conn.call(ServerSession::read_data).await? {
                conn.session.send_data(data)?;
                conn.call(|s, now| Ok(s.poll_flush(now))).await?;
            }
            conn.session.finish(None)?;
        }
        Ok(())
    }

    /// A read submitted to the kernel, owning its buffer.
    type Read = Pin<Box<dyn Future<Output = BufResult<usize, Vec<u8>>>>>;

    /// How a wait for the kernel ended.
    enum Woke<T> {
        /// The operation completed.
        Done(T),
        /// The session's deadline passed first.
        Deadline,
        /// The shutdown signal fired first.
        Stop,
    }

    /// One connection: the socket, its session, and the driver's state.
    pub struct Conn {
        /// The socket; `None` once the session said to close it.
        stream: Option<Rc<TcpStream>>,
        /// The session: every protocol decision is its.
        pub session: ServerSession,
        /// The read in flight, if one is: kept across session calls, so
        /// that a deadline or a shutdown never cancels it.
        reading: Option<Read>,
        /// The read buffer while no read is in flight.
        read_buf: Vec<u8>,
        /// The write buffer while no write is in flight.
        write_buf: Vec<u8>,
        stop: watch::Receiver<bool>,
        /// The shutdown signal was passed to the session.
        stopping: bool,
        /// A write was dropped in flight (at the write timeout).
        write_abandoned: bool,
    }

    impl Conn {
        /// A session for a connection made now, over `stream`.
        pub fn new(stream: TcpStream, config: Config, stop: watch::Receiver<bool>) -> Self {
            Conn {
                stream: Some(Rc::new(stream)),
                session: ServerSession::new(config, Instant::now()),
                reading: None,
                read_buf: Vec::new(),
                write_buf: Vec::new(),
                stop,
                stopping: false,
                write_abandoned: false,
            }
        }

        /// Makes a session call until it is ready, doing the I/O it asks
        /// for, each raced against the session's deadline.
        pub async fn call<V>(
            &mut self,
            mut call: impl FnMut(&mut ServerSession, Instant) -> Result<Step<V>, SessionError>,
        ) -> io::Result<V> {
            let mut now = Instant::now();
            loop {
                if !self.stopping && *self.stop.borrow() {
                    self.stopping = true;
                    self.session.shutdown(now);
                }
                match call(&mut self.session, now)? {
                    Step::Ready(value) => return Ok(value),
                    Step::Io(Io::Read) => now = self.read().await?,
                    Step::Io(Io::Write) => now = self.write().await?,
                    Step::Io(Io::Shutdown) => {
                        if let Some(stream) = &self.stream {
                            let _ = stream.shutdown(Shutdown::Write);
                        }
                    }
                    Step::Io(_) => self.close_socket(),
                }
            }
        }

        /// Writes what is left, lingers if the session says so, and
        /// closes. Errors are ignored: the connection is over either way.
        pub async fn close(&mut self) {
            let _ = self.call(|s, now| Ok(s.close(now))).await;
            self.close_socket();
        }

        /// `Io::Close`. An operation dropped before it completes is not
        /// cancelled by tokio-uring: it keeps the descriptor open until
        /// the kernel completes it, which a read of a silent peer never
        /// does. Shutting both directions down first completes it (a
        /// read with 0 bytes, a write with an error), so that the close
        /// happens now.
        fn close_socket(&mut self) {
            if let Some(stream) = self.stream.take() {
                if self.reading.take().is_some() || self.write_abandoned {
                    let _ = stream.shutdown(Shutdown::Both);
                }
            }
        }

        /// `Io::Read`: waits for the read in flight (submitting one first
        /// if none is) or the deadline, and tells the session which came;
        /// the time it did.
        async fn read(&mut self) -> io::Result<Instant> {
            let stream = self.stream.clone().ok_or(io::ErrorKind::NotConnected)?;
            let (session, spare) = (&mut self.session, &mut self.read_buf);
            let reading = self.reading.get_or_insert_with(|| {
                // As much as the session's buffer has room for now: it
                // grows while reads fill it, and shrinks to a few hundred
                // bytes once an idle connection gave its buffers back.
                let room = {
                    let buf = session.read_buf();
                    buf.capacity() - buf.len()
                };
                let mut buf = std::mem::take(spare);
                if buf.capacity() != room {
                    buf = Vec::with_capacity(room);
                }
                buf.clear();
                Box::pin(async move { stream.read(buf).await })
            });
            let woke = wait(
                reading,
                self.session.poll_timeout(),
                &mut self.stop,
                self.stopping,
            )
            .await;
            let now = Instant::now();
            match woke {
                Woke::Done((result, buf)) => {
                    self.reading = None;
                    match result {
                        Ok(n) => {
                            // Copy 1: the bytes read, into the session's
                            // buffer.
                            self.session.read_buf().extend_from_slice(&buf[..n]);
                            self.session.handle_read(n, now);
                        }
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                        Err(err) => return Err(err),
                    }
                    self.read_buf = buf;
                }
                Woke::Deadline => self.session.handle_timeout(now),
                Woke::Stop => {
                    self.stopping = true;
                    self.session.shutdown(now);
                }
            }
            Ok(now)
        }

        /// `Io::Write`: writes the session's output (or its first
        /// [`WRITE_MAX`] bytes) in one operation, raced against the write
        /// deadline; the time it ended.
        async fn write(&mut self) -> io::Result<Instant> {
            let stream = self.stream.clone().ok_or(io::ErrorKind::NotConnected)?;
            let mut buf = std::mem::take(&mut self.write_buf);
            buf.clear();
            {
                // Copy 2: the output, into the buffer the kernel writes
                // from.
                let out = self.session.output();
                let mut slices = [IoSlice::new(&[]); 64];
                let n = out.io_slices(&mut slices);
                for slice in &slices[..n] {
                    let take = slice.len().min(WRITE_MAX - buf.len());
                    buf.extend_from_slice(&slice[..take]);
                    if buf.len() == WRITE_MAX {
                        break;
                    }
                }
            }
            let mut writing = Box::pin(stream.write(buf).submit());
            // The shutdown signal does not interrupt a write: it is looked
            // at once the write is over.
            let woke = wait(
                &mut writing,
                self.session.poll_timeout(),
                &mut self.stop,
                true,
            )
            .await;
            let now = Instant::now();
            match woke {
                Woke::Done((result, buf)) => {
                    self.write_buf = buf;
                    match result {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => self.session.handle_write(n, now),
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                        Err(err) => return Err(err),
                    }
                }
                // The write is dropped: the session drops its output and
                // closes at once.
                Woke::Deadline => {
                    self.write_abandoned = true;
                    self.session.handle_timeout(now);
                }
                // Not watched during a write.
                Woke::Stop => {}
            }
            Ok(now)
        }
    }

    /// Waits for `op`, the deadline `at` or (unless `stopping`) the
    /// shutdown signal, whichever comes first. `op` is only polled: it is
    /// neither dropped nor cancelled here.
    async fn wait<T, F: Future<Output = T> + Unpin>(
        op: &mut F,
        at: Option<Instant>,
        stop: &mut watch::Receiver<bool>,
        stopping: bool,
    ) -> Woke<T> {
        let deadline = async {
            match at {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            done = op => Woke::Done(done),
            () = deadline => Woke::Deadline,
            () = stopped(stop), if !stopping => Woke::Stop,
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
