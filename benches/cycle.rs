//! One request -> response exchange in memory, in steady state: a
//! `ClientConnection` sends a GET, a `ServerConnection` decodes it and
//! answers `Hello, World!`, the client decodes the response to its `End`.
//! Both connections and both read buffers are reused across iterations, as
//! on a keep-alive connection.
//!
//! Beside it, the same exchange with the same bytes on the wire, built on
//! httparse: each side parses with httparse into `http` types, built as
//! hyper builds them (zero-copy, `h1proto_test_support::corpus::zero_copy_request`), and
//! writes its message by hand into a reused buffer (no framing checks, no
//! state).
//!
//! `cargo bench --bench cycle -- --warm-up-time 1 --measurement-time 3`
//!
//! Allocations per exchange are printed first, with the share of them that
//! building the `http::Request` and `http::Response` costs the application.

mod common;

use std::hint::black_box;

use bytes::{Buf, Bytes, BytesMut};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use h1proto::{ClientConnection, Config, Event, Segments, ServerConnection};
use h1proto_test_support::corpus;
use http::header::{CONTENT_TYPE, HOST, HeaderValue};
use http::{Request, Response};

const HELLO: &str = "Hello, World!";

fn request() -> Request<Bytes> {
    Request::get("/")
        .header(HOST, "example.com")
        .body(Bytes::new())
        .unwrap()
}

fn response() -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(HELLO.as_bytes()));
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    res
}

/// Moves everything queued into the peer's read buffer, as one write and
/// one read would; returns the number of segments the write had.
fn transfer(out: &mut Segments, to: &mut BytesMut) -> usize {
    let segments = out.segment_count();
    while out.has_remaining() {
        let chunk = out.chunk();
        to.extend_from_slice(chunk);
        let n = chunk.len();
        out.advance(n);
    }
    segments
}

struct Pair {
    client: ClientConnection,
    server: ServerConnection,
    /// What the server has read.
    server_in: BytesMut,
    /// What the client has read.
    client_in: BytesMut,
}

impl Pair {
    fn new() -> Self {
        Pair {
            client: ClientConnection::new(Config::default()),
            server: ServerConnection::new(Config::default()),
            server_in: BytesMut::with_capacity(8 * 1024),
            client_in: BytesMut::with_capacity(8 * 1024),
        }
    }

    /// One exchange; returns the response body length.
    fn exchange(&mut self, req: Request<Bytes>, res: Response<Bytes>) -> usize {
        self.client.sender().send_request(req).unwrap();
        transfer(self.client.output(), &mut self.server_in);
        let mut res = Some(res);
        while let Some(event) = self.server.poll_event(&mut self.server_in).unwrap() {
            if let Event::End(_) = event {
                self.server
                    .sender()
                    .send_response(res.take().unwrap())
                    .unwrap();
            }
        }
        transfer(self.server.output(), &mut self.client_in);
        let mut body = 0;
        loop {
            match self.client.poll_event(&mut self.client_in).unwrap() {
                Some(Event::Data(data)) => body += data.len(),
                Some(Event::End(_)) => return body,
                Some(_) => {}
                None => panic!("response incomplete"),
            }
        }
    }
}

/// A request head written by hand, as an httparse-based client would.
fn write_request(req: &Request<Bytes>, out: &mut BytesMut) {
    out.extend_from_slice(req.method().as_str().as_bytes());
    out.extend_from_slice(b" ");
    out.extend_from_slice(req.uri().path().as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in req.headers() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// A response written by hand, `Content-Length` last.
fn write_response(res: &Response<Bytes>, out: &mut BytesMut) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(res.status().as_str().as_bytes());
    out.extend_from_slice(b" ");
    out.extend_from_slice(res.status().canonical_reason().unwrap().as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in res.headers() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = res.body().len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(b"content-length: ");
    out.extend_from_slice(&digits[i..]);
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(res.body());
}

/// The same exchange on httparse, writing the same bytes by hand.
struct Baseline {
    server_in: BytesMut,
    client_in: BytesMut,
}

impl Baseline {
    fn new() -> Self {
        Baseline {
            server_in: BytesMut::with_capacity(8 * 1024),
            client_in: BytesMut::with_capacity(8 * 1024),
        }
    }

    fn exchange(&mut self, req: Request<Bytes>, res: Response<Bytes>) -> usize {
        // Client: the request.
        write_request(&req, &mut self.server_in);
        drop(req);
        // Server: parse into http types, answer.
        let (parsed, _) = corpus::zero_copy_request(&mut self.server_in);
        black_box(&parsed);
        drop(parsed);
        write_response(&res, &mut self.client_in);
        // Client: parse the response, split the body off.
        let (head, framing) = corpus::zero_copy_response(&mut self.client_in);
        black_box(&head);
        let n = framing.content_length.unwrap() as usize;
        let body = self.client_in.split_to(n).freeze();
        body.len()
    }
}

/// Both implementations must put the same bytes on the wire.
fn check() {
    let mut client = ClientConnection::new(Config::default());
    client.sender().send_request(request()).unwrap();
    let mut ours_req = BytesMut::new();
    transfer(client.output(), &mut ours_req);
    let mut server = ServerConnection::new(Config::default());
    let mut buf = ours_req.clone();
    while let Some(event) = server.poll_event(&mut buf).unwrap() {
        if let Event::End(_) = event {
            server.sender().send_response(response()).unwrap();
        }
    }
    let mut ours_res = BytesMut::new();
    transfer(server.output(), &mut ours_res);

    let mut theirs_req = BytesMut::new();
    write_request(&request(), &mut theirs_req);
    let mut theirs_res = BytesMut::new();
    write_response(&response(), &mut theirs_res);
    assert_eq!(ours_req, theirs_req);
    assert_eq!(ours_res, theirs_res);
}

fn cycle(c: &mut Criterion) {
    check();
    let mut pair = Pair::new();
    let mut base = Baseline::new();
    assert_eq!(pair.exchange(request(), response()), HELLO.len());
    assert_eq!(base.exchange(request(), response()), HELLO.len());

    common::report("cycle/build Request + Response (application)", || {
        (request(), response())
    });
    common::report_batched(
        "cycle/h1proto (messages built in setup)",
        || (request(), response()),
        |(req, res)| pair.exchange(req, res),
    );
    common::report_batched(
        "cycle/httparse+http (messages built in setup)",
        || (request(), response()),
        |(req, res)| base.exchange(req, res),
    );

    let mut group = c.benchmark_group("cycle");
    group.throughput(Throughput::Elements(1));
    group.bench_function("h1proto", |b| {
        b.iter(|| pair.exchange(black_box(request()), black_box(response())))
    });
    group.bench_function("httparse+http", |b| {
        b.iter(|| base.exchange(black_box(request()), black_box(response())))
    });
    group.finish();
}

criterion_group!(benches, cycle);
criterion_main!(benches);
