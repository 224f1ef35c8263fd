//! The runtime-neutral driver (`h1proto::adapter::driver`) on smol: the four
//! operations over `futures-io` and `async-io`'s timer, a server with the
//! example servers' routes, real requests over TCP, the head timeout, and
//! a graceful shutdown fanned out with `adapter::driver::Shutdown`.

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown as Half, SocketAddr, TcpListener, TcpStream};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use h1proto::adapter::driver::{Conn, RuntimeIo, Shutdown, ShutdownSignal};
use h1proto::{Config, ServerSession, Session};
use http::{Method, Response, StatusCode};
use smol::future::FutureExt;
use smol::io::{AsyncRead, AsyncWrite};
use smol::{Async, Executor, Timer};

/// The four operations on smol: a readiness runtime, so each poll starts
/// afresh and nothing is kept between polls but the timer.
// docs/sessions.md shows what follows, to the end marker, verbatim.
struct SmolIo {
    io: Async<TcpStream>,
    timer: Timer,
    /// The deadline the timer is set for.
    at: Option<Instant>,
}

impl RuntimeIo for SmolIo {
    fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_read(cx, session.read_slice())
    }

    fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>> {
        let mut slices = [IoSlice::new(&[]); 16];
        let out = session.output();
        let n = out.io_slices(&mut slices);
        Pin::new(&mut self.io).poll_write_vectored(cx, &slices[..n])
    }

    fn poll_shutdown_write(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.io.get_ref().shutdown(Half::Write))
    }

    fn poll_sleep_until(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        if self.at != Some(at) {
            self.at = Some(at);
            self.timer.set_at(at);
        }
        Pin::new(&mut self.timer).poll(cx).map(|_| ())
    }
}
// End of what docs/sessions.md shows.

/// One connection: `GET /` answers `Hello, World!`, `POST /echo` streams
/// the body back as it comes, anything else is 404.
async fn serve(stream: Async<TcpStream>, config: Config, signal: ShutdownSignal) -> io::Result<()> {
    let io = SmolIo {
        io: stream,
        timer: Timer::never(),
        at: None,
    };
    let mut conn = Conn::new(io, ServerSession::new(config, Instant::now()));
    conn.shutdown_on(signal);
    let result = async {
        while let Some(req) = conn.call(ServerSession::next_request).await? {
            match (req.method(), req.uri().path()) {
                (&Method::POST, "/echo") => {
                    conn.sender().send_head(Response::new(()))?;
                    while let Some(data) = conn.call(ServerSession::read_data).await? {
                        conn.sender().send_data(data)?;
                        conn.call(ServerSession::poll_flush).await?;
                    }
                    conn.sender().finish(None)?;
                }
                (_, "/") => conn
                    .sender()
                    .send_response(Response::new("Hello, World!"))?,
                // A long poll with nothing to say: given up when the
                // client goes.
                (_, "/wait") => {
                    let work = async {
                        let _counted = GivenUp;
                        std::future::pending::<()>().await;
                    };
                    conn.while_connected(work).await?;
                }
                _ => {
                    let mut res = Response::new(Bytes::from_static(b"Not Found\n"));
                    *res.status_mut() = StatusCode::NOT_FOUND;
                    conn.sender().send_response(res)?;
                }
            }
        }
        Ok(())
    }
    .await;
    conn.call(ServerSession::close).await?;
    result
}

/// How many `/wait` requests' work was dropped.
static GIVEN_UP: AtomicUsize = AtomicUsize::new(0);

/// Counts a drop into [`GIVEN_UP`].
struct GivenUp;

impl Drop for GivenUp {
    fn drop(&mut self) {
        GIVEN_UP.fetch_add(1, Ordering::SeqCst);
    }
}

/// A running server: its address, its shutdown and its thread (which ends
/// once every connection has).
struct Server {
    addr: SocketAddr,
    shutdown: Shutdown,
    thread: JoinHandle<()>,
}

