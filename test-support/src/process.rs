//! The example servers run as child processes, as an operator runs them:
//! under resource limits (`ulimit` in a shell that then `exec`s the
//! server, a cgroup `pids.max`), watched through `/proc/<pid>` (threads,
//! open descriptors, CPU time), stopped with SIGTERM.
//!
//! The binaries are built on first use with the same cargo, profile and
//! target directory as the test (a no-op when `cargo test` has built the
//! examples already), so a test never runs a stale server.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, mpsc};
use std::time::{Duration, Instant};

/// The example servers.
pub const SERVERS: [&str; 4] = [
    "hello_server",
    "blocking_server",
    "uring_server",
    "axum_server",
];

/// The example servers that can run here: [`SERVERS`], less
/// `uring_server` where io_uring is not available (a line on standard
/// error says that it was skipped and why).
pub fn servers() -> Vec<&'static str> {
    #[cfg(target_os = "linux")]
    let unavailable = tokio_uring::Runtime::new(&tokio_uring::builder())
        .err()
        .map(|e| e.to_string());
    #[cfg(not(target_os = "linux"))]
    let unavailable = Some(String::from("not Linux"));
    match unavailable {
        None => SERVERS.to_vec(),
        Some(why) => {
            eprintln!("uring_server skipped: io_uring is not available here ({why})");
            SERVERS
                .into_iter()
                .filter(|s| *s != "uring_server")
                .collect()
        }
    }
}

/// The other examples that tests run as processes.
const OTHER_EXAMPLES: [&str; 2] = ["client", "proxy"];

/// The directory of the example binaries of this test's profile.
fn examples_dir() -> PathBuf {
    // target/<profile>/deps/<test> -> target/<profile>/examples
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .join("examples")
}

