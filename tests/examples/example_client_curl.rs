//! The client example run as a process, as a user runs it, beside curl:
//! each curl option it offers against the same local server, compared
//! with what curl sends and prints; `--help`, an unknown option and
//! `https://` as curl answers them; a streamed response shown as it comes;
//! a 200 MiB download in bounded memory.

use h1proto_test_support::process as server_process;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A request as the test server received it.
#[derive(Debug, Clone)]
struct Seen {
    /// The request line.
    line: String,
    /// The field lines, lowercased names, in order.
    fields: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The field names, without `user-agent` (each tool names itself).
    fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = (self.fields.iter())
            .map(|(n, _)| n.as_str())
            .filter(|n| *n != "user-agent")
            .collect();
        names.sort_unstable();
        names
    }
}

/// The response head every request gets (no `Date`: the two tools'
/// outputs are compared byte for byte).
const HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nX-Served-By: test\r\n\r\n";

/// A keep-alive server on 127.0.0.1:0 that records every request and
/// answers `HEAD` (with the body `hello\n` unless the method is HEAD).
fn recording_server() -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let log = log.clone();
            std::thread::spawn(move || serve_recorded(stream, &log));
        }
    });
    (addr, seen)
}

fn serve_recorded(stream: TcpStream, log: &Mutex<Vec<Seen>>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut fields = Vec::new();
        loop {
            let mut field = String::new();
            if reader.read_line(&mut field).unwrap_or(0) == 0 {
                return;
            }
            let field = field.trim_end();
            if field.is_empty() {
                break;
            }
            let (name, value) = field.split_once(':').unwrap();
            fields.push((name.to_ascii_lowercase(), value.trim().to_owned()));
        }
        let len: usize = (fields.iter())
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let head_only = line.starts_with("HEAD ");
        let seen = Seen {
            line: line.trim_end().to_owned(),
            fields,
            body,
        };
        log.lock().unwrap().push(seen);
        let mut response = HEAD.as_bytes().to_vec();
        if !head_only {
            response.extend_from_slice(b"hello\n");
        }
        if writer.write_all(&response).is_err() {
            return;
        }
    }
}

/// Runs `program` with `args` to its end (at most 60 s).
fn run(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    });
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut stderr = child.stderr.take().unwrap();
    let errs = std::thread::spawn(move || {
        let _ = stderr.read_to_end(&mut err);
        err
    });
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let status = child.wait().unwrap();
    let _ = tx.send(());
    watchdog.join().unwrap();
    Output {
        status,
        stdout: out,
        stderr: errs.join().unwrap(),
    }
}

fn client(args: &[&str]) -> Output {
    run(server_process::binary("client"), args)
}

fn curl(args: &[&str]) -> Output {
    let mut all = vec!["-sS", "--max-time", "20"];
    all.extend_from_slice(args);
    run("curl", &all)
}

