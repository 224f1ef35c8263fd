//! A reverse proxy on h1proto's sessions (tokio: one single-threaded
//! runtime per worker thread, as nginx has one event loop per worker
//! process).
//!
//! ```sh
//! cargo run --release --example hello_server -- --addr 127.0.0.1:8080 &
//! cargo run --release --example proxy -- --addr 127.0.0.1:8000 --upstream 127.0.0.1:8080
//! # in another terminal:
//! curl -v http://127.0.0.1:8000/
//! ```
//!
//! Every request received on `--addr` is forwarded to `--upstream` over a
//! pool of keep-alive connections, and its response comes back. Bodies
//! stream both ways with backpressure: the proxy holds at most about
//! `Config::flush_threshold` bytes of a body at a time, never a whole one.
//! Hop-by-hop fields are removed both ways and `Via` is added (unless
//! `--no-via`); the other
//! field lines keep their order and spelling both ways (the sessions
//! decode with the wire view on, and the heads are forwarded with it, the
//! trailers with `finish_in_order`), and trailers, chunk extensions, interim responses (`100 Continue` relayed
//! from the upstream) and repeated fields pass through. A request h1proto refuses is answered by
//! the session (400 and the like) and never reaches the upstream; an
//! upstream that cannot be reached, closes without answering or sends a
//! response h1proto refuses gets the client a 502 (504 when it is too
//! slow). CONNECT is answered with 501 and `Upgrade` offers are declined.
//! `docs/proxying.md` describes the design and what a proxy built on
//! h1proto must still do itself.
//!
//! Options (`--help` lists them): `--addr HOST:PORT` (default
//! 127.0.0.1:8000), `--upstream HOST:PORT` (required), `--via NAME` (the
//! pseudonym in `Via`, default `h1proto-proxy`), `--no-via` (no `Via` at
//! all: an nginx origin with its default `gzip_proxied off` compresses
//! nothing for a request that carries `Via`; `docs/proxying.md`), and
//! `--header-timeout SECS` and `--idle-timeout SECS` over the session
//! defaults (`h1proto::Timeouts`), which apply on both sides: to clients,
//! and to upstream connections (where the idle timeout is the pool's).
//! At most `--max-connections N` client connections are served at once,
//! by all the workers together (by default half of what the example
//! servers take, the open-file limit less 32: each client connection may
//! hold an upstream one); past it, and while accepting fails (out of
//! descriptors), the accept loops wait, logging at most a line every few
//! seconds (`common::accept_loop`, the example servers' loop). A
//! command line it cannot run is refused with a plain message and status
//! 2, an address it cannot listen on with status 1. On SIGINT or SIGTERM
//! the proxy stops accepting, lets every exchange in progress finish, and
//! exits.
//!
//! Workers: one per CPU, or `TOKIO_WORKER_THREADS` of them
//! (`common::Workers`, hello_server's layout too). Each is a thread with
//! a single-threaded tokio runtime that accepts from the one listening
//! socket and serves the connections it accepted, with its own pool of
//! upstream connections; a connection never moves between threads. This is nginx's model (worker processes, each with its own
//! event loop and its own upstream `keepalive` cache), and it spares
//! what a work-stealing scheduler does per task wake-up (its queues, its
//! poll-time clock reads); a proxy's connections are many, short and
//! alike, so there is little to balance.

// What the example servers share; the proxy uses its worker layout.
#[allow(dead_code)]
#[path = "../common/mod.rs"]
pub mod common;
mod fields;
mod upstream;

use std::io::{self, IoSlice};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h1proto::adapter::tokio::{Client, Server};
use h1proto::wire::WireTrailers;
use h1proto::{
    ClientSession, Config, Event, RequestDecoder, Session, SessionError, Step, framing::BodyKind,
};
use http::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use http::{Method, Request, Response, StatusCode, Version};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use common::{AcceptPolicy, Admission};
use fields::{RequestBody, Via};
use upstream::{Pool, Upstream, describe, is_closed_connection, status};

