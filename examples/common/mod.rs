//! What the example servers share: their command line, their routes, the
//! policy of their accept loops (the connection cap, the back-off on
//! accept errors and the rate-limited log), and the worker layout of
//! `hello_server` and the proxy (a single-threaded runtime per worker
//! thread).

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h1proto::Config;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use tokio::sync::{Notify, watch};

/// The command line of an example server.
#[derive(Debug, Clone)]
pub struct Args {
    /// `--addr HOST:PORT`, by default 127.0.0.1:8080.
    pub addr: String,
    /// The session settings, with `--header-timeout SECS` and
    /// `--idle-timeout SECS` applied over the defaults.
    pub config: Config,
    /// `--max-connections N`: connections served at once, by default
    /// [`default_max_connections`].
    pub max_connections: usize,
}

/// Reads `--addr`, `--header-timeout`, `--idle-timeout` and
/// `--max-connections`. `-h` or `--help` prints the usage and exits; an
/// argument it cannot read prints the usage and exits with status 2.
pub fn parse_args(name: &str, args: impl Iterator<Item = String>) -> Args {
    let usage = format!(
        "usage: {name} [--addr HOST:PORT] [--header-timeout SECS] [--idle-timeout SECS] \
         [--max-connections N]"
    );
    match read_args(args) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{usage}");
            std::process::exit(0);
        }
        Err(()) => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}

/// [`parse_args`]' work: `Ok(None)` for `--help`.
fn read_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, ()> {
    let mut parsed = Args {
        addr: String::from("127.0.0.1:8080"),
        config: Config::default(),
        max_connections: default_max_connections(),
    };
    let secs = |value: String| {
        value
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or(())
    };
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(None);
        }
        match (arg.as_str(), args.next()) {
            ("--addr", Some(value)) => parsed.addr = value,
            ("--header-timeout", Some(value)) => parsed.config.timeouts.head = Some(secs(value)?),
            ("--idle-timeout", Some(value)) => parsed.config.timeouts.idle = Some(secs(value)?),
            ("--max-connections", Some(value)) => {
                parsed.max_connections = value.parse().ok().filter(|&n| n > 0).ok_or(())?;
            }
            _ => return Err(()),
        }
    }
    Ok(Some(parsed))
}

/// What a request gets from the example servers' routes.
pub enum Answer {
    /// A whole response, made by [`Page::response`]: `GET` or `HEAD /` get
    /// `Hello, World!`; another path with a method the servers serve `404
    /// Not Found`; a method of RFC 9110 they do not serve (`TRACE`, `PUT`,
    /// ...) `405 Method Not Allowed` with `Allow`; any other method `501
    /// Not Implemented` (RFC 9110 section 9.1).
    Page(Page),
    /// `POST /echo`: this head, then the request body streamed back as it
    /// arrives (by the server's loop, in that order: a client waiting for
    /// `100 Continue` gets it, ahead of the head, when the body is read).
    Echo(Response<()>),
}

/// A `text/plain` page the routes chose: its status and its body. The
/// response is made where it is sent ([`Page::response`] as the argument
/// of `send_response`), in the place the call takes it from: made here
/// and handed back inside an [`Answer`], it would be copied on its way (a
/// response is a couple of hundred bytes), once for every request.
#[derive(Clone, Copy)]
pub struct Page {
    status: StatusCode,
    body: &'static [u8],
}

/// Routes a request. It is borrowed, not moved: a request is large, and
/// the servers drop it before they wait for the body they echo.
#[inline]
pub fn answer(req: &Request<()>) -> Answer {
    let (method, path) = (req.method(), req.uri().path());
    if (method == Method::GET || method == Method::HEAD) && path == "/" {
        Answer::Page(Page {
            status: StatusCode::OK,
            body: b"Hello, World!",
        })
    } else if method == Method::POST && path == "/echo" {
        Answer::Echo(echo_head(req))
    } else {
        Answer::Page(refusal(req))
    }
}

/// The methods the servers serve, as `Allow` lists them.
const ALLOW: &str = "GET, HEAD, POST";

/// The answer to a request no route takes: 404 for a method the servers
/// serve, 405 for another method RFC 9110 (or RFC 5789, `PATCH`) defines,
/// 501 for a method they do not know.
#[cold]
fn refusal(req: &Request<()>) -> Page {
    let (status, body): (_, &[u8]) = match req.method().as_str() {
        "GET" | "HEAD" | "POST" => (StatusCode::NOT_FOUND, b"Not Found\n"),
        "PUT" | "DELETE" | "CONNECT" | "OPTIONS" | "TRACE" | "PATCH" => {
            (StatusCode::METHOD_NOT_ALLOWED, b"Method Not Allowed\n")
        }
        _ => (StatusCode::NOT_IMPLEMENTED, b"Not Implemented\n"),
    };
    Page { status, body }
}

