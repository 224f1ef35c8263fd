//! No allocation per request: a keep-alive `ServerSession`, driven as a
//! driver drives it (the bytes read, the request taken, answered, the
//! answer written, the wait for the next request), allocates nothing once
//! it has served a few requests, when the application answers in the
//! request's field map as the examples do. Counted with a per-thread
//! allocation counter.

use std::time::Instant;

use bytes::{Buf, Bytes};
use h1proto::{Config, Io, ServerSession, Session, Step};
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Request, Response};

/// Allocations made by this thread (the binary counts with the test
/// allocator).
fn allocations() -> usize {
    h1proto_test_support::alloc::thread_allocations()
}

/// curl's `GET /`.
const CURL_GET: &[u8] =
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n";

/// A browser's request, with longer values and more fields.
const BROWSER_GET: &[u8] = b"GET /articles/2024/x?utm_source=newsletter&page=2 HTTP/1.1\r\n\
Host: www.example.com\r\nConnection: keep-alive\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
Accept-Encoding: gzip, deflate, br\r\nCookie: session=3f9a1c2e7b4d4e0f9a8b7c6d5e4f3a2b\r\n\r\n";

/// `Hello, World!` in the request's field map, emptied: no map is made
/// for the response, and the request is left the response's empty one.
fn hello(req: &mut Request<()>) -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(b"Hello, World!"));
    let headers = res.headers_mut();
    std::mem::swap(headers, req.headers_mut());
    headers.clear();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    res
}

/// Allocations per read of `input` (`requests` requests in one read) on
/// one keep-alive session, in steady state, and the bytes answered.
fn per_read(input: &[u8], requests: usize) -> (usize, usize) {
    let now = Instant::now();
    let mut session = ServerSession::new(Config::default(), now);
    let exchange = |session: &mut ServerSession| {
        let mut answered = 0;
        session.read_buf().extend_from_slice(input);
        session.handle_read(input.len(), now);
        let mut served = 0;
        loop {
            match session.next_request(now).expect("a valid request") {
                Step::Ready(Some(mut req)) => {
                    // The body, if any, read to its end.
                    while let Step::Ready(Some(data)) = session.read_data(now).expect("a body") {
                        assert!(!data.is_empty());
                    }
                    let res = hello(&mut req);
                    session.sender().send_response(res).expect("a response");
                    served += 1;
                }
                Step::Io(Io::Write) => {
                    let out = session.output();
                    let n = out.remaining();
                    answered += n;
                    out.advance(n);
                    session.handle_write(n, now);
                }
                Step::Io(Io::Read) => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(served, requests);
        assert!(session.poll_timeout().is_some());
        answered
    };
    for _ in 0..16 {
        exchange(&mut session);
    }
    let before = allocations();
    let answered: usize = (0..200).map(|_| exchange(&mut session)).sum();
    ((allocations() - before).div_ceil(200), answered / 200)
}

#[test]
fn a_keep_alive_exchange_allocates_nothing() {
    for head in [CURL_GET, BROWSER_GET] {
        let (allocations, answered) = per_read(head, 1);
        assert!(answered > 0);
        assert_eq!(allocations, 0, "{}", String::from_utf8_lossy(head));
    }
}

/// A small upload.
const POST_FORM: &[u8] = b"POST /form HTTP/1.1\r\nHost: a\r\n\
Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 11\r\n\r\nname=value&";

#[test]
fn an_exchange_with_a_body_allocates_nothing() {
    let (allocations, _) = per_read(POST_FORM, 1);
    assert_eq!(allocations, 0);
}

#[test]
fn pipelined_exchanges_allocate_nothing() {
    let three = [CURL_GET, POST_FORM, BROWSER_GET].concat();
    let (allocations, _) = per_read(&three, 3);
    assert_eq!(allocations, 0);
}