/// How long a client that sent `Expect: 100-continue` waits for the
/// upstream's `100 Continue` before the proxy lets it send the body anyway
/// (curl waits 1 s too): an upstream that ignores the expectation is
/// waiting for the body.
const CONTINUE_WAIT: Duration = Duration::from_secs(1);

/// How often idle upstream connections are checked for their idle timeout
/// and for the upstream having closed them.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// What `--help` prints.
pub const USAGE: &str = "\
Usage: proxy --upstream HOST:PORT [options]
  --upstream HOST:PORT    where to forward every request (required)
  --addr HOST:PORT        where to listen (default 127.0.0.1:8000)
  --via NAME              the proxy's pseudonym in Via (default h1proto-proxy)
  --no-via                add no Via field (see docs/proxying.md: Via and compression)
  --header-timeout SECS   the head timeout, both sides (default 20)
  --idle-timeout SECS     the idle timeout, both sides (default 60)
  --max-connections N     client connections served at once (default: half
                          the open-file limit, less a reserve)
  -h, --help              this help
";

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.iter().any(|arg| arg == "--help" || arg == "-h") {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    // A command line the proxy cannot run: said plainly, status 2.
    let setup = parse_args(argv.into_iter()).and_then(|args| Ok((Proxy::new(&args)?, args)));
    let (proxy, args) = match setup {
        Ok(setup) => setup,
        Err(err) => {
            eprintln!("proxy: {err}");
            eprintln!("proxy: try 'proxy --help' for more information");
            return ExitCode::from(2);
        }
    };
    let count = common::workers();
    let workers = match common::Workers::listen(&args.addr, count) {
        Ok(workers) => workers,
        Err(err) => {
            eprintln!("proxy: cannot listen on {}: {err}", args.addr);
            return ExitCode::FAILURE;
        }
    };
    let addr = match workers.local_addr() {
        Ok(addr) => addr,
        Err(err) => {
            eprintln!("proxy: {err}");
            return ExitCode::FAILURE;
        }
    };
    // Each worker has a proxy of its own: its own pool of upstream
    // connections.
    let mut proxies = vec![Arc::new(proxy)];
    for _ in 1..count {
        match Proxy::new(&args) {
            Ok(proxy) => proxies.push(Arc::new(proxy)),
            Err(err) => {
                eprintln!("proxy: {err}");
                return ExitCode::from(2);
            }
        }
    }
    let admission = Admission::new(AcceptPolicy::new(args.max_connections));
    let result = workers.run(
        || println!("Proxying http://{addr}/ to {}", args.upstream),
        |index, listener, stop| run(listener, Arc::clone(&proxies[index]), &admission, stop),
    );
    if let Err(err) = result {
        eprintln!("proxy: {err}");
        return ExitCode::FAILURE;
    }
    let total = |count: fn(&Pool) -> usize| proxies.iter().map(|p| count(&p.pool)).sum::<usize>();
    println!(
        "Stopped: {} upstream connections opened, {} idle at the end",
        total(Pool::opened),
        total(Pool::idle)
    );
    ExitCode::SUCCESS
}

/// The command line.
#[derive(Debug, Clone)]
pub struct Args {
    /// `--addr HOST:PORT`: where to listen.
    pub addr: String,
    /// `--upstream HOST:PORT`: where to forward.
    pub upstream: String,
    /// `--via NAME`: the proxy's pseudonym in `Via`.
    pub via: String,
    /// `false` with `--no-via`: no `Via` is added either way (see
    /// `docs/proxying.md`, "Via and compression").
    pub send_via: bool,
    /// The session settings of both sides, with `--header-timeout` and
    /// `--idle-timeout` applied.
    pub config: Config,
    /// `--max-connections N`: client connections served at once, by all
    /// the workers together. By default half of what the example servers
    /// take (`common::default_max_connections`): each client connection
    /// may hold an upstream one.
    pub max_connections: usize,
}

impl Args {
    /// The defaults, forwarding to `upstream`. Both sides decode heads
    /// with their wire view, so that they go on in the order and spelling
    /// they came in, and read chunk extensions, so that they go on with
    /// the data they came with.
    pub fn new(upstream: impl Into<String>) -> Self {
        let mut config = Config::default();
        config.wire_view = true;
        config.chunk_extensions = true;
        Args {
            addr: String::from("127.0.0.1:8000"),
            upstream: upstream.into(),
            via: String::from("h1proto-proxy"),
            send_via: true,
            config,
            max_connections: (common::default_max_connections() / 2).max(1),
        }
    }
}

