//! Every example server, run as a process, under load and attack at once
//! for [`LOAD`] (about half a minute in all, the servers side by side):
//!
//! - keep-alive clients echoing bodies through `POST /echo`, framed by
//!   `Content-Length` or chunked, some with `Expect: 100-continue`, sent
//!   in uneven writes; every echo must come back byte for byte, with no
//!   error at all;
//! - malformed requests on other connections, each answered with its
//!   error status, then closed;
//! - slowloris connections trickling a head, and idle keep-alive
//!   connections, which the timeouts (`--header-timeout 2
//!   --idle-timeout 2`) must close on time;
//! - abrupt resets (`SO_LINGER` 0 closes) in the middle of a request
//!   body and before reading a response.
//!
//! Then everything stops, and within a few seconds the server must be back
//! to the descriptors (`/proc/<pid>/fd`) and threads it had before, still
//! serving, with no panic in its log, and exit cleanly on SIGTERM.

use h1proto_test_support::process as server_process;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use h1proto::{Event, Limits, ResponseDecoder};
use http::Method;
use server_process::{Launch, Server, connect, served_within, servers};

/// How long the load and the attacks last.
const LOAD: Duration = Duration::from_secs(20);
/// The timeouts the servers run with.
const TIMEOUT: Duration = Duration::from_secs(2);
/// How late a close may come (debug builds, a busy 2-core machine).
const SLACK: Duration = Duration::from_millis(1500);
/// Concurrent keep-alive echo clients per server.
const ECHO_CLIENTS: usize = 6;
/// Slowloris and idle connections kept open at once, each.
const LOITERERS: usize = 20;

/// A small deterministic generator (xorshift), one per client thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// What the attackers and clients count.
#[derive(Default)]
struct Tally {
    echoes: AtomicU64,
    echoed_bytes: AtomicU64,
    malformed: AtomicU64,
    slow_closed: AtomicU64,
    idle_closed: AtomicU64,
    resets: AtomicU64,
}

/// Writes `data` in a few uneven pieces.
fn write_uneven(s: &mut TcpStream, data: &[u8], rng: &mut Rng) -> std::io::Result<()> {
    let mut rest = data;
    while !rest.is_empty() {
        let n = (1 + rng.below(rest.len() as u64 + 1) as usize).min(rest.len());
        s.write_all(&rest[..n])?;
        rest = &rest[n..];
    }
    Ok(())
}

/// Reads one response from `s` (answering a POST), returning its status,
/// its body and whether the connection stays open.
fn read_response(
    s: &mut TcpStream,
    dec: &mut ResponseDecoder,
    buf: &mut BytesMut,
) -> Result<(u16, Vec<u8>, bool), String> {
    dec.expect_response_to(&Method::POST);
    let mut status = 0;
    let mut body = Vec::new();
    loop {
        match dec.decode(buf).map_err(|e| format!("decode: {e}"))? {
            Some(Event::Head { head, .. }) => status = head.status().as_u16(),
            Some(Event::Data(data)) => body.extend_from_slice(&data),
            Some(Event::End(keep)) => return Ok((status, body, keep.is_reusable())),
            Some(_) => {}
            None => {
                let mut chunk = [0u8; 16 * 1024];
                let n = s.read(&mut chunk).map_err(|e| format!("read: {e}"))?;
                if n == 0 {
                    return Err("closed before the response ended".into());
                }
                buf.extend_from_slice(&chunk[..n]);
            }
        }
    }
}

