//! The worker layout the tokio baselines share with `hello_server`
//! (`examples/common`): one thread per CPU the process may use (or
//! `TOKIO_WORKER_THREADS`), each running `work` on its own handle of the
//! one listening socket. Included by each baseline crate with `#[path]`,
//! since every baseline is a crate of its own outside the workspace.

use std::io;
use std::net::TcpListener;

/// Runs `work` on `listener` (non-blocking) in every worker, this thread
/// being one of them, and returns once all have returned.
pub fn run(listener: TcpListener, work: fn(TcpListener) -> io::Result<()>) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let workers = std::env::var("TOKIO_WORKER_THREADS")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1);
    let threads: Vec<_> = (1..workers)
        .map(|_| {
            let listener = listener.try_clone();
            std::thread::spawn(move || work(listener?))
        })
        .collect();
    work(listener)?;
    for thread in threads {
        thread.join().expect("a worker panicked")?;
    }
    Ok(())
}
