//! The tokio adapter's driver, and the tower bridge over it, under any
//! schedule, on tokio's paused clock
//! (which jumps to the next timer whenever every task waits): requests
//! arriving in any pieces after any pauses, a client that reads its
//! answers slowly through a small pipe (the server's writes wait), that
//! closes its side or goes silent, work awaited through
//! `while_connected` (some of it never ending but by the client's close),
//! a graceful shutdown at any time. Every request is
//! answered in order with its own answer (up to the shutdown, or the
//! client's close when that ended the work), and the connection closes
//! within the hour of tokio's time. A wait the driver forgets to
//! register leaves it waiting past the hour; a poll that goes round
//! without end never lets tokio's time move, and the case fails after a
//! few seconds of real time.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use h1proto::adapter::tokio::Server;
use h1proto::adapter::tower::{Incoming, serve_connection};
use h1proto::{Config, Event, Limits, ResponseDecoder, ServerSession};
use http::{Method, Request, Response};
use http_body::{Body, Frame};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::time::sleep;
use tower_service::Service;

/// One request of a plan.
#[derive(Debug, Clone)]
enum Req {
    Get(u8),
    Slow(u8),
    /// Work that never ends: only the client's close ends it.
    Wait,
    /// Answered in pieces, this long apart (ms).
    Stream(u8),
    Post(Vec<u8>, bool),
}

impl Req {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Req::Get(n) => format!("GET /p{n} HTTP/1.1\r\nHost: a\r\n\r\n").into_bytes(),
            Req::Slow(ms) => format!("GET /slow/{ms} HTTP/1.1\r\nHost: a\r\n\r\n").into_bytes(),
            Req::Wait => b"GET /wait HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
            Req::Stream(ms) => format!("GET /stream/{ms} HTTP/1.1\r\nHost: a\r\n\r\n").into_bytes(),
            Req::Post(body, false) => {
                let head = format!(
                    "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                [head.as_bytes(), body].concat()
            }
            Req::Post(body, true) => {
                let mut b =
                    b"POST /e HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                for piece in body.chunks(7) {
                    b.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                    b.extend_from_slice(piece);
                    b.extend_from_slice(b"\r\n");
                }
                b.extend_from_slice(b"0\r\n\r\n");
                b
            }
        }
    }

    fn answer(&self) -> Vec<u8> {
        match self {
            Req::Get(n) => format!("/p{n}").into_bytes(),
            Req::Slow(ms) => format!("/slow/{ms}").into_bytes(),
            Req::Wait => b"never".to_vec(),
            Req::Stream(ms) => format!("/stream/{ms}").into_bytes(),
            Req::Post(body, _) => body.clone(),
        }
    }
}

#[derive(Debug, Clone)]
struct Plan {
    reqs: Vec<Req>,
    /// Where the input is cut into pieces, and the pause (ms) before each.
    cuts: Vec<(usize, u64)>,
    /// The client closes its side after its last piece (else it goes
    /// silent).
    fin: bool,
    /// The server counts that close as no reason to give work up.
    half_close: bool,
    /// The pipe's capacity each way.
    pipe: usize,
    /// The client reads at most this much at a time, pausing this long
    /// (ms) before each read.
    reads: (usize, u64),
    /// A graceful shutdown's signal fires then (ms).
    shutdown: Option<u64>,
    /// Served through the tower bridge, or by the driver's own calls.
    tower: bool,
}

fn plan() -> impl Strategy<Value = Plan> {
    let req = prop_oneof![
        3 => any::<u8>().prop_map(Req::Get),
        2 => (0u8..40).prop_map(Req::Slow),
        1 => Just(Req::Wait),
        2 => (0u8..20).prop_map(Req::Stream),
        3 => (
            proptest::collection::vec(b'a'..=b'z', 0..300),
            any::<bool>()
        )
            .prop_map(|(b, c)| Req::Post(b, c)),
    ];
    (
        proptest::collection::vec(req, 1..6),
        proptest::collection::vec((any::<usize>(), 0u64..30), 0..10),
        (any::<bool>(), any::<bool>()),
        64usize..2048,
        (1usize..512, 0u64..10),
        proptest::option::weighted(0.3, 0u64..200),
        any::<bool>(),
    )
        .prop_map(
            |(reqs, cuts, (fin, half_close), pipe, reads, shutdown, tower)| Plan {
                // Work that never ends ends only by the client's close.
                fin: fin || waits(&reqs),
                half_close: half_close && !waits(&reqs),
                reqs,
                cuts,
                pipe,
                reads,
                shutdown,
                tower,
            },
        )
}

