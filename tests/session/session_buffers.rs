//! Buffer release: after `release_after` without the peer sending, a
//! session gives its buffers back. The read buffer shrinks to the bytes it
//! holds, the output buffer goes, and the heap this thread has live (counted
//! by a test allocator) falls by at least their size.

use h1proto_test_support::session as session_support;

use std::time::Instant;

use bytes::Bytes;
use h1proto::{ClientSession, Io, ServerSession, Session};
use http::{Request, Response};
use session_support::{Harness, get, secs, test_config};

/// The heap this thread has live (the binary counts with the test allocator).
fn live() -> isize {
    h1proto_test_support::alloc::thread_live()
}

/// What a read asks for while the session holds no read buffer (a new
/// connection, or once the buffers were given back), and after a first
/// read that did not fill it.
const SMALL_READ: usize = 256;

/// What a read asks for after a first read that filled its small room (a
/// read that fills it doubles the next, up to `Config::read_size`).
const BASE_READ: usize = 1024;

#[test]
fn a_new_connection_holds_no_read_buffer_until_bytes_come() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    assert!(!h.s.holds_read_buf());
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    // The release deadline passes with nothing to give back.
    assert_eq!(h.expire(), secs(1));
    assert!(!h.s.holds_read_buf());
    // A small head: the buffer stays small.
    h.send(get("/"));
    h.call(ServerSession::next_request).ready().unwrap();
    assert!(h.s.holds_read_buf());
    let buf = h.s.read_buf();
    assert!(buf.capacity() < BASE_READ, "{}", buf.capacity());
    // A second message: the connection is in use, and reads ask for a
    // base read's worth (a small buffer would be reclaimed every other
    // message).
    h.s.sender()
        .send_response(Response::new(Bytes::from_static(b"ok")))
        .unwrap();
    h.send(get("/2"));
    h.call(ServerSession::next_request).ready().unwrap();
    let buf = h.s.read_buf();
    assert!(
        buf.capacity() - buf.len() >= BASE_READ,
        "{}",
        buf.capacity()
    );

    // A head that fills the small room: the next read asks for more.
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    let long = format!("GET / HTTP/1.1\r\nHost: a\r\nX-Long: {}", "x".repeat(400));
    h.send(long);
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    let buf = h.s.read_buf();
    assert!(
        buf.capacity() - buf.len() >= BASE_READ,
        "{}",
        buf.capacity()
    );
}

#[test]
fn an_idle_server_connection_gives_both_buffers_back() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    h.send(get("/"));
    h.call(ServerSession::next_request).ready().unwrap();
    // A small body is copied into the output's tail buffer.
    h.s.sender()
        .send_response(Response::new(Bytes::from(vec![b'x'; 3000])))
        .unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    h.wire = Vec::new();
    assert!(h.s.holds_read_buf());
    let before = live();
    assert_eq!(h.expire(), secs(1));
    let freed = before - live();
    // The read buffer (small: the head was) and the output's tail
    // buffer, which held the 3000-byte body.
    assert!(freed >= (SMALL_READ / 2 + 3000) as isize, "freed {freed}");
    // It holds no read buffer now, and says so.
    assert!(!h.s.holds_read_buf());
    // The next read asks for little.
    let buf = h.s.read_buf();
    assert!(buf.is_empty());
    assert!(
        buf.capacity() >= SMALL_READ && buf.capacity() < BASE_READ,
        "{}",
        buf.capacity()
    );
    // Bytes again (a small head): it holds a buffer again, a small one.
    h.send(get("/2"));
    h.call(ServerSession::next_request).ready().unwrap();
    assert!(h.s.holds_read_buf());
    let buf = h.s.read_buf();
    assert!(buf.capacity() < BASE_READ, "{}", buf.capacity());
}

#[test]
fn a_half_received_head_keeps_only_its_bytes() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    let part = "GET /a-long-path HTTP/1.1\r\nHost: example.com\r\nUser-Agent: x";
    h.send(part);
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    let before = live();
    assert_eq!(h.expire(), secs(1));
    let freed = before - live();
    assert!(freed >= (SMALL_READ - part.len()) as isize, "freed {freed}");
    // It still holds bytes: not released.
    assert!(h.s.holds_read_buf());
    // What it holds, and room for one small read.
    let buf = h.s.read_buf();
    assert_eq!(&buf[..], part.as_bytes());
    assert!(buf.capacity() <= part.len() + SMALL_READ.max(part.len()));
    // The head still completes.
    h.send("\r\n\r\n");
    let req = h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(req.headers()["user-agent"], "x");
}

#[test]
fn a_stalled_body_read_gives_the_buffer_back_too() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    h.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc");
    h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(
        &h.call(ServerSession::read_data).ready().unwrap()[..],
        b"abc"
    );
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    let before = live();
    assert_eq!(h.expire(), secs(1));
    assert!(before - live() >= (SMALL_READ / 2) as isize);
    h.send("d");
    assert_eq!(&h.call(ServerSession::read_data).ready().unwrap()[..], b"d");
}

#[test]
fn an_idle_client_connection_gives_its_buffers_back() {
    let t0 = Instant::now();
    let mut h = Harness::new(ClientSession::new(test_config(), t0), t0);
    h.s.sender()
        .send_request(
            Request::post("/")
                .header("host", "a")
                .body(Bytes::from(vec![b'y'; 3000]))
                .unwrap(),
        )
        .unwrap();
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let res = h.call(ClientSession::next_full_response).ready().unwrap();
    assert_eq!(res.body(), "ok");
    drop(res);
    let before = live();
    assert_eq!(h.expire(), secs(1));
    let freed = before - live();
    // The read buffer and the tail buffer the request was written into.
    assert!(freed >= (SMALL_READ / 2 + 3000) as isize, "freed {freed}");
    assert!(h.s.is_reusable(), "giving buffers back is not closing");
    assert_eq!(
        h.deadline(),
        Some(secs(30)),
        "the idle timeout is still due"
    );
}

#[test]
fn a_trailer_section_cut_by_a_release_reads_as_sent() {
    // The names of the trailers are learnt (from a connection's second
    // message on); the third request's trailer section stops in a field
    // line, after names the reader found in the cache, and the connection
    // waits long enough to give its buffers back, the names learnt with
    // them.
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    let head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
    let trailers = "X-Sum: 1\r\nX-Trace: a\r\nX-Other: b\r\n\r\n";
    for cut in [None, None, Some(trailers.find("X-Other").unwrap() + 3)] {
        h.send(format!("{head}1\r\nz\r\n0\r\n"));
        h.call(ServerSession::next_request).ready().unwrap();
        let rest = match cut {
            None => trailers,
            Some(at) => {
                h.send(&trailers[..at]);
                assert_eq!(h.call(ServerSession::read_body).blocked(), Io::Read);
                // The release, and the body's own deadline not yet.
                h.expire();
                &trailers[at..]
            }
        };
        h.send(rest);
        assert_eq!(&h.call(ServerSession::read_body).ready()[..], b"z");
        let got: Vec<_> =
            h.s.trailers()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.as_str(), v.to_str().unwrap()))
                .collect();
        assert_eq!(got, [("x-sum", "1"), ("x-trace", "a"), ("x-other", "b")]);
        h.s.sender()
            .send_response(Response::new(Bytes::new()))
            .unwrap();
        h.call(ServerSession::next_request).blocked();
    }
}