/// Reads the options (see [`USAGE`]; `--help` is the caller's).
///
/// # Errors
///
/// `InvalidInput`, with a message that says what is wrong: an unknown
/// option, one without its value, a timeout that is not a positive number
/// of seconds, no `--upstream`.
pub fn parse_args(mut args: impl Iterator<Item = String>) -> io::Result<Args> {
    let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
    let secs = |option: &str, value: String| {
        value
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                invalid(format!(
                    "{option} {value}: not a positive number of seconds"
                ))
            })
    };
    let mut parsed = Args::new(String::new());
    while let Some(arg) = args.next() {
        if arg == "--no-via" {
            parsed.send_via = false;
            continue;
        }
        let known = [
            "--addr",
            "--upstream",
            "--via",
            "--header-timeout",
            "--idle-timeout",
            "--max-connections",
        ];
        if !known.contains(&arg.as_str()) {
            return Err(invalid(format!("unknown option {arg:?}")));
        }
        let value = args
            .next()
            .ok_or_else(|| invalid(format!("{arg} needs a value")))?;
        match arg.as_str() {
            "--addr" => parsed.addr = value,
            "--upstream" => parsed.upstream = value,
            "--via" => parsed.via = value,
            "--header-timeout" => parsed.config.timeouts.head = Some(secs(&arg, value)?),
            "--max-connections" => {
                parsed.max_connections = value
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| invalid(format!("{arg} {value}: not a positive number")))?;
            }
            _ => parsed.config.timeouts.idle = Some(secs(&arg, value)?),
        }
    }
    if parsed.upstream.is_empty() {
        return Err(invalid("--upstream HOST:PORT is required".into()));
    }
    Ok(parsed)
}

/// What every connection of one proxy shares.
pub struct Proxy {
    /// The `Host` of a request that came without one (HTTP/1.0).
    host: HeaderValue,
    /// `None` with `--no-via`.
    via: Option<Via>,
    config: Config,
    /// The idle upstream connections.
    pub pool: Pool,
}

impl Proxy {
    /// A proxy with the settings of `args`.
    ///
    /// # Errors
    ///
    /// `--upstream` or `--via` cannot be a field value.
    pub fn new(args: &Args) -> io::Result<Self> {
        let invalid = |what| io::Error::new(io::ErrorKind::InvalidInput, what);
        Ok(Proxy {
            host: HeaderValue::from_str(&args.upstream)
                .map_err(|_| invalid("--upstream is not a valid Host"))?,
            via: match args.send_via {
                true => Some(
                    Via::new(&args.via)
                        .ok_or_else(|| invalid("--via is not a valid field value"))?,
                ),
                false => None,
            },
            config: args.config.clone(),
            pool: Pool::new(args.upstream.clone(), args.config.clone()),
        })
    }
}

