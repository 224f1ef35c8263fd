//! Every example server, in-process on 127.0.0.1:0, driven by Python's
//! `http.client`.

mod interop_support;

use std::time::Duration;

use interop_support::{all, run_bounded, start, tool};

/// Runs a Python script with the server's port as its argument; the script
/// asserts and prints `ok` at the end.
fn python(script: &str, port: u16) -> String {
    let out = run_bounded(
        tool("python3").args(["-c", script, &port.to_string()]),
        Duration::from_secs(60),
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python failed:\n{stdout}\n{stderr}");
    assert!(stdout.trim_end().ends_with("ok"), "{stdout}");
    stdout
}

const KEEP_ALIVE: &str = r#"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request("GET", "/")
r = c.getresponse()
assert r.status == 200 and r.getheader("Content-Type") == "text/plain", (r.status, r.getheaders())
assert r.read() == b"Hello, World!"
sock = c.sock
c.request("GET", "/nowhere")
r = c.getresponse()
assert r.status == 404
r.read()
assert c.sock is sock, "a second connection was opened"
print("ok")
"#;

const HEAD_THEN_GET: &str = r#"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request("HEAD", "/")
r = c.getresponse()
assert r.status == 200 and r.getheader("Content-Length") == "13", r.getheaders()
assert r.read() == b""
sock = c.sock
c.request("GET", "/")
r = c.getresponse()
assert r.read() == b"Hello, World!"
assert c.sock is sock, "a second connection was opened"
print("ok")
"#;

const CHUNKED_UPLOAD: &str = r#"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
pieces = [b"hello ", b"chunked ", b"world" * 1000]
c.request("POST", "/echo", body=iter(pieces), encode_chunked=True)
r = c.getresponse()
assert r.status == 200, r.status
assert r.read() == b"".join(pieces)
sock = c.sock
c.request("POST", "/echo", body=b"length-delimited")
r = c.getresponse()
assert r.getheader("Content-Length") == "16", r.getheaders()
assert r.read() == b"length-delimited"
assert c.sock is sock, "a second connection was opened"
print("ok")
"#;

/// 1000 sequential requests on one connection: a 40 ms delayed-ACK stall
/// per request (Nagle meeting a split write) would take 40 s.
const THOUSAND: &str = r#"
import http.client, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.connect()
sock = c.sock
start = time.monotonic()
for i in range(1000):
    if i % 2:
        c.request("POST", "/echo", body=b"x" * (i % 300))
        r = c.getresponse()
        assert r.read() == b"x" * (i % 300)
    else:
        c.request("GET", "/")
        r = c.getresponse()
        assert r.read() == b"Hello, World!"
elapsed = time.monotonic() - start
assert c.sock is sock, "the connection was not kept"
print("elapsed %.3f" % elapsed)
assert elapsed < 5.0, elapsed
print("ok")
"#;

#[test]
fn keep_alive() {
    for kind in all() {
        let (addr, counters) = start(kind);
        python(KEEP_ALIVE, addr.port());
        assert_eq!(counters.accepted(), 1, "{kind:?}");
    }
}

#[test]
fn head_then_get_on_one_connection() {
    for kind in all() {
        let (addr, _) = start(kind);
        python(HEAD_THEN_GET, addr.port());
    }
}

#[test]
fn chunked_upload() {
    for kind in all() {
        let (addr, _) = start(kind);
        python(CHUNKED_UPLOAD, addr.port());
    }
}

#[test]
fn thousand_sequential_requests_without_stalls() {
    for kind in all() {
        let (addr, counters) = start(kind);
        let out = python(THOUSAND, addr.port());
        println!("{kind:?}: {}", out.lines().next().unwrap_or_default());
        assert_eq!(counters.accepted(), 1, "{kind:?}");
    }
}
