//! The example proxy between real clients (curl, Python's `http.client`)
//! and the example servers, all in this process on 127.0.0.1:0.

use h1proto_test_support::proxy as proxy_support;
use h1proto_test_support::servers as interop_support;

use std::net::SocketAddr;
use std::time::Duration;

use http::Method;
use interop_support::{BOTH, Counters, Kind, TempDir, pattern, run_bounded, start, tool};
use proxy_support::{Client, start_proxy};

const LIMIT: Duration = Duration::from_secs(30);

/// An example server of `kind`, and the proxy in front of it.
fn behind_proxy(kind: Kind) -> (SocketAddr, std::sync::Arc<Counters>) {
    let (upstream, counters) = start(kind);
    (start_proxy(upstream).addr, counters)
}

fn curl(args: &[&str]) -> (Vec<u8>, String) {
    let out = run_bounded(tool("curl").arg("-sS").args(args), LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "curl {args:?} failed: {stderr}");
    (out.stdout, stderr)
}

#[test]
fn curl_reuses_its_connection_and_the_proxy_its_upstream_one() {
    for kind in BOTH {
        let (addr, counters) = behind_proxy(kind);
        let (out, err) = curl(&[
            "-v",
            &format!("http://{addr}/"),
            &format!("http://{addr}/missing"),
            &format!("http://{addr}/"),
        ]);
        assert_eq!(out, b"Hello, World!Not Found\nHello, World!", "{kind:?}");
        assert!(
            err.contains("Re-using existing connection")
                || err.contains("Reusing existing connection"),
            "{kind:?}: curl opened a second connection:\n{err}"
        );
        assert!(err.contains("< HTTP/1.1 404 Not Found"), "{kind:?}: {err}");
        assert_eq!(err.matches("< via: 1.1 h1proto-proxy").count(), 3, "{err}");
        assert_eq!(counters.accepted(), 1, "{kind:?}: the pool was not used");
    }
}

#[test]
fn curl_head_gets_the_head_only() {
    for kind in BOTH {
        let (addr, _) = behind_proxy(kind);
        let (out, _) = curl(&["-I", &format!("http://{addr}/")]);
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{kind:?}: {out}");
        assert!(out.contains("content-length: 13\r\n"), "{kind:?}: {out}");
        assert!(
            out.ends_with("\r\n\r\n"),
            "{kind:?}: a body followed: {out:?}"
        );
    }
}

#[test]
fn curl_one_mib_echo_comes_back_intact() {
    let dir = TempDir::new("proxy-echo");
    let file = dir.0.join("body.bin");
    let body = pattern(1 << 20);
    std::fs::write(&file, &body).unwrap();
    let data = format!("@{}", file.display());
    for kind in BOTH {
        let (addr, _) = behind_proxy(kind);
        let url = format!("http://{addr}/echo");
        let variants: [&[&str]; 3] = [
            &["-H", "Expect:"],
            &["-H", "Transfer-Encoding: chunked", "-H", "Expect:"],
            // The 100 comes from the upstream, relayed: a long wait would
            // fail the bound.
            &["-H", "Expect: 100-continue", "--expect100-timeout", "60"],
        ];
        for extra in variants {
            let mut args = vec!["-v", "--data-binary", &data];
            args.extend_from_slice(extra);
            args.push(&url);
            let (out, err) = curl(&args);
            assert!(out == body, "{kind:?} {extra:?}: {} bytes back", out.len());
            if extra.contains(&"Expect: 100-continue") {
                assert!(err.contains("< HTTP/1.1 100 Continue"), "{kind:?}: {err}");
                // Relayed: the proxy's Via is on it.
                let after = &err[err.find("100 Continue").unwrap()..];
                let via = after.find("< via: 1.1 h1proto-proxy").unwrap_or(usize::MAX);
                let ok = after.find("< HTTP/1.1 200 OK").unwrap_or(0);
                assert!(via < ok, "{kind:?}: the 100 was not relayed:\n{err}");
            }
        }
    }
}

/// The proxy forwards each piece of the echo as it comes: the client
/// reads the first half of the echo before it sends the second half of
/// the body.
#[test]
fn an_echo_answers_while_the_body_is_still_coming() {
    for kind in BOTH {
        let (addr, _) = behind_proxy(kind);
        let mut client = Client::connect(addr);
        client.expect(&Method::POST);
        client.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234");
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        while !seen.ends_with(b"01234") {
            use std::io::Read;
            let n = client.stream.read(&mut buf).expect("the first half echoed");
            assert!(
                n > 0,
                "{kind:?}: closed: {:?}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
        let head = String::from_utf8_lossy(&seen);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{kind:?}: {head}");
        client.send(b"56789");
        let mut rest = Vec::new();
        while rest.len() < 5 {
            use std::io::Read;
            let n = client
                .stream
                .read(&mut buf)
                .expect("the second half echoed");
            assert!(n > 0);
            rest.extend_from_slice(&buf[..n]);
        }
        assert_eq!(rest, b"56789", "{kind:?}");
    }
}

/// Runs a Python script with the proxy's port as its argument; the
/// script asserts and prints `ok` at the end.
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

const PYTHON_SESSION: &str = r#"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request("GET", "/")
r = c.getresponse()
assert r.status == 200 and r.getheader("Via") == "1.1 h1proto-proxy", r.getheaders()
assert r.read() == b"Hello, World!"
sock = c.sock
c.request("HEAD", "/")
r = c.getresponse()
assert r.status == 200 and r.getheader("Content-Length") == "13", r.getheaders()
assert r.read() == b""
pieces = [b"hello ", b"chunked ", b"world" * 1000]
c.request("POST", "/echo", body=iter(pieces), encode_chunked=True)
r = c.getresponse()
assert r.status == 200, r.status
assert r.read() == b"".join(pieces)
c.request("POST", "/echo", body=b"length-delimited")
r = c.getresponse()
assert r.getheader("Content-Length") == "16", r.getheaders()
assert r.read() == b"length-delimited"
c.request("GET", "/nowhere")
r = c.getresponse()
assert r.status == 404
r.read()
assert c.sock is sock, "a second connection was opened"
print("ok")
"#;

/// 300 sequential requests on one connection: a 40 ms delayed-ACK stall
/// per request on either side of the proxy would take 12 s.
const MANY: &str = r#"
import http.client, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.connect()
sock = c.sock
start = time.monotonic()
for i in range(300):
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
assert elapsed < 10.0, elapsed
print("ok")
"#;

#[test]
fn python_keep_alive_head_and_uploads() {
    for kind in BOTH {
        let (addr, counters) = behind_proxy(kind);
        python(PYTHON_SESSION, addr.port());
        assert_eq!(counters.accepted(), 1, "{kind:?}");
    }
}

#[test]
fn python_many_requests_without_stalls() {
    for kind in BOTH {
        let (addr, counters) = behind_proxy(kind);
        let out = python(MANY, addr.port());
        println!("{kind:?}: {}", out.lines().next().unwrap_or_default());
        assert_eq!(counters.accepted(), 1, "{kind:?}");
    }
}