/// One worker: accepts connections, each served by its own task, until
/// `stop` turns true; then waits (up to 30 s) for the connections to
/// finish. `admission`, which the workers share, caps the client
/// connections served at once and paces the accept loops while accepting
/// fails (out of descriptors), as in the example servers
/// (`common::accept_loop`).
pub async fn run(
    listener: TcpListener,
    proxy: Arc<Proxy>,
    admission: &Admission,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let sweeper = Arc::clone(&proxy);
    let sweeping = tokio::spawn(async move {
        let mut tick = tokio::time::interval(SWEEP_EVERY);
        loop {
            tick.tick().await;
            sweeper.pool.sweep();
        }
    });
    let mut tasks = JoinSet::new();
    let conn_stop = stop.clone();
    common::accept_loop(&listener, admission, &mut stop, &mut tasks, |stream| {
        handle(stream, Arc::clone(&proxy), conn_stop.clone())
    })
    .await;
    drop(listener);
    let drain = async { while tasks.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
    sweeping.abort();
    Ok(())
}

/// Serves one client connection to its end, then closes it; a graceful
/// shutdown starts when `stop` turns true.
pub async fn handle(stream: TcpStream, proxy: Arc<Proxy>, mut stop: watch::Receiver<bool>) {
    let _ = stream.set_nodelay(true);
    let mut server = Server::new(stream, proxy.config.clone());
    server.shutdown_on(async move {
        if stop.wait_for(|&stop| stop).await.is_err() {
            std::future::pending::<()>().await;
        }
    });
    if let Err(err) = serve(&mut server, &proxy).await {
        use io::ErrorKind::*;
        let expected = [
            InvalidData,
            TimedOut,
            ConnectionReset,
            BrokenPipe,
            UnexpectedEof,
        ];
        if !expected.contains(&err.kind()) {
            eprintln!("client connection: {err}");
        }
    }
    server.close().await;
}

/// How forwarding one exchange failed.
enum Failure {
    /// The client connection failed, or the client broke the protocol
    /// (the session has queued the error response): it closes.
    Client(io::Error),
    /// Nothing of a response was forwarded yet: the client gets one of
    /// the proxy's own, with this status.
    Upstream(StatusCode, String),
    /// The upstream failed after the response head was forwarded: cutting
    /// the client connection is the only way left to tell it.
    Cut(String),
}

/// Forwards requests until the client connection is over.
async fn serve(server: &mut Server<TcpStream>, proxy: &Proxy) -> io::Result<()> {
    // The bytes of the request last sent up that may be sent again: one
    // buffer for the connection's life, not one per request.
    let mut sent = Vec::new();
    while let Some(req) = server.next_request().await? {
        match forward(server, proxy, req, &mut sent).await {
            Ok(()) => {}
            Err(Failure::Client(err)) => return Err(err),
            Err(Failure::Upstream(status, reason)) => {
                eprintln!("upstream: {reason} ({status})");
                server
                    .sender()
                    .send_response(text(status, format!("{status}: {reason}\n")))?;
            }
            Err(Failure::Cut(reason)) => {
                eprintln!("upstream, response cut: {reason}");
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A response of the proxy's own.
fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Bytes> {
    let mut res = Response::new(body.into());
    *res.status_mut() = status;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    res
}

/// Forwards one request and its response, retrying once on a new
/// connection when a pooled one turns out to have been closed by the
/// upstream and the request is safe to send again. For that, the request's
/// bytes as queued for the upstream are copied into `sent` (a copy of the
/// head's bytes, where a copy of the head would be a field map and a wire
/// view), and a retry decodes them again into the head to send.
async fn forward(
    server: &mut Server<TcpStream>,
    proxy: &Proxy,
    req: Request<()>,
    sent: &mut Vec<u8>,
) -> Result<(), Failure> {
    if req.method() == Method::CONNECT {
        let res = text(StatusCode::NOT_IMPLEMENTED, "This proxy does not tunnel.\n");
        return server
            .sender()
            .send_response(res)
            .map_err(|err| Failure::Client(err.into()));
    }
    let client = req.version();
    let waits = server.connection().is_waiting_for_continue();
    let (mut head, ()) = req.into_parts();
    let body = fields::to_upstream(&mut head, proxy.via.as_ref(), &proxy.host, waits);
    // Safe to send again: idempotent (RFC 9110 section 9.2.2), and no body
    // byte taken from the client, since none is kept to send twice.
    let mut again = body == RequestBody::None && head.method.is_idempotent();
    loop {
        let mut upstream = proxy.pool.get().await.map_err(|err| {
            Failure::Upstream(status(&err), format!("cannot connect: {}", describe(&err)))
        })?;
        let reused = upstream.is_reused();
        let mut exchange = Exchange::new(server, proxy, &mut upstream, client);
        let keep = again.then_some(&mut *sent);
        let result = exchange.run(head, body, waits, keep).await;
        let heard = exchange.heard;
        match result {
            Ok(()) => {
                proxy.pool.put(upstream);
                return Ok(());
            }
            // The pooled connection was closed under the request, before
            // any answer came: the upstream may have dropped the
            // connection as idle just as the request left.
            Err((failure, Some(err))) if reused && !heard && is_closed_connection(&err) => {
                match std::mem::take(&mut again).then(|| decode_again(sent, &proxy.config)) {
                    Some(Some(same)) => head = same,
                    _ => return Err(failure),
                }
            }
            Err((failure, _)) => return Err(failure),
        }
    }
}

/// The head of a request the proxy queued for the upstream, decoded from
/// its bytes as queued, with the wire view (so that it goes out again as
/// it went the first time); `None` if they are not one whole head.
fn decode_again(bytes: &[u8], config: &Config) -> Option<http::request::Parts> {
    let mut decoder = RequestDecoder::with_leniency(config.limits.clone(), config.request_leniency);
    decoder.set_wire_view(true);
    let mut buf = BytesMut::from(bytes);
    match decoder.decode(&mut buf) {
        Ok(Some(Event::Head { head, .. })) if buf.is_empty() => Some(head.into_parts().0),
        _ => None,
    }
}

/// Copies the bytes queued on `upstream` into `sent` (emptied first);
/// `sent` is left empty if they are not all at hand.
fn copy_queued(upstream: &mut Client<TcpStream>, sent: &mut Vec<u8>) {
    sent.clear();
    let output = Session::output(&mut **upstream);
    let mut slices = [IoSlice::new(&[]); 8];
    let n = output.io_slices(&mut slices);
    if n < output.segment_count() {
        return;
    }
    for slice in &slices[..n] {
        sent.extend_from_slice(slice);
    }
}

/// Where the request body stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Upload {
    /// The client waits for `100 Continue`: the upstream has until then
    /// to send it (or a final answer) before the proxy reads the body.
    AwaitContinue(tokio::time::Instant),
    /// Being read from the client and sent on.
    Streaming,
    /// All sent, none to send, or no longer wanted by the upstream.
    Done,
}

/// Where the response stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Download {
    /// Waiting for the final head (interim ones are relayed).
    Head,
    /// The head was forwarded; the body is framed for the client so.
    Body(BodyKind),
    /// The upstream's response is complete, but the request body is still
    /// going up: the client's response is finished (with these trailers)
    /// once it is through, since the client session stops reading the
    /// request body once the response is complete.
    Ended(Option<Trailers>),
    /// Forwarded whole.
    Done,
}

/// Trailers to forward: the fields, and the section as received, whose
/// order and spelling they go on in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Trailers {
    fields: HeaderMap,
    wire: Option<WireTrailers>,
}

/// Ends the message a session sends, with trailers in their order and
/// spelling as received when they were (`finish_in_order`), else as the
/// map holds them (`finish`).
macro_rules! finish_with {
    ($session:expr, $trailers:expr) => {
        match $trailers {
            Some(Trailers {
                fields,
                wire: Some(wire),
            }) => $session.sender().finish_in_order(fields, &wire),
            other => $session.sender().finish(other.map(|t| t.fields)),
        }
    };
}

/// What the client side did.
enum FromClient {
    /// A piece of the request body, or its end.
    Data(io::Result<Option<Bytes>>),
    /// Queued response bytes were written.
    Flushed(io::Result<()>),
}

/// What the upstream session is asked for while the request body is
/// still going up: the part of the response due, if the client has room
/// for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Head,
    Body,
    Nothing,
}

/// What the upstream side said during the upload.
enum Up {
    /// A response head (`None`: no response is due).
    Head(Option<Response<()>>),
    /// A piece of the response body, or its end.
    Data(Option<Bytes>),
    /// The queued request bytes were written, and nothing came.
    Written,
}

/// The upstream session's call during the upload, made through the
/// adapter's `call`: it writes what is queued (the adapter reads beside a
/// write that has to wait, and the session notices an early refusal and
/// drops the rest) and is ready as soon as the part of the response
/// `want`ed came, or once everything queued is written.
fn upload_step(
    want: Want,
) -> impl FnMut(&mut ClientSession, Instant) -> Result<Step<Up>, SessionError> {
    move |session, now| {
        let written = session.poll_write_all(now)?;
        let came = match want {
            Want::Head => match session.next_response(now)? {
                Step::Ready(head) => Some(Up::Head(head)),
                Step::Io(_) => None,
            },
            Want::Body => match session.read_data(now)? {
                Step::Ready(data) => Some(Up::Data(data)),
                Step::Io(_) => None,
            },
            Want::Nothing => None,
        };
        Ok(match (came, written) {
            (Some(came), _) => Step::Ready(came),
            (None, Step::Ready(())) => Step::Ready(Up::Written),
            (None, Step::Io(io)) => Step::Io(io),
        })
    }
}

/// One request forwarded on one upstream connection: both bodies move at
/// once while the request body goes up, since an upstream may answer
/// while it reads (an echo) or before (a refusal).
struct Exchange<'a> {
    server: &'a mut Server<TcpStream>,
    proxy: &'a Proxy,
    upstream: &'a mut Client<TcpStream>,
    /// The client's HTTP version.
    client: Version,
    upload: Upload,
    /// The upstream request is chunked (and may carry trailers).
    chunked: bool,
    download: Download,
    /// Something of a response came from the upstream (for the retry
    /// decision).
    heard: bool,
}

