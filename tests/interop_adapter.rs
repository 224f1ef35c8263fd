//! The adapters' I/O contract on an in-memory stream that records every
//! call: pipelined requests read together are answered in one
//! `write_vectored`, and the README's hand-written loop does the same.

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

/// The README's "Driving a connection yourself" sample, verbatim.
mod readme {
    use bytes::{Buf, BytesMut};
    use h1proto::{Config, Event, ServerConnection};
    use std::io::{IoSlice, Read, Write};

    #[rustfmt::skip]
    pub fn serve(mut io: impl Read + Write) -> std::io::Result<()> {
        let mut conn = ServerConnection::new(Config::default());
        let mut buf = BytesMut::new();
        loop {
            loop {
                match conn.poll_event(&mut buf) {
                    Ok(Some(Event::End(_))) => {
                        let res = http::Response::new("Hello, World!");
                        conn.send_response(res).expect("a response is due");
                    }
                    Ok(Some(_)) => {} // heads and body data
                    Ok(None) => break, // need more bytes
                    Err(err) => { let _ = conn.send_error_response(&err); break; }
                }
            }
            let out = conn.output();
            while out.has_remaining() {
                let mut slices = [IoSlice::new(&[]); 16];
                let n = out.io_slices(&mut slices);
                let written = io.write_vectored(&slices[..n])?;
                out.advance(written);
            }
            if conn.is_closed() { return Ok(()); }
            let start = buf.len();
            buf.resize(start + 16 * 1024, 0);
            let n = io.read(&mut buf[start..])?;
            buf.truncate(start + n);
            if n == 0 { conn.recv_eof(); }
        }
    }
}