fn start(config: Config) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = Async::new(listener).unwrap();
    let shutdown = Shutdown::new();
    let stop = shutdown.clone();
    let thread = std::thread::spawn(move || {
        let ex = Arc::new(Executor::new());
        smol::block_on(ex.run(async {
            loop {
                let stopped = async {
                    stop.signal().await;
                    Err(io::ErrorKind::Interrupted.into())
                };
                let accepted = listener.accept().or(stopped).await;
                if stop.is_begun() {
                    break;
                }
                let Ok((stream, _)) = accepted else { continue };
                stream.get_ref().set_nodelay(true).unwrap();
                let (guard, signal, config) = (stop.enter(), stop.signal(), config.clone());
                ex.spawn(async move {
                    let _guard = guard;
                    let _ = serve(stream, config, signal).await;
                })
                .detach();
            }
            // Bounded: a connection that never ends does not hold the
            // server up for ever.
            let late = async {
                Timer::after(Duration::from_secs(10)).await;
            };
            stop.drained().or(late).await;
        }));
    });
    Server {
        addr,
        shutdown,
        thread,
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// Reads until `end` has come (or the stream ends).
fn read_until(stream: &mut TcpStream, end: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).ends_with(end) {
        let n = stream.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(got).unwrap()
}

fn read_to_end(stream: &mut TcpStream) -> String {
    let mut got = String::new();
    stream.read_to_string(&mut got).unwrap();
    got
}

#[test]
fn serves_keep_alive_pipelined_and_streamed_requests() {
    let server = start(Config::default());
    let mut client = connect(server.addr);
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let both = read_until(&mut client, "Not Found\n");
    assert!(both.starts_with("HTTP/1.1 200 OK\r\n"), "{both}");
    assert!(
        both.contains("\r\n\r\nHello, World!HTTP/1.1 404 Not Found\r\n"),
        "{both}"
    );
    // The driver hands the session the wall clock: both are dated.
    assert_eq!(both.matches("\r\ndate: ").count(), 2, "{both}");
    // The echo streams: the first piece comes back before the second is
    // sent, and `100 Continue` comes first when asked for.
    client
        .write_all(
            b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\
              Transfer-Encoding: chunked\r\n\r\n",
        )
        .unwrap();
    // The head is queued before the body is read: `100 Continue` goes
    // ahead of it.
    let interim = read_until(&mut client, "chunked\r\n\r\n");
    assert!(
        interim.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
        "{interim}"
    );
    client.write_all(b"5\r\nhello\r\n").unwrap();
    let first = read_until(&mut client, "hello\r\n");
    assert_eq!(first, "5\r\nhello\r\n");
    client.write_all(b"6\r\n world\r\n0\r\n\r\n").unwrap();
    let rest = read_until(&mut client, "0\r\n\r\n");
    assert_eq!(rest, "6\r\n world\r\n0\r\n\r\n");
    // Still open: one more request on the same connection.
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let last = read_to_end(&mut client);
    assert!(last.starts_with("HTTP/1.1 200 OK\r\n"), "{last}");
    assert!(last.contains("connection: close\r\n"), "{last}");
    assert!(last.ends_with("Hello, World!"), "{last}");
    // Closed on our side too: the server's lingering close ends at once.
    drop(client);
    server.shutdown.begin();
    server.thread.join().unwrap();
}

#[test]
fn a_malformed_request_gets_400_and_the_connection_closes() {
    let server = start(Config::default());
    let mut client = connect(server.addr);
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
        .unwrap();
    let got = read_to_end(&mut client);
    assert!(got.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{got}");
    assert!(got.contains("connection: close\r\n"), "{got}");
    // Dated with the clock of the read that brought it.
    assert!(got.contains("\r\ndate: "), "{got}");
    drop(client);
    server.shutdown.begin();
    server.thread.join().unwrap();
}

#[test]
fn the_head_timeout_is_honoured() {
    let mut config = Config::default();
    config.timeouts.head = Some(Duration::from_millis(300));
    let server = start(config);
    // Part of a head, then nothing: 408, then the connection closes.
    let mut client = connect(server.addr);
    let started = Instant::now();
    client.write_all(b"GET / HTTP/1.1\r\nHo").unwrap();
    let got = read_to_end(&mut client);
    let took = started.elapsed();
    assert!(got.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{got}");
    // Dated with the clock of the timeout.
    assert!(got.contains("\r\ndate: "), "{got}");
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // Nothing at all: closed without an answer.
    let mut silent = connect(server.addr);
    let started = Instant::now();
    assert_eq!(read_to_end(&mut silent), "");
    assert!(started.elapsed() < Duration::from_secs(3));
    drop((client, silent));
    server.shutdown.begin();
    server.thread.join().unwrap();
}

#[test]
fn a_graceful_shutdown_finishes_the_exchange_in_progress_and_closes_idle_ones() {
    let server = start(Config::default());
    let mut idle = connect(server.addr);
    idle.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let first = read_until(&mut idle, "Hello, World!");
    assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
    // A request whose body is still coming when the shutdown begins.
    let mut busy = connect(server.addr);
    busy.write_all(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234")
        .unwrap();
    let head = read_until(&mut busy, "01234\r\n");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert_eq!(server.shutdown.live(), 2);
    server.shutdown.begin();
    // The idle connection closes at once.
    assert_eq!(read_to_end(&mut idle), "");
    // The exchange in progress is finished, then the connection closes.
    busy.write_all(b"56789").unwrap();
    let rest = read_to_end(&mut busy);
    assert_eq!(rest, "5\r\n56789\r\n0\r\n\r\n");
    drop((idle, busy));
    // The server thread ends once both connections have: no new
    // connection is taken.
    server.thread.join().unwrap();
    assert_eq!(server.shutdown.live(), 0);
    assert!(TcpStream::connect(server.addr).is_err());
}

/// docs/sessions.md shows the `RuntimeIo` implementations of this file
/// and of `driver_uring.rs` verbatim, between their markers: the code
/// a reader copies is the code these tests run.
#[test]
fn the_docs_show_the_tested_drivers_verbatim() {
    let docs = include_str!("../../docs/sessions.md");
    let sources = [
        ("driver_smol.rs", include_str!("driver_smol.rs")),
        ("driver_uring.rs", include_str!("driver_uring.rs")),
    ];
    for (name, source) in sources {
        let start = "// docs/sessions.md shows what follows, to the end marker, verbatim.\n";
        let from = source.find(start).expect("the start marker") + start.len();
        let to = source
            .find("// End of what docs/sessions.md shows.\n")
            .expect("the end marker");
        assert!(
            docs.contains(&source[from..to]),
            "docs/sessions.md no longer shows {name}'s driver verbatim"
        );
    }
}

/// `Conn::while_connected`: a client that goes while its request's work
/// waits has the work dropped at once, and its connection ends.
#[test]
fn the_work_of_a_client_that_went_is_dropped() {
    let server = start(Config::default());
    let before = GIVEN_UP.load(Ordering::SeqCst);
    let mut client = connect(server.addr);
    client
        .write_all(b"GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(GIVEN_UP.load(Ordering::SeqCst), before, "dropped too soon");
    drop(client);
    let gone = Instant::now();
    while GIVEN_UP.load(Ordering::SeqCst) == before && gone.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        GIVEN_UP.load(Ordering::SeqCst) > before,
        "the work was kept"
    );
    // Every connection has ended: the shutdown's wait for them is short.
    server.shutdown.begin();
    server.thread.join().unwrap();
    assert!(
        gone.elapsed() < Duration::from_secs(5),
        "a connection lived on"
    );
}
