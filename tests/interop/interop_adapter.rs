//! The adapters' I/O contract on an in-memory stream that records every
//! call: pipelined requests read together are answered in one write (the
//! README's hand-written loop too), one segment goes out with a plain
//! `write` and more with `write_vectored`, and bytes survive one-byte reads
//! and short writes.

use std::io::{self, IoSlice, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use h1proto::Config;

const PIPELINED: &[u8] = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n\
    POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc\
    HEAD /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/// Hands out `input` in one read, then EOF; records each write call.
#[derive(Default)]
struct Recorder {
    input: Vec<u8>,
    writes: Vec<Vec<u8>>,
}

impl Read for Recorder {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.input.len());
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input.drain(..n);
        Ok(n)
    }
}

impl Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes.push(buf.to_vec());
        Ok(buf.len())
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.writes
            .push(bufs.iter().flat_map(|b| b.iter().copied()).collect());
        Ok(bufs.iter().map(|b| b.len()).sum())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl h1proto::adapter::blocking::Transport for Recorder {}

impl tokio::io::AsyncRead for Recorder {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let n = buf.remaining().min(this.input.len());
        buf.put_slice(&this.input[..n]);
        this.input.drain(..n);
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for Recorder {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.get_mut().write(buf))
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.get_mut().write_vectored(bufs))
    }
    fn is_write_vectored(&self) -> bool {
        true
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn answer(req: http::Request<Bytes>) -> http::Response<Bytes> {
    http::Response::new(Bytes::from(format!(
        "{} {} {}",
        req.method(),
        req.uri(),
        req.body().len()
    )))
}

fn check(writes: &[Vec<u8>]) {
    assert_eq!(writes.len(), 1, "{} writes: {writes:?}", writes.len());
    let text = String::from_utf8_lossy(&writes[0]);
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 3, "{text}");
    assert!(
        text.contains("GET /a 0") && text.contains("POST /b 3"),
        "{text}"
    );
    assert!(
        text.ends_with("connection: close\r\ncontent-length: 8\r\n\r\n")
            || text.ends_with("\r\n\r\n"),
        "{text}"
    );
    assert!(
        !text.contains("HEAD /c"),
        "a body went out for HEAD: {text}"
    );
}

#[test]
fn blocking_pipelined_responses_leave_in_one_write() {
    let mut io = Recorder {
        input: PIPELINED.to_vec(),
        ..Default::default()
    };
    h1proto::adapter::blocking::serve(&mut io, Config::default(), answer).unwrap();
    check(&io.writes);
}

#[test]
fn tokio_pipelined_responses_leave_in_one_write() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut io = Recorder {
        input: PIPELINED.to_vec(),
        ..Default::default()
    };
    rt.block_on(async {
        h1proto::adapter::tokio::serve(
            &mut io,
            Config::default(),
            |req| async move { answer(req) },
        )
        .await
        .unwrap();
    });
    check(&io.writes);
}

#[test]
fn readme_loop_answers_pipelined_requests_in_one_write() {
    let mut io = Recorder {
        input: PIPELINED.to_vec(),
        ..Default::default()
    };
    readme::serve(&mut io).unwrap();
    assert_eq!(io.writes.len(), 1, "{:?}", io.writes);
    let text = String::from_utf8_lossy(&io.writes[0]);
    assert_eq!(text.matches("Hello, World!").count(), 2, "{text}");
}

/// The README's loop answers a malformed request with the 400 the session
/// queued for it, and returns the error.
#[test]
fn readme_loop_writes_the_answer_to_a_bad_request() {
    let mut io = Recorder {
        input: b"GET / HTTP/1.1\r\n\r\n".to_vec(),
        ..Default::default()
    };
    let err = readme::serve(&mut io).unwrap_err();
    assert!(err.to_string().contains("Host"), "{err}");
    let text: String = io
        .writes
        .iter()
        .map(|w| String::from_utf8_lossy(w))
        .collect();
    assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
}

