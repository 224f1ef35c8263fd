//! A null server for `scripts/bench-wrk.sh`: it parses nothing. Each
//! connection's task counts the empty lines (`\r\n\r\n`) in what it reads
//! and writes that many copies of one fixed response, all the answers to
//! one read in one write. What is left is the cost of the runtime, the
//! sockets and the kernel: the floor under every server's CPU per request.
//!
//! It runs as `hello_server` does: one single-threaded tokio runtime per
//! worker thread (one worker per CPU it may use, so one under `taskset -c
//! 0`, or `TOKIO_WORKER_THREADS`), each accepting from the one listening
//! socket, a task per connection, `TCP_NODELAY`. Its response has the bytes of
//! `hello_server`'s, in its order (`content-type`, a `date` of the same
//! length, which is never updated, `content-length`, `Hello, World!`). It reads
//! no method or target: every request gets that response.
//!
//! ```sh
//! cargo run --release --manifest-path bench/null-hello/Cargo.toml -- --addr 127.0.0.1:8086
//! ```

#[path = "../../workers.rs"]
mod workers;

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The one response.
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\
date: Wed, 02 Dec 2026 00:00:00 GMT\r\ncontent-length: 13\r\n\r\nHello, World!";

fn main() -> io::Result<()> {
    let mut addr = String::from("127.0.0.1:8086");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(value)) => addr = value,
            _ => {
                let msg = "usage: null-hello [--addr HOST:PORT]";
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
    runtime.block_on(async {
        let listener = TcpListener::from_std(listener)?;
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(serve(stream));
                }
                Err(err) => eprintln!("accept: {err}"),
            }
        }
    })
}

/// Answers every empty line read with [`RESPONSE`], until the peer closes.
async fn serve(mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut input = [0u8; 8192];
    let mut output = Vec::with_capacity(16 * RESPONSE.len());
    // How much of "\r\n\r\n" the bytes read so far end with.
    let mut matched = 0;
    loop {
        let n = match stream.read(&mut input).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        for &byte in &input[..n] {
            matched = match (matched, byte) {
                (0 | 2, b'\r') => matched + 1,
                (1 | 3, b'\n') => matched + 1,
                (_, b'\r') => 1,
                _ => 0,
            };
            if matched == 4 {
                output.extend_from_slice(RESPONSE);
                matched = 0;
            }
        }
        if !output.is_empty() {
            if stream.write_all(&output).await.is_err() {
                return;
            }
            output.clear();
        }
    }
}
