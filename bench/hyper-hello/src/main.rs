//! The hyper 1.x counterpart of `hello_server`, for `scripts/bench-wrk.sh`:
//! the same `Hello, World!` response bytes (`content-type: text/plain`,
//! `content-length: 13`, `date`, as hello_server sends), the same multi-threaded tokio runtime,
//! `TCP_NODELAY` on every connection, one task per connection, hyper's
//! HTTP/1 server with its defaults otherwise (in particular
//! `pipeline_flush` off).
//!
//! ```sh
//! cargo run --release --manifest-path bench/hyper-hello/Cargo.toml -- --addr 127.0.0.1:8081
//! ```

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

#[tokio::main]
async fn main() -> io::Result<()> {
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
    let listener = TcpListener::bind(&addr).await?;
    println!("Listening on http://{}/", listener.local_addr()?);
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
