//! The runtime-neutral driver (`h1proto::adapter::driver`) on a completion runtime
//! (tokio-uring): owned buffers lent to the kernel, operations kept under
//! way across calls, and, as a runtime whose write takes one owned buffer
//! per call (monoio's `write`) must do it, the output written one segment
//! at a time. Where io_uring is refused (a seccomp filter,
//! `kernel.io_uring_disabled`), each test says so and passes.
#![cfg(target_os = "linux")]

use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{Shutdown as Half, SocketAddr, TcpStream as StdStream};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h1proto::adapter::driver::{Conn, RuntimeIo, Shutdown};
use h1proto::{Config, ServerSession, Session};
use http::{Method, Response};
use tokio_uring::net::{TcpListener, TcpStream};

// docs/sessions.md shows what follows, to the end marker, verbatim.
type Op<T> = Pin<Box<dyn Future<Output = (io::Result<usize>, T)>>>;

/// The four operations on tokio-uring.
struct UringIo {
    io: Rc<TcpStream>,
    reading: Option<Op<BytesMut>>,
    writing: Option<Op<Vec<Bytes>>>,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Write the first segment only, as a runtime whose write takes one
    /// owned buffer does; otherwise all of them with one `writev`.
    one_buffer: bool,
}

impl RuntimeIo for UringIo {
    fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>> {
        let op = self.reading.get_or_insert_with(|| {
            // The session's read room, owned: the kernel reads into the
            // session's buffer.
            let (io, room) = (self.io.clone(), session.lend_read_buf());
            Box::pin(async move { io.read(room).await })
        });
        let Poll::Ready((result, room)) = op.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        self.reading = None;
        session.return_read_buf(room);
        Poll::Ready(result)
    }

    fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>> {
        let one_buffer = self.one_buffer;
        let op = self.writing.get_or_insert_with(|| {
            // The output's segments, owned: no copy.
            let (io, out) = (self.io.clone(), session.lend_output());
            if one_buffer {
                // `Bytes::clone` shares the segment; the vector goes back
                // to the session as it was lent.
                let first = out.first().cloned().unwrap_or_default();
                Box::pin(async move { (io.write(first).submit().await.0, out) })
            } else {
                Box::pin(async move { io.writev(out).await })
            }
        });
        let Poll::Ready((result, out)) = op.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        self.writing = None;
        session.return_output(out);
        Poll::Ready(result)
    }

    fn poll_shutdown_write(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.io.shutdown(Half::Write))
    }

    fn poll_sleep_until(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        let at = tokio::time::Instant::from_std(at);
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        if timer.deadline() != at {
            timer.as_mut().reset(at);
        }
        timer.as_mut().poll(cx)
    }

    /// tokio-uring does not cancel a dropped operation: it keeps the
    /// descriptor until the kernel completes it. Shutting both directions
    /// down completes a read or write under way.
    fn poll_close(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.reading.take().is_some() | self.writing.take().is_some() {
            let _ = self.io.shutdown(Half::Both);
        }
        Poll::Ready(Ok(()))
    }

    fn read_under_way(&self) -> bool {
        self.reading.is_some()
    }

    fn write_under_way(&self) -> bool {
        self.writing.is_some()
    }
}
// End of what docs/sessions.md shows.

/// `GET /big` answers 1 MiB in four segments, `POST /echo` streams the
/// body back, anything else `Hello, World!`.
async fn serve(io: UringIo, config: Config, shutdown: &Shutdown) -> io::Result<()> {
    let mut conn = Conn::new(io, ServerSession::new(config, Instant::now()));
    conn.shutdown_on(shutdown.signal());
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
                (_, "/big") => {
                    conn.sender().send_head(Response::new(()))?;
                    for byte in b"abcd" {
                        conn.sender().send_data(vec![*byte; 256 * 1024])?;
                    }
                    conn.sender().finish(None)?;
                }
                // Work that takes a while, the client watched meanwhile: a
                // read started then stays under way for the next call.
                (_, "/slow") => {
                    let work = tokio::time::sleep(Duration::from_millis(100));
                    conn.while_connected(work).await?;
                    conn.sender().send_response(Response::new("slow;"))?;
                }
                // Work that never ends: given up when the client goes.
                (_, "/wait") => conn.while_connected(std::future::pending::<()>()).await?,
                _ => conn
                    .sender()
                    .send_response(Response::new("Hello, World!"))?,
            }
        }
        Ok(())
    }
    .await;
    conn.call(ServerSession::close).await?;
    result
}

