//! The hyper 1.x counterpart of `hello_server`, for `scripts/bench-wrk.sh`:
//! the same `Hello, World!` response bytes (`content-type: text/plain`,
//! `content-length: 13`, `date`, as hello_server sends), the same runtime
//! layout (one single-threaded tokio runtime per worker thread, one
//! worker per CPU or `TOKIO_WORKER_THREADS` of them, each accepting from
//! the one listening socket and serving the connections it accepted), so
//! that the comparison stays like for like: hyper pays no more for work
//! stealing than hello_server does. `TCP_NODELAY` on every connection,
//! one task per connection, hyper's HTTP/1 server with its defaults
//! otherwise (in particular `pipeline_flush` off).
//!
//! ```sh
//! cargo run --release --manifest-path bench/hyper-hello/Cargo.toml -- --addr 127.0.0.1:8081
//! ```

#[path = "../../workers.rs"]
mod workers;

use std::convert::Infallible;
use std::io;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

fn main() -> io::Result<()> {
    let mut addr = String::from("127.0.0.1:8081");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(value)) => addr = value,
            _ => {
                let msg = "usage: hyper_hello [--addr HOST:PORT]";
                return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
            }
        }
    }
    let listener = std::net::TcpListener::bind(&addr)?;
    println!("Listening on http://{}/", listener.local_addr()?);
    workers::run(listener, work)
}

/// One worker: a single-threaded runtime on this thread, serving the
/// connections it accepts until the process is stopped.
fn work(listener: std::net::TcpListener) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async { serve(TcpListener::from_std(listener)?).await })
}

/// Accepts connections, each served by its own task.
async fn serve(listener: TcpListener) -> io::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                eprintln!("accept: {err}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = service_fn(|_req: Request<Incoming>| async {
                let mut res = Response::new(Full::new(Bytes::from_static(b"Hello, World!")));
                res.headers_mut()
                    .insert(CONTENT_TYPE, http::HeaderValue::from_static("text/plain"));
                Ok::<_, Infallible>(res)
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
