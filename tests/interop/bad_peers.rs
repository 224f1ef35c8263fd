//! Bad peers at the socket, against both example servers in-process:
//! malformed and smuggling requests get their status with
//! `Connection: close` and then the socket closes; an oversized head is
//! refused before it is all sent; peers that vanish mid-message leave no
//! panic and no connection behind, and other connections keep being served.

use h1proto_test_support::servers as interop_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use interop_support::{BOTH, start};

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts panics on any thread (server threads and tasks included).
fn watch_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // Server threads are unnamed or tokio's; test threads are
            // named after their test and report their own failures.
            let name = std::thread::current().name().map(str::to_owned);
            if name.is_none_or(|n| n.starts_with("tokio")) {
                PANICS.fetch_add(1, Ordering::SeqCst);
            }
            previous(info);
        }));
    });
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads until the server closes; fails on a timeout (the socket must close).
fn read_to_close(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "the server did not close the connection: {e}; read so far: {:?}",
                String::from_utf8_lossy(&out)
            ),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn get_ok(addr: SocketAddr) {
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let text = read_to_close(&mut s);
    assert!(
        text.starts_with("HTTP/1.1 200 OK\r\n") && text.ends_with("Hello, World!"),
        "{text}"
    );
}

/// Where each status line starts.
fn status_lines(text: &str) -> Vec<usize> {
    text.match_indices("HTTP/1.1 ")
        .map(|(i, _)| i)
        .filter(|&i| {
            let status = &text.as_bytes()[i + 9..];
            status.len() >= 4 && status[..3].iter().all(u8::is_ascii_digit) && status[3] == b' '
        })
        .collect()
}

