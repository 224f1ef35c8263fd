//! The tower bridge (`adapter::tower`) over real sockets: request and
//! response bodies with trailers, framing by size hint, HEAD, pipelining,
//! `100 Continue` only once the body is polled, a service's error and
//! panic, and a protocol switch handing the stream over.

use std::convert::Infallible;
use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use h1proto::adapter::tokio::{Client, Server};
use h1proto::adapter::tower::{Incoming, OnUpgrade, serve_connection};
use h1proto::{Config, TrailerFields};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower_service::Service;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type BoxBody = http_body_util::combinators::UnsyncBoxBody<Bytes, BoxError>;
type BoxFuture = Pin<Box<dyn Future<Output = Result<Response<BoxBody>, BoxError>> + Send>>;

/// A service from an async function.
#[derive(Clone)]
struct Svc(Arc<dyn Fn(Request<Incoming>) -> BoxFuture + Send + Sync>);

impl Service<Request<Incoming>> for Svc {
    type Response = Response<BoxBody>;
    type Error = BoxError;
    type Future = BoxFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Incoming>) -> BoxFuture {
        (self.0)(req)
    }
}

fn svc<F, Fut>(f: F) -> Svc
where
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<BoxBody>, BoxError>> + Send + 'static,
{
    Svc(Arc::new(move |req| Box::pin(f(req))))
}

fn full(body: impl Into<Bytes>) -> BoxBody {
    Full::new(body.into())
        .map_err(|e| match e {})
        .boxed_unsync()
}

/// A body of `frames`, of unknown size.
fn stream(frames: Vec<Frame<Bytes>>) -> BoxBody {
    Frames(frames.into()).boxed_unsync()
}

struct Frames(std::collections::VecDeque<Frame<Bytes>>);

impl Body for Frames {
    type Data = Bytes;
    type Error = BoxError;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Poll::Ready(self.0.pop_front().map(Ok))
    }
}

/// What each connection's `serve_connection` returned.
type Outcomes = Arc<Mutex<Vec<io::Result<()>>>>;

/// Serves `svc` on 127.0.0.1, each connection on its own task, until the
/// test process ends.
fn start(svc: Svc) -> (SocketAddr, Outcomes) {
    start_with(svc, Config::default())
}

/// [`start`] with `config` (its linger cut to 200 ms).
fn start_with(svc: Svc, config: Config) -> (SocketAddr, Outcomes) {
    start_serving(svc, config, |_| {})
}

/// [`start_with`], each connection's server set up by `setup` first.
fn start_serving(
    svc: Svc,
    mut config: Config,
    setup: fn(&mut Server<tokio::net::TcpStream>),
) -> (SocketAddr, Outcomes) {
    config.timeouts.linger = Duration::from_millis(200);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let outcomes = Outcomes::default();
    let out = outcomes.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let (svc, out) = (svc.clone(), out.clone());
                let config = config.clone();
                tokio::spawn(async move {
                    let mut server = Server::new(stream, config);
                    setup(&mut server);
                    let result = serve_connection(server, svc).await;
                    out.lock().unwrap().push(result);
                });
            }
        });
    });
    (addr, outcomes)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Everything until the server closes.