/// The path of an example server (or of another example tests run as a
/// process), built (once per test process) if need be.
pub fn binary(name: &str) -> PathBuf {
    static BUILD: Once = Once::new();
    let dir = examples_dir();
    BUILD.call_once(|| {
        let release = dir.parent().and_then(Path::file_name) == Some("release".as_ref());
        let mut cmd = Command::new(env!("CARGO"));
        // The examples are h1proto's, one directory up from this crate.
        // axum_server needs the tower bridge; the other features are the
        // defaults, so the crate is built as `--all-features` builds it.
        cmd.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .args(["build", "-p", "h1proto", "--features", "tower"]);
        for example in SERVERS.iter().chain(&OTHER_EXAMPLES) {
            cmd.args(["--example", example]);
        }
        if release {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("run cargo build");
        assert!(
            out.status.success(),
            "cargo build of the example servers failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    let path = dir.join(name);
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// How to start a server.
#[derive(Debug, Default, Clone)]
pub struct Launch {
    /// Arguments after `--addr 127.0.0.1:0`.
    pub args: Vec<String>,
    /// The soft and hard `RLIMIT_NOFILE` (`ulimit -n`).
    pub open_files: Option<u64>,
    /// A cgroup the server runs in (for `pids.max`).
    pub cgroup: Option<PathBuf>,
}

impl Launch {
    pub fn args(args: &[&str]) -> Self {
        Launch {
            args: args.iter().map(|a| a.to_string()).collect(),
            ..Launch::default()
        }
    }

    pub fn open_files(mut self, n: u64) -> Self {
        self.open_files = Some(n);
        self
    }

    pub fn cgroup(mut self, dir: &Path) -> Self {
        self.cgroup = Some(dir.to_owned());
        self
    }
}

/// A running example server; killed when dropped.
pub struct Server {
    pub name: String,
    child: Child,
    pub pid: u32,
    pub addr: SocketAddr,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Server {
    /// Starts `name` on 127.0.0.1:0 and waits (at most 20 s) until it
    /// listens.
    pub fn start(name: &str, launch: &Launch) -> Server {
        let bin = binary(name);
        // The shell applies the limits, joins the cgroup, then becomes the
        // server: its pid is the server's.
        let mut script = String::new();
        if let Some(n) = launch.open_files {
            script.push_str(&format!("ulimit -n {n} || exit 90; "));
        }
        if let Some(dir) = &launch.cgroup {
            let procs = dir.join("cgroup.procs");
            script.push_str(&format!("echo $$ > '{}' || exit 91; ", procs.display()));
        }
        script.push_str("exec \"$@\"");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(&bin)
            .args(["--addr", "127.0.0.1:0"])
            .args(&launch.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn sh");
        let pid = child.id();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut err_pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(out).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            for _ in lines {}
        });
        let line = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait();
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "{name} did not start ({status:?}); stderr:\n{}",
                    String::from_utf8_lossy(&stderr.lock().unwrap())
                );
            }
        };
        // "Listening on http://ADDR/", or the proxy's "Proxying
        // http://ADDR/ to UPSTREAM".
        let addr = (line.strip_prefix("Listening on http://"))
            .or_else(|| line.strip_prefix("Proxying http://"))
            .and_then(|rest| rest.split('/').next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("{name} printed {line:?}"));
        Server {
            name: name.to_owned(),
            child,
            pid,
            addr,
            stderr,
        }
    }

    fn proc_file(&self, file: &str) -> String {
        std::fs::read_to_string(format!("/proc/{}/{file}", self.pid))
            .unwrap_or_else(|e| panic!("{}: /proc/{}/{file}: {e}", self.name, self.pid))
    }

    fn status_field(&self, field: &str) -> u64 {
        let status = self.proc_file("status");
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .unwrap_or_else(|| panic!("no {field} in /proc/{}/status", self.pid));
        line.trim_start_matches(':')
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{field}: {line:?}"))
    }

    /// Its thread count.
    pub fn threads(&self) -> u64 {
        self.status_field("Threads")
    }

    /// Its resident set, in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.status_field("VmRSS")
    }

    /// Its open descriptors.
    pub fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid))
            .map(|d| d.count())
            .unwrap_or_else(|e| panic!("{}: /proc/{}/fd: {e}", self.name, self.pid))
    }

    /// The CPU time it used (user and system), from `/proc/<pid>/stat`.
    pub fn cpu(&self) -> Duration {
        let stat = self.proc_file("stat");
        // Fields 14 and 15, counted after the command name in parentheses.
        let rest = &stat[stat.rfind(')').expect("(comm)") + 2..];
        let fields: Vec<u64> = rest
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        let ticks = fields[11] + fields[12];
        Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64)
    }

    /// Everything it wrote to standard error so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// `true` while the process runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits (at most `limit`) until `probe` holds; `false` if it never
    /// did.
    pub fn wait_until(&self, limit: Duration, mut probe: impl FnMut(&Self) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if probe(self) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM and waits (at most `limit`) for it to exit.
    pub fn terminate(mut self, limit: Duration) -> ExitStatus {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {}", self.pid);
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit within {limit:?} of SIGTERM; stderr:\n{}",
                self.name,
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`, 100 on Linux).
fn clock_ticks() -> u64 {
    static TICKS: AtomicUsize = AtomicUsize::new(0);
    let known = TICKS.load(Ordering::Relaxed);
    if known != 0 {
        return known as u64;
    }
    let ticks = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100);
    TICKS.store(ticks, Ordering::Relaxed);
    ticks as u64
}

/// This process's soft limit on open files (`None`: unlimited or
/// unreadable, taken as plenty).
pub fn own_open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A cgroup with a `pids.max`, removed when dropped: a real thread limit
/// for the processes moved into it (the one a container's `pids.max` or
/// systemd's `TasksMax` sets). `RLIMIT_NPROC` is no substitute: it counts
/// every process of the user and does not bind root.
pub struct PidsCgroup {
    pub dir: PathBuf,
}

impl PidsCgroup {
    /// Creates one allowing `max` tasks (threads), under the cgroup v1
    /// `pids` hierarchy or a cgroup v2 hierarchy with the `pids`
    /// controller. `Err` says why none could be made (not root, no
    /// controller, a read-only cgroupfs).
    pub fn new(max: u64) -> Result<PidsCgroup, String> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "h1proto-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let mut tried = Vec::new();
        for line in mountinfo.lines() {
            // ... mount-point options - fstype source super-options
            let fields: Vec<&str> = line.split_whitespace().collect();
            let Some(dash) = fields.iter().position(|f| *f == "-") else {
                continue;
            };
            let (mount, fstype) = (fields[4], fields.get(dash + 1).copied());
            let supers = fields.get(dash + 3).copied().unwrap_or("");
            let parent = match fstype {
                Some("cgroup") if supers.split(',').any(|o| o == "pids") => PathBuf::from(mount),
                Some("cgroup2") => {
                    let root = PathBuf::from(mount);
                    let controllers = std::fs::read_to_string(root.join("cgroup.controllers"))
                        .unwrap_or_default();
                    if !controllers.split_whitespace().any(|c| c == "pids") {
                        tried.push(format!("{mount}: no pids controller"));
                        continue;
                    }
                    // Children of the root get the controllers it enables.
                    let _ = std::fs::write(root.join("cgroup.subtree_control"), "+pids");
                    root
                }
                _ => continue,
            };
            let dir = parent.join(&name);
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) => {
                    tried.push(format!("{}: {e}", dir.display()));
                    continue;
                }
            }
            let cgroup = PidsCgroup { dir };
            match std::fs::write(cgroup.dir.join("pids.max"), max.to_string()) {
                Ok(()) => return Ok(cgroup),
                Err(e) => tried.push(format!("{}/pids.max: {e}", cgroup.dir.display())),
            }
        }
        if tried.is_empty() {
            tried.push("no cgroup hierarchy with the pids controller is mounted".into());
        }
        Err(tried.join("; "))
    }

    /// The tasks in it now.
    pub fn current(&self) -> u64 {
        std::fs::read_to_string(self.dir.join("pids.current"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Empty once its processes are gone, which takes a moment.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

// ---- Clients ---------------------------------------------------------

/// Connects with a bound on the wait.
pub fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_write_timeout(Some(Duration::from_secs(10)))?;
    Ok(s)
}

/// Opens up to `n` connections that send nothing; stops early at the
/// first that cannot be made within 300 ms (a full backlog).
pub fn open_idle(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(s) => held.push(s),
            Err(_) => break,
        }
    }
    held
}

/// One `GET /` on a new connection with `Connection: close`: the
/// response's bytes, or the error.
pub fn get(addr: SocketAddr) -> std::io::Result<String> {
    let mut s = connect(addr)?;
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Asks until a `GET /` is answered `200 Hello, World!` (at most
/// `limit`); the time it took, or `None`.
pub fn served_within(addr: SocketAddr, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(text) = get(addr) {
            if text.starts_with("HTTP/1.1 200 OK\r\n") && text.ends_with("Hello, World!") {
                return Some(start.elapsed());
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}
