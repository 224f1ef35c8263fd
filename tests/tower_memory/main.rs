//! The tower bridge never holds a request body whole: a 64 MiB upload,
//! sent as fast as the socket takes it, to a service that reads its body
//! slowly, raises the process's heap (server, service and client all run
//! here, counted by a test allocator) by a small fraction of the body.
//! The body is read from the connection only as the service polls it, one
//! piece at a time. This file holds one test, so nothing else allocates
//! meanwhile.

use std::convert::Infallible;
use std::io::{Read, Write};
use std::time::Duration;

use bytes::Bytes;
use h1proto::Config;
use h1proto::adapter::tokio::Server;
use h1proto::adapter::tower::{Incoming, serve_connection};
use h1proto_test_support::alloc;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};

/// The whole process is counted: this binary holds one test.
#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

// ----------------------------------------------------------------- the test

const BODY: usize = 64 << 20;
const PIECE: usize = 64 << 10;
/// What the upload may add to the heap at its peak: a 64th of the body.
const BOUND: isize = 1 << 20;

/// The byte at `offset` of the body: the client repeats one piece.
fn byte_at(offset: usize) -> u8 {
    (offset % PIECE % 251) as u8
}

/// Reads the body slowly (a pause every 16 pieces), checking every byte;
/// answers with the length read.
async fn slow_reader(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut body = req.into_body();
    let (mut len, mut pieces) = (0, 0);
    while let Some(frame) = body.frame().await {
        let data = frame.expect("a body piece").into_data().unwrap_or_default();
        for (i, &b) in data.iter().enumerate() {
            assert_eq!(b, byte_at(len + i), "byte {}", len + i);
        }
        len += data.len();
        pieces += 1;
        if pieces % 16 == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    Ok(Response::new(Full::new(Bytes::from(len.to_string()))))
}

#[test]
fn a_64_mib_upload_to_a_slow_service_is_never_held_whole() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let svc = tower_service_fn(slow_reader);
                tokio::spawn(serve_connection(
                    Server::new(stream, Config::default()),
                    svc,
                ));
            }
        });
    });
    let piece: Vec<u8> = (0..PIECE).map(byte_at).collect();
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut response = vec![0u8; 4096];

    // Warm up: the connection's task and buffers exist from here on.
    client
        .write_all(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n\0")
        .unwrap();
    let n = client.read(&mut response).unwrap();
    assert!(response[..n].ends_with(b"\r\n\r\n1"));
    std::thread::sleep(Duration::from_millis(50));
    let base = alloc::live();
    alloc::reset_peak();

    let head = format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {BODY}\r\n\r\n");
    client.write_all(head.as_bytes()).unwrap();
    for _ in 0..BODY / PIECE {
        client.write_all(&piece).unwrap();
    }
    let mut got = Vec::new();
    let want = format!("\r\n\r\n{BODY}");
    while !got.ends_with(want.as_bytes()) {
        let n = client.read(&mut response).unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&response[..n]);
    }
    let peak = alloc::peak() - base;
    println!("heap peak above the start during the upload: {peak} bytes");
    assert!(
        peak < BOUND,
        "the upload grew the heap by {peak} bytes for a {BODY}-byte body (bound {BOUND})"
    );
}

/// A tower service from an async function.
fn tower_service_fn<F, Fut>(f: F) -> ServiceFn<F>
where
    F: FnMut(Request<Incoming>) -> Fut,
{
    ServiceFn(f)
}

struct ServiceFn<F>(F);

impl<F, Fut, B> tower_service::Service<Request<Incoming>> for ServiceFn<F>
where
    F: FnMut(Request<Incoming>) -> Fut,
    Fut: Future<Output = Result<Response<B>, Infallible>>,
{
    type Response = Response<B>;
    type Error = Infallible;
    type Future = Fut;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Incoming>) -> Fut {
        (self.0)(req)
    }
}
