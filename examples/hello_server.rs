//! A multi-threaded tokio HTTP/1.1 server on the `tokio` adapter.
//!
//! ```sh
//! cargo run --release --example hello_server -- --addr 127.0.0.1:8080
//! curl http://127.0.0.1:8080/
//! ```
//!
//! Routes (the same as `blocking_server`): `GET` and `HEAD /` answer
//! `Hello, World!`; `POST /echo` streams the request body back (honouring
//! `Expect: 100-continue`); anything else is `404 Not Found`.

use std::io;

use bytes::Bytes;
use h1proto::Config;
use h1proto::adapter::tokio::Server;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};

#[tokio::main]
async fn main() -> io::Result<()> {
    let addr = parse_addr(std::env::args().skip(1))?;
    let listener = TcpListener::bind(&addr).await?;
    println!("Listening on http://{}/", listener.local_addr()?);
    run(listener).await
}

/// `--addr HOST:PORT`, by default 127.0.0.1:8080.
pub fn parse_addr(mut args: impl Iterator<Item = String>) -> io::Result<String> {
    let mut addr = String::from("127.0.0.1:8080");
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(value)) => addr = value,
            _ => {
                let msg = "usage: hello_server [--addr HOST:PORT]";
                return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
            }
        }
    }
    Ok(addr)
}

/// Accepts connections forever, each served by its own task.
pub async fn run(listener: TcpListener) -> io::Result<()> {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(handle(stream));
            }
            Err(err) => eprintln!("accept: {err}"),
        }
    }
}

/// Serves one connection to its end, then closes it.
pub async fn handle(stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut server = Server::new(stream, Config::default());
    if let Err(err) = serve(&mut server).await {
        // A peer's protocol error was already answered, and peers may
        // vanish; note the rest.
        use io::ErrorKind::*;
        if !matches!(
            err.kind(),
            InvalidData | ConnectionReset | BrokenPipe | UnexpectedEof
        ) {
            eprintln!("connection: {err}");
        }
    }
    server.close().await;
}

/// Answers requests until the connection is over.
pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(server: &mut Server<S>) -> io::Result<()> {
    while let Some(mut req) = server.next_request().await? {
        let (method, path) = (req.method(), req.uri().path());
        if (method == Method::GET || method == Method::HEAD) && path == "/" {
            let res = text(&mut req, StatusCode::OK, b"Hello, World!");
            server.send_response(res)?;
        } else if method == Method::POST && path == "/echo" {
            // Accept the body before answering: a final response sent to a
            // client that waits for `100 Continue` would refuse it.
            server.send_continue();
            let mut res = Response::builder();
            for name in [CONTENT_LENGTH, CONTENT_TYPE] {
                if let Some(value) = req.headers().get(&name) {
                    res = res.header(name, value);
                }
            }
            // Without a Content-Length the echo is chunked.
            server.send_head(res)?;
            while let Some(data) = server.read_data().await? {
                server.send_data(data).await?;
            }
            server.finish(None)?;
        } else {
            let res = text(&mut req, StatusCode::NOT_FOUND, b"Not Found\n");
            server.send_response(res)?;
        }
    }
    Ok(())
}

/// A `text/plain` response. Its fields go into the request's `HeaderMap`,
/// emptied: that storage is reused rather than a new map allocated, and
/// the static field value and body are not copied either.
fn text(req: &mut Request<()>, status: StatusCode, body: &'static [u8]) -> Response<Bytes> {
    let mut headers = std::mem::take(req.headers_mut());
    headers.clear();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    let mut res = Response::new(Bytes::from_static(body));
    *res.status_mut() = status;
    *res.headers_mut() = headers;
    res
}