impl Page {
    /// The page as a response to `req`. Its fields go into the request's
    /// `HeaderMap`, emptied: that storage is reused rather than a new map
    /// allocated, and the static field values and body are not copied
    /// either. The maps are swapped, so that the request is left with the
    /// response's empty one rather than a new one made (and dropped) for
    /// it.
    #[inline]
    pub fn response(self, req: &mut Request<()>) -> Response<Bytes> {
        let mut res = Response::new(Bytes::from_static(self.body));
        *res.status_mut() = self.status;
        let headers = res.headers_mut();
        std::mem::swap(headers, req.headers_mut());
        headers.clear();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        if self.status == StatusCode::METHOD_NOT_ALLOWED {
            allow(headers);
        }
        res
    }
}

/// Adds `Allow` to a 405's fields: out of line, so that the page every
/// request gets inlines its one field's insertion alone.
#[cold]
#[inline(never)]
fn allow(headers: &mut http::HeaderMap) {
    headers.insert(http::header::ALLOW, HeaderValue::from_static(ALLOW));
}

/// The head of the echo: the request's `Content-Length` and
/// `Content-Type`; without a length, the echo is chunked.
fn echo_head(req: &Request<()>) -> Response<()> {
    let mut res = Response::new(());
    for name in [http::header::CONTENT_LENGTH, CONTENT_TYPE] {
        if let Some(value) = req.headers().get(&name) {
            res.headers_mut().insert(name, value.clone());
        }
    }
    res
}

/// Whether a connection error is worth a line on standard error: a peer's
/// protocol error was answered, a timeout is policy, and peers vanish.
pub fn worth_logging(err: &io::Error) -> bool {
    use io::ErrorKind::*;
    !matches!(
        err.kind(),
        InvalidData | TimedOut | ConnectionReset | BrokenPipe | UnexpectedEof
    )
}

// ---- The listener and the accept loop's policy --------------------------

/// The listen backlog: connections the kernel completes before the server
/// accepts them. std's and tokio's `bind` ask for 128, which a client
/// opening connections in a loop fills faster than a busy server drains
/// it; past it the kernel drops SYNs, and every client, a normal one
/// included, waits a second or more for its retry. nginx asks for 511,
/// Go for `net.core.somaxconn`; Linux caps the request at that value.
pub const BACKLOG: u32 = 1024;

