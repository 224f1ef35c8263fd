//! The upstream side: a client session over a TCP connection, and the
//! pool of idle keep-alive connections.
//!
//! The driver is written here rather than taken from `adapter::tokio`
//! because a proxy needs two things a plain client does not: reading while
//! it writes (an upstream may answer before the request body is through,
//! and stop reading it), and a non-blocking look at an idle connection
//! before reusing it.

use std::future::pending;
use std::io::{self, IoSlice};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use h1proto::conn::State;
use h1proto::{ClientSession, Config, ErrorKind, Io, Session, SessionError, Step};
use http::StatusCode;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// Idle connections kept at most; more are closed when released.
const MAX_IDLE: usize = 64;

/// One connection to the upstream.
pub struct Upstream {
    stream: TcpStream,
    /// The session; the proxy queues requests into it directly.
    pub session: ClientSession,
    /// Bytes received over the connection's life.
    received: u64,
    /// It came from the pool: it served a request before.
    reused: bool,
    /// Input read while writing, at most: past it, reading waits for the
    /// session to take what it has.
    read_cap: usize,
}

/// Why an exchange with the upstream failed.
#[derive(Debug)]
pub enum UpstreamError {
    /// Connecting, reading or writing failed.
    Io(io::Error),
    /// The session refused what the upstream sent, or a timeout passed.
    Session(SessionError),
}

impl From<io::Error> for UpstreamError {
    fn from(err: io::Error) -> Self {
        UpstreamError::Io(err)
    }
}

impl UpstreamError {
    /// The status the client gets when nothing of the response was
    /// forwarded yet: 504 when the upstream was too slow, 502 otherwise.
    pub fn status(&self) -> StatusCode {
        let late = match self {
            UpstreamError::Io(err) => err.kind() == io::ErrorKind::TimedOut,
            UpstreamError::Session(SessionError::Peer(err)) => matches!(
                err.kind(),
                ErrorKind::ResponseTimeout | ErrorKind::BodyTimeout | ErrorKind::WriteTimeout
            ),
            UpstreamError::Session(_) => false,
        };
        if late {
            StatusCode::GATEWAY_TIMEOUT
        } else {
            StatusCode::BAD_GATEWAY
        }
    }

    /// `true` when the connection just ended (closed or reset by the
    /// upstream), as a pooled connection does when the upstream timed it
    /// out while the request was on its way: the one case worth a retry.
    pub fn is_closed_connection(&self) -> bool {
        match self {
            UpstreamError::Io(err) => matches!(
                err.kind(),
                io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::UnexpectedEof
                    | io::ErrorKind::WriteZero
            ),
            UpstreamError::Session(SessionError::Peer(err)) => {
                err.kind() == ErrorKind::UnexpectedEof
            }
            UpstreamError::Session(_) => false,
        }
    }
}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamError::Io(err) => err.fmt(f),
            UpstreamError::Session(SessionError::Peer(err))
                if err.kind() == ErrorKind::UnexpectedEof =>
            {
                f.write_str("the upstream closed the connection without a complete response")
            }
            UpstreamError::Session(err) => err.fmt(f),
        }
    }
}

impl Upstream {
    /// Connects, within the head timeout.
    async fn connect(addr: &str, config: &Config) -> io::Result<Upstream> {
        let connect = TcpStream::connect(addr);
        let stream = match config.timeouts.head {
            Some(limit) => tokio::time::timeout(limit, connect)
                .await
                .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??,
            None => connect.await?,
        };
        stream.set_nodelay(true)?;
        Ok(Upstream {
            stream,
            session: ClientSession::new(config.clone(), Instant::now()),
            received: 0,
            reused: false,
            read_cap: config.limits.max_head_bytes + config.read_size,
        })
    }

    /// Bytes received over the connection's life.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// `true` when the connection came from the pool.
    pub fn is_reused(&self) -> bool {
        self.reused
    }

    /// Moves the exchange on by one I/O; `true` when the session has
    /// something new to say: bytes (or the end of the stream) came in, or
    /// a deadline passed and the session's next call reports it.
    ///
    /// While the request body is still being sent (`uploading`), it writes
    /// what is queued or, with nothing queued, waits for the upstream to
    /// say something (an early answer), with no response deadline: the
    /// upstream is waiting for the body, and the client's body timeout
    /// runs meanwhile. After that it does the I/O the session asked for
    /// (`pending`), racing the session's deadline. Input is read only when
    /// `may_read`.
    pub async fn step(
        &mut self,
        uploading: bool,
        may_read: bool,
        pending: Option<Io>,
    ) -> Result<bool, UpstreamError> {
        if !uploading {
            return match pending {
                Some(io) => self.perform(io, may_read).await,
                None => std::future::pending().await,
            };
        }
        if let Step::Io(io) = self.session.poll_write_all(Instant::now()) {
            return self.perform(io, may_read).await;
        }
        if !may_read || self.session.read_buf().len() >= self.read_cap {
            return std::future::pending().await;
        }
        self.stream.readable().await?;
        try_read(&self.stream, &mut self.session, &mut self.received)
    }

