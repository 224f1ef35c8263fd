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

use bytes::Bytes;
use h1proto::adapter::tokio::Server;
use h1proto::adapter::tower::{Incoming, serve_connection};
use h1proto::{Config, ServerSession};
use h1proto_test_support::schedule::{Req, Schedule, answers, pieces, schedule, waits};
use http::{Method, Request, Response};
use http_body::{Body, Frame};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::time::sleep;
use tower_service::Service;

/// A schedule, the pipe and the client's reading, and the server.
#[derive(Debug, Clone)]
struct Plan {
    schedule: Schedule,
    /// The pipe's capacity each way.
    pipe: usize,
    /// The client reads at most this much at a time, pausing this long
    /// (ms) before each read.
    reads: (usize, u64),
    /// Served through the tower bridge, or by the driver's own calls.
    tower: bool,
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        schedule(),
        64usize..2048,
        (1usize..512, 0u64..10),
        any::<bool>(),
    )
        .prop_map(|(schedule, pipe, reads, tower)| Plan {
            schedule,
            pipe,
            reads,
            tower,
        })
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
    server.set_half_close(plan.schedule.half_close);
    if let Some(ms) = plan.schedule.shutdown {
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
            assert!(plan.schedule.fin && !plan.schedule.half_close, "{err}");
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
    let input: Vec<u8> = plan.schedule.reqs.iter().flat_map(Req::bytes).collect();
    let cuts = pieces(input.len(), &plan.schedule.cuts);
    let (client, io) = tokio::io::duplex(plan.pipe);
    let (mut rx, mut tx) = tokio::io::split(client);
    let server = tokio::spawn(serve(io, plan.clone()));
    let fin = plan.schedule.fin;
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
        let got = answers(&got, plan.schedule.reqs.len());
        let want: Vec<Vec<u8>> = plan.schedule.reqs.iter().map(Req::answer).collect();
        // Work that never ends was given up at the client's close, unless
        // a shutdown ended the connection before it began.
        prop_assert!(gone || !waits(&plan.schedule.reqs) || plan.schedule.shutdown.is_some());
        if plan.schedule.shutdown.is_some() || gone {
            prop_assert!(got.len() <= want.len());
            prop_assert_eq!(&got[..], &want[..got.len()]);
        } else {
            prop_assert_eq!(got, want);
        }
    }
}
