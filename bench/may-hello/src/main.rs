//! The may_minihttp counterpart of `hello_server`, for
//! `scripts/bench-wrk.sh`: `GET /` answers 200 `Hello, World!` with
//! `Content-Type: text/plain`; anything else is 404.
//!
//! It runs may_minihttp the way its own TechEmpower entry does: an
//! `HttpServiceFactory` (one service per connection), coroutines with a
//! 4 KiB stack and a pool of 500 (`may::config()`), may's default of one
//! worker thread per CPU this process may run on (so one under
//! `taskset -c 0`), each worker pinned to a core (may's default). The
//! system allocator, as the other servers of the comparison use.
//!
//! What differs from `hello_server`'s bytes, as may_minihttp writes every
//! response itself: the status line is `HTTP/1.1 200 Ok`, a `Server: M`
//! field comes first, then `Date`, `Content-Length` and
//! `Content-Type`; `TCP_NODELAY` is not set (may_minihttp leaves it off
//! and writes all the responses of one read in one write). HEAD and
//! `POST /echo` are not served.
//!
//! ```sh
//! cargo run --release --manifest-path bench/may-hello/Cargo.toml -- --addr 127.0.0.1:8085
//! ```

use std::io;

use may_minihttp::{HttpService, HttpServiceFactory, Request, Response};

/// The service of one connection.
struct Hello;

impl HttpService for Hello {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        if req.method() == "GET" && req.path() == "/" {
            rsp.header("Content-Type: text/plain").body("Hello, World!");
        } else {
            rsp.status_code(404, "Not Found")
                .header("Content-Type: text/plain")
                .body("Not Found\n");
        }
        Ok(())
    }
}

/// Makes one [`Hello`] per connection.
struct Factory;

impl HttpServiceFactory for Factory {
    type Service = Hello;

    fn new_service(&self, _id: usize) -> Hello {
        Hello
    }
}

fn main() -> io::Result<()> {
    let mut addr = String::from("127.0.0.1:8085");
    let mut workers = 0; // may's default: the CPUs this process may run on
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(value)) => addr = value,
            ("--workers", Some(value)) if value.parse::<usize>().is_ok() => {
                workers = value.parse().unwrap_or(0);
            }
            _ => {
                let msg = "usage: may-hello [--addr HOST:PORT] [--workers N]";
                return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
            }
        }
    }
    may::config()
        .set_workers(workers)
        .set_pool_capacity(500)
        .set_stack_size(0x1000);
    let server = Factory.start(&addr)?;
    println!(
        "Listening on http://{addr}/ ({} may workers)",
        may::config().get_workers()
    );
    server
        .join()
        .map_err(|_| io::Error::other("the server coroutine panicked"))
}