/// Runs the client and curl with the same `args` against the recording
/// server; returns both outputs and both requests.
fn both(args: &[&str]) -> ((Output, Seen), (Output, Seen)) {
    let (addr, seen) = recording_server();
    let url = format!("http://{addr}/path?q=1");
    let mut with_url: Vec<&str> = args.to_vec();
    with_url.push(&url);
    let ours = client(&with_url);
    let theirs = curl(&with_url);
    let log = seen.lock().unwrap();
    assert_eq!(log.len(), 2, "one request each: {log:?}");
    ((ours, log[0].clone()), (theirs, log[1].clone()))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_plain_get_sends_and_prints_what_curl_does() {
    let ((ours, a), (theirs, b)) = both(&[]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(ours.stdout, theirs.stdout);
    assert_eq!(ours.stdout, b"hello\n");
    assert_eq!(a.line, b.line);
    assert_eq!(a.line, "GET /path?q=1 HTTP/1.1");
    assert_eq!(a.names(), b.names(), "{a:?} {b:?}");
    assert_eq!(a.field("accept"), b.field("accept"));
}

#[test]
fn dash_x_sends_the_method() {
    let ((ours, a), (_, b)) = both(&["-X", "PUT"]);
    assert!(ours.status.success());
    assert_eq!(a.line, b.line);
    assert!(a.line.starts_with("PUT "), "{a:?}");
    // Attached, as curl also takes it.
    let ((_, a), (_, b)) = both(&["-XDELETE"]);
    assert_eq!(a.line, b.line);
    assert!(a.line.starts_with("DELETE "), "{a:?}");
}

#[test]
fn dash_h_adds_replaces_removes_and_empties_fields() {
    let ((ours, a), (_, b)) = both(&[
        "-H",
        "X-Added: one",
        "-H",
        "X-Added: two",
        "-H",
        "User-Agent: tester/1",
        "-H",
        "Accept:",
        "-H",
        "X-Empty;",
    ]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    for seen in [&a, &b] {
        let added: Vec<&str> = (seen.fields.iter())
            .filter(|(n, _)| n == "x-added")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(added, ["one", "two"], "{seen:?}");
        assert_eq!(seen.field("user-agent"), Some("tester/1"), "{seen:?}");
        assert_eq!(seen.field("accept"), None, "{seen:?}");
        assert_eq!(seen.field("x-empty"), Some(""), "{seen:?}");
    }
    let mut names_a = a.fields.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>();
    let mut names_b = b.fields.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>();
    names_a.sort_unstable();
    names_b.sort_unstable();
    assert_eq!(names_a, names_b);
    // A host given with -H is the one sent.
    let ((_, a), (_, b)) = both(&["-H", "Host: example.test"]);
    assert_eq!(a.field("host"), Some("example.test"));
    assert_eq!(b.field("host"), Some("example.test"));
}

#[test]
fn data_options_post_the_bytes_or_the_file() {
    let ((ours, a), (_, b)) = both(&["--data-binary", "a=1&b=2"]);
    assert!(ours.status.success());
    assert_eq!(a.line, b.line);
    assert!(a.line.starts_with("POST "));
    assert_eq!(a.body, b"a=1&b=2");
    assert_eq!(a.body, b.body);
    assert_eq!(a.field("content-type"), b.field("content-type"));
    assert_eq!(a.field("content-length"), b.field("content-length"));

    // `-d @FILE`: the file without its line breaks, as curl sends it.
    let lines = std::env::temp_dir().join(format!("h1proto-curl-d-{}.txt", std::process::id()));
    std::fs::write(&lines, "a=1\r\n&b=2\n&c=3\n").unwrap();
    let at = format!("@{}", lines.display());
    let ((_, a), (_, b)) = both(&["-d", &at]);
    let _ = std::fs::remove_file(&lines);
    assert_eq!(a.body, b"a=1&b=2&c=3");
    assert_eq!(a.body, b.body);

    let path = std::env::temp_dir().join(format!("h1proto-curl-data-{}.bin", std::process::id()));
    let data: Vec<u8> = (0..=255u8).cycle().take(200_000).collect();
    std::fs::write(&path, &data).unwrap();
    let at = format!("@{}", path.display());
    let ((ours, a), (_, b)) = both(&["--data-binary", &at]);
    let _ = std::fs::remove_file(&path);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(a.body, data);
    assert_eq!(b.body, data);
    assert_eq!(a.field("content-length"), b.field("content-length"));
    assert_eq!(a.field("content-type"), b.field("content-type"));
}

#[test]
fn dash_o_writes_the_body_to_the_file() {
    let dir = std::env::temp_dir();
    let (ours_file, curl_file): (PathBuf, PathBuf) = (
        dir.join(format!("h1proto-o-ours-{}", std::process::id())),
        dir.join(format!("h1proto-o-curl-{}", std::process::id())),
    );
    let (addr, _) = recording_server();
    let url = format!("http://{addr}/file");
    let ours = client(&["-o", ours_file.to_str().unwrap(), &url]);
    let theirs = curl(&["-o", curl_file.to_str().unwrap(), &url]);
    let (a, b) = (
        std::fs::read(&ours_file).unwrap(),
        std::fs::read(&curl_file).unwrap(),
    );
    let _ = (
        std::fs::remove_file(&ours_file),
        std::fs::remove_file(&curl_file),
    );
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(ours.stdout, theirs.stdout);
    assert!(ours.stdout.is_empty());
    assert_eq!(a, b);
    assert_eq!(a, b"hello\n");
    // Nothing to fetch, no file: as curl, a failed connection leaves none.
    let refused = format!("http://{}/", unused_addr());
    let ours = client(&["-o", ours_file.to_str().unwrap(), &refused]);
    let theirs = curl(&["-o", curl_file.to_str().unwrap(), &refused]);
    assert_eq!(ours.status.code(), Some(7), "{}", text(&ours.stderr));
    assert_eq!(ours.status.code(), theirs.status.code());
    assert!(!curl_file.exists(), "curl left a file");
    assert!(!ours_file.exists(), "an empty file was left behind");
}

/// An address nothing listens on.
fn unused_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

#[test]
fn dash_i_sends_head_and_prints_the_head_as_curl_does() {
    let ((ours, a), (theirs, b)) = both(&["-I"]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(a.line, b.line);
    assert!(a.line.starts_with("HEAD "));
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
    assert_eq!(text(&ours.stdout), HEAD);
}

#[test]
fn dash_v_prints_the_heads_as_curl_does() {
    let ((ours, _), (theirs, _)) = both(&["-v"]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(ours.stdout, theirs.stdout);
    let lines = |out: &Output, prefix: &str| -> Vec<String> {
        text(&out.stderr)
            .split_inclusive('\n')
            .filter(|l| l.starts_with(prefix))
            .map(str::to_owned)
            .collect()
    };
    // The response head, as received, line for line.
    assert_eq!(lines(&ours, "< "), lines(&theirs, "< "));
    assert_eq!(lines(&ours, "< ").len(), 4);
    // The request head: the same request line, and one `> ` line per
    // field (names spelled as each sends them) and the empty line.
    let (a, b) = (lines(&ours, "> "), lines(&theirs, "> "));
    assert_eq!(a[0], b[0]);
    assert_eq!(a[0], "> GET /path?q=1 HTTP/1.1\r\n");
    assert_eq!(a.len(), b.len(), "{a:?} {b:?}");
    assert_eq!(a.last().unwrap(), "> \r\n");
    // Nothing of the head on standard output.
    assert_eq!(ours.stdout, b"hello\n");
}

#[test]
fn help_unknown_options_and_https_are_answered_as_curl_does() {
    let help = client(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let usage = text(&help.stdout);
    assert!(usage.starts_with("Usage: client"), "{usage}");
    for option in ["-o", "-H", "-X", "-I", "-v", "--data-binary", "--help"] {
        assert!(usage.contains(option), "{option} in {usage}");
    }
    assert_eq!(curl(&["--help"]).status.code(), Some(0));

    let unknown = client(&["--frobnicate", "http://127.0.0.1:1/"]);
    let theirs = curl(&["--frobnicate", "http://127.0.0.1:1/"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(unknown.status.code(), theirs.status.code());
    let err = text(&unknown.stderr);
    assert!(err.contains("--frobnicate"), "{err}");
    assert!(!err.contains("http://"), "not read as a URL: {err}");
    // Options that take a value are not URLs either.
    let missing = client(&["-o"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("-o"));

    let https = client(&["https://127.0.0.1:1/"]);
    assert_eq!(https.status.code(), Some(1));
    let err = text(&https.stderr);
    assert!(
        err.contains("https://") && err.contains("not supported"),
        "{err}"
    );
    assert!(https.stdout.is_empty());
}

/// A server that sends a chunked response's first line, then waits for
/// `go` before it sends the rest.
fn holding_server() -> (SocketAddr, mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (go, wait) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        stream
            .write_all(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                  b\r\nfirst line\n\r\n",
            )
            .unwrap();
        let _ = wait.recv_timeout(Duration::from_secs(30));
        let _ = stream.write_all(b"c\r\nsecond line\n\r\n0\r\n\r\n");
    });
    (addr, go)
}

#[test]
fn a_streamed_response_is_shown_as_it_arrives() {
    let (addr, go) = holding_server();
    let mut child = Command::new(server_process::binary("client"))
        .arg(format!("http://{addr}/stream"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // The first line while the server still holds the rest back: a client
    // that waits for the end would never show it (the read is bounded by
    // a thread that lets the server go after 10 s).
    let (got, first) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        got.send(line).unwrap();
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        rest
    });
    let started = Instant::now();
    let line = first.recv_timeout(Duration::from_secs(10));
    let took = started.elapsed();
    go.send(()).unwrap();
    let rest = reader.join().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(line.as_deref(), Ok("first line\n"), "after {took:?}");
    assert_eq!(rest, "second line\n");
    assert!(status.success());
}

/// A server that sends `len` bytes of body with `Content-Length`.
fn big_server(len: u64) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let piece = vec![b'x'; 1 << 20];
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        for _ in 0..len >> 20 {
            if stream.write_all(&piece).is_err() {
                return;
            }
        }
    });
    addr
}

/// The peak resident set of process `pid` so far, in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_200_mib_download_peaks_under_64_mib() {
    const LEN: u64 = 200 << 20;
    let addr = big_server(LEN);
    let mut child = Command::new(server_process::binary("client"))
        .arg(format!("http://{addr}/big"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut received = 0u64;
    let mut peak = None;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if peak.is_none() && received >= LEN - (8 << 20) {
            // All but the last 8 MiB written: the client waits on the
            // full pipe, alive, and its peak so far is the download's.
            std::thread::sleep(Duration::from_millis(50));
            peak = Some(peak_rss_kib(child.id()));
        }
        let n = stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        assert!(buf[..n].iter().all(|&b| b == b'x'));
        received += n as u64;
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(received, LEN);
    match peak.flatten() {
        Some(kib) => {
            assert!(kib < 64 * 1024, "peak RSS {kib} KiB");
            eprintln!("client: 200 MiB downloaded with a peak RSS of {kib} KiB");
        }
        None => eprintln!("no /proc/<pid>/status here: the peak RSS was not measured"),
    }
}