/// A tokio listener on `addr` with a listen backlog of [`BACKLOG`].
pub async fn listen(addr: &str) -> io::Result<tokio::net::TcpListener> {
    let mut last = None;
    for addr in tokio::net::lookup_host(addr).await? {
        let socket = match addr {
            std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        match socket.bind(addr).and_then(|()| socket.listen(BACKLOG)) {
            Ok(listener) => return Ok(listener),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address")))
}

/// SIGINT or SIGTERM (elsewhere, Ctrl-C). The handlers are installed at
/// once, in the current tokio runtime, so that a signal that comes before
/// the future is first polled is not missed.
pub fn stop_signal() -> io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// The descriptors a server keeps besides its connections' sockets: the
/// standard streams, the listener, the runtime's poller and wakers, the
/// signal handling, a file or two. At most half the limit.
const RESERVED_FDS: u64 = 32;

/// Where the open-file limit cannot be read, the cap: below the smallest
/// common default soft limit (256, macOS), less [`RESERVED_FDS`].
const FALLBACK_MAX_CONNECTIONS: usize = 224;

/// The default of `--max-connections`: the process's soft limit on open
/// files (`RLIMIT_NOFILE`, read from `/proc/self/limits` at start-up) less
/// a reserve of 32 descriptors (at most half the limit), so that the cap,
/// not the descriptor table, is what stops a flood. Where the limit
/// cannot be read (not Linux), 224. With no limit at all, 65,536.
pub fn default_max_connections() -> usize {
    match open_files_limit() {
        Some(Some(limit)) => {
            let cap = limit - RESERVED_FDS.min(limit / 2);
            usize::try_from(cap).unwrap_or(usize::MAX).max(1)
        }
        Some(None) => 65_536,
        None => FALLBACK_MAX_CONNECTIONS,
    }
}

/// The soft `RLIMIT_NOFILE`: `Some(None)` when unlimited, `None` when it
/// cannot be read.
fn open_files_limit() -> Option<Option<u64>> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line["Max open files".len()..].split_whitespace().next()?;
    match soft {
        "unlimited" => Some(None),
        n => n.parse().ok().map(Some),
    }
}

/// How long a line the accept loop logs is kept from repeating.
pub const LOG_INTERVAL: Duration = Duration::from_secs(5);

/// The first pause after an accept error; each further error in a row
/// doubles it, up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_millis(5);

/// The longest pause between two attempts to accept.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// What an accept loop should do, and what it should log, written once for
/// both example servers. It does no I/O and reads no clock: the loop passes
/// `now`, counts its live connections, and waits where it is told.
///
/// - **The cap.** At `max` live connections the loop stops accepting until
///   one ends; new clients wait in the listen backlog (and, past it, are
///   refused by the kernel) instead of costing a descriptor, a task or a
///   thread.
/// - **Back-off.** An accept that fails for want of a resource (`EMFILE`,
///   `ENFILE`, `ENOBUFS`, `ENOMEM`, anything not about one connection), or
///   a thread that cannot be spawned, pauses the loop: 5 ms, doubling with
///   each failure in a row up to 1 s, back to nothing after an accept that
///   works. The loop may resume early when one of its connections ends,
///   since that frees a descriptor and a thread. Without the pause, a
///   listener whose backlog holds a connection it cannot take is always
///   ready, and the loop spins. Errors that concern one connection only
///   (it was aborted or reset before it was taken, `EINTR`) are retried at
///   once.
/// - **The log.** Each kind of line (failing, at the cap, working again)
///   is logged when it first occurs, then at most once every
///   [`LOG_INTERVAL`], with the number of times it recurred meanwhile:
///   a flood costs a few lines, not one per attempt.
pub struct AcceptPolicy {
    max: usize,
    backoff: Duration,
    /// Failures since the last accept that worked.
    failures: u64,
    /// The failure log, kept from repeating.
    failed: Gate,
    /// The cap log, kept from repeating.
    capped: Gate,
    /// The recovery log, kept from repeating.
    recovered: Gate,
    log: Box<dyn FnMut(&str) + Send>,
}

/// One kind of log line, kept from repeating within [`LOG_INTERVAL`].
#[derive(Default)]
struct Gate {
    /// When the line was last logged.
    last: Option<Instant>,
    /// The times it was due since and not logged.
    held: u64,
}

impl Gate {
    /// `Some(held)` when the line may be logged now (with the number of
    /// occurrences held back since it last was); counts it otherwise.
    fn pass(&mut self, now: Instant) -> Option<u64> {
        match self.last {
            Some(last) if now.saturating_duration_since(last) < LOG_INTERVAL => {
                self.held += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.held))
            }
        }
    }
}

impl AcceptPolicy {
    /// A policy for at most `max` connections at once, logging to
    /// standard error.
    pub fn new(max: usize) -> Self {
        Self::with_log(max, |line| eprintln!("{line}"))
    }

    /// The same, logging with `log`.
    pub fn with_log(max: usize, log: impl FnMut(&str) + Send + 'static) -> Self {
        AcceptPolicy {
            max: max.max(1),
            backoff: Duration::ZERO,
            failures: 0,
            failed: Gate::default(),
            capped: Gate::default(),
            recovered: Gate::default(),
            log: Box::new(log),
        }
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Whether to accept another connection with `live` of them open. If
    /// not, the loop waits for one to end (logged when the cap is first
    /// reached, then at most once per interval).
    pub fn may_accept(&mut self, live: usize, now: Instant) -> bool {
        if live < self.max {
            return true;
        }
        if let Some(held) = self.capped.pass(now) {
            let line = match held {
                0 => format!(
                    "accept: {} connections, the cap (--max-connections): \
                     new ones wait until one ends",
                    self.max
                ),
                n => format!(
                    "accept: at the cap of {} connections again ({n} times)",
                    self.max
                ),
            };
            (self.log)(&line);
        }
        false
    }

    /// A connection was accepted at `now` and is being served: the
    /// back-off ends.
    pub fn accepted(&mut self, now: Instant) {
        if self.failures > 0 && self.recovered.pass(now).is_some() {
            let line = format!("accept: working again after {} failures", self.failures);
            (self.log)(&line);
        }
        self.failures = 0;
        self.backoff = Duration::ZERO;
    }

    /// `accept` failed with `err` at `now`: how long to pause before the
    /// next attempt (zero: at once).
    pub fn accept_failed(&mut self, err: &io::Error, now: Instant) -> Duration {
        use io::ErrorKind::*;
        if matches!(
            err.kind(),
            ConnectionAborted
                | ConnectionReset
                | Interrupted
                | WouldBlock
                | NetworkDown
                | NetworkUnreachable
                | HostUnreachable
        ) {
            // That connection is gone; the next one may be fine.
            return Duration::ZERO;
        }
        self.fail("accept", err, now)
    }

    /// A thread for an accepted connection could not be spawned (the
    /// connection is dropped): how long to pause before accepting again.
    pub fn spawn_failed(&mut self, err: &io::Error, now: Instant) -> Duration {
        self.fail("spawn", err, now)
    }

    fn fail(&mut self, what: &str, err: &io::Error, now: Instant) -> Duration {
        self.failures += 1;
        self.backoff = (self.backoff * 2).clamp(FIRST_BACKOFF, MAX_BACKOFF);
        if let Some(held) = self.failed.pass(now) {
            let line = match held {
                0 => format!("{what}: {err}; backing off (logged at most every {LOG_INTERVAL:?})"),
                n => format!("{what}: {err}; {n} more failures since the last line"),
            };
            (self.log)(&line);
        }
        self.backoff
    }
}

/// What the accept loops of one server share, one loop per worker: its
/// [`AcceptPolicy`] (one cap, one back-off, one log for the whole
/// server) and the count of the connections served, by every worker,
/// against the cap.
pub struct Admission {
    policy: Mutex<AcceptPolicy>,
    /// Connections served (until their loop reaps their task), and places
    /// taken by loops about to accept.
    live: AtomicUsize,
    /// Told when a place is given back: a loop at the cap, or backing off
    /// for want of descriptors, may go on.
    ended: Notify,
}

/// A place under the cap taken by a loop about to accept: given back when
/// dropped, unless [`Place::keep`] hands it to the connection accepted.
struct Place<'a>(Option<&'a Admission>);