/// The README's "Driving a connection yourself" sample is the `readme`
/// module below, line for line.
#[test]
fn readme_loop_is_the_tested_one() {
    let trimmed = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.trim().replace("pub fn ", "fn "))
            .filter(|l| !l.is_empty())
            .collect()
    };
    let readme = include_str!("../../README.md");
    let start = readme
        .find("## Driving a connection yourself")
        .expect("the README section");
    let code = &readme[start..];
    let code = &code[code.find("```rust\n").unwrap() + 8..];
    let code = &code[..code.find("```").unwrap()];
    let this = include_str!("interop_adapter.rs");
    let module = &this[this.find("\nmod readme {\n").unwrap() + 14..];
    let module = &module[..module.find("\n}\n").unwrap()];
    assert_eq!(trimmed(code), trimmed(module));
}

/// The README's "Driving a connection yourself" sample, verbatim.
#[rustfmt::skip]
mod readme {
    use h1proto::adapter::driver::WallClock;
    use h1proto::{Config, Io, ServerSession, Session, SessionError, Step};
    use std::io::{self, IoSlice, Read, Write};
    use std::time::Instant;

    /// A server session, and when its driver next reads the wall clock.
    struct Conn {
        session: ServerSession,
        wall: WallClock,
    }

    impl Conn {
        /// Makes a session call until it is ready, doing the I/O it asks for.
        fn drive<T>(
            &mut self,
            io: &mut (impl Read + Write),
            mut call: impl FnMut(&mut ServerSession, Instant) -> Result<Step<T>, SessionError>,
        ) -> io::Result<T> {
            // The clock is read when the call starts and when an I/O (which
            // may have blocked) ends; every session call in between gets that
            // reading.
            let mut now = Instant::now();
            loop {
                let step = match call(&mut self.session, now).map_err(io::Error::other)? {
                    Step::Ready(value) => return Ok(value),
                    Step::Io(step) => step,
                };
                let result = match step {
                    // `read_slice()`: initialized room for `std::io::Read`
                    // (`read_buf()` for readers that fill spare capacity).
                    Io::Read => io.read(self.session.read_slice()),
                    Io::Write => {
                        let mut slices = [IoSlice::new(&[]); 16];
                        let count = self.session.output().io_slices(&mut slices);
                        io.write_vectored(&slices[..count])
                    }
                    // Io::Shutdown: shut down the sending half. Io::Close: close.
                    _ => Ok(0),
                };
                now = Instant::now();
                // Tells the session how the I/O ended (a read of 0: the peer
                // closed), and hands it the wall clock for the `Date` of its
                // answers when the second may have changed: the core has no
                // clock, and `WallClock` reads it once a second at most.
                self.wall.report(&mut self.session, step, result, now)?;
            }
        }
    }

    pub fn serve(mut io: impl Read + Write) -> io::Result<()> {
        let session = ServerSession::new(Config::default(), Instant::now());
        let mut conn = Conn { session, wall: WallClock::new() };
        let mut answer = || -> io::Result<()> {
            while let Some(_req) = conn.drive(&mut io, ServerSession::next_full_request)? {
                let res = http::Response::new("Hello, World!");
                conn.session.sender().send_response(res).expect("a response is due");
            }
            Ok(())
        };
        let served = answer();
        // After an error too: the session has queued its answer to the
        // peer's error (a 400, a 408), and `close` writes it.
        conn.drive(&mut io, ServerSession::close)?;
        served
    }
}

/// Hands out `input` at most `read_max` bytes per read, then EOF; accepts
/// at most `write_max` bytes per write call; keeps what it accepted and
/// counts plain and vectored write calls.
struct Trickle {
    input: Vec<u8>,
    read_max: usize,
    write_max: usize,
    output: Vec<u8>,
    writes: usize,
    vectored_writes: usize,
}

impl Trickle {
    fn new(input: &[u8], read_max: usize, write_max: usize) -> Self {
        Trickle {
            input: input.to_vec(),
            read_max,
            write_max,
            output: Vec::new(),
            writes: 0,
            vectored_writes: 0,
        }
    }