/// A failure, and the upstream error behind it if there is one (for the
/// retry decision).
type Failed = (Failure, Option<io::Error>);

fn from_upstream(err: io::Error) -> Failed {
    (Failure::Upstream(status(&err), describe(&err)), Some(err))
}

fn from_client(err: io::Error) -> Failed {
    (Failure::Client(err), None)
}

fn cut(err: impl std::fmt::Display) -> Failed {
    (Failure::Cut(err.to_string()), None)
}

impl<'a> Exchange<'a> {
    fn new(
        server: &'a mut Server<TcpStream>,
        proxy: &'a Proxy,
        upstream: &'a mut Upstream,
        client: Version,
    ) -> Self {
        Exchange {
            server,
            proxy,
            upstream: &mut upstream.client,
            client,
            upload: Upload::Done,
            chunked: false,
            download: Download::Head,
            heard: false,
        }
    }

    /// Forwards the request and its response. A failure after the
    /// response head went to the client can only cut the connection.
    /// With `sent`, a request without a body leaves a copy of its bytes
    /// there (see [`forward`]).
    async fn run(
        &mut self,
        head: http::request::Parts,
        body: RequestBody,
        waits: bool,
        sent: Option<&mut Vec<u8>>,
    ) -> Result<(), Failed> {
        let result = self.relay(head, body, waits, sent).await;
        match result {
            Err((Failure::Upstream(_, reason), err)) if self.download != Download::Head => {
                Err((Failure::Cut(reason), err))
            }
            other => other,
        }
    }