/// Whether some work in `reqs` never ends.
fn waits(reqs: &[Req]) -> bool {
    reqs.iter().any(|r| matches!(r, Req::Wait))
}

/// The server: `GET /wait` works for ever (the client watched), `GET /slow/N` works N ms (the client watched), `GET
/// /stream/N` sends its path in pieces N ms apart, a `POST` is answered
/// with its body, any other `GET` with its path; through the tower bridge
/// or by the driver's calls. Whether the client's close ended the work.
async fn serve(io: DuplexStream, plan: Plan) -> bool {
    let mut config = Config::default();
    config.timeouts.head = Some(Duration::from_secs(10));
    config.timeouts.body = Some(Duration::from_secs(10));
    let mut server = Server::new(io, config);
    server.set_half_close(plan.half_close);
    if let Some(ms) = plan.shutdown {
        server.shutdown_on(sleep(Duration::from_millis(ms)));
    }
    if plan.tower {
        let result = serve_connection(server, App).await;
        return ended(result, &plan);
    }
    let served = async {
        while let Some(req) = server.next_request().await? {
            let path = req.uri().path().to_owned();
            let body = if req.method() == Method::POST {
                server.call(ServerSession::read_body).await?
            } else if path == "/wait" {
                server.while_connected(std::future::pending::<()>()).await?;
                Bytes::new()
            } else if let Some(ms) = path.strip_prefix("/slow/") {
                let work = sleep(Duration::from_millis(ms.parse().unwrap()));
                server.while_connected(work).await?;
                Bytes::from(path)
            } else if let Some(ms) = path.strip_prefix("/stream/") {
                let gap = Duration::from_millis(ms.parse().unwrap());
                server.sender().send_head(Response::new(()))?;
                for piece in path.as_bytes().chunks(3) {
                    server.while_connected(sleep(gap)).await?;
                    server.send_data(Bytes::copy_from_slice(piece)).await?;
                    server.flush().await?;
                }
                server.sender().finish(None)?;
                continue;
            } else {
                Bytes::from(path)
            };
            server.sender().send_response(Response::new(body))?;
        }
        std::io::Result::Ok(())
    };
    let result = served.await;
    server.close().await;
    ended(result, &plan)
}

/// Whether the client's close ended the work: the only error a plan
/// allows, and only when it closes and the server does not allow that.
fn ended(result: std::io::Result<()>, plan: &Plan) -> bool {
    match result {
        Ok(()) => false,
        Err(err) => {
            assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
            assert!(plan.fin && !plan.half_close, "{err}");
            true
        }
    }
}

/// The same application as a tower service.
#[derive(Clone)]
struct App;

type AppBody = UnsyncBoxBody<Bytes, std::io::Error>;

impl Service<Request<Incoming>> for App {
    type Response = Response<AppBody>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Response<AppBody>>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Incoming>) -> Self::Future {
        Box::pin(async move {
            let path = req.uri().path().to_owned();
            if req.method() == Method::POST {
                let body = req.into_body().collect().await?.to_bytes();
                return Ok(Response::new(
                    Full::new(body).map_err(|e| match e {}).boxed_unsync(),
                ));
            }
            if path == "/wait" {
                std::future::pending::<()>().await;
            }
            if let Some(ms) = path.strip_prefix("/slow/") {
                sleep(Duration::from_millis(ms.parse().unwrap())).await;
            }
            if let Some(ms) = path.strip_prefix("/stream/") {
                let gap = Duration::from_millis(ms.parse().unwrap());
                let pieces = (path.as_bytes().chunks(3))
                    .map(Bytes::copy_from_slice)
                    .collect();
                let body = Pieces {
                    pieces,
                    gap,
                    pause: None,
                };
                return Ok(Response::new(body.boxed_unsync()));
            }
            Ok(Response::new(
                Full::new(Bytes::from(path))
                    .map_err(|e| match e {})
                    .boxed_unsync(),
            ))
        })
    }
}

