//! The upstream side: the pool of idle keep-alive connections to the
//! upstream, each a client session driven by the crate's tokio adapter
//! (`h1proto::adapter::tokio::Client`), and what its errors mean to the
//! client.

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use h1proto::adapter::tokio::Client;
use h1proto::{ClientSession, Config, Session};
use http::StatusCode;
use tokio::net::TcpStream;

/// Idle connections kept at most; more are closed when released.
const MAX_IDLE: usize = 64;

/// One connection to the upstream.
pub struct Upstream {
    /// The session and its driver; the proxy queues requests into it.
    /// Boxed (the session is about 1.5 KiB): taking a connection from the
    /// pool and giving it back moves a pointer, not the session.
    pub client: Box<Client<TcpStream>>,
    /// It came from the pool: it served a request before.
    reused: bool,
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
            client: Box::new(Client::new(stream, config.clone())),
            reused: false,
        })
    }

    /// `true` when the connection came from the pool.
    pub fn is_reused(&self) -> bool {
        self.reused
    }
}

/// The status the client gets for an upstream failure when nothing of the
/// response was forwarded yet: 504 when the upstream was too slow (a
/// session timeout, or connecting took too long), 502 otherwise.
pub fn status(err: &io::Error) -> StatusCode {
    if err.kind() == io::ErrorKind::TimedOut {
        StatusCode::GATEWAY_TIMEOUT
    } else {
        StatusCode::BAD_GATEWAY
    }
}

/// `true` when the connection just ended (closed or reset by the
/// upstream), as a pooled connection does when the upstream timed it out
/// while the request was on its way: the one case worth a retry.
pub fn is_closed_connection(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
            | io::ErrorKind::WriteZero
    )
}

/// The reason given to the client and the log.
pub fn describe(err: &io::Error) -> String {
    if err.kind() == io::ErrorKind::UnexpectedEof {
        "the upstream closed the connection without a complete response".to_owned()
    } else {
        err.to_string()
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

    /// The most recently used idle connection that is still alive (the
    /// others met on the way are closed), or a new one.
    pub async fn get(&self) -> io::Result<Upstream> {
        loop {
            let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(mut upstream) = idle else {
                let upstream = Upstream::connect(&self.addr, &self.config).await?;
                self.opened.fetch_add(1, Ordering::SeqCst);
                return Ok(upstream);
            };
            if upstream.client.is_alive() {
                upstream.reused = true;
                return Ok(upstream);
            }
        }
    }

    /// Keeps a connection whose exchange is complete for the next request,
    /// if it may carry one and holds no byte it was not asked for;
    /// otherwise closes it. The socket is not looked at here: [`get`]
    /// looks before it hands the connection out, and [`sweep`] while it
    /// is idle.
    ///
    /// [`get`]: Pool::get
    /// [`sweep`]: Pool::sweep
    pub fn put(&self, mut upstream: Upstream) {
        // The session's own buffer is looked at, not taken: taking it
        // would make the next response's read allocate a new one.
        let unread = !Session::read_buf(&mut **upstream.client).is_empty();
        // The session's verdict as it stands: an exchange just ended, so
        // no idle time ran out (no clock read, no timeouts applied).
        if unread || !ClientSession::is_reusable(&upstream.client) {
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
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.retain_mut(|upstream| upstream.client.is_alive());
    }

    /// Idle connections held now.
    pub fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Connections opened so far (each counted once connected, before
    /// anything is sent on it).
    pub fn opened(&self) -> usize {
        self.opened.load(Ordering::SeqCst)
    }
}