    async fn relay(
        &mut self,
        head: http::request::Parts,
        body: RequestBody,
        waits: bool,
        sent: Option<&mut Vec<u8>>,
    ) -> Result<(), Failed> {
        let refused = |err| {
            let reason = format!("cannot forward the request: {err}");
            (
                Failure::Upstream(StatusCode::INTERNAL_SERVER_ERROR, reason),
                None,
            )
        };
        let sender = &mut self.upstream.sender();
        if body == RequestBody::None {
            sender.send_request(head).map_err(refused)?;
            if let Some(sent) = sent {
                copy_queued(self.upstream, sent);
            }
        } else {
            self.chunked = sender.send_head(head).map_err(refused)? == BodyKind::Chunked;
            self.upload = if waits {
                Upload::AwaitContinue(tokio::time::Instant::now() + CONTINUE_WAIT)
            } else {
                Upload::Streaming
            };
        }
        while self.upload != Upload::Done {
            self.upload_turn().await?;
        }
        self.download().await
    }

    /// One turn of the upload: waits for whichever comes first of a piece
    /// of the request body (while the upstream has room for it), the
    /// client taking queued response bytes, the upstream taking queued
    /// request bytes or saying something (while the client has room for
    /// it), and the end of the wait for `100 Continue`.
    ///
    /// With nothing to write, the upstream is only watched
    /// (`read_ahead`), with no response deadline: it is waiting for the
    /// body, and the client's body timeout runs meanwhile.
    async fn upload_turn(&mut self) -> Result<(), Failed> {
        let threshold = self.proxy.config.flush_threshold;
        let queued = self.server.output().len();
        let room = queued <= threshold;
        let want = match self.download {
            Download::Head if room => Want::Head,
            Download::Body(_) if room => Want::Body,
            _ => Want::Nothing,
        };
        let sending = self.upstream.output().len();
        let pump = self.upload == Upload::Streaming && room && sending <= threshold;
        let continue_at = match self.upload {
            Upload::AwaitContinue(at) => Some(at),
            _ => None,
        };
        let Exchange {
            server, upstream, ..
        } = self;
        let upstream_io = async {
            if sending == 0 {
                if want == Want::Nothing {
                    std::future::pending::<()>().await;
                }
                // What came already, then what comes next.
                match upstream.call(upload_step(want)).await? {
                    Up::Written => upstream.read_ahead().await?,
                    came => return Ok(came),
                }
            }
            upstream.call(upload_step(want)).await
        };
        let client_io = async {
            if pump {
                FromClient::Data(server.read_data().await)
            } else {
                FromClient::Flushed(server.flush().await)
            }
        };
        let wait_until = continue_at.unwrap_or_else(tokio::time::Instant::now);
        tokio::select! {
            came = upstream_io => match came.map_err(from_upstream)? {
                Up::Written => {}
                Up::Head(head) => self.response_head(head).await?,
                Up::Data(data) => self.response_data(data)?,
            },
            done = client_io, if pump || queued > 0 => match done {
                FromClient::Data(data) => self.upload_piece(data.map_err(from_client)?)?,
                FromClient::Flushed(written) => written.map_err(from_client)?,
            },
            () = tokio::time::sleep_until(wait_until), if continue_at.is_some() => {
                // Reading the body sends the client `100 Continue`.
                self.upload = Upload::Streaming;
            }
        }
        Ok(())
    }

