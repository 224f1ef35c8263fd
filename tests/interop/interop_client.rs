//! The client example and the client adapters against `python3 -m
//! http.server` and against the blocking example server.

use h1proto_test_support::process as server_process;
use h1proto_test_support::servers as interop_support;

use h1proto_test_support::examples::client;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use interop_support::{KillOnDrop, Kind, TempDir, pattern, run_bounded, start, tool};

/// `python3 -m http.server` serving a temporary directory on 127.0.0.1:0.
struct PythonServer {
    port: u16,
    _child: KillOnDrop,
    _dir: TempDir,
}

fn python_server(files: &[(&str, &[u8])]) -> PythonServer {
    let dir = TempDir::new("http-server");
    for (name, data) in files {
        std::fs::write(dir.0.join(name), data).unwrap();
    }
    let mut child = tool("python3")
        .args([
            "-u",
            "-m",
            "http.server",
            "0",
            "--bind",
            "127.0.0.1",
            "--directory",
        ])
        .arg(&dir.0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 -m http.server");
    let stdout = child.stdout.take().unwrap();
    let child = KillOnDrop(child);
    // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("http.server did not start");
    let port = line
        .split_whitespace()
        .skip_while(|w| *w != "port")
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    PythonServer {
        port,
        _child: child,
        _dir: dir,
    }
}

fn run_client(args: &[String]) -> (Vec<u8>, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let started = Instant::now();
    client::run(args, &mut out, &mut err).unwrap_or_else(|e| panic!("client {args:?}: {e}"));
    assert!(started.elapsed() < Duration::from_secs(20));
    (out, String::from_utf8(err).unwrap())
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn client_example_against_python_http_server() {
    let server = python_server(&[("a.txt", b"first file\n"), ("b.txt", b"second\n")]);
    let a = format!("http://127.0.0.1:{}/a.txt", server.port);
    let b = format!("http://127.0.0.1:{}/b.txt", server.port);
    let (out, err) = run_client(&args(&["-v", &a, &b]));
    assert_eq!(out, b"first file\nsecond\n");
    // http.server answers HTTP/1.0 and closes: one connection per URL.
    assert!(err.contains("< HTTP/1.0 200 OK"), "{err}");
    assert_eq!(err.matches("* Connected to").count(), 2, "{err}");

    // As curl: the head on standard output too, as received.
    let (out, err) = run_client(&args(&["-v", "-I", &a]));
    assert!(out.starts_with(b"HTTP/1.0 200 OK\r\n"), "{out:?}");
    assert!(err.contains("< Content-Length: 11\r\n"), "{err}");

    let (out, err) = run_client(&args(&[
        "-v",
        &format!("http://127.0.0.1:{}/missing", server.port),
    ]));
    assert!(err.contains("< HTTP/1.0 404"), "{err}");
    assert!(!out.is_empty());
}

#[test]
fn client_example_against_blocking_server() {
    let (addr, counters) = start(Kind::Blocking);
    let root = format!("http://{addr}/");
    let echo = format!("http://{addr}/echo");
    let (out, err) = run_client(&args(&["-v", &root, &format!("http://{addr}/x"), &root]));
    assert_eq!(out, b"Hello, World!Not Found\nHello, World!");
    assert_eq!(
        err.matches("* Re-using existing connection").count(),
        2,
        "{err}"
    );
    assert_eq!(counters.accepted(), 1);

    let (out, _) = run_client(&args(&["-d", "name=value", &echo, &echo]));
    assert_eq!(out, b"name=valuename=value");
    assert_eq!(counters.accepted(), 2);

    let (out, err) = run_client(&args(&["-v", "-I", &root]));
    assert!(out.starts_with(b"HTTP/1.1 200 OK\r\n"), "{out:?}");
    assert!(
        err.contains("< HTTP/1.1 200 OK") && err.contains("< content-length: 13"),
        "{err}"
    );
}

/// An HTTP/1.1 server in Python that reads a `POST` body whole, then
/// echoes it (keeping the connection), or on `/digest` answers its length
/// and SHA-256: a server that does not answer while the upload is under
/// way, unlike the example servers' streamed echo, which a client that
/// reads only after sending would block.
const READ_THEN_ECHO: &str = r#"
import hashlib, http.server, sys
class Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/digest":
            body = b"%d %s" % (len(body), hashlib.sha256(body).hexdigest().encode())
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Echo)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// [`READ_THEN_ECHO`] on 127.0.0.1:0: its port.
fn read_then_echo_server() -> (u16, KillOnDrop) {
    let mut child = tool("python3")
        .args(["-u", "-c", READ_THEN_ECHO])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().unwrap_or_else(|_| panic!("{line:?}"));
    (port, KillOnDrop(child))
}

#[test]
fn data_binary_uploads_a_file_and_a_string_as_curl_does() {
    let (port, _server) = read_then_echo_server();
    let dir = TempDir::new("upload");
    let file = dir.0.join("body.bin");
    let body = pattern(8 << 20);
    std::fs::write(&file, &body).unwrap();
    let url = format!("http://127.0.0.1:{port}/echo");
    let data = format!("@{}", file.display());
    let (out, err) = run_client(&args(&["-v", "--data-binary", &data, &url, &url]));
    assert!(
        out == [&body[..], &body[..]].concat(),
        "{} bytes back",
        out.len()
    );
    assert!(
        err.contains(&format!("> content-length: {}", 8 << 20)),
        "{err}"
    );
    assert_eq!(
        err.matches("* Re-using existing connection").count(),
        1,
        "{err}"
    );
    // Without `@`, the bytes themselves, `@` after the first byte
    // included.
    let (out, _) = run_client(&args(&["--data-binary", "a@b&c=d", &url]));
    assert_eq!(out, b"a@b&c=d");
    // A file that is not there fails before anything is sent.
    let missing = dir.0.join("missing");
    let mut sink = (Vec::new(), Vec::new());
    let missing = format!("@{}", missing.display());
    let failed = client::run(
        &args(&["--data-binary", &missing, &url]),
        &mut sink.0,
        &mut sink.1,
    );
    assert!(failed.unwrap_err().to_string().contains("missing"));
}

/// Uploading a 64 MiB file, the client process never holds more than a
/// few pieces of it: its peak resident set (Python's `getrusage` of the
/// child) stays far below the file's size, and the server received it
/// whole (its length and SHA-256).
#[test]
fn data_binary_streams_the_file_from_disk() {
    const LEN: usize = 64 << 20;
    let (port, _server) = read_then_echo_server();
    let dir = TempDir::new("upload-big");
    let file = dir.0.join("body.bin");
    let body = pattern(LEN);
    std::fs::write(&file, &body).unwrap();
    let client = server_process::binary("client");
    let measure = r#"
import resource, subprocess, sys
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, check=True).stdout
print(out.decode(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"#;
    let out = run_bounded(
        tool("python3")
            .args(["-c", measure])
            .arg(&client)
            .arg("--data-binary")
            .arg(format!("@{}", file.display()))
            .arg(format!("http://127.0.0.1:{port}/digest")),
        Duration::from_secs(60),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fields: Vec<&str> = stdout.split_whitespace().collect();
    let digest = tool("python3")
        .args(["-c", "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())"])
        .arg(&file)
        .output()
        .unwrap();
    let digest = String::from_utf8_lossy(&digest.stdout);
    assert_eq!(
        fields[..2],
        [LEN.to_string().as_str(), digest.trim()],
        "{stdout}"
    );
    let peak_kib: usize = fields[2].parse().unwrap();
    eprintln!("client: peak resident set {peak_kib} KiB uploading 64 MiB");
    // Read whole, the file alone would be 64 MiB of it.
    assert!(peak_kib < (LEN >> 10) / 2, "peak {peak_kib} KiB");
}

#[test]
fn blocking_client_adapter_reuses_while_allowed() {
    use h1proto::adapter::blocking::Client;
    let (addr, counters) = start(Kind::Tokio);
    let mut c = Client::connect(addr).unwrap();
    for i in 0..50 {
        let req = http::Request::post("/echo")
            .header("host", addr.to_string())
            .body(format!("message {i}"))
            .unwrap();
        let res = c.send(req).unwrap();
        assert_eq!(res.body(), format!("message {i}").as_bytes());
        assert!(c.is_reusable());
    }
    let req = http::Request::get("/")
        .header("host", addr.to_string())
        .header("connection", "close")
        .body("")
        .unwrap();
    assert_eq!(c.send(req).unwrap().body(), "Hello, World!");
    assert!(!c.is_reusable(), "the request said close");
    assert_eq!(counters.accepted(), 1);

    // Against HTTP/1.0 without keep-alive: not reusable after one response.
    let server = python_server(&[("f", b"file")]);
    let mut c = Client::connect(("127.0.0.1", server.port)).unwrap();
    let req = http::Request::get("/f")
        .header("host", "x")
        .body("")
        .unwrap();
    assert_eq!(c.send(req).unwrap().body(), "file");
    assert!(!c.is_reusable());
}

#[test]
fn tokio_client_adapter_against_both() {
    use h1proto::adapter::tokio::Client;
    let (addr, counters) = start(Kind::Blocking);
    let server = python_server(&[("f", b"tokio file")]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = Client::connect(addr).await.unwrap();
        for _ in 0..20 {
            let req = http::Request::get("/")
                .header("host", "x")
                .body("")
                .unwrap();
            assert_eq!(c.send(req).await.unwrap().body(), "Hello, World!");
            let req = http::Request::head("/")
                .header("host", "x")
                .body("")
                .unwrap();
            let res = c.send(req).await.unwrap();
            assert!(res.body().is_empty());
            assert_eq!(res.headers()["content-length"], "13");
            assert!(c.is_reusable());
        }
        let mut c = Client::connect(("127.0.0.1", server.port)).await.unwrap();
        let req = http::Request::get("/f")
            .header("host", "x")
            .body("")
            .unwrap();
        let res = c.send(req).await.unwrap();
        assert_eq!(res.version(), http::Version::HTTP_10);
        assert_eq!(res.body(), "tokio file");
        assert!(!c.is_reusable());
    });
    assert_eq!(counters.accepted(), 1);
}

/// A server on 127.0.0.1:0 that reads one request head, answers with
/// `wire`, and closes. Returns its address.
fn one_shot_server(wire: &'static [u8]) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).is_ok_and(|n| n == 1) {
            head.push(byte[0]);
        }
        let _ = s.write_all(wire);
    });
    addr
}