/// Echo round trips on keep-alive connections until `stop`; every error
/// is returned.
fn echo_client(addr: SocketAddr, seed: u64, stop: &AtomicBool, tally: &Tally) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut errors = Vec::new();
    while !stop.load(Ordering::Relaxed) && errors.is_empty() {
        let mut s = match connect(addr) {
            Ok(s) => s,
            Err(e) => {
                errors.push(format!("connect: {e}"));
                break;
            }
        };
        let mut dec = ResponseDecoder::new(Limits::default());
        let mut buf = BytesMut::new();
        // A few exchanges per connection.
        for _ in 0..1 + rng.below(20) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let len = match rng.below(10) {
                0 => 0,
                1 => 256 * 1024 + rng.below(256 * 1024) as usize,
                _ => rng.below(16 * 1024) as usize,
            };
            let body = rng.bytes(len);
            let chunked = rng.below(2) == 0;
            // `Expect` only with a body to wait for (a request with
            // `Content-Length: 0` gets no `100 Continue`).
            let expect = (chunked || len > 0) && rng.below(4) == 0;
            let mut head = String::from("POST /echo HTTP/1.1\r\nHost: a\r\n");
            if chunked {
                head.push_str("Transfer-Encoding: chunked\r\n");
            } else {
                head.push_str(&format!("Content-Length: {len}\r\n"));
            }
            if expect {
                head.push_str("Expect: 100-continue\r\n");
            }
            head.push_str("\r\n");
            let mut wire = Vec::with_capacity(len + 64);
            if chunked {
                let mut rest = &body[..];
                while !rest.is_empty() {
                    let n = (1 + rng.below(20_000) as usize).min(rest.len());
                    wire.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                    wire.extend_from_slice(&rest[..n]);
                    wire.extend_from_slice(b"\r\n");
                    rest = &rest[n..];
                }
                wire.extend_from_slice(b"0\r\n\r\n");
            } else {
                wire.extend_from_slice(&body);
            }
            let sent = (|| {
                write_uneven(&mut s, head.as_bytes(), &mut rng)?;
                if expect {
                    // Wait for `100 Continue` (the server sends it when it
                    // starts reading the body), then send the body.
                    let mut got = Vec::new();
                    while !got.ends_with(b"\r\n\r\n") {
                        let mut byte = [0u8];
                        if s.read(&mut byte)? == 0 {
                            return Err(std::io::ErrorKind::UnexpectedEof.into());
                        }
                        got.push(byte[0]);
                    }
                    if !got.starts_with(b"HTTP/1.1 100 ") {
                        let text = String::from_utf8_lossy(&got).into_owned();
                        return Err(std::io::Error::other(format!("not 100: {text}")));
                    }
                }
                Ok(())
            })();
            if let Err(e) = sent {
                errors.push(format!("sending a {len}-byte echo: {e}"));
                break;
            }
            // Send the body on a second handle while this one reads the
            // echo, so that neither side waits on a full socket buffer.
            let result = std::thread::scope(|scope| {
                let mut w = s.try_clone().expect("clone");
                let wire = &wire;
                let seed = rng.next();
                let writer = scope.spawn(move || write_uneven(&mut w, wire, &mut Rng(seed | 1)));
                let read = read_response(&mut s, &mut dec, &mut buf);
                let wrote = writer.join().expect("writer");
                (read, wrote)
            });
            match result {
                (Ok((200, echoed, keep)), Ok(())) => {
                    if echoed != body {
                        errors.push(format!(
                            "echo of {len} bytes (chunked {chunked}, expect {expect}) \
                             came back as {} different bytes",
                            echoed.len()
                        ));
                        break;
                    }
                    tally.echoes.fetch_add(1, Ordering::Relaxed);
                    tally.echoed_bytes.fetch_add(len as u64, Ordering::Relaxed);
                    if !keep {
                        errors.push("an echo closed the connection".into());
                        break;
                    }
                }
                (Ok((status, ..)), _) => {
                    errors.push(format!("echo of {len} bytes answered {status}"));
                    break;
                }
                (Err(e), wrote) => {
                    errors.push(format!("echo of {len} bytes: {e} (writing: {wrote:?})"));
                    break;
                }
            }
        }
    }
    errors
}