    /// The response once the request is through: read from the upstream
    /// and queued for the client, which takes it before more is read
    /// (backpressure).
    async fn download(&mut self) -> Result<(), Failed> {
        loop {
            match self.download {
                Download::Head => {
                    let head = self.upstream.next_response().await.map_err(from_upstream)?;
                    self.response_head(head).await?;
                }
                Download::Body(_) => {
                    let data = self.upstream.read_data().await.map_err(from_upstream)?;
                    self.response_data(data)?;
                    self.server
                        .call(h1proto::ServerSession::poll_flush)
                        .await
                        .map_err(from_client)?;
                }
                Download::Ended(_) => {
                    if let Download::Ended(trailers) =
                        std::mem::replace(&mut self.download, Download::Done)
                    {
                        finish_with!(self.server, trailers).map_err(cut)?;
                    }
                }
                Download::Done => return Ok(()),
            }
        }
    }

    /// Sends a piece of the request body on, or ends it (with its
    /// trailers, if the upstream request is chunked).
    fn upload_piece(&mut self, data: Option<Bytes>) -> Result<(), Failed> {
        let chunked = self.chunked;
        let sender = &mut self.upstream.sender();
        let refused = |what: &str, err| {
            let reason = format!("cannot forward the request {what}: {err}");
            (
                Failure::Upstream(StatusCode::INTERNAL_SERVER_ERROR, reason),
                None,
            )
        };
        // Chunk extensions go on with the piece they came before, or with
        // the last-chunk, when the upstream request is chunked too.
        let extensions = self.server.chunk_extensions().filter(|_| chunked);
        if let Some(extensions) = extensions {
            sender
                .send_chunk_extensions(extensions.clone())
                .map_err(|err| refused("chunk extensions", err))?;
        }
        let queued = match data {
            Some(data) => sender.send_data(data),
            None if !self.server.is_request_body_read() => {
                // The client session stopped reading without the body
                // ending: never send it up as complete.
                return Err((Failure::Client(io::ErrorKind::UnexpectedEof.into()), None));
            }
            None => {
                self.upload = Upload::Done;
                let trailers = self.server.trailers().cloned().map(|fields| Trailers {
                    fields,
                    wire: self.server.wire_trailers().cloned(),
                });
                match trailers.filter(|_| chunked) {
                    Some(Trailers {
                        fields,
                        wire: Some(wire),
                    }) => sender.finish_in_order(fields, &wire),
                    other => sender.finish(other.map(|t| t.fields)),
                }
            }
        };
        queued.map_err(|err| refused("body", err))
    }