impl Place<'_> {
    /// The place is the accepted connection's now, given back when its
    /// loop reaps its task.
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if let Some(admission) = self.0 {
            admission.release();
        }
    }
}

#[allow(dead_code)] // as accept_loop
impl Admission {
    /// Admission under `policy`, for the workers to share.
    pub fn new(policy: AcceptPolicy) -> Self {
        Admission {
            policy: Mutex::new(policy),
            live: AtomicUsize::new(0),
            ended: Notify::new(),
        }
    }

    /// The policy, whatever another worker did while holding it.
    fn policy(&self) -> MutexGuard<'_, AcceptPolicy> {
        self.policy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for one more connection, or `None` at the cap (which the
    /// policy logs). Taken before accepting, so that the workers together
    /// never serve more than the cap, however many accept at once.
    fn reserve(&self) -> Option<Place<'_>> {
        let mut live = self.live.load(Ordering::Acquire);
        loop {
            if !self.policy().may_accept(live, Instant::now()) {
                return None;
            }
            match self.live.compare_exchange_weak(
                live,
                live + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(Place(Some(self))),
                Err(now) => live = now,
            }
        }
    }

    /// A place given back: a connection's task was reaped, or a loop did
    /// not accept.
    fn release(&self) {
        self.live.fetch_sub(1, Ordering::AcqRel);
        self.ended.notify_waiters();
    }
}

/// Accepts connections on `listener`, each served by the task `serve`
/// makes for it in `tasks`, until `stop` turns true: at most as many at
/// once, with those of the other workers sharing `admission`, as its
/// policy allows, pausing (until the back-off passes, or a connection
/// ends and gives its descriptor back) while accepting fails. Returns
/// with the connections still running, for the caller to drain.
///
/// A connection's place under the cap is given back when its task is
/// reaped here, which every wait of the loop does at once: the task
/// itself holds nothing of the count (a future that wrapped the
/// connection's, to give the place back, would hold it twice over).
#[allow(dead_code)] // the tokio servers' loop: blocking_server and uring_server accept their own way
pub async fn accept_loop<F, Fut>(
    listener: &tokio::net::TcpListener,
    admission: &Admission,
    stop: &mut tokio::sync::watch::Receiver<bool>,
    tasks: &mut tokio::task::JoinSet<()>,
    mut serve: F,
) where
    F: FnMut(tokio::net::TcpStream) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    loop {
        while tasks.try_join_next().is_some() {
            admission.release();
        }
        // Made before the place is asked for: a place given back between
        // the two still wakes the wait.
        let ended = admission.ended.notified();
        let Some(place) = admission.reserve() else {
            tokio::select! {
                Some(_) = tasks.join_next() => admission.release(),
                _ = ended => {}
                _ = stop.wait_for(|&stop| stop) => return,
            }
            continue;
        };
        let pause = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    admission.policy().accepted(Instant::now());
                    tasks.spawn(serve(stream));
                    place.keep();
                    continue;
                }
                Err(err) => admission.policy().accept_failed(&err, Instant::now()),
            },
            Some(_) = tasks.join_next() => {
                admission.release();
                continue;
            }
            _ = stop.wait_for(|&stop| stop) => return,
        };
        drop(place);
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            Some(_) = tasks.join_next() => admission.release(),
            _ = admission.ended.notified() => {}
            _ = stop.wait_for(|&stop| stop) => return,
        }
    }
}

