//! A multi-threaded tokio HTTP/1.1 server on the `tokio` adapter.
//!
//! ```sh
//! cargo run --release --example hello_server -- --addr 127.0.0.1:8080
//! curl http://127.0.0.1:8080/
//! ```
//!
//! Routes (the same as `blocking_server`): `GET` and `HEAD /` answer
//! `Hello, World!`; `POST /echo` streams the request body back (honouring
//! `Expect: 100-continue`); anything else is `404 Not Found`. The session
//! defaults apply (`h1proto::Timeouts`); `--header-timeout SECS` and
//! `--idle-timeout SECS` override two of them. On SIGINT or SIGTERM the
//! server stops accepting, lets every connection finish the exchange it
//! is in (answering with `Connection: close`), and exits.

#[path = "oldcommon/mod.rs"]
#[allow(clippy::duplicate_mod)] // the interop tests load both servers
mod common;

use std::io;
use std::time::Duration;

use h1proto::Config;
use h1proto::adapter::tokio::Server;
use http::{Method, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use common::parse_args;

#[tokio::main]
async fn main() -> io::Result<()> {
    let args = parse_args("hello_server", std::env::args().skip(1))?;
    let listener = TcpListener::bind(&args.addr).await?;
    println!("Listening on http://{}/", listener.local_addr()?);
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(async move {
        stop_signal().await;
        let _ = stop.send(true);
    });
    run(listener, args.config, stopped).await
}

/// SIGINT or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

/// Accepts connections, each served by its own task, until `stop` turns
/// true; then waits (up to 30 s) for the connections to finish.
pub async fn run(
    listener: TcpListener,
    config: Config,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let mut tasks = JoinSet::new();
    let conn_stop = stop.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tasks.spawn(handle(stream, config.clone(), conn_stop.clone()));
                }
                Err(err) => eprintln!("accept: {err}"),
            },
            _ = stop.wait_for(|&stop| stop) => break,
        }
        while tasks.try_join_next().is_some() {}
    }
    drop(listener);
    let drain = async { while tasks.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
    Ok(())
}

/// Serves one connection to its end, then closes it; a graceful shutdown
/// starts when `stop` turns true.
pub async fn handle(stream: TcpStream, config: Config, mut stop: watch::Receiver<bool>) {
    let _ = stream.set_nodelay(true);
    let mut server = Server::new(stream, config);
    server.shutdown_on(async move {
        if stop.wait_for(|&stop| stop).await.is_err() {
            // The sender is gone: no shutdown will ever be asked for.
            std::future::pending::<()>().await;
        }
    });
    if let Err(err) = serve(&mut server).await {
        if common::worth_logging(&err) {
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
            server.send_response(common::text(&mut req, StatusCode::OK, b"Hello, World!"))?;
        } else if method == Method::POST && path == "/echo" {
            // Accept the body before answering: a final response sent to a
            // client that waits for `100 Continue` would refuse it.
            server.session().send_continue();
            server.send_head(common::echo_head(&req))?;
            while let Some(data) = server.read_data().await? {
                server.send_data(data).await?;
            }
            server.finish(None)?;
        } else {
            server.send_response(common::text(
                &mut req,
                StatusCode::NOT_FOUND,
                b"Not Found\n",
            ))?;
        }
    }
    Ok(())
}