/// A response body of `pieces`, each after a pause of `gap`.
struct Pieces {
    pieces: VecDeque<Bytes>,
    gap: Duration,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Body for Pieces {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::io::Result<Frame<Bytes>>>> {
        if self.pieces.is_empty() {
            return Poll::Ready(None);
        }
        let gap = self.gap;
        let pause = self.pause.get_or_insert_with(|| Box::pin(sleep(gap)));
        if pause.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.pause = None;
        Poll::Ready(self.pieces.pop_front().map(|piece| Ok(Frame::data(piece))))
    }
}

/// Runs `plan` on a paused clock: what the client read, and whether the
/// client's close ended the work.
async fn run(plan: Plan) -> (Vec<u8>, bool) {
    let input: Vec<u8> = plan.reqs.iter().flat_map(Req::bytes).collect();
    let mut cuts: Vec<(usize, u64)> = (plan.cuts.iter())
        .map(|&(c, gap)| (c % (input.len() + 1), gap))
        .collect();
    cuts.sort();
    cuts.dedup_by_key(|(c, _)| *c);
    cuts.push((input.len(), 1));
    let (client, io) = tokio::io::duplex(plan.pipe);
    let (mut rx, mut tx) = tokio::io::split(client);
    let server = tokio::spawn(serve(io, plan.clone()));
    let fin = plan.fin;
    let writer = tokio::spawn(async move {
        let mut from = 0;
        for (cut, gap) in cuts {
            sleep(Duration::from_millis(gap)).await;
            if cut > from && tx.write_all(&input[from..cut]).await.is_err() {
                return tx;
            }
            from = from.max(cut);
        }
        if fin {
            let _ = tx.shutdown().await;
        }
        // Silent: the half is kept, open, until the reader is done.
        tx
    });
    let (size, pause) = plan.reads;
    let reader = async {
        let mut got = Vec::new();
        let mut buf = vec![0u8; size];
        loop {
            sleep(Duration::from_millis(pause)).await;
            match rx.read(&mut buf).await {
                Ok(0) | Err(_) => return got,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    let hour = Duration::from_secs(3600);
    let got = tokio::time::timeout(hour, reader)
        .await
        .expect("the connection closes within the hour");
    let tx = writer.await.unwrap();
    drop((tx, rx));
    let gone = tokio::time::timeout(hour, server)
        .await
        .expect("the server ends within the hour")
        .unwrap();
    (got, gone)
}

/// The answers in `wire`, decoded.
fn answers(wire: &[u8], n: usize) -> Vec<Vec<u8>> {
    let mut dec = ResponseDecoder::new(Limits::default());
    for _ in 0..n {
        dec.expect_response_to(&Method::GET);
    }
    let mut buf = BytesMut::from(wire);
    let (mut out, mut body) = (Vec::new(), Vec::new());
    while let Some(event) = dec.decode(&mut buf).unwrap() {
        match event {
            Event::Head { head, .. } => assert_eq!(head.status(), 200),
            Event::Data(data) => body.extend_from_slice(&data),
            Event::End(_) => out.push(std::mem::take(&mut body)),
            other => panic!("{other:?}"),
        }
    }
    assert!(buf.is_empty(), "bytes past the answers: {buf:?}");
    out
}

/// Runs `plan` on a runtime of its own, on another thread: a poll that
/// never returns holds tokio's clock still, and shows here as a case that
/// takes more than a few seconds of real time.
fn run_bounded(plan: Plan) -> (Vec<u8>, bool) {
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let _ = done.send(rt.block_on(run(plan)));
    });
    result
        .recv_timeout(Duration::from_secs(20))
        .expect("a case ran for seconds of real time: a poll that never returns")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_request_is_answered_and_the_connection_closes(plan in plan()) {
        let (got, gone) = run_bounded(plan.clone());
        let got = answers(&got, plan.reqs.len());
        let want: Vec<Vec<u8>> = plan.reqs.iter().map(Req::answer).collect();
        // Work that never ends was given up at the client's close, unless
        // a shutdown ended the connection before it began.
        prop_assert!(gone || !waits(&plan.reqs) || plan.shutdown.is_some());
        if plan.shutdown.is_some() || gone {
            prop_assert!(got.len() <= want.len());
            prop_assert_eq!(&got[..], &want[..got.len()]);
        } else {
            prop_assert_eq!(got, want);
        }
    }
}