// ---- Workers: one single-threaded runtime per thread --------------------

/// How many workers serve: `TOKIO_WORKER_THREADS` when it is set to a
/// positive number (as for tokio's own multi-threaded runtime), else one
/// for each CPU.
#[allow(dead_code)] // hello_server's and the proxy's layout; the other servers have their own
pub fn workers() -> usize {
    let set = std::env::var("TOKIO_WORKER_THREADS").ok();
    set.and_then(|n| n.trim().parse().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
}

/// A server laid out as nginx lays one out: worker threads, each with a
/// single-threaded tokio runtime that accepts from the one listening
/// socket and serves the connections it accepted, which never move to
/// another thread. It spares what a work-stealing scheduler does for every
/// task wake-up (its shared queues, cross-thread wake-ups, its poll-time
/// clock reads); a server's connections are many and alike, so there is
/// little to balance.
#[allow(dead_code)] // as workers
pub struct Workers {
    /// Each worker's runtime and its handle of the listening socket, made
    /// before the first is run, so that a server that says it listens has
    /// every worker ready; the first is this thread's.
    workers: Vec<(tokio::runtime::Runtime, tokio::net::TcpListener)>,
    /// SIGINT or SIGTERM, its handlers installed in the first runtime.
    signal: std::pin::Pin<Box<dyn Future<Output = ()> + Send>>,
}

#[allow(dead_code)] // as workers
impl Workers {
    /// Listens on `addr` (as [`listen`] does) for `count` workers (at
    /// least one) to accept from, and installs the handlers of SIGINT and
    /// SIGTERM.
    pub fn listen(addr: &str, count: usize) -> io::Result<Self> {
        let runtime = || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        };
        let first = runtime()?;
        let listener = first.block_on(listen(addr))?.into_std()?;
        let signal = {
            let _in = first.enter();
            Box::pin(stop_signal()?)
        };
        let mut runtimes = vec![first];
        for _ in 1..count {
            runtimes.push(runtime()?);
        }
        let mut workers = Vec::with_capacity(runtimes.len());
        for runtime in runtimes {
            let listener = {
                let _in = runtime.enter();
                tokio::net::TcpListener::from_std(listener.try_clone()?)?
            };
            workers.push((runtime, listener));
        }
        Ok(Workers { workers, signal })
    }

    /// The address listened on.
    pub fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.workers[0].1.local_addr()
    }

    /// Runs the workers, this thread the first: each runs the future
    /// `worker(index, listener, stop)` to its end on its own runtime, with
    /// its own handle of the listening socket. `ready` is called once
    /// every worker's thread is started (a server says there that it
    /// listens: what it runs then is what it runs until it stops). SIGINT
    /// or SIGTERM turns `stop` true in every worker, as does the first
    /// worker's end (an error included), so that no worker is left
    /// running. Returns when every worker has, with the first error.
    pub fn run<F, Fut>(self, ready: impl FnOnce(), worker: F) -> io::Result<()>
    where
        F: Fn(usize, tokio::net::TcpListener, watch::Receiver<bool>) -> Fut + Sync,
        Fut: Future<Output = io::Result<()>>,
    {
        let (stop, stopped) = watch::channel(false);
        let Workers { workers, signal } = self;
        let mut workers = workers.into_iter().enumerate();
        let Some((_, (runtime, listener))) = workers.next() else {
            return Ok(());
        };
        std::thread::scope(|scope| {
            let worker = &worker;
            let threads: Vec<_> = workers
                .map(|(index, (runtime, listener))| {
                    let stopped = stopped.clone();
                    scope.spawn(move || runtime.block_on(worker(index, listener, stopped)))
                })
                .collect();
            ready();
            let stopping = async {
                signal.await;
                let _ = stop.send(true);
                std::future::pending::<io::Result<()>>().await
            };
            let mut result = runtime.block_on(async {
                tokio::select! {
                    done = worker(0, listener, stopped) => done,
                    never = stopping => never,
                }
            });
            let _ = stop.send(true);
            for thread in threads {
                let done = thread
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("a worker panicked")));
                result = result.and(done);
            }
            result
        })
    }
}