#[test]
fn verbose_client_prints_interim_heads_and_trailers_as_curl_does() {
    let addr = one_shot_server(
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n\
          HTTP/1.1 200 Fine Thanks\r\nTransfer-Encoding: chunked\r\nTrailer: x-sum\r\nConnection: close\r\n\r\n\
          5\r\nhello\r\n0\r\nX-Sum: 42\r\n\r\n",
    );
    let (out, err) = run_client(&args(&["-v", &format!("http://{addr}/")]));
    assert_eq!(out, b"hello");
    let interim = err.find("< HTTP/1.1 103 Early Hints").expect(&err);
    let link = err.find("< Link: </style.css>; rel=preload").expect(&err);
    let fin = err.find("< HTTP/1.1 200 Fine Thanks").expect(&err);
    let trailer = err.find("< X-Sum: 42").expect(&err);
    assert!(interim < link && link < fin && fin < trailer, "{err}");
}

#[test]
fn pipelined_requests_on_both_client_adapters() {
    let (addr, counters) = start(Kind::Blocking);
    let get = |path: &str| {
        http::Request::get(path)
            .header("host", addr.to_string())
            .body("")
            .unwrap()
    };
    // Blocking: three requests queued, one write, then three responses.
    let mut c = h1proto::adapter::blocking::Client::connect(addr).unwrap();
    for path in ["/", "/nope", "/"] {
        c.sender().send_request(get(path)).unwrap();
    }
    assert_eq!(c.connection().requests_in_flight(), 3);
    let bodies: Vec<_> = (0..3)
        .map(|_| {
            c.call(h1proto::ClientSession::next_full_response)
                .unwrap()
                .unwrap()
                .into_body()
        })
        .collect();
    assert_eq!(bodies, ["Hello, World!", "Not Found\n", "Hello, World!"]);
    assert!(
        c.call(h1proto::ClientSession::next_full_response)
            .unwrap()
            .is_none(),
        "nothing more is due"
    );

    // Tokio: the same, on a runtime of its own.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = h1proto::adapter::tokio::Client::connect(addr)
            .await
            .unwrap();
        for path in ["/nope", "/", "/nope"] {
            c.sender().send_request(get(path)).unwrap();
        }
        let mut bodies = Vec::new();
        while let Some(res) = c
            .call(h1proto::ClientSession::next_full_response)
            .await
            .unwrap()
        {
            bodies.push(res.into_body());
        }
        assert_eq!(bodies, ["Not Found\n", "Hello, World!", "Not Found\n"]);
    });
    assert_eq!(counters.accepted(), 2, "one connection per adapter");
}
