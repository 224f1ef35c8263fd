//! A blocking HTTP/1.1 server, one thread per connection, on the
//! `blocking` adapter.
//!
//! ```sh
//! cargo run --example blocking_server -- --addr 127.0.0.1:8080
//! ```
//!
//! Routes (the same as `hello_server`): `GET` and `HEAD /` answer
//! `Hello, World!`; `POST /echo` streams the request body back (honouring
//! `Expect: 100-continue`); anything else is `404 Not Found`. The session
//! defaults apply (`h1proto::Timeouts`); `--header-timeout SECS` and
//! `--idle-timeout SECS` override two of them, so slow and idle peers give
//! their threads back. On SIGINT or SIGTERM the server stops accepting,
//! lets every connection finish the exchange it is in, and exits.

#[path = "common/mod.rs"]
#[allow(clippy::duplicate_mod)] // the interop tests load both servers
mod common;

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use h1proto::Config;
use h1proto::adapter::blocking::{Server, Transport};
use http::{Method, StatusCode};

use common::parse_args;

fn main() -> io::Result<()> {
    let args = parse_args("blocking_server", std::env::args().skip(1))?;
    let listener = TcpListener::bind(&args.addr)?;
    let addr = listener.local_addr()?;
    println!("Listening on http://{addr}/");
    let stop = Arc::new(AtomicBool::new(false));
    on_stop_signal(stop.clone(), addr);
    run(listener, args.config, stop)
}

/// Sets `stop` on SIGINT or SIGTERM, then wakes the accept loop with a
/// connection of its own. The signals are waited for on a thread of
/// their own (with tokio's signal handling, the one dependency at hand).
fn on_stop_signal(stop: Arc<AtomicBool>, addr: SocketAddr) {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a signal runtime");
        rt.block_on(async {
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
        });
        stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(addr);
    });
}

/// Accepts connections, each served on its own thread, until `stop` is
/// set; then waits (up to 30 s) for the connections to finish.
pub fn run(listener: TcpListener, config: Config, stop: Arc<AtomicBool>) -> io::Result<()> {
    let live = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let stream = match stream {
            Ok(stream) => stream,
            Err(err) => {
                eprintln!("accept: {err}");
                continue;
            }
        };
        let (config, stop, done) = (config.clone(), stop.clone(), live.clone());
        live.fetch_add(1, Ordering::SeqCst);
        let spawned = std::thread::Builder::new().spawn(move || {
            handle(stream, config, stop);
            done.fetch_sub(1, Ordering::SeqCst);
        });
        if let Err(err) = spawned {
            // The connection is dropped; the server goes on.
            live.fetch_sub(1, Ordering::SeqCst);
            eprintln!("spawn: {err}");
        }
    }
    drop(listener);
    let deadline = Instant::now() + Duration::from_secs(30);
    while live.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Serves one connection to its end, then closes it; a graceful shutdown
/// starts when `stop` is set.
pub fn handle(stream: TcpStream, config: Config, stop: Arc<AtomicBool>) {
    let _ = stream.set_nodelay(true);
    let mut server = Server::new(stream, config);
    server.shutdown_on(stop);
    if let Err(err) = serve(&mut server) {
        if common::worth_logging(&err) {
            eprintln!("connection: {err}");
        }
    }
    server.close();
}

/// Answers requests until the connection is over.
pub fn serve<S: Transport>(server: &mut Server<S>) -> io::Result<()> {
    while let Some(mut req) = server.next_request()? {
        let (method, path) = (req.method(), req.uri().path());
        if (method == Method::GET || method == Method::HEAD) && path == "/" {
            server.send_response(common::text(&mut req, StatusCode::OK, b"Hello, World!"))?;
        } else if method == Method::POST && path == "/echo" {
            // Accept the body before answering: a final response sent to a
            // client that waits for `100 Continue` would refuse it.
            server.session().send_continue();
            server.send_head(common::echo_head(&req))?;
            while let Some(data) = server.read_data()? {
                server.send_data(data)?;
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