fn read_to_close(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads until `got` ends with `end`.
fn read_until(s: &mut TcpStream, end: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.ends_with(end.as_bytes()) {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(got).unwrap()
}

/// Waits (at most 5 s) for `n` connections to have ended.
fn ended(o: &Outcomes, n: usize) -> Vec<String> {
    for _ in 0..500 {
        if o.lock().unwrap().len() >= n {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = o.lock().unwrap();
    o.iter()
        .map(|r| match r {
            Ok(()) => String::from("ok"),
            Err(e) => e.to_string(),
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn trailers_go_both_ways() {
    let (addr, _) = start(svc(|req: Request<Incoming>| async move {
        let collected = req.into_body().collect().await?;
        let trailers = collected.trailers().cloned().unwrap_or_default();
        let body = collected.to_bytes();
        let mut back = HeaderMap::new();
        let got = trailers.get("x-sum").cloned();
        back.insert("x-got", got.unwrap_or(HeaderValue::from_static("none")));
        let frames = vec![Frame::data(body), Frame::trailers(back)];
        Ok(Response::new(stream(frames)))
    }));
    runtime().block_on(async {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut client = Client::new(stream, Config::default());
        let req = Request::post("/")
            .header("host", "a")
            .header("te", "trailers")
            .body(())
            .unwrap();
        client.sender().send_head(req).unwrap();
        client.sender().send_data("hello ").unwrap();
        client.sender().send_data("world").unwrap();
        let mut trailers = HeaderMap::new();
        trailers.insert("x-sum", HeaderValue::from_static("42"));
        client.sender().finish(Some(trailers)).unwrap();
        let res = client
            .call(h1proto::ClientSession::next_full_response)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["transfer-encoding"], "chunked");
        assert_eq!(res.body(), "hello world");
        let trailers = &res.extensions().get::<TrailerFields>().unwrap().0;
        assert_eq!(trailers["x-got"], "42");
    });
}

#[test]
fn a_known_size_is_sent_with_content_length_and_an_unknown_one_chunked() {
    /// Two pieces, with an exact size hint.
    struct Sized(Vec<Bytes>);
    impl Body for Sized {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Ready((!self.0.is_empty()).then(|| Ok(Frame::data(self.0.remove(0)))))
        }
        fn size_hint(&self) -> SizeHint {
            SizeHint::with_exact(self.0.iter().map(|b| b.len() as u64).sum())
        }
    }
    let (addr, _) = start(svc(|req: Request<Incoming>| async move {
        let pieces = vec![Bytes::from("abc"), Bytes::from("def")];
        Ok(Response::new(if req.uri().path() == "/sized" {
            Sized(pieces).map_err(|e| match e {}).boxed_unsync()
        } else {
            stream(pieces.into_iter().map(Frame::data).collect())
        }))
    }));
    let mut s = connect(addr);
    s.write_all(b"GET /sized HTTP/1.1\r\nHost: a\r\n\r\nGET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let got = read_to_close(&mut s);
    let first = &got[..got.find("\r\n\r\n").unwrap()];
    assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(first.contains("\r\ncontent-length: 6"), "{got}");
    assert!(!first.contains("transfer-encoding"), "{got}");
    let second = &got[got.find("abcdef").unwrap() + 6..];
    assert!(second.contains("transfer-encoding: chunked\r\n"), "{got}");
    assert!(
        second.ends_with("\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n"),
        "{got}"
    );
}

#[test]
fn trailers_of_a_body_sent_with_content_length_are_dropped() {
    /// A body of known size that ends with trailers.
    struct SizedWithTrailers(Vec<Frame<Bytes>>);
    impl Body for SizedWithTrailers {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Ready((!self.0.is_empty()).then(|| Ok(self.0.remove(0))))
        }
        fn size_hint(&self) -> SizeHint {
            let data = self.0.iter().filter_map(|f| f.data_ref());
            SizeHint::with_exact(data.map(|d| d.len() as u64).sum())
        }
    }
    let (addr, outcomes) = start(svc(|_req: Request<Incoming>| async move {
        let mut trailers = HeaderMap::new();
        trailers.insert("x-t", HeaderValue::from_static("1"));
        let frames = vec![
            Frame::data(Bytes::from("abc")),
            Frame::data(Bytes::from("def")),
            Frame::trailers(trailers),
        ];
        Ok(Response::new(
            SizedWithTrailers(frames)
                .map_err(|e| match e {})
                .boxed_unsync(),
        ))
    }));
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nTE: trailers\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let got = read_to_close(&mut s);
    // Both answered on the one connection, each with its length and no
    // trailer section.
    assert_eq!(got.matches("content-length: 6\r\n").count(), 2, "{got}");
    assert_eq!(got.matches("\r\n\r\nabcdef").count(), 2, "{got}");
    assert!(!got.contains("x-t"), "{got}");
    assert_eq!(ended(&outcomes, 1), ["ok"]);
}

#[test]
fn head_gets_no_body_and_the_next_request_is_read_right() {
    let (addr, _) = start(svc(|_req: Request<Incoming>| async move {
        Ok(Response::new(full("hello")))
    }));
    let mut s = connect(addr);
    s.write_all(
        b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let got = read_to_close(&mut s);
    // The head of the first answer, then at once the second answer.
    let (first, rest) = got.split_at(got.find("\r\n\r\n").unwrap() + 4);
    assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(first.contains("\r\ncontent-length: 5\r\n"), "{got}");
    assert!(rest.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(got.ends_with("\r\n\r\nhello"), "{got}");
    assert_eq!(got.matches("hello").count(), 1, "{got}");
}

#[test]
fn no_content_and_not_modified_carry_no_body() {
    let (addr, _) = start(svc(|req: Request<Incoming>| async move {
        let (status, body) = match req.uri().path() {
            "/204" => (StatusCode::NO_CONTENT, full("")),
            "/304" => (StatusCode::NOT_MODIFIED, full("")),
            // A stream of unknown length, empty: still no body bytes.
            _ => (StatusCode::NO_CONTENT, stream(vec![])),
        };
        let mut res = Response::new(body);
        *res.status_mut() = status;
        Ok(res)
    }));
    let mut s = connect(addr);
    s.write_all(
        b"GET /204 HTTP/1.1\r\nHost: a\r\n\r\nGET /304 HTTP/1.1\r\nHost: a\r\n\r\n\
          GET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let got = read_to_close(&mut s);
    let heads: Vec<&str> = got.split("\r\n\r\n").filter(|h| !h.is_empty()).collect();
    assert_eq!(heads.len(), 3, "{got}");
    for (head, status) in heads.iter().zip(["204", "304", "204"]) {
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{got}");
        assert!(!head.contains("transfer-encoding"), "{got}");
        assert!(!head.contains("content-length"), "{got}");
    }
    assert!(got.ends_with("\r\n\r\n"), "{got}");
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let (addr, _) = start(svc(|req: Request<Incoming>| async move {
        let path = req.uri().path().to_owned();
        // The first takes longest: the order is the requests', not the
        // services' finishing order.
        let delay = 60 - 20 * path[1..].parse::<u64>().unwrap();
        tokio::time::sleep(Duration::from_millis(delay)).await;
        let body = req.into_body().collect().await?.to_bytes();
        Ok(Response::new(full(format!("{path}:{}|", body.len()))))
    }));
    let mut s = connect(addr);
    s.write_all(
        b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\n\
          POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nabcd\
          POST /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\nxy\r\n0\r\n\r\n",
    )
    .unwrap();
    let got = read_to_close(&mut s);
    let bodies: Vec<&str> = got
        .split("\r\n\r\n")
        .skip(1)
        .map(|b| &b[..b.find('|').unwrap_or(0)])
        .collect();
    assert_eq!(bodies, ["/1:0", "/2:4", "/3:2"], "{got}");
}

#[test]
fn continue_is_sent_only_once_the_body_is_polled() {
    let (addr, _) = start(svc(|req: Request<Incoming>| async move {
        if req.uri().path() == "/refuse" {
            // Never polled: no 100 Continue, and the body is not waited for.
            let mut res = Response::new(full("no"));
            *res.status_mut() = StatusCode::FORBIDDEN;
            return Ok(res);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let body = req.into_body().collect().await?.to_bytes();
        Ok(Response::new(full(body)))
    }));
    let mut s = connect(addr);
    s.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_millis(150)))
        .unwrap();
    let mut buf = [0u8; 64];
    let early = s.read(&mut buf);
    assert!(
        matches!(&early, Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)),
        "something came before the body was polled: {early:?}"
    );
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let interim = read_until(&mut s, "\r\n\r\n");
    assert_eq!(interim, "HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(b"hello").unwrap();
    let got = read_until(&mut s, "hello");
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");

    // A service that answers without polling: no 100 Continue at all.
    let mut s = connect(addr);
    s.write_all(
        b"POST /refuse HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n",
    )
    .unwrap();
    let got = read_until(&mut s, "no");
    assert!(got.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{got}");
}

#[test]
fn a_body_dropped_unread_is_drained_and_the_connection_goes_on() {
    let (addr, _) = start(svc(|req: Request<Incoming>| async move {
        Ok(Response::new(full(req.uri().path().to_owned())))
    }));
    let mut s = connect(addr);
    s.write_all(
        b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789\
          GET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let got = read_to_close(&mut s);
    assert!(got.ends_with("\r\n\r\n/a") || got.contains("/a"), "{got}");
    assert!(got.ends_with("\r\n\r\n/b"), "{got}");
}

/// A service that reads the whole body, and answers with its length or
/// with the body's error.
fn collecting() -> Svc {
    svc(|req: Request<Incoming>| async move {
        let body = req.into_body().collect().await?.to_bytes();
        Ok(Response::new(full(body.len().to_string())))
    })
}

#[test]
fn a_malformed_body_is_answered_by_the_session_and_the_service_sees_an_error() {
    let (addr, outcomes) = start(collecting());
    let mut s = connect(addr);
    s.write_all(
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n",
    )
    .unwrap();
    let got = read_to_close(&mut s);
    assert!(got.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{got}");
    assert_eq!(got.matches("HTTP/1.1").count(), 1, "{got}");
    // The peer's error, not the service's, ends the connection.
    let ended = ended(&outcomes, 1);
    assert!(ended[0].contains("chunk"), "{ended:?}");
}

#[test]
fn the_body_timeout_holds_while_the_service_waits_for_the_body() {
    let mut config = Config::default();
    config.timeouts.body = Some(Duration::from_millis(300));
    let (addr, outcomes) = start_with(collecting(), config);
    let mut s = connect(addr);
    s.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc")
        .unwrap();
    let started = std::time::Instant::now();
    let got = read_to_close(&mut s);
    assert!(got.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{got}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let ended = ended(&outcomes, 1);
    assert!(ended[0].contains("body stopped arriving"), "{ended:?}");
}

#[test]
fn a_service_error_gets_a_500_and_a_close() {
    let (addr, outcomes) = start(svc(|_req: Request<Incoming>| async move {
        Err::<Response<BoxBody>, BoxError>("the database is down".into())
    }));
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /never HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let got = read_to_close(&mut s);
    assert!(
        got.starts_with("HTTP/1.1 500 Internal Server Error\r\n"),
        "{got}"
    );
    assert!(got.contains("connection: close\r\n"), "{got}");
    assert_eq!(got.matches("HTTP/1.1").count(), 1, "{got}");
    assert_eq!(ended(&outcomes, 1), ["the database is down"]);
}

#[test]
fn a_panicking_service_costs_its_connection_only() {
    /// A body whose first poll panics.
    struct Boom;
    impl Body for Boom {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            panic!("boom in the body")
        }
    }
    let (addr, outcomes) = start(svc(|req: Request<Incoming>| async move {
        match req.uri().path() {
            "/panic" => panic!("boom in the handler"),
            "/body" => Ok(Response::new(Boom.map_err(|e| match e {}).boxed_unsync())),
            _ => Ok(Response::new(full("fine"))),
        }
    }));
    for path in ["/panic", "/body"] {
        let mut s = connect(addr);
        write!(s, "GET {path} HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        let got = read_to_close(&mut s);
        assert!(
            got.starts_with("HTTP/1.1 500 Internal Server Error\r\n"),
            "{path}: {got}"
        );
    }
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    assert!(read_to_close(&mut s).ends_with("\r\n\r\nfine"));
    let outcomes = ended(&outcomes, 3);
    assert!(outcomes[0].contains("boom in the handler"), "{outcomes:?}");
    assert!(outcomes[1].contains("boom in the body"), "{outcomes:?}");
    assert_eq!(outcomes[2], "ok");
}

#[test]
fn a_slow_stream_is_seen_as_it_goes() {
    let (addr, _) = start(svc(|_req: Request<Incoming>| async move {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        tokio::spawn(async move {
            let _ = tx.send(Frame::data(Bytes::from("first;"))).await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            let _ = tx.send(Frame::data(Bytes::from("second;"))).await;
        });
        Ok(Response::new(Channel(rx).boxed_unsync()))
    }));
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_millis(400)))
        .unwrap();
    let got = read_until(&mut s, "first;\r\n");
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(read_to_close(&mut s).ends_with("second;\r\n0\r\n\r\n"));
}

/// A body of what a channel brings, as it comes.
struct Channel(tokio::sync::mpsc::Receiver<Frame<Bytes>>);

impl Body for Channel {
    type Data = Bytes;
    type Error = BoxError;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.0.poll_recv(cx).map(|f| f.map(Ok))
    }
}

#[test]
fn an_upgrade_hands_the_stream_over_with_the_bytes_read_ahead() {
    let (addr, outcomes) = start(svc(|mut req: Request<Incoming>| async move {
        let Some(on_upgrade) = req.extensions_mut().remove::<OnUpgrade>() else {
            return Ok(Response::new(full("no upgrade offered")));
        };
        tokio::spawn(async move {
            let mut io = on_upgrade.await.expect("the stream");
            let mut buf = [0u8; 64];
            loop {
                let n = io.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                let upper = buf[..n].to_ascii_uppercase();
                io.write_all(&upper).await.unwrap();
            }
        });
        let res = Response::builder()
            .status(StatusCode::SWITCHING_PROTOCOLS)
            .header("upgrade", "shout")
            .header("connection", "upgrade")
            .body(full(""))
            .unwrap();
        Ok(res)
    }));
    let mut s = connect(addr);
    // The new protocol's first bytes come with the head.
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nUpgrade: shout\r\nConnection: upgrade\r\n\r\nhello")
        .unwrap();
    let got = read_until(&mut s, "HELLO");
    assert!(
        got.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{got}"
    );
    s.write_all(b" again").unwrap();
    assert_eq!(read_until(&mut s, " AGAIN"), " AGAIN");
    assert_eq!(ended(&outcomes, 1), ["ok"]);

    // No upgrade offered: no OnUpgrade, and a plain answer.
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    assert!(read_to_close(&mut s).ends_with("no upgrade offered"));
}

#[test]
fn an_upgrade_refused_resolves_on_upgrade_to_an_error() {
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = Mutex::new(tx);
    let (addr, _) = start(svc(move |mut req: Request<Incoming>| {
        let on_upgrade = req.extensions_mut().remove::<OnUpgrade>().unwrap();
        let tx = tx.lock().unwrap().clone();
        tokio::spawn(async move {
            let _ = tx.send(on_upgrade.await.map(drop).map_err(|e| e.to_string()));
        });
        async move { Ok(Response::new(full("stay"))) }
    }));
    let mut s = connect(addr);
    s.write_all(
        b"GET / HTTP/1.1\r\nHost: a\r\nUpgrade: shout\r\nConnection: upgrade, close\r\n\r\n",
    )
    .unwrap();
    assert!(read_to_close(&mut s).ends_with("\r\n\r\nstay"));
    let got = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(got.is_err(), "{got:?}");
}

#[test]
fn the_request_body_streams_with_its_size_hint() {
    let (addr, _) = start(svc(|req: Request<Incoming>| async move {
        let mut body = req.into_body();
        let hint = body.size_hint().exact();
        let mut pieces = 0;
        let mut len = 0;
        while let Some(frame) = body.frame().await {
            len += frame?.into_data().map(|d| d.len()).unwrap_or(0);
            pieces += 1;
        }
        assert!(body.is_end_stream());
        Ok(Response::new(full(format!(
            "{hint:?} {len} {}",
            pieces > 0
        ))))
    }));
    let mut s = connect(addr);
    s.write_all(
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc\
        POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n\
        GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let got = read_to_close(&mut s);
    let bodies: Vec<&str> = got
        .split("HTTP/1.1 200 OK")
        .skip(1)
        .map(|r| &r[r.find("\r\n\r\n").unwrap() + 4..])
        .collect();
    assert_eq!(
        bodies,
        ["Some(3) 3 true", "None 3 true", "Some(0) 0 false"],
        "{got}"
    );
}

#[test]
fn the_request_method_is_kept() {
    let (addr, _) = start(svc(|req: Request<Incoming>| async move {
        assert_eq!(req.method(), Method::DELETE);
        Ok(Response::new(full("gone")))
    }));
    let mut s = connect(addr);
    s.write_all(b"DELETE /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    assert!(read_to_close(&mut s).ends_with("gone"));
}

/// Counts the drops of what a service holds while it works: a future or a
/// body given up when its client goes.
#[derive(Clone, Default)]
struct Drops(Arc<AtomicUsize>);

struct DropGuard(Drops);

impl Drop for DropGuard {
    fn drop(&mut self) {
        (self.0).0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drops {
    fn guard(&self) -> DropGuard {
        DropGuard(self.clone())
    }

    /// Waits (at most 5 s) for `n` drops.
    fn reach(&self, n: usize) -> usize {
        for _ in 0..500 {
            if self.0.load(Ordering::SeqCst) >= n {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.0.load(Ordering::SeqCst)
    }
}

/// A service that never answers (a long poll with nothing to say), its
/// future's drops counted.
fn never_answers(drops: &Drops) -> Svc {
    let drops = drops.clone();
    svc(move |_req: Request<Incoming>| {
        let guard = drops.guard();
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok(Response::new(full("never")))
        }
    })
}

/// A service whose streamed response sends `first;` and then nothing (an
/// event stream with nothing more to say), its body's drops counted.
fn first_piece_then_nothing(drops: &Drops) -> Svc {
    piece_then_nothing(drops, Bytes::from("first;"))
}

/// [`first_piece_then_nothing`] with `piece` first.
fn piece_then_nothing(drops: &Drops, piece: Bytes) -> Svc {
    let drops = drops.clone();
    svc(move |_req: Request<Incoming>| {
        let (guard, piece) = (drops.guard(), piece.clone());
        async move {
            let (tx, rx) = tokio::sync::mpsc::channel(1);
            tx.send(Frame::data(piece)).await.unwrap();
            // The sender lives as long as the body: no end, no second piece.
            let body = Channel(rx).map_frame(move |f| {
                let _ = (&tx, &guard);
                f
            });
            Ok(Response::new(body.boxed_unsync()))
        }
    })
}

/// A client that closes its connection while its request is served has
/// the service's work dropped, and the connection ends (hyper's server
/// does the same): a handler waiting for something that never comes does
/// not keep the connection's task, its socket and its memory for ever.
#[test]
fn a_client_gone_while_its_request_is_served_cancels_the_service() {
    let drops = Drops::default();
    let (addr, outcomes) = start(never_answers(&drops));
    let mut s = connect(addr);
    s.write_all(b"GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(drops.reach(0), 0, "dropped before the client went");
    drop(s);
    assert_eq!(drops.reach(1), 1, "the service's future was kept");
    let ended = ended(&outcomes, 1);
    assert_eq!(ended.len(), 1, "the connection goes on");
    assert!(ended[0].contains("closed the connection"), "{ended:?}");
}

/// The same for a service that reads its request body: a client that
/// leaves while the body waits unread, and one that leaves half-way
/// through the body the service reads.
#[test]
fn a_client_gone_during_its_request_body_cancels_the_service() {
    let drops = Drops::default();
    let counted = drops.clone();
    let (addr, outcomes) = start(svc(move |req: Request<Incoming>| {
        let guard = counted.guard();
        async move {
            let _guard = guard;
            if req.uri().path() == "/read" {
                let _ = req.into_body().collect().await;
            }
            std::future::pending::<()>().await;
            Ok(Response::new(full("never")))
        }
    }));
    for (n, path) in ["/unread", "/read"].into_iter().enumerate() {
        let mut s = connect(addr);
        let head = format!("POST {path} HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhello");
        s.write_all(head.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(drops.reach(n), n, "{path}: dropped before the client went");
        drop(s);
        assert_eq!(
            drops.reach(n + 1),
            n + 1,
            "{path}: the service's future was kept"
        );
        assert_eq!(
            ended(&outcomes, n + 1).len(),
            n + 1,
            "{path}: the connection goes on"
        );
    }
}

/// A streamed response whose next piece is not ready: the client's going
/// drops the body (an event stream whose client left stops).
#[test]
fn a_client_gone_while_a_streamed_body_waits_drops_the_body() {
    let drops = Drops::default();
    let (addr, outcomes) = start(first_piece_then_nothing(&drops));
    let mut s = connect(addr);
    s.write_all(b"GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let got = read_until(&mut s, "first;\r\n");
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(drops.reach(0), 0, "dropped before the client went");
    drop(s);
    assert_eq!(drops.reach(1), 1, "the body was kept");
    assert_eq!(ended(&outcomes, 1).len(), 1, "the connection goes on");
}

/// A client that half-closes after its request (`shutdown(Write)`) and
/// reads the answer: by default it counts as gone, as under hyper; with
/// `set_half_close(true)` it is answered. Only a reset ends the work
/// then.
#[test]
fn a_half_closed_client_is_answered_when_the_server_allows_it() {
    let slow = || {
        svc(|_req: Request<Incoming>| async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(Response::new(full("late answer")))
        })
    };
    let ask = |addr| {
        let mut s = connect(addr);
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        read_to_close(&mut s)
    };
    let (addr, outcomes) = start(slow());
    assert_eq!(ask(addr), "", "answered a client that closed its side");
    assert!(ended(&outcomes, 1)[0].contains("closed the connection"));

    let (addr, outcomes) = start_serving(slow(), Config::default(), |server| {
        server.set_half_close(true)
    });
    let got = ask(addr);
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(got.ends_with("late answer"), "{got}");
    assert_eq!(ended(&outcomes, 1), ["ok"]);

    // A reset (the client closed with the answer's first piece unread)
    // still ends it.
    let drops = Drops::default();
    let (addr, outcomes) = start_serving(
        first_piece_then_nothing(&drops),
        Config::default(),
        |server| server.set_half_close(true),
    );
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    drop(s);
    assert_eq!(drops.reach(1), 1, "the body was kept");
    assert_eq!(ended(&outcomes, 1).len(), 1, "the connection goes on");
}

/// The client's address reaches an axum handler as the documentation
/// shows: inserted into each request's extensions by `map_request`, read
/// with axum's `Extension` extractor.
#[test]
fn an_axum_handler_gets_the_clients_address_from_the_extensions() {
    use axum::routing::get;
    use tower::ServiceExt;

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        runtime().block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let app = axum::Router::new().route(
                "/",
                get(
                    |axum::Extension(client): axum::Extension<SocketAddr>| async move {
                        client.to_string()
                    },
                ),
            );
            loop {
                let (stream, client) = listener.accept().await.unwrap();
                let app = app.clone().map_request(move |mut req: Request<Incoming>| {
                    req.extensions_mut().insert(client);
                    req
                });
                tokio::spawn(serve_connection(
                    Server::new(stream, Config::default()),
                    app,
                ));
            }
        });
    });
    for _ in 0..2 {
        let mut s = connect(addr);
        let me = s.local_addr().unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .unwrap();
        let got = read_to_close(&mut s);
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        assert!(got.ends_with(&format!("\r\n\r\n{me}")), "{got}");
    }
}

/// A client that closes its side while a large first piece is still being
/// written: the close is read beside the write that waits, before the
/// bridge waits for the next frame, and still counts as its going.
#[test]
fn a_close_read_beside_a_waiting_write_still_drops_the_body() {
    let drops = Drops::default();
    let (addr, outcomes) = start(piece_then_nothing(&drops, Bytes::from(vec![b'x'; 4 << 20])));
    let mut s = connect(addr);
    s.write_all(b"GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    // The piece fills the socket's buffers before the client reads: the
    // server's write waits, and it reads the close beside it.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(drops.reach(0), 0, "dropped before its first piece was out");
    let got = read_to_close(&mut s);
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{}", &got[..100]);
    assert_eq!(drops.reach(1), 1, "the body was kept");
    assert_eq!(ended(&outcomes, 1).len(), 1, "the connection goes on");
}