    /// Does one I/O the session asked for, racing its deadline; returns
    /// `true` when it read or the deadline passed. A write also reads when the upstream has
    /// something to say (an answer that came before the request was
    /// through), so that an upstream that stops reading cannot stall it.
    async fn perform(&mut self, io: Io, may_read: bool) -> Result<bool, UpstreamError> {
        let deadline = self.session.poll_timeout();
        let expired = async move {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => pending().await,
            }
        };
        let Upstream {
            stream,
            session,
            received,
            read_cap,
            ..
        } = self;
        match io {
            Io::Read => tokio::select! {
                read = stream.read_buf(session.read_buf()) => {
                    let n = read?;
                    *received += n as u64;
                    session.handle_read(n, Instant::now());
                    Ok(true)
                }
                () = expired => {
                    session.handle_timeout(Instant::now());
                    Ok(true)
                }
            },
            Io::Write => {
                let room = may_read && session.read_buf().len() < *read_cap;
                tokio::select! {
                    ready = stream.writable() => {
                        ready?;
                        let written = {
                            let mut slices = [IoSlice::new(&[]); 16];
                            let n = session.output().io_slices(&mut slices);
                            stream.try_write_vectored(&slices[..n])
                        };
                        match written {
                            Ok(0) => Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                            Ok(n) => {
                                session.handle_write(n, Instant::now());
                                Ok(false)
                            }
                            Err(err) if err.kind() == io::ErrorKind::WouldBlock => Ok(false),
                            Err(err) => Err(err.into()),
                        }
                    }
                    ready = stream.readable(), if room => {
                        ready?;
                        try_read(stream, session, received)
                    }
                    () = expired => {
                        session.handle_timeout(Instant::now());
                        Ok(true)
                    }
                }
            }
            // A client session neither lingers nor asks to be closed while
            // a call is pending.
            _ => Err(io::Error::from(io::ErrorKind::NotConnected).into()),
        }
    }

    /// `true` while the connection can carry another request: the session
    /// says so (its idle time has not run out, nothing said to close),
    /// and the upstream has neither closed it nor sent anything unasked.
    /// The look at the socket does not block.
    fn is_usable(&mut self, now: Instant) -> bool {
        // Every deadline that passed (giving the buffers back, the idle
        // timeout), in one call.
        self.session.handle_timeout(now);
        let conn = self.session.connection();
        let idle = conn.requests_in_flight() == 0
            && conn.send_state() == State::Idle
            && conn.recv_state() == State::Idle;
        if !idle || !self.session.is_reusable() {
            return false;
        }
        let mut byte = [0u8; 1];
        matches!(self.stream.try_read(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

/// Reads what the stream has without waiting; `true` when it read.
fn try_read(
    stream: &TcpStream,
    session: &mut ClientSession,
    received: &mut u64,
) -> Result<bool, UpstreamError> {
    match stream.try_read_buf(session.read_buf()) {
        Ok(n) => {
            *received += n as u64;
            session.handle_read(n, Instant::now());
            Ok(true)
        }
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => Ok(false),
        Err(err) => Err(err.into()),
    }
}

/// The upstream's address, and its idle connections, most recently used
/// last.
pub struct Pool {
    addr: String,
    config: Config,
    idle: Mutex<Vec<Upstream>>,
    /// Connections opened over the pool's life.
    opened: AtomicUsize,
}

impl Pool {
    pub fn new(addr: String, config: Config) -> Self {
        Pool {
            addr,
            config,
            idle: Mutex::new(Vec::new()),
            opened: AtomicUsize::new(0),
        }
    }

    /// The most recently used idle connection that is still usable (the
    /// others met on the way are closed), or a new one.
    pub async fn get(&self) -> io::Result<Upstream> {
        let now = Instant::now();
        loop {
            let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(mut upstream) = idle else {
                let upstream = Upstream::connect(&self.addr, &self.config).await?;
                self.opened.fetch_add(1, Ordering::SeqCst);
                return Ok(upstream);
            };
            if upstream.is_usable(now) {
                upstream.reused = true;
                return Ok(upstream);
            }
        }
    }

    /// Keeps a connection whose exchange is complete for the next request,
    /// if it may carry one and holds no byte it was not asked for;
    /// otherwise closes it.
    pub fn put(&self, mut upstream: Upstream) {
        let unread = upstream.session.take_read_buf();
        if !unread.is_empty() || !upstream.is_usable(Instant::now()) {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(upstream);
        }
    }

    /// Closes the idle connections whose idle time ran out
    /// (`Timeouts::idle`) or that the upstream closed.
    pub fn sweep(&self) {
        let now = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.retain_mut(|upstream| upstream.is_usable(now));
    }

    /// Idle connections held now.
    #[allow(dead_code)] // for the tests
    pub fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Connections opened so far (each counted once connected, before
    /// anything is sent on it).
    #[allow(dead_code)] // for the tests
    pub fn opened(&self) -> usize {
        self.opened.load(Ordering::SeqCst)
    }
}
