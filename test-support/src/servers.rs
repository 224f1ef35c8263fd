//! What the interop and bad-peer tests share: the example servers started
//! in-process on 127.0.0.1:0, external tools that must be installed (a
//! missing one fails the test), and bounded waits.
#![allow(dead_code)]

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[cfg(feature = "tower")]
use crate::examples::axum_server;
#[cfg(target_os = "linux")]
use crate::examples::uring_server;
use crate::examples::{blocking_server, hello_server};

/// Connections accepted and connections whose handler returned.
#[derive(Debug, Default)]
pub struct Counters {
    pub accepted: AtomicUsize,
    pub finished: AtomicUsize,
}

impl Counters {
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Waits (at most `limit`) until every accepted connection is finished.
    pub fn wait_all_finished(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.finished.load(Ordering::SeqCst) == self.accepted.load(Ordering::SeqCst) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

/// Which example server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Blocking,
    Tokio,
    /// `uring_server` (Linux, where io_uring is available).
    Uring,
    /// `axum_server` (feature `tower`).
    Axum,
}

/// The servers on the crate's adapters.
pub const BOTH: [Kind; 2] = [Kind::Blocking, Kind::Tokio];

/// Every example server that can run here: [`BOTH`], and `uring_server`
/// where io_uring is available (where it is not, a line on standard
/// error says that it was skipped and why).
pub fn all() -> Vec<Kind> {
    let mut kinds = BOTH.to_vec();
    match uring_unavailable() {
        None => kinds.push(Kind::Uring),
        Some(why) => eprintln!("uring_server skipped: io_uring is not available here ({why})"),
    }
    if cfg!(feature = "tower") {
        kinds.push(Kind::Axum);
    }
    kinds
}

/// Why io_uring cannot be used here, or `None` when it can.
pub fn uring_unavailable() -> Option<String> {
    #[cfg(target_os = "linux")]
    return tokio_uring::Runtime::new(&tokio_uring::builder())
        .err()
        .map(|e| e.to_string());
    #[cfg(not(target_os = "linux"))]
    Some("not Linux".into())
}

/// Starts an example server on 127.0.0.1:0 in this process, counting its
/// connections. It runs until the test process exits.
pub fn start(kind: Kind) -> (SocketAddr, Arc<Counters>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().unwrap();
    let counters = Arc::new(Counters::default());
    let c = counters.clone();
    match kind {
        Kind::Blocking => {
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    c.accepted.fetch_add(1, Ordering::SeqCst);
                    let c = c.clone();
                    std::thread::spawn(move || {
                        blocking_server::handle(stream, config(), Default::default());
                        c.finished.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
        }
        Kind::Tokio => {
            listener.set_nonblocking(true).unwrap();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        c.accepted.fetch_add(1, Ordering::SeqCst);
                        let c = c.clone();
                        // A shutdown never begun.
                        let stop = h1proto::adapter::driver::Shutdown::new().signal();
                        tokio::spawn(async move {
                            hello_server::handle(stream, config(), stop).await;
                            c.finished.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                });
            });
        }
        #[cfg(target_os = "linux")]
        Kind::Uring => {
            listener.set_nonblocking(true).unwrap();
            std::thread::spawn(move || {
                tokio_uring::start(async move {
                    let listener = tokio_uring::net::TcpListener::from_std(listener);
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        c.accepted.fetch_add(1, Ordering::SeqCst);
                        let c = c.clone();
                        // A shutdown never begun.
                        let stop = h1proto::adapter::driver::Shutdown::new().signal();
                        tokio_uring::spawn(uring_server::uring::handle(
                            stream,
                            config(),
                            stop,
                            move || {
                                c.finished.fetch_add(1, Ordering::SeqCst);
                            },
                        ));
                    }
                });
            });
        }
        #[cfg(not(target_os = "linux"))]
        Kind::Uring => panic!("uring_server runs on Linux only"),
        #[cfg(feature = "tower")]
        Kind::Axum => {
            listener.set_nonblocking(true).unwrap();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                    let app = axum_server::app();
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        c.accepted.fetch_add(1, Ordering::SeqCst);
                        let (c, app) = (c.clone(), app.clone());
                        let stop = tokio::sync::watch::channel(false).1;
                        tokio::spawn(async move {
                            axum_server::handle(stream, app, config(), stop).await;
                            c.finished.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                });
            });
        }
        #[cfg(not(feature = "tower"))]
        Kind::Axum => panic!("axum_server needs the feature tower"),
    }
    (addr, counters)
}

/// The settings the example servers run with in these tests: the
/// defaults, with a short lingering close so that tests end quickly.
pub fn config() -> h1proto::Config {
    let mut config = h1proto::Config::default();
    config.timeouts.linger = Duration::from_millis(500);
    config
}

/// A command for an external tool that the tests need. A missing tool is a
/// failure, never a skip: `.ci/run` installs curl and python3.
pub fn tool(name: &str) -> Command {
    match Command::new(name).arg("--version").output() {
        Ok(out) if out.status.success() => Command::new(name),
        Ok(out) => panic!("`{name} --version` failed: {out:?}"),
        Err(err) => {
            panic!("{name} is required by the interop tests ({err}); install it (.ci/run does)")
        }
    }
}

/// Runs `cmd` to its end, killing it and failing after `limit`.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    wait_bounded(child, limit)
}

/// Waits for `child` to exit (its output is collected meanwhile), killing
/// it and failing after `limit`.
pub fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
            panic!("{child:?} did not finish within {limit:?}; stderr:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// A child process killed when dropped (also when a test fails).
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A temporary directory removed when dropped.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("h1proto-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bytes that are not all alike, deterministic.
pub fn pattern(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}
