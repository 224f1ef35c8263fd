//! Every example server, run as a process with `--header-timeout 2
//! --idle-timeout 3`: a connection that sends half a head and stops gets
//! `408 Request Timeout` and is closed about 2 s after it was made; an idle
//! keep-alive connection is closed about 3 s after its last response;
//! while 2,000 half-sent connections wait for their timeout (fewer if this
//! process may not open that many descriptors: the count is printed; at
//! least half of them still waiting, where opening them all is slow), a
//! normal client is served at once; and once they are closed,
//! `blocking_server` is back to the threads it started with. About six
//! seconds, every server at the same time.

use h1proto_test_support::process as server_process;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use server_process::{Launch, Server, connect, own_open_files_limit, servers};

const HEAD_TIMEOUT: Duration = Duration::from_secs(2);
const IDLE_TIMEOUT: Duration = Duration::from_secs(3);
/// How late a close may come (a debug build, 2,000 connections timing out
/// together, a shared machine).
const SLACK: Duration = Duration::from_millis(1500);

const HALF_HEAD: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\nX-Slow: 1";

/// The half-sent connections per server: 2,000, or what this process's
/// descriptor limit allows for every server at once.
fn half_sent_count() -> usize {
    let servers = servers().len() as u64;
    match own_open_files_limit() {
        Some(limit) => 2000.min((limit.saturating_sub(300) / servers) as usize),
        None => 2000,
    }
}

/// Reads until the server closes; the bytes and when the close came.
fn read_until_closed(s: &mut TcpStream) -> (Vec<u8>, Instant) {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("not closed: {e}; read {:?}", String::from_utf8_lossy(&out)),
        }
    }
    (out, Instant::now())
}

/// Asserts that `at` is `expected` after `since`, give or take
/// (never early by more than 100 ms, at most [`SLACK`] late).
fn on_time(what: &str, since: Instant, at: Instant, expected: Duration) {
    let took = at - since;
    assert!(
        took + Duration::from_millis(100) >= expected && took <= expected + SLACK,
        "{what}: closed after {took:?}, expected {expected:?}"
    );
}

fn check(name: &str, count: usize) {
    let launch = Launch::args(&["--header-timeout", "2", "--idle-timeout", "3"])
        .open_files(count as u64 + 200);
    let server = Server::start(name, &launch);
    let addr = server.addr;
    let base_threads = server.threads();
    let base_fds = server.fds();

    // A slow head, and an idle keep-alive connection after one exchange.
    let slow = std::thread::spawn(move || {
        let mut s = connect(addr).unwrap();
        let since = Instant::now();
        s.write_all(HALF_HEAD).unwrap();
        let (out, at) = read_until_closed(&mut s);
        (out, since, at)
    });
    let idle = std::thread::spawn(move || {
        let mut s = connect(addr).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 1024];
        while !out.ends_with(b"Hello, World!") {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "closed before the response");
            out.extend_from_slice(&buf[..n]);
        }
        let since = Instant::now();
        let (rest, at) = read_until_closed(&mut s);
        (out, rest, since, at)
    });

    // The half-sent heads, each with when it was made.
    let start = Instant::now();
    let mut half: Vec<(TcpStream, Instant)> = Vec::with_capacity(count);
    for i in 0..count {
        let mut s = connect(addr).unwrap_or_else(|e| panic!("{name}: connection {i}: {e}"));
        let since = Instant::now();
        s.write_all(HALF_HEAD).unwrap();
        half.push((s, since));
    }
    let opened = start.elapsed();
    // A normal client, served at once meanwhile (three times, to be sure
    // the first was no accident of timing).
    let mut served = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let text = server_process::get(addr).unwrap();
        served.push(t.elapsed());
        assert!(
            text.starts_with("HTTP/1.1 200 OK\r\n") && text.ends_with("Hello, World!"),
            "{name}: {text}"
        );
    }
    // How many half-sent heads were still waiting when the last normal
    // request was answered. On a loaded machine opening them all may take
    // about as long as the timeout, and the first few may time out before
    // the normal client comes; most must still be waiting.
    let waiting = half
        .iter()
        .filter(|(_, since)| since.elapsed() < HEAD_TIMEOUT)
        .count();
    let slowest = *served.iter().max().unwrap();
    assert!(
        slowest < Duration::from_secs(1),
        "{name}: a normal client took {served:?} during {waiting} half-sent heads"
    );
    assert!(
        waiting * 2 >= count,
        "{name}: opening {count} connections took {opened:?}; only {waiting} were \
         still waiting when the normal client was served"
    );

    // Each half-sent head: 408, then closed, on time.
    for (i, (s, since)) in half.iter_mut().enumerate() {
        let (out, at) = read_until_closed(s);
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
            "{name}: half-sent connection {i} got {text:?}"
        );
        on_time(&format!("{name}: half-sent {i}"), *since, at, HEAD_TIMEOUT);
    }
    let (out, since, at) = slow.join().unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.starts_with("HTTP/1.1 408 "),
        "{name}: slow head got {text:?}"
    );
    assert!(
        text.contains("\r\nconnection: close\r\n"),
        "{name}: {text:?}"
    );
    on_time(&format!("{name}: slow head"), since, at, HEAD_TIMEOUT);
    let (out, rest, since, at) = idle.join().unwrap();
    assert!(out.starts_with(b"HTTP/1.1 200 OK\r\n"), "{name}");
    assert!(rest.is_empty(), "{name}: an idle close sends nothing");
    on_time(&format!("{name}: idle"), since, at, IDLE_TIMEOUT);
    drop(half);

    // Everything given back.
    let threads_back = server.wait_until(Duration::from_secs(5), |s| s.threads() == base_threads);
    assert!(
        name != "blocking_server" || threads_back,
        "{name}: {} threads, {base_threads} before",
        server.threads()
    );
    assert!(
        server.wait_until(Duration::from_secs(5), |s| s.fds() <= base_fds),
        "{name}: {} descriptors open, {base_fds} before",
        server.fds()
    );
    eprintln!(
        "{name}: {count} half-sent heads opened in {opened:?}; a normal client \
         took {served:?} while {waiting} of them waited; all closed on time with 408; {} threads after, \
         {base_threads} before",
        server.threads()
    );
    let status = server.terminate(Duration::from_secs(10));
    assert!(status.success(), "{name}: {status}");
}

#[test]
fn slow_and_idle_connections_close_on_time_while_others_are_served() {
    let count = half_sent_count();
    std::thread::scope(|s| {
        for name in servers() {
            s.spawn(move || check(name, count));
        }
    });
}
