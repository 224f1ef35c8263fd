//! An axum `Router` served by h1proto, through the tower bridge
//! (`h1proto::adapter::tower`, feature `tower`).
//!
//! ```sh
//! cargo run --release --features tower --example axum_server -- --addr 127.0.0.1:8080
//! curl http://127.0.0.1:8080/
//! ```
//!
//! The routes of `hello_server`: `GET` and `HEAD /` answer
//! `Hello, World!`; `POST /echo` streams the request body back as it
//! arrives (honouring `Expect: 100-continue`: the continue goes out when
//! the handler's stream first polls the body); anything else is
//! `404 Not Found`, `405 Method Not Allowed` (with `Allow`) for a method
//! RFC 9110 defines but the server does not serve, `501 Not Implemented`
//! for one it does not know. Responses carry `Date`. `--header-timeout
//! SECS` and `--idle-timeout SECS` override two of the session's
//! timeouts. The accept loop is `hello_server`'s: at most
//! `--max-connections N` connections at once (by default the open-file
//! limit less 32), and a back-off while accepting fails (out of
//! descriptors), logged at most once every few seconds. On SIGINT or SIGTERM the
//! server stops accepting, lets every connection finish the exchange it
//! is in (answering with `Connection: close`), and exits. Only axum's
//! router is used: no hyper, no `axum::serve`.

#[allow(dead_code)] // axum routes requests itself: the servers' shared router goes unused
mod common;

use std::io;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use h1proto::Config;
use h1proto::adapter::tokio::Server;
use h1proto::adapter::tower::serve_connection;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::task::JoinSet;

use common::{AcceptPolicy, Admission};

#[tokio::main]
async fn main() -> io::Result<()> {
    let args = common::parse_args("axum_server", std::env::args().skip(1));
    let listener = common::listen(&args.addr).await?;
    let (stop, mut stopped) = watch::channel(false);
    let signal = common::stop_signal()?;
    tokio::spawn(async move {
        signal.await;
        let _ = stop.send(true);
    });
    println!("Listening on http://{}/", listener.local_addr()?);
    let (app, conn_stop) = (app(), stopped.clone());
    let admission = Admission::new(AcceptPolicy::new(args.max_connections));
    let mut tasks = JoinSet::new();
    common::accept_loop(&listener, &admission, &mut stopped, &mut tasks, |stream| {
        handle(stream, app.clone(), args.config.clone(), conn_stop.clone())
    })
    .await;
    drop(listener);
    let drain = async { while tasks.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
    Ok(())
}

/// The routes.
pub fn app() -> Router {
    // Another method on a known path is refused as on an unknown one, as
    // the other servers do (axum's own answer would be a 405 for any).
    let hello = get(|| async { text(StatusCode::OK, "Hello, World!") });
    Router::new()
        .route("/", hello.fallback(refusal))
        .route("/echo", post(echo).fallback(refusal))
        .fallback(refusal)
}

/// The methods served, as `Allow` lists them.
const ALLOW: &str = "GET, HEAD, POST";

/// The answer to a request no route takes, as the other servers give it:
/// 404 for a method served, 405 with `Allow` for another method RFC 9110
/// (or RFC 5789, `PATCH`) defines, 501 for a method not known.
async fn refusal(method: Method) -> Response {
    match method.as_str() {
        "GET" | "HEAD" | "POST" => text(StatusCode::NOT_FOUND, "Not Found\n"),
        "PUT" | "DELETE" | "CONNECT" | "OPTIONS" | "TRACE" | "PATCH" => {
            let mut res = text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed\n");
            let allow = HeaderValue::from_static(ALLOW);
            res.headers_mut().insert(header::ALLOW, allow);
            res
        }
        _ => text(StatusCode::NOT_IMPLEMENTED, "Not Implemented\n"),
    }
}

/// A `text/plain` response.
fn text(status: StatusCode, body: &'static str) -> Response {
    let content_type = [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))];
    (status, content_type, body).into_response()
}

/// The request body streamed back as it arrives, with the request's
/// `Content-Type`; its length, when the request had one, is the bridge's
/// `Content-Length` (the body's size hint), otherwise the echo is chunked.
async fn echo(req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let mut res = Response::new(Body::new(body));
    if let Some(value) = parts.headers.get(header::CONTENT_TYPE) {
        res.headers_mut()
            .insert(header::CONTENT_TYPE, value.clone());
    }
    res
}

/// Serves one connection with `app` until it is over; a graceful shutdown
/// starts when `stop` turns true. The server is made before the future, so
/// that the future holds it once, not also the arguments it is made from:
/// every connection's task holds this future while it waits.
pub fn handle(
    stream: TcpStream,
    app: Router,
    config: Config,
    mut stop: watch::Receiver<bool>,
) -> impl Future<Output = ()> + Send {
    let _ = stream.set_nodelay(true);
    let mut server = Server::new(stream, config);
    server.shutdown_on(async move {
        if stop.wait_for(|&stop| stop).await.is_err() {
            std::future::pending::<()>().await;
        }
    });
    // Boxed, so that the task's future holds the server once: awaited
    // in place, it would also keep the server it was made from.
    let serving = Box::pin(serve_connection(server, app));
    async move {
        if let Err(err) = serving.await {
            if common::worth_logging(&err) {
                eprintln!("connection: {err}");
            }
        }
    }
}