/// Requests that must be refused, with the status each gets.
const MALFORMED: &[(&[u8], u16)] = &[
    (
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        400,
    ),
    (b"GET / HTTP/1.1\nHost: a\n\n", 400),
    (b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
    (b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
    (
        b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        400,
    ),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\x7f\x03\x03\r\n\r\n", 400),
];

/// Malformed requests until `stop`: each must get its status, then the
/// connection must close.
fn malformed_client(addr: SocketAddr, stop: &AtomicBool, tally: &Tally) -> Vec<String> {
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let (wire, status) = MALFORMED[i % MALFORMED.len()];
        i += 1;
        let answer = (|| {
            let mut s = connect(addr)?;
            s.write_all(wire)?;
            let mut out = Vec::new();
            s.read_to_end(&mut out)?;
            std::io::Result::Ok(out)
        })();
        match answer {
            Ok(out) if out.starts_with(format!("HTTP/1.1 {status} ").as_bytes()) => {
                tally.malformed.fetch_add(1, Ordering::Relaxed);
            }
            Ok(out) => {
                return vec![format!(
                    "{:?} got {:?}",
                    String::from_utf8_lossy(wire),
                    String::from_utf8_lossy(&out)
                )];
            }
            Err(e) => return vec![format!("{:?}: {e}", String::from_utf8_lossy(wire))],
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Vec::new()
}

/// One slowloris connection: a head trickled a byte every 300 ms must be
/// answered 408 and closed about [`TIMEOUT`] after the connection was made.
fn slowloris(addr: SocketAddr, tally: &Tally) -> Result<(), String> {
    let mut s = connect(addr).map_err(|e| format!("connect: {e}"))?;
    let since = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let head = b"GET / HTTP/1.1\r\nHost: a\r\nX-Slow: "
        .iter()
        .chain(std::iter::repeat(&b'a'));
    let mut out = Vec::new();
    for &byte in head {
        if s.write_all(&[byte]).is_err() {
            break;
        }
        let mut buf = [0u8; 1024];
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => return Err(format!("slowloris read: {e}")),
        }
        if since.elapsed() > TIMEOUT + SLACK * 2 {
            return Err(format!("slowloris still open after {:?}", since.elapsed()));
        }
    }
    // Whatever is left of the 408, up to the close.
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.read_to_end(&mut out);
    let took = since.elapsed();
    if !out.starts_with(b"HTTP/1.1 408 ") {
        return Err(format!("slowloris got {:?}", String::from_utf8_lossy(&out)));
    }
    if took + Duration::from_millis(100) < TIMEOUT || took > TIMEOUT + SLACK {
        return Err(format!("slowloris closed after {took:?}"));
    }
    tally.slow_closed.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// One idle keep-alive connection: after one exchange it must be closed,
/// with nothing sent, about [`TIMEOUT`] after the response.
fn idle(addr: SocketAddr, tally: &Tally) -> Result<(), String> {
    let mut s = connect(addr).map_err(|e| format!("connect: {e}"))?;
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    while !out.ends_with(b"Hello, World!") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return Err("idle: no response".into()),
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    let since = Instant::now();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    let took = since.elapsed();
    if !rest.is_empty() {
        return Err(format!(
            "idle close sent {:?}",
            String::from_utf8_lossy(&rest)
        ));
    }
    if took + Duration::from_millis(100) < TIMEOUT || took > TIMEOUT + SLACK {
        return Err(format!("idle connection closed after {took:?}"));
    }
    tally.idle_closed.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Keeps [`LOITERERS`] connections of one kind going until `stop`.
fn loiter(
    addr: SocketAddr,
    stop: &AtomicBool,
    tally: &Tally,
    one: fn(SocketAddr, &Tally) -> Result<(), String>,
) -> Vec<String> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..LOITERERS)
            .map(|_| {
                scope.spawn(move || {
                    let mut errors = Vec::new();
                    while !stop.load(Ordering::Relaxed) && errors.is_empty() {
                        if let Err(e) = one(addr, tally) {
                            errors.push(e);
                        }
                    }
                    errors
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("loiterer"))
            .collect()
    })
}

/// Connections closed with a reset (`SO_LINGER` 0): in the middle of a
/// request body, or after a request before reading its response.
fn resetter(addr: SocketAddr, stop: &AtomicBool, tally: &Tally) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let mut rng = Rng(0x5eed);
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut s) = connect(addr) else {
            return vec!["resetter: connect failed".into()];
        };
        let wire: Vec<u8> = match rng.below(3) {
            0 => [
                &b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n"[..],
                &rng.bytes(5000),
            ]
            .concat(),
            1 => b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
            _ => b"GET / HTTP/1.1\r\nHost: a\r\nX-Half".to_vec(),
        };
        let _ = s.write_all(&wire);
        std::thread::sleep(Duration::from_millis(rng.below(30)));
        // SO_LINGER 0: the close sends a reset.
        s.set_nonblocking(true).expect("non-blocking");
        let s = tokio::net::TcpStream::from_std(s).expect("to tokio");
        s.set_zero_linger().expect("SO_LINGER 0");
        drop(s.into_std());
        tally.resets.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(5));
    }
    Vec::new()
}