    fn take_input(&mut self, room: usize) -> Vec<u8> {
        let n = room.min(self.read_max).min(self.input.len());
        self.input.drain(..n).collect()
    }

    fn accept(&mut self, bufs: &[IoSlice<'_>]) -> usize {
        let mut room = self.write_max;
        for buf in bufs {
            let n = buf.len().min(room);
            self.output.extend_from_slice(&buf[..n]);
            room -= n;
        }
        self.write_max - room
    }
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let data = self.take_input(buf.len());
        buf[..data.len()].copy_from_slice(&data);
        Ok(data.len())
    }
}

impl Write for Trickle {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes += 1;
        Ok(self.accept(&[IoSlice::new(buf)]))
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.vectored_writes += 1;
        Ok(self.accept(bufs))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl h1proto::adapter::blocking::Transport for Trickle {}

impl tokio::io::AsyncRead for Trickle {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let data = this.take_input(buf.remaining());
        buf.put_slice(&data);
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for Trickle {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.get_mut().write(buf))
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.get_mut().write_vectored(bufs))
    }
    fn is_write_vectored(&self) -> bool {
        true
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

const BIG_AND_SMALL: &[u8] = b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n\
    GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/// 20000 bytes, each the index modulo 251: a byte out of place shows.
fn big_body() -> Bytes {
    (0..20_000u32).map(|i| (i % 251) as u8).collect()
}

fn big_or_small(req: http::Request<Bytes>) -> http::Response<Bytes> {
    match req.uri().path() {
        "/big" => http::Response::new(big_body()),
        _ => http::Response::new(Bytes::from_static(b"small")),
    }
}

/// The bodies of the responses in `output`, each framed by its
/// `content-length`.
fn bodies(mut output: &[u8]) -> Vec<Vec<u8>> {
    let mut bodies = Vec::new();
    while !output.is_empty() {
        let end = output
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete head")
            + 4;
        let head = String::from_utf8_lossy(&output[..end]).to_string();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        let length: usize = head
            .split("\r\n")
            .find_map(|line| line.strip_prefix("content-length: "))
            .expect("a content-length")
            .parse()
            .unwrap();
        bodies.push(output[end..end + length].to_vec());
        output = &output[end + length..];
    }
    bodies
}

fn check_big_and_small(io: &Trickle) {
    assert_eq!(bodies(&io.output), [big_body().to_vec(), b"small".to_vec()]);
}

#[test]
fn blocking_one_byte_reads_and_short_writes_keep_every_byte() {
    let mut io = Trickle::new(BIG_AND_SMALL, 1, 1000);
    h1proto::adapter::blocking::serve(&mut io, Config::default(), big_or_small).unwrap();
    check_big_and_small(&io);
}

#[test]
fn tokio_one_byte_reads_and_short_writes_keep_every_byte() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut io = Trickle::new(BIG_AND_SMALL, 1, 1000);
    rt.block_on(async {
        h1proto::adapter::tokio::serve(&mut io, Config::default(), |req| async move {
            big_or_small(req)
        })
        .await
        .unwrap();
    });
    check_big_and_small(&io);
}

/// A response in one contiguous segment goes out with a plain `write`,
/// one with a large body as its own segment with `write_vectored`.
#[test]
fn one_segment_is_a_plain_write_and_more_are_vectored() {
    let small = b"GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let mut io = Trickle::new(small, usize::MAX, usize::MAX);
    h1proto::adapter::blocking::serve(&mut io, Config::default(), big_or_small).unwrap();
    assert_eq!((io.writes, io.vectored_writes), (1, 0));

    let mut io = Trickle::new(BIG_AND_SMALL, usize::MAX, usize::MAX);
    h1proto::adapter::blocking::serve(&mut io, Config::default(), big_or_small).unwrap();
    assert_eq!((io.writes, io.vectored_writes), (0, 1));
    check_big_and_small(&io);
}