const CASES: &[(&str, &str, u16)] = &[
    (
        "CL and TE (smuggling)",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
        400,
    ),
    (
        "TE then CL (smuggling)",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
        400,
    ),
    (
        "two Content-Lengths",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde",
        400,
    ),
    (
        "signed Content-Length",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +4\r\n\r\nabcd",
        400,
    ),
    (
        "TE not ending in chunked",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
        400,
    ),
    (
        "unknown transfer coding",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: foo, chunked\r\n\r\n0\r\n\r\n",
        501,
    ),
    (
        "obs-fold",
        "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",
        400,
    ),
    (
        "space before colon",
        "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
        400,
    ),
    ("bare LF", "GET / HTTP/1.1\nHost: a\n\n", 400),
    ("bare CR", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400),
    ("no Host", "GET / HTTP/1.1\r\n\r\n", 400),
    ("HTTP/2.0 line", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
    (
        "garbage",
        "\x16\x03\x01\x02\x00\x01\x00\x01\x7f\x03\x03\r\n\r\n",
        400,
    ),
];

#[test]
fn malformed_requests_get_their_status_then_close() {
    watch_panics();
    for kind in BOTH {
        let (addr, counters) = start(kind);
        for (name, wire, status) in CASES {
            let mut s = connect(addr);
            s.write_all(wire.as_bytes()).unwrap();
            let text = read_to_close(&mut s);
            let last = status_lines(&text)
                .pop()
                .unwrap_or_else(|| panic!("{kind:?} {name}: no response: {text:?}"));
            let error = &text[last..];
            assert!(
                error.starts_with(&format!("HTTP/1.1 {status} ")),
                "{kind:?} {name}: {text}"
            );
            assert!(
                error
                    .to_ascii_lowercase()
                    .contains("\r\nconnection: close\r\n"),
                "{kind:?} {name}: {text}"
            );
            assert!(!text.contains("smuggled"), "{kind:?} {name}: {text}");
            assert_eq!(last, 0, "{kind:?} {name}: {text}");
        }
        // Limits: field count, request-target length.
        let many: String = (0..200).map(|i| format!("X-{i}: v\r\n")).collect();
        let cases = [
            (format!("GET / HTTP/1.1\r\nHost: a\r\n{many}\r\n"), 431),
            (
                format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(9000)),
                414,
            ),
        ];
        for (wire, status) in cases {
            let mut s = connect(addr);
            s.write_all(wire.as_bytes()).unwrap();
            let text = read_to_close(&mut s);
            assert!(
                text.starts_with(&format!("HTTP/1.1 {status} ")),
                "{kind:?}: {text}"
            );
            assert!(
                text.to_ascii_lowercase()
                    .contains("\r\nconnection: close\r\n"),
                "{kind:?}: {text}"
            );
        }
        // A valid request, then a malformed one in the same read: the
        // first is answered, the second refused, and nothing after it.
        let mut s = connect(addr);
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        let text = read_to_close(&mut s);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{kind:?}: {text}");
        assert_eq!(status_lines(&text).len(), 2, "{kind:?}: {text}");
        assert!(
            text.contains("HTTP/1.1 400 Bad Request\r\n"),
            "{kind:?}: {text}"
        );

        get_ok(addr);
        assert!(
            counters.wait_all_finished(Duration::from_secs(10)),
            "{kind:?}: connections left open"
        );
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

#[test]
fn one_mib_head_is_refused_before_it_is_all_sent() {
    watch_panics();
    for kind in BOTH {
        let (addr, counters) = start(kind);
        let mut s = connect(addr);
        let mut head = b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: ".to_vec();
        head.resize(1 << 20, b'a');
        // Send 128 KiB (twice the head limit) and wait for the answer
        // without sending the rest: the server must not wait for it.
        s.write_all(&head[..128 * 1024]).unwrap();
        let mut first = [0u8; 64];
        let n = s
            .read(&mut first)
            .expect("the server answered before the head ended");
        let head_start = String::from_utf8_lossy(&first[..n]).into_owned();
        assert!(
            head_start.starts_with("HTTP/1.1 431 "),
            "{kind:?}: {head_start}"
        );
        // The rest may be discarded or refused; the socket closes.
        let mut writer = s.try_clone().unwrap();
        let rest = head[128 * 1024..].to_vec();
        let t = std::thread::spawn(move || {
            let _ = writer.write_all(&rest);
        });
        let text = head_start + &read_to_close(&mut s);
        assert!(
            text.to_ascii_lowercase()
                .contains("\r\nconnection: close\r\n"),
            "{kind:?}: {text}"
        );
        let _ = t.join();
        get_ok(addr);
        assert!(
            counters.wait_all_finished(Duration::from_secs(10)),
            "{kind:?}: connections left open"
        );
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

#[test]
fn vanishing_peers_leave_nothing_behind() {
    watch_panics();
    let partial: &[&[u8]] = &[
        b"GET / HTT",
        b"GET / HTTP/1.1\r\nHost: a\r\n",
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc",
        b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    ];
    for kind in BOTH {
        let (addr, counters) = start(kind);
        // A connection that stays healthy throughout.
        let mut steady = connect(addr);
        let started = Instant::now();
        for round in 0..20 {
            for bytes in partial {
                let mut s = connect(addr);
                s.write_all(bytes).unwrap();
                if round % 2 == 1 {
                    // Half of them read a little first.
                    let _ = s.set_read_timeout(Some(Duration::from_millis(1)));
                    let _ = s.read(&mut [0u8; 16]);
                }
                drop(s);
            }
            steady
                .write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                .unwrap();
            let mut buf = [0u8; 256];
            let mut got = Vec::new();
            while !got.ends_with(b"Hello, World!") {
                let n = steady
                    .read(&mut buf)
                    .expect("the steady connection is served");
                assert!(n > 0, "{kind:?}: the steady connection closed");
                got.extend_from_slice(&buf[..n]);
            }
        }
        get_ok(addr);
        drop(steady);
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(
            counters.wait_all_finished(Duration::from_secs(15)),
            "{kind:?}: {} of {} connections still open",
            counters.accepted() - counters.finished.load(Ordering::SeqCst),
            counters.accepted()
        );
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

/// A client may send an empty line after a request (RFC 9112 section
/// 2.2): its CR and its LF in two writes, then the client's half-close.
/// Every example server answers the request and closes at once (finding
/// F6 in docs/security.md: the close went unseen, and the server spun at
/// full CPU until its head timeout).
#[test]
fn an_empty_line_in_two_writes_then_a_half_close_is_closed_at_once() {
    watch_panics();
    for kind in interop_support::all() {
        let (addr, _) = start(kind);
        let mut s = connect(addr);
        s.set_nodelay(true).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n\r").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        s.write_all(b"\n").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let started = Instant::now();
        let text = read_to_close(&mut s);
        let waited = started.elapsed();
        assert!(text.ends_with("Hello, World!"), "{kind:?}: {text}");
        assert!(
            waited < Duration::from_secs(2),
            "{kind:?}: closed {waited:?} after the client's close"
        );
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

const BODY_ERRORS: &[(&str, &str)] = &[
    (
        "bad chunk size",
        "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
    ),
    (
        "chunk without CRLF",
        "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
    ),
];

/// An error inside a body is answered with 400 and a close, both by a
/// server that reads the body before answering (the whole-body adapters)
/// and by the streaming echo: its response head and first piece were
/// still queued when the error came, so they are withdrawn and replaced.
#[test]
fn errors_inside_a_body() {
    use h1proto::Config;
    use std::net::TcpListener;
    let whole_body = |req: http::Request<bytes::Bytes>| http::Response::new(req.into_body());
    let blocking = TcpListener::bind("127.0.0.1:0").unwrap();
    let blocking_addr = blocking.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in blocking.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = h1proto::adapter::blocking::serve(stream, Config::default(), whole_body);
            });
        }
    });
    let tokio_listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let tokio_addr = tokio_listener.local_addr().unwrap();
    tokio_listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(tokio_listener).unwrap();
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(h1proto::adapter::tokio::serve(
                    stream,
                    Config::default(),
                    move |req| async move { whole_body(req) },
                ));
            }
        });
    });
    for addr in [blocking_addr, tokio_addr] {
        for (name, wire) in BODY_ERRORS {
            let mut s = connect(addr);
            s.write_all(wire.as_bytes()).unwrap();
            let text = read_to_close(&mut s);
            assert!(
                text.starts_with("HTTP/1.1 400 Bad Request\r\n"),
                "{addr} {name}: {text}"
            );
            assert!(
                text.to_ascii_lowercase()
                    .contains("\r\nconnection: close\r\n"),
                "{addr} {name}: {text}"
            );
        }
    }
    for kind in BOTH {
        let (addr, counters) = start(kind);
        for (name, wire) in BODY_ERRORS {
            let mut s = connect(addr);
            s.write_all(wire.as_bytes()).unwrap();
            let text = read_to_close(&mut s);
            assert!(
                text.starts_with("HTTP/1.1 400 Bad Request\r\n"),
                "{kind:?} {name}: {text}"
            );
            assert!(
                !text.contains("200 OK") && !text.contains("hello"),
                "{kind:?} {name}: the withdrawn echo leaked: {text:?}"
            );
        }
        assert!(
            counters.wait_all_finished(Duration::from_secs(10)),
            "{kind:?}: connections left open"
        );
    }
}