fn siege(name: &str) {
    let launch = Launch::args(&["--header-timeout", "2", "--idle-timeout", "2"]);
    let server = Server::start(name, &launch);
    let addr = server.addr;
    let base_fds = server.fds();
    let base_threads = server.threads();
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Tally::default();
    let started = Instant::now();
    let errors: Vec<String> = std::thread::scope(|scope| {
        let (stop, tally) = (&*stop, &tally);
        let mut workers = Vec::new();
        for i in 0..ECHO_CLIENTS {
            workers.push(scope.spawn(move || echo_client(addr, 1 + i as u64, stop, tally)));
        }
        workers.push(scope.spawn(move || malformed_client(addr, stop, tally)));
        workers.push(scope.spawn(move || loiter(addr, stop, tally, slowloris)));
        workers.push(scope.spawn(move || loiter(addr, stop, tally, idle)));
        workers.push(scope.spawn(move || resetter(addr, stop, tally)));
        std::thread::sleep(LOAD);
        stop.store(true, Ordering::Relaxed);
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a client thread panicked"))
            .collect()
    });
    let took = started.elapsed();
    let log = server.stderr();
    assert!(errors.is_empty(), "{name}: {errors:#?}\nserver log:\n{log}");
    let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
    eprintln!(
        "{name}: in {took:.1?}, {} echoes ({} MiB) without an error, {} malformed \
         requests refused, {} slowloris and {} idle connections closed on time, {} resets",
        count(&tally.echoes),
        count(&tally.echoed_bytes) >> 20,
        count(&tally.malformed),
        count(&tally.slow_closed),
        count(&tally.idle_closed),
        count(&tally.resets),
    );
    assert!(count(&tally.echoes) > 50, "{name}: too few echoes");
    assert!(
        count(&tally.malformed) > 10,
        "{name}: too few malformed requests"
    );
    assert!(count(&tally.slow_closed) >= LOITERERS as u64, "{name}");
    assert!(count(&tally.idle_closed) >= LOITERERS as u64, "{name}");
    assert!(count(&tally.resets) > 10, "{name}");

    // Nothing leaks: descriptors and threads come back.
    let back = server.wait_until(Duration::from_secs(10), |s| {
        s.fds() <= base_fds && s.threads() <= base_threads
    });
    assert!(
        back,
        "{name}: {} descriptors and {} threads, {base_fds} and {base_threads} before",
        server.fds(),
        server.threads()
    );
    assert!(
        served_within(addr, Duration::from_secs(2)).is_some(),
        "{name} no longer serves"
    );
    assert!(!log.contains("panicked"), "{name}: {log}");
    let status = server.terminate(Duration::from_secs(10));
    assert!(status.success(), "{name}: {status}");
}

#[test]
fn every_server_holds_under_load_and_attack() {
    std::thread::scope(|s| {
        for name in servers() {
            s.spawn(move || siege(name));
        }
    });
}