    /// A response head from the upstream: interim ones are relayed, the
    /// final one forwarded.
    async fn response_head(&mut self, head: Option<Response<()>>) -> Result<(), Failed> {
        self.heard = true;
        match head {
            Some(res) if fields::is_interim(res.status()) => self.interim(res).await,
            Some(res) => self.final_head(res),
            None => {
                let reason = "no response is due".to_owned();
                Err((Failure::Upstream(StatusCode::BAD_GATEWAY, reason), None))
            }
        }
    }

    /// A piece of the response body, queued for the client, or its end.
    fn response_data(&mut self, data: Option<Bytes>) -> Result<(), Failed> {
        let Download::Body(kind) = self.download else {
            return Ok(());
        };
        // Chunk extensions go on with the piece they came before, or with
        // the last-chunk, in the chunked coding only (as trailers).
        if kind == BodyKind::Chunked {
            if let Some(extensions) = self.upstream.chunk_extensions() {
                self.server
                    .sender()
                    .send_chunk_extensions(extensions.clone())
                    .map_err(cut)?;
            }
        }
        match data {
            // Queued, written as the client takes it.
            Some(data) => self.server.sender().send_data(data).map_err(cut),
            None => {
                // Trailers go on only in the chunked coding (not to an
                // HTTP/1.0 client, whose body is close-delimited).
                let upstream = &self.upstream;
                let trailers = upstream.trailers().cloned().map(|fields| Trailers {
                    fields,
                    wire: upstream.wire_trailers().cloned(),
                });
                self.download = Download::Ended(trailers.filter(|_| kind == BodyKind::Chunked));
                Ok(())
            }
        }
    }

    /// Relays an interim response: `100 Continue` only to a client that
    /// still waits for it (which may then send its body), any other 1xx to
    /// every HTTP/1.1 client (RFC 9110 section 15.2: a proxy forwards
    /// them); an HTTP/1.0 client gets none.
    async fn interim(&mut self, res: Response<()>) -> Result<(), Failed> {
        if res.status() == StatusCode::CONTINUE {
            if !matches!(self.upload, Upload::AwaitContinue(_)) {
                return Ok(());
            }
            self.upload = Upload::Streaming;
        } else if self.client == Version::HTTP_10 {
            return Ok(());
        }
        let (mut head, ()) = res.into_parts();
        fields::to_client(&mut head, self.proxy.via.as_ref(), self.client);
        self.server
            .sender()
            .send_head(head)
            .map_err(|err| from_client(err.into()))?;
        self.server.flush().await.map_err(from_client)
    }

    /// Forwards the final response head. An answer other than 2xx before
    /// the request body is through refuses the rest of it (the upstream
    /// session withdraws it, RFC 9112 section 9.5), as does any answer
    /// to a client still waiting for `100 Continue`: what the client still
    /// sends is the client session's to drain or refuse.
    fn final_head(&mut self, res: Response<()>) -> Result<(), Failed> {
        let refused_body =
            !res.status().is_success() || matches!(self.upload, Upload::AwaitContinue(_));
        if refused_body {
            self.upload = Upload::Done;
        }
        let (mut head, ()) = res.into_parts();
        let bad_gateway = |reason| (Failure::Upstream(StatusCode::BAD_GATEWAY, reason), None);
        if !fields::to_client(&mut head, self.proxy.via.as_ref(), self.client) {
            let reason = "the response has a transfer coding other than chunked".to_owned();
            return Err(bad_gateway(reason));
        }
        let kind = self
            .server
            .sender()
            .send_head(head)
            .map_err(|err| bad_gateway(format!("cannot forward the response: {err}")))?;
        self.download = Download::Body(kind);
        Ok(())
    }
}
