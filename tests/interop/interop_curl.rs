//! Every example server, in-process on 127.0.0.1:0, driven by curl.

use h1proto_test_support::servers as interop_support;

use std::time::Duration;

use interop_support::{TempDir, all, pattern, run_bounded, start, tool};

const LIMIT: Duration = Duration::from_secs(30);

fn curl(args: &[&str]) -> (String, String) {
    let out = run_bounded(tool("curl").arg("-sS").args(args), LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "curl {args:?} failed: {stderr}");
    (stdout, stderr)
}

/// [`curl`] with stdout as bytes.
fn curl_bytes(args: &[&str]) -> (Vec<u8>, String) {
    let out = run_bounded(tool("curl").arg("-sS").args(args), LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "curl {args:?} failed: {stderr}");
    (out.stdout, stderr)
}

#[test]
fn two_urls_reuse_one_connection() {
    for kind in all() {
        let (addr, counters) = start(kind);
        let a = format!("http://{addr}/");
        let b = format!("http://{addr}/missing");
        let (out, err) = curl(&["-v", &a, &b]);
        assert_eq!(out, "Hello, World!Not Found\n", "{kind:?}");
        assert!(
            err.contains("Re-using existing connection")
                || err.contains("Reusing existing connection"),
            "{kind:?}: curl opened a second connection:\n{err}"
        );
        assert!(err.contains("< HTTP/1.1 200 OK"), "{kind:?}: {err}");
        assert!(err.contains("< HTTP/1.1 404 Not Found"), "{kind:?}: {err}");
        assert_eq!(counters.accepted(), 1, "{kind:?}");
    }
}

#[test]
fn head_gets_the_head_only() {
    for kind in all() {
        let (addr, _) = start(kind);
        let (out, _) = curl(&["-I", &format!("http://{addr}/")]);
        let lower = out.to_ascii_lowercase();
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{kind:?}: {out}");
        assert!(lower.contains("content-length: 13\r\n"), "{kind:?}: {out}");
        assert!(
            lower.contains("content-type: text/plain\r\n"),
            "{kind:?}: {out}"
        );
        assert!(
            out.ends_with("\r\n\r\n"),
            "{kind:?}: a body followed the head: {out:?}"
        );
    }
}

#[test]
fn one_mib_echo_comes_back_intact() {
    let dir = TempDir::new("curl-echo");
    let file = dir.0.join("body.bin");
    let body = pattern(1 << 20);
    std::fs::write(&file, &body).unwrap();
    let data = format!("@{}", file.display());
    for kind in all() {
        let (addr, _) = start(kind);
        let url = format!("http://{addr}/echo");
        // Content-Length, chunked, and both waiting for 100 Continue (a
        // long expect timeout: a server that never sends it fails the bound).
        let variants: [&[&str]; 3] = [
            &["-H", "Expect:"],
            &["-H", "Transfer-Encoding: chunked", "-H", "Expect:"],
            &["-H", "Expect: 100-continue", "--expect100-timeout", "60"],
        ];
        for extra in variants {
            let mut args = vec!["-v", "--data-binary", &data];
            args.extend_from_slice(extra);
            args.push(&url);
            let started = std::time::Instant::now();
            let out = run_bounded(tool("curl").arg("-sS").args(&args), LIMIT);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{kind:?} {extra:?}: {stderr}");
            assert!(
                out.stdout == body,
                "{kind:?} {extra:?}: echo differs ({} bytes back)",
                out.stdout.len()
            );
            if extra.contains(&"Expect: 100-continue") {
                assert!(
                    stderr.contains("HTTP/1.1 100 Continue"),
                    "{kind:?}: {stderr}"
                );
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "{kind:?}: waited for 100 Continue"
                );
            }
        }
    }
}

/// `POST /echo` with `Expect: 100-continue` and a body past curl's own
/// threshold for it (1 MiB), twice in one curl run: every server queues the
/// echo's head before they read the body, and curl still gets `100
/// Continue` before it sends the body (it waits up to 60 s for it), then
/// the echo, and reuses the connection for the second.
#[test]
fn expect_continue_echo_keeps_the_connection() {
    let dir = TempDir::new("curl-expect");
    let file = dir.0.join("body.bin");
    let body = pattern((1 << 20) + 1);
    std::fs::write(&file, &body).unwrap();
    let data = format!("@{}", file.display());
    for kind in all() {
        let (addr, counters) = start(kind);
        let url = format!("http://{addr}/echo");
        let started = std::time::Instant::now();
        let (out, err) = curl_bytes(&[
            "-v",
            "--data-binary",
            &data,
            "-H",
            "Expect: 100-continue",
            "--expect100-timeout",
            "60",
            &url,
            &url,
        ]);
        assert!(
            out == [&body[..], &body[..]].concat(),
            "{kind:?}: echo differs ({} bytes back)",
            out.len()
        );
        assert_eq!(
            err.matches("< HTTP/1.1 100 Continue").count(),
            2,
            "{kind:?}: {err}"
        );
        assert_eq!(
            err.matches("< HTTP/1.1 200 OK").count(),
            2,
            "{kind:?}: {err}"
        );
        assert!(
            !err.to_ascii_lowercase().contains("< connection: close"),
            "{kind:?}: {err}"
        );
        assert!(
            err.contains("Re-using existing connection")
                || err.contains("Reusing existing connection"),
            "{kind:?}: curl opened a second connection:\n{err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{kind:?}: waited for 100 Continue ({:?})",
            started.elapsed()
        );
        assert_eq!(counters.accepted(), 1, "{kind:?}");
    }
}

#[test]
fn many_urls_on_one_connection_without_stalls() {
    // 200 GETs in one curl run: one connection, no 40 ms delayed-ACK stall
    // per request (200 * 40 ms = 8 s would fail the bound).
    for kind in all() {
        let (addr, counters) = start(kind);
        let dir = TempDir::new("curl-many");
        let config = dir.0.join("urls.txt");
        let lines: String = (0..200)
            .map(|_| format!("url = \"http://{addr}/\"\n"))
            .collect();
        std::fs::write(&config, lines).unwrap();
        let started = std::time::Instant::now();
        let (out, _) = curl(&["-K", config.to_str().unwrap()]);
        assert_eq!(out, "Hello, World!".repeat(200), "{kind:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{kind:?}: {:?}",
            started.elapsed()
        );
        assert_eq!(counters.accepted(), 1, "{kind:?}");
    }
}

#[test]
fn unknown_routes_are_404() {
    for kind in all() {
        let (addr, _) = start(kind);
        let (out, _) = curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("http://{addr}/nope"),
        ]);
        assert_eq!(out, "404", "{kind:?}");
        let (out, _) = curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "DELETE",
            &format!("http://{addr}/"),
        ]);
        // A method the servers know and do not serve.
        assert_eq!(out, "405", "{kind:?}");
    }
}
