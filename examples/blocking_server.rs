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
//! their threads back. At most `--max-connections N` connections are
//! served at once (by default the open-file limit less 32); past it, while
//! accepting fails (out of descriptors) and when a thread cannot be
//! spawned (that connection is dropped), the accept loop waits, logging at
//! most a line every few seconds. On SIGINT or SIGTERM the server stops
//! accepting, lets every connection finish the exchange it is in, and
//! exits.

mod common;

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use h1proto::Config;
use h1proto::adapter::blocking::{Server, Transport};

use common::{AcceptPolicy, Answer, parse_args};

fn main() -> io::Result<()> {
    let args = parse_args("blocking_server", std::env::args().skip(1));
    // tokio does two chores at start-up: a listener with a large backlog
    // (std cannot ask for one) and the signal handlers.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (listener, signal) = rt.block_on(async {
        let listener = common::listen(&args.addr).await?.into_std()?;
        io::Result::Ok((listener, common::stop_signal()?))
    })?;
    listener.set_nonblocking(false)?;
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    on_stop_signal(rt, signal, stop.clone(), addr);
    println!("Listening on http://{addr}/");
    let policy = AcceptPolicy::new(args.max_connections);
    run(listener, args.config, policy, stop)
}

/// Sets `stop` once `signal` completes (on a thread of its own, running
/// `rt`), then wakes the accept loop with a connection of its own (again
/// and again while the server is out of descriptors: its connections close
/// within moments of the flag, giving theirs back).
fn on_stop_signal(
    rt: tokio::runtime::Runtime,
    signal: impl Future<Output = ()> + Send + 'static,
    stop: Arc<AtomicBool>,
    addr: SocketAddr,
) {
    std::thread::spawn(move || {
        rt.block_on(signal);
        stop.store(true, Ordering::SeqCst);
        for _ in 0..300 {
            if TcpStream::connect(addr).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
}

/// The connections being served, and a way to wait for one to end.
#[derive(Default)]
struct Live {
    count: Mutex<usize>,
    ended: Condvar,
}

impl Live {
    fn count(&self) -> usize {
        *self.count.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self) {
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    }

    fn end(&self) {
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        self.ended.notify_all();
    }

    /// Waits until fewer than `below` connections are live, or `limit`
    /// passed.
    fn wait_below(&self, below: usize, limit: Duration) {
        let count = self.count.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.ended.wait_timeout_while(count, limit, |n| *n >= below);
    }
}

/// How long the accept loop waits, at most, before it looks at the stop
/// flag again.
const STOP_POLL: Duration = Duration::from_millis(200);

/// Accepts connections, each served on its own thread, until `stop` is
/// set; then waits (up to 30 s) for the connections to finish. The
/// `policy` caps the connections served at once and paces the loop when
/// accepting fails (out of descriptors) or a thread cannot be spawned
/// (that connection is dropped; the server goes on).
pub fn run(
    listener: TcpListener,
    config: Config,
    mut policy: AcceptPolicy,
    stop: Arc<AtomicBool>,
) -> io::Result<()> {
    let live = Arc::new(Live::default());
    while !stop.load(Ordering::SeqCst) {
        let count = live.count();
        if !policy.may_accept(count, Instant::now()) {
            live.wait_below(policy.max(), STOP_POLL);
            continue;
        }
        let pause = match listener.accept() {
            Ok(_) if stop.load(Ordering::SeqCst) => break,
            Ok((stream, _)) => {
                let (config, stop, done) = (config.clone(), stop.clone(), live.clone());
                live.add();
                let spawned = std::thread::Builder::new().spawn(move || {
                    handle(stream, config, stop);
                    done.end();
                });
                match spawned {
                    Ok(_) => {
                        policy.accepted(Instant::now());
                        continue;
                    }
                    Err(err) => {
                        // The connection was dropped with the closure.
                        live.end();
                        policy.spawn_failed(&err, Instant::now())
                    }
                }
            }
            Err(err) => policy.accept_failed(&err, Instant::now()),
        };
        // Paused: until the back-off passes, or one of the connections
        // ends and gives its descriptor and thread back.
        let until = Instant::now() + pause;
        while !stop.load(Ordering::SeqCst) && live.count() >= count {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            live.wait_below(count, left.min(STOP_POLL));
        }
    }
    drop(listener);
    let deadline = Instant::now() + Duration::from_secs(30);
    while live.count() > 0 && Instant::now() < deadline {
        live.wait_below(1, Duration::from_millis(100));
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
        let head = match common::answer(&req) {
            Answer::Page(page) => {
                server.sender().send_response(page.response(&mut req))?;
                continue;
            }
            Answer::Echo(head) => head,
        };
        // The head first, then the body streamed back: reading the body
        // sends a client that waits for it `100 Continue`, ahead of the
        // head, which is still queued.
        server.sender().send_head(head)?;
        while let Some(data) = server.read_data()? {
            server.send_data(data)?;
        }
        server.sender().finish(None)?;
    }
    Ok(())
}
