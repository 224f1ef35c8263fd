//! A tokio HTTP/1.1 server on the `tokio` adapter: one single-threaded
//! runtime per worker thread, as nginx has one event loop per worker.
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
//! `--idle-timeout SECS` override two of them. At most `--max-connections
//! N` connections are served at once, by all the workers together (by
//! default the open-file limit less 32); past it, and while accepting
//! fails (out of descriptors), the accept loops wait, logging at most a
//! line every few seconds. On SIGINT or SIGTERM the server stops
//! accepting, lets every connection finish the exchange it is in
//! (answering with `Connection: close`), waits up to 30 s for them, and
//! exits.
//!
//! Workers: one per CPU, or `TOKIO_WORKER_THREADS` of them (as tokio's
//! multi-threaded runtime reads it). Each is a thread with a
//! single-threaded tokio runtime that accepts from the one listening
//! socket and serves the connections it accepted; a connection never
//! moves between threads (`common::Workers`, the proxy's layout too).

mod common;

use std::io;
use std::time::Duration;

use h1proto::Config;
use h1proto::adapter::driver::{Shutdown, ShutdownSignal};
use h1proto::adapter::tokio::Server;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use common::{AcceptPolicy, Admission, Answer, Workers, parse_args};

fn main() -> io::Result<()> {
    let args = parse_args("hello_server", std::env::args().skip(1));
    let workers = Workers::listen(&args.addr, common::workers())?;
    let addr = workers.local_addr()?;
    let admission = Admission::new(AcceptPolicy::new(args.max_connections));
    workers.run(
        || println!("Listening on http://{addr}/"),
        |_, listener, stop| run(listener, args.config.clone(), &admission, stop),
    )
}

/// One worker: accepts connections, each served by its own task, until
/// `stop` turns true; then waits (up to 30 s) for the connections to
/// finish. `admission`, which the workers share, caps the connections
/// they serve at once and paces their loops when accepting fails
/// (`common::AcceptPolicy`).
pub async fn run(
    listener: TcpListener,
    config: Config,
    admission: &Admission,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let mut tasks = JoinSet::new();
    // What tells every connection to shut down: a signal each, 16 bytes,
    // where a watch receiver's wait would be ten times that in every
    // connection's task.
    let shutdown = Shutdown::new();
    common::accept_loop(&listener, admission, &mut stop, &mut tasks, |stream| {
        handle(stream, config.clone(), shutdown.signal())
    })
    .await;
    drop(listener);
    shutdown.begin();
    let drain = async { while tasks.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
    Ok(())
}

/// Serves one connection to its end, then closes it; a graceful shutdown
/// starts when `stop` fires. The server is made before the future,
/// so that the future holds it once, not also the arguments it is made
/// from: every connection's task holds this future while it waits.
pub fn handle(
    stream: TcpStream,
    config: Config,
    stop: ShutdownSignal,
) -> impl Future<Output = ()> + Send {
    let _ = stream.set_nodelay(true);
    let mut server = Server::new(stream, config);
    server.shutdown_on(stop);
    async move {
        if let Err(err) = serve(&mut server).await {
            if common::worth_logging(&err) {
                eprintln!("connection: {err}");
            }
        }
        server.close().await;
    }
}

/// Answers requests until the connection is over.
pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(server: &mut Server<S>) -> io::Result<()> {
    loop {
        // The request lives in this match only: nothing of it is held
        // while the echo below waits for the body. It is borrowed where
        // the call's answer put it, not moved out first: a request head is
        // a few hundred bytes, and every request would pay for the copy.
        let head = match server.next_request().await {
            Ok(Some(ref mut req)) => match common::answer(req) {
                Answer::Page(page) => {
                    server.sender().send_response(page.response(req))?;
                    continue;
                }
                Answer::Echo(head) => head,
            },
            Ok(None) => break,
            Err(err) => return Err(err),
        };
        // The head first, then the body streamed back: reading the body
        // sends a client that waits for it `100 Continue`, ahead of the
        // head, which is still queued.
        server.sender().send_head(head)?;
        // `let else`, not `while let`: the piece read is not kept (with
        // the `?`'s result around it) while it is written, so the task
        // every connection holds is no larger for the echo.
        loop {
            let Some(data) = server.read_data().await? else {
                break;
            };
            server.send_data(data).await?;
        }
        server.sender().finish(None)?;
    }
    Ok(())
}
