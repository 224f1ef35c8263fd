//! Every example server, in-process on 127.0.0.1:0, driven by Python's
//! `http.client`.

use h1proto_test_support::servers as interop_support;

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

/// `POST /echo` with `Expect: 100-continue`, over a raw socket so that the
/// order is seen: `100 Continue` arrives before any body byte is sent, then
/// the echo, twice on one connection, then a `GET` on it too. The servers
/// queue the echo's head before they read the body.
const EXPECT_CONTINUE_ECHO: &str = r#"
import socket, sys, threading
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
body = bytes(range(256)) * 4096 + b"!"
buf = b""
def head():
    global buf
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        assert d, ("closed", buf)
        buf += d
    i = buf.index(b"\r\n\r\n") + 4
    h, buf = buf[:i].decode("latin-1"), buf[i:]
    return h
def exactly(n):
    global buf
    while len(buf) < n:
        d = s.recv(65536)
        assert d, ("closed", len(buf), n)
        buf += d
    out, buf = buf[:n], buf[n:]
    return out
for _ in range(2):
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body))
    # Nothing of the body has been sent yet.
    interim = head()
    assert interim == "HTTP/1.1 100 Continue\r\n\r\n", interim
    sender = threading.Thread(target=s.sendall, args=(body,))
    sender.start()
    final = head()
    lines = final.lower().split("\r\n")
    assert lines[0] == "http/1.1 200 ok", final
    assert "content-length: %d" % len(body) in lines, final
    assert "connection: close" not in lines, final
    assert exactly(len(body)) == body
    sender.join()
s.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
assert head().startswith("HTTP/1.1 200 OK\r\n")
assert exactly(13) == b"Hello, World!"
print("ok")
"#;

#[test]
fn expect_continue_echo_gets_100_first_and_keeps_the_connection() {
    for kind in all() {
        let (addr, counters) = start(kind);
        python(EXPECT_CONTINUE_ECHO, addr.port());
        assert_eq!(counters.accepted(), 1, "{kind:?}");
    }
}

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
