//! The example proxy as an operator meets it: `--help`, a bad command line
//! and a busy port answered plainly (the process, as run); `--no-via`; and
//! a request with an invalid `Host` refused before anything reaches the
//! upstream.

use h1proto_test_support::process as server_process;
use h1proto_test_support::proxy as proxy_support;

use std::net::TcpListener;
use std::process::{Command, Output};

use http::Method;
use proxy_support::{Client, Upstream, get, ok, start_proxy, start_proxy_with};

fn proxy(args: &[&str]) -> Output {
    Command::new(server_process::binary("proxy"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What Debug output of an `io::Error` looks like: never shown to a user.
fn assert_plain(err: &str) {
    for debug in ["Custom {", "kind:", "Os {"] {
        assert!(!err.contains(debug), "Debug output: {err}");
    }
}

#[test]
fn help_prints_the_usage_and_exits_0() {
    for help in ["--help", "-h"] {
        let out = proxy(&[help]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let usage = text(&out.stdout);
        assert!(usage.starts_with("Usage: proxy"), "{usage}");
        for option in [
            "--upstream",
            "--addr",
            "--via",
            "--no-via",
            "--header-timeout",
        ] {
            assert!(usage.contains(option), "{option}: {usage}");
        }
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    }
}

#[test]
fn a_bad_command_line_is_refused_plainly_with_status_2() {
    for (args, says) in [
        (&["--bogus"][..], "unknown option \"--bogus\""),
        (&[], "--upstream HOST:PORT is required"),
        (&["--upstream"], "--upstream needs a value"),
        (
            &["--upstream", "u:1", "--header-timeout", "0"],
            "--header-timeout 0: not a positive number of seconds",
        ),
        (
            &["--upstream", "u:1", "--via", "a\u{7f}b"],
            "--via is not a valid field value",
        ),
    ] {
        let out = proxy(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("proxy: "), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_plain(&err);
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_busy_port_is_reported_plainly() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let out = proxy(&["--upstream", "127.0.0.1:1", "--addr", &addr]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!("proxy: cannot listen on {addr}: ")),
        "{err}"
    );
    assert_plain(&err);
}

#[test]
fn no_via_adds_no_via_either_way() {
    let upstream = Upstream::start(|conn| {
        while conn.read_request().is_some() {
            conn.write(&ok("hi"));
        }
    });
    let proxy = start_proxy_with(&upstream.addr.to_string(), |args| args.send_via = false);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(&Method::GET, &get("/"));
    assert_eq!(got.status(), 200);
    assert_eq!(got.header("via"), None, "{}", got.raw);
    let received = String::from_utf8(upstream.received().remove(0)).unwrap();
    assert!(
        !received.to_ascii_lowercase().contains("via:"),
        "{received}"
    );
    // A Via the client sent goes on unchanged.
    let got = client.request(
        &Method::GET,
        b"GET / HTTP/1.1\r\nHost: example.com\r\nVia: 1.1 front\r\n\r\n",
    );
    assert_eq!(got.header("via"), None);
    let received = String::from_utf8(upstream.received().remove(0)).unwrap();
    assert_eq!(
        received.matches("Via: 1.1 front\r\n").count(),
        1,
        "{received}"
    );
    assert_eq!(received.to_ascii_lowercase().matches("via:").count(), 1);
}

#[test]
fn an_invalid_host_is_refused_before_it_reaches_the_upstream() {
    let upstream = Upstream::start(|conn| {
        while conn.read_request().is_some() {
            conn.write(&ok("hi"));
        }
    });
    let proxy = start_proxy(upstream.addr);
    for host in [
        "###",
        "exa mple.com",
        "ex@mple",
        "a/b",
        "a?b",
        "a\\b",
        "ex\u{e4}mple",
    ] {
        let mut client = Client::connect(proxy.addr);
        let request = format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n");
        let got = client.request(&Method::GET, request.as_bytes());
        assert_eq!(got.status(), 400, "Host: {host}: {}", got.raw);
    }
    for bad in [
        &b"GET / HTTP/1.1\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    ] {
        let mut client = Client::connect(proxy.addr);
        let got = client.request(&Method::GET, bad);
        assert_eq!(got.status(), 400, "{}", got.raw);
    }
    assert_eq!(
        upstream.accepted(),
        0,
        "a refused request reached the upstream"
    );
    // Valid ones go through.
    for host in ["example.com:80", "[::1]:80", "ex%41mple", "a-b_c~d"] {
        let mut client = Client::connect(proxy.addr);
        let request = format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n");
        let got = client.request(&Method::GET, request.as_bytes());
        assert_eq!(got.status(), 200, "Host: {host}: {}", got.raw);
    }
}
