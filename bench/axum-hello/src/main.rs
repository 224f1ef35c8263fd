//! The axum-on-hyper counterpart of `examples/axum_server.rs`, for
//! `scripts/bench-wrk.sh` and `scripts/bench-memory.sh`: the same router
//! (`GET` and `HEAD /` answer `Hello, World!` as `text/plain`, a streaming
//! `POST /echo`, `404 Not Found` for the rest), served by `axum::serve`
//! with its defaults (hyper's HTTP/1, which sends `Date`), `TCP_NODELAY`
//! on every connection, tokio's multi-threaded runtime.
//!
//! ```sh
//! cargo run --release --manifest-path bench/axum-hello/Cargo.toml -- --addr 127.0.0.1:8082
//! ```

use std::io;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> io::Result<()> {
    let mut addr = String::from("127.0.0.1:8082");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(value)) => addr = value,
            _ => {
                let msg = "usage: axum-hello [--addr HOST:PORT]";
                return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
            }
        }
    }
    let listener = TcpListener::bind(&addr).await?;
    println!("Listening on http://{}/", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app()).await
}

/// The routes of `examples/axum_server.rs`.
fn app() -> Router {
    let hello = get(|| async { text(StatusCode::OK, "Hello, World!") });
    Router::new()
        .route("/", hello.fallback(not_found))
        .route("/echo", post(echo).fallback(not_found))
        .fallback(not_found)
}

async fn not_found() -> Response {
    text(StatusCode::NOT_FOUND, "Not Found\n")
}

fn text(status: StatusCode, body: &'static str) -> Response {
    let content_type = [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))];
    (status, content_type, body).into_response()
}

async fn echo(req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let mut res = Response::new(Body::new(body));
    if let Some(value) = parts.headers.get(header::CONTENT_TYPE) {
        res.headers_mut().insert(header::CONTENT_TYPE, value.clone());
    }
    res
}
