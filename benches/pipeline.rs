//! 16 pipelined requests per read: a `ServerConnection` decodes them all
//! and answers each `Hello, World!`, then the output is drained once, as
//! one vectored write. Reports the segments (iovecs) per drain: 1 means all
//! 16 responses leave in one contiguous write.
//!
//! Beside it, the same requests parsed with httparse into `http` types
//! (zero-copy, as hyper builds them) and answered by writing the same response bytes by hand into one reused
//! buffer.
//!
//! `cargo bench --bench pipeline -- --warm-up-time 1 --measurement-time 3`

mod common;

use std::hint::black_box;
use std::io::IoSlice;

use bytes::{Buf, Bytes, BytesMut};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use h1proto::{Config, Event, ServerConnection};
use h1proto_test_support::corpus;
use http::Response;
use http::header::{CONTENT_TYPE, HeaderValue};

const DEPTH: usize = 16;
/// What wrk sends.
const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";
const RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 13\r\n\r\nHello, World!";

fn response() -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(b"Hello, World!"));
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    res
}

struct Server {
    conn: ServerConnection,
    buf: BytesMut,
    wire: Vec<u8>,
}

impl Server {
    fn new() -> Self {
        Server {
            conn: ServerConnection::new(Config::default()),
            buf: BytesMut::with_capacity(8 * 1024),
            wire: REQUEST.repeat(DEPTH),
        }
    }

    /// One read of 16 requests, every answer queued, one drain. Returns the
    /// segments of the drain and the bytes it wrote.
    fn drain(&mut self) -> (usize, usize) {
        self.buf.extend_from_slice(&self.wire);
        let mut answered = 0;
        while let Some(event) = self.conn.poll_event(&mut self.buf).unwrap() {
            if let Event::End(_) = event {
                self.conn.sender().send_response(response()).unwrap();
                answered += 1;
            }
        }
        assert_eq!(answered, DEPTH);
        let out = self.conn.output();
        let segments = out.segment_count();
        let mut written = 0;
        while out.has_remaining() {
            let mut slices = [IoSlice::new(&[]); 64];
            let n = out.io_slices(&mut slices);
            let len: usize = slices[..n].iter().map(|s| s.len()).sum();
            black_box(&slices[..n]);
            out.advance(len);
            written += len;
        }
        (segments, written)
    }
}

/// httparse + `http` types, responses written by hand into one buffer.
struct Baseline {
    buf: BytesMut,
    out: Vec<u8>,
    wire: Vec<u8>,
}

impl Baseline {
    fn new() -> Self {
        Baseline {
            buf: BytesMut::with_capacity(8 * 1024),
            out: Vec::with_capacity(8 * 1024),
            wire: REQUEST.repeat(DEPTH),
        }
    }

    fn drain(&mut self) -> (usize, usize) {
        self.buf.extend_from_slice(&self.wire);
        self.out.clear();
        while !self.buf.is_empty() {
            let (req, _) = corpus::zero_copy_request(&mut self.buf);
            black_box(req);
            let res = response();
            self.out.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
            for (name, value) in res.headers() {
                self.out.extend_from_slice(name.as_str().as_bytes());
                self.out.extend_from_slice(b": ");
                self.out.extend_from_slice(value.as_bytes());
                self.out.extend_from_slice(b"\r\n");
            }
            self.out.extend_from_slice(b"content-length: 13\r\n\r\n");
            self.out.extend_from_slice(res.body());
        }
        (1, self.out.len())
    }
}

fn pipeline(c: &mut Criterion) {
    let mut server = Server::new();
    let mut base = Baseline::new();
    let (segments, written) = server.drain();
    assert_eq!(written, RESPONSE.len() * DEPTH);
    assert_eq!(base.drain().1, written);
    assert_eq!(&base.out[..RESPONSE.len()], RESPONSE);

    let mut total = 0;
    for _ in 0..100 {
        total += server.drain().0;
    }
    println!(
        "pipeline/h1proto: {segments} segment(s) on the first drain, {:.2} per drain of {DEPTH} responses in steady state",
        total as f64 / 100.0
    );
    common::report("pipeline/h1proto (per drain of 16)", || server.drain());
    common::report("pipeline/httparse+http (per drain of 16)", || base.drain());

    let mut group = c.benchmark_group("pipeline");
    group.throughput(Throughput::Elements(DEPTH as u64));
    group.bench_function("h1proto", |b| b.iter(|| server.drain()));
    group.bench_function("httparse+http", |b| b.iter(|| base.drain()));
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