/// Serves on io_uring in a thread of its own (the accept loop lives as
/// long as the test process); `None` where io_uring is refused.
fn start(config: Config, one_buffer: bool) -> Option<(SocketAddr, Shutdown)> {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let stop = shutdown.clone();
    let (started, available) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = match tokio_uring::Runtime::new(&tokio_uring::builder()) {
            Ok(runtime) => runtime,
            Err(err) => {
                eprintln!("io_uring is not available here ({err}): skipped");
                let _ = started.send(false);
                return;
            }
        };
        let _ = started.send(true);
        runtime.block_on(async move {
            let listener = TcpListener::from_std(std_listener);
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                stream.set_nodelay(true).unwrap();
                let (guard, stop, config) = (stop.enter(), stop.clone(), config.clone());
                tokio_uring::spawn(async move {
                    let _guard = guard;
                    let io = UringIo {
                        io: Rc::new(stream),
                        reading: None,
                        writing: None,
                        timer: None,
                        one_buffer,
                    };
                    let _ = serve(io, config, &stop).await;
                });
            }
        });
    });
    available.recv().unwrap().then_some((addr, shutdown))
}

fn connect(addr: SocketAddr) -> StdStream {
    let stream = StdStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

fn read_until(stream: &mut StdStream, end: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    while !got.ends_with(end.as_bytes()) {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed early after {} bytes", got.len());
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(got).unwrap()
}

fn exchanges(one_buffer: bool) {
    let Some((addr, shutdown)) = start(Config::default(), one_buffer) else {
        return;
    };
    let mut client = connect(addr);
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /big HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let got = read_until(&mut client, "\r\n0\r\n\r\n");
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{}", &got[..100]);
    assert!(got.contains("\r\n\r\nHello, World!HTTP/1.1 200 OK\r\n"));
    for byte in ["a", "b", "c", "d"] {
        let piece = format!("\r\n40000\r\n{}\r\n", byte.repeat(256 * 1024));
        assert!(
            got.contains(&piece),
            "the {byte} segment, whole and in order"
        );
    }
    // The echo: 100 Continue, then each piece back before the next goes.
    client
        .write_all(
            b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\
              Transfer-Encoding: chunked\r\n\r\n",
        )
        .unwrap();
    let head = read_until(&mut client, "chunked\r\n\r\n");
    assert!(
        head.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
        "{head}"
    );
    client.write_all(b"5\r\nhello\r\n").unwrap();
    assert_eq!(read_until(&mut client, "hello\r\n"), "5\r\nhello\r\n");
    client.write_all(b"0\r\n\r\n").unwrap();
    assert_eq!(read_until(&mut client, "0\r\n\r\n"), "0\r\n\r\n");
    // A graceful shutdown closes the idle connection at once.
    shutdown.begin();
    let mut rest = Vec::new();
    client.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{rest:?}");
    // The connection's task ends once its lingering close does, at our
    // close.
    drop(client);
    let deadline = Instant::now() + Duration::from_secs(5);
    while shutdown.live() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(shutdown.live(), 0);
}

#[test]
fn serves_with_owned_buffers_and_writev() {
    exchanges(false);
}

#[test]
fn serves_with_one_owned_buffer_per_write() {
    exchanges(true);
}

#[test]
fn the_head_timeout_cancels_the_read_under_way() {
    let mut config = Config::default();
    config.timeouts.head = Some(Duration::from_millis(300));
    let Some((addr, _shutdown)) = start(config, true) else {
        return;
    };
    let mut client = connect(addr);
    let started = Instant::now();
    client.write_all(b"GET / HTTP/1.1\r\nHo").unwrap();
    let mut got = [0u8; 1024];
    let n = client.read(&mut got).unwrap();
    let got = String::from_utf8_lossy(&got[..n]);
    assert!(got.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{got}");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// `Conn::while_connected` on owned buffers: the read it starts while the
/// work waits brings in a pipelined request and stays under way across
/// the calls that follow; and a client that goes has its work dropped and
/// its connection ended.
#[test]
fn the_client_is_watched_while_work_waits() {
    let Some((addr, shutdown)) = start(Config::default(), false) else {
        return;
    };
    let mut client = connect(addr);
    client
        .write_all(b"GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut got = String::new();
    client.read_to_string(&mut got).unwrap();
    assert_eq!(got.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{got}");
    assert!(got.contains("\r\n\r\nslow;HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(got.ends_with("\r\n\r\nHello, World!"), "{got}");
    drop(client);

    let mut client = connect(addr);
    client
        .write_all(b"GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(shutdown.live() >= 1);
    drop(client);
    let gone = Instant::now();
    while shutdown.live() > 0 && gone.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(shutdown.live(), 0, "a connection lived on");
}
