//! Every example server, run as a process, stopped with SIGTERM in the
//! middle of a 4 MiB `POST /echo`: the echo completes, byte for byte, the
//! connection is then closed, and the server exits with success on its
//! own. A connection opened after the signal is not served.

use h1proto_test_support::process as server_process;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use server_process::{Launch, Server, connect, servers};

const LEN: usize = 4 << 20;

/// Bytes that are not all alike, deterministic.
fn pattern(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x2545_f491;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// How much of the echo must have come back before the signal is sent:
/// the exchange is then under way for the server (a connection whose
/// request the server has not read yet is closed at once by a shutdown).
const UNDER_WAY: usize = 64 * 1024;

/// Reads a response head, then `len` body bytes, then until the close:
/// the head, the body, and whether the connection closed after it.
/// `under_way` is told once [`UNDER_WAY`] body bytes came back.
fn read_echo(mut s: TcpStream, len: usize, under_way: mpsc::Sender<()>) -> (String, Vec<u8>, bool) {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(at) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = s.read(&mut buf).expect("read the head");
        assert!(n > 0, "closed before the head: {got:?}");
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).into_owned();
    let mut body = got.split_off(head_end);
    let mut told = false;
    while body.len() < len {
        let n = s.read(&mut buf).expect("read the body");
        assert!(n > 0, "closed after {} of {len} body bytes", body.len());
        body.extend_from_slice(&buf[..n]);
        if !told && body.len() >= UNDER_WAY {
            told = true;
            let _ = under_way.send(());
        }
    }
    // Closed: the end of the stream (or a reset); a read that times out
    // (after 10 s) means the connection was kept open.
    let closed = match s.read(&mut buf) {
        Ok(0) => true,
        Ok(n) => panic!("{n} bytes after the echo"),
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    };
    (head, body, closed)
}

fn check(name: &str) {
    let server = Server::start(name, &Launch::default());
    let addr = server.addr;
    let body = pattern(LEN);
    let mut s = connect(addr).unwrap();
    let (tell, under_way) = mpsc::channel();
    let reader = {
        let s = s.try_clone().unwrap();
        std::thread::spawn(move || read_echo(s, LEN, tell))
    };
    let head = format!("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: {LEN}\r\n\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&body[..LEN / 4]).unwrap();
    let rest = body[LEN / 4..].to_vec();

    // SIGTERM while the echo is under way; the rest of the body follows
    // while the server is shutting down.
    let (sent, signalled) = mpsc::channel();
    let writer = std::thread::spawn(move || {
        signalled.recv().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        s.write_all(&rest).unwrap();
        s
    });
    under_way
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{name}: the echo did not begin"));
    let killer = std::thread::spawn(move || {
        let started = Instant::now();
        let status = server.terminate(Duration::from_secs(20));
        (status, started.elapsed())
    });
    // `terminate` sends the signal as it starts, then waits for the exit.
    std::thread::sleep(Duration::from_millis(100));
    sent.send(()).unwrap();
    let (head, echoed, closed) = reader.join().expect("the reader");
    let _s = writer.join().expect("the writer");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{name}: {head}");
    assert!(
        echoed == body,
        "{name}: the echo differs ({} bytes back)",
        echoed.len()
    );
    assert!(closed, "{name}: the connection was kept after the shutdown");
    let (status, took) = killer.join().expect("terminate");
    assert!(status.success(), "{name}: exited with {status}");
    assert!(
        server_process::get(addr).is_err(),
        "{name}: served a connection made after it exited"
    );
    eprintln!("{name}: a 4 MiB echo completed across SIGTERM; exited {took:?} after the signal");
}

#[test]
fn sigterm_during_an_echo_completes_it_then_exits() {
    std::thread::scope(|s| {
        for name in servers() {
            s.spawn(move || check(name));
        }
    });
}
