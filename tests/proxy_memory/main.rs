//! The proxy never holds a whole body: an 8 MiB download trickling to a
//! slow reader, and an 8 MiB upload to a slow upstream, each raise the
//! heap of the process (proxy, upstream and client all run here, counted
//! by a test allocator) by a small fraction of the body.
//!
//! The fast side writes as fast as the proxy takes; the slow side reads a
//! little at a time with a small receive buffer, so the kernel cannot
//! absorb the difference. A proxy that read one side without waiting for
//! the other would hold most of the 8 MiB (about 5 MiB in either
//! direction, measured with its backpressure taken out); this one stops
//! reading while more than `Config::flush_threshold` (64 KiB) waits to be
//! written. This file holds one test, so nothing else allocates meanwhile.

use std::io::{Read, Write};
use std::time::Duration;

use h1proto_test_support::alloc;
use h1proto_test_support::proxy::start_proxy;

/// The whole process is counted: this binary holds one test.
#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

// ----------------------------------------------------------------- the test

const BODY: usize = 8 << 20;
const PIECE: usize = 64 << 10;
/// What the download may add to the heap at its peak: an eighth of the
/// body.
const BOUND: isize = 1 << 20;

/// Where the body starts after a request head.
fn end_of_head(bytes: &[u8]) -> usize {
    bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4
}

/// The byte at `offset` of a body: the upstream repeats one piece.
fn byte_at(offset: usize) -> u8 {
    (offset % PIECE % 251) as u8
}

#[test]
fn eight_mib_bodies_to_slow_peers_are_never_held_whole() {
    // An upstream that sends the body as fast as it is taken, from one
    // buffer allocated up front.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // An upstream with a small receive buffer (set on the listening
    // socket, which its connections inherit).
    let listener = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(16 * 1024).unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        socket.listen(16).unwrap().into_std().unwrap()
    });
    listener.set_nonblocking(false).unwrap();
    let upstream = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let piece: Vec<u8> = (0..PIECE).map(byte_at).collect();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            loop {
                let mut seen = 0;
                while !request[..seen].windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut request[seen..]) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => seen += n,
                    }
                }
                if !request[..seen].windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
                if request.starts_with(b"POST /up ") {
                    // Take the 8 MiB body slowly, then answer.
                    let mut body = vec![0u8; 16 * 1024];
                    let mut left = BODY - (seen - end_of_head(&request[..seen]));
                    while left > 0 {
                        match stream.read(&mut body) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => left -= n,
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                    continue;
                }
                let big = request.starts_with(b"GET /big ");
                let len = if big { BODY } else { PIECE };
                let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
                if stream.write_all(head.as_bytes()).is_err() {
                    break;
                }
                for _ in 0..len / PIECE {
                    if stream.write_all(&piece).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let proxy = start_proxy(upstream);

    // A client with a small receive buffer (set before connecting).
    let stream = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(16 * 1024).unwrap();
        socket.connect(proxy.addr).await.unwrap()
    });
    let mut client = stream.into_std().unwrap();
    client.set_nonblocking(false).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = vec![0u8; 16 * 1024];

    // Reads one response with a Content-Length body, slowly; checks every
    // byte.
    let mut fetch = |path: &str, pause: Duration| -> usize {
        let request = format!("GET {path} HTTP/1.1\r\nHost: a\r\n\r\n");
        client.write_all(request.as_bytes()).unwrap();
        let mut head = Vec::new();
        let (len, mut got) = loop {
            let n = client.read(&mut buf).expect("the response head");
            assert!(n > 0, "closed in the head");
            head.extend_from_slice(&buf[..n]);
            if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                let text = String::from_utf8_lossy(&head[..end]).to_ascii_lowercase();
                let len = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .expect("a content-length");
                let body = &head[end + 4..];
                for (i, &b) in body.iter().enumerate() {
                    assert_eq!(b, byte_at(i));
                }
                break (len, body.len());
            }
        };
        while got < len {
            let n = client.read(&mut buf).expect("more body");
            assert!(n > 0, "closed after {got} of {len} bytes");
            for (i, &b) in buf[..n].iter().enumerate() {
                assert_eq!(b, byte_at(got + i), "byte {}", got + i);
            }
            got += n;
            std::thread::sleep(pause);
        }
        assert_eq!(got, len);
        got
    };

    // Warm up: the pooled upstream connection and the buffers of both
    // sessions exist from here on.
    fetch("/small", Duration::ZERO);
    std::thread::sleep(Duration::from_millis(50));
    let base = alloc::reset_peak();

    let got = fetch("/big", Duration::from_millis(1));
    assert_eq!(got, BODY);
    let peak = alloc::peak() - base;
    println!("heap peak above the start during the download: {peak} bytes");
    assert!(
        peak < BOUND,
        "the download grew the heap by {peak} bytes for an {BODY}-byte body (bound {BOUND})"
    );

    // The other way: the client sends 8 MiB as fast as it can to an
    // upstream that takes it slowly.
    let piece: Vec<u8> = (0..PIECE).map(byte_at).collect();
    let mut writer = client.try_clone().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let base = alloc::reset_peak();
    let sender = std::thread::spawn(move || {
        let head = format!("POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: {BODY}\r\n\r\n");
        writer.write_all(head.as_bytes()).unwrap();
        for _ in 0..BODY / PIECE {
            writer.write_all(&piece).unwrap();
        }
    });
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let n = client.read(&mut buf).expect("the response to the upload");
        assert!(n > 0, "closed: {:?}", String::from_utf8_lossy(&head));
        head.extend_from_slice(&buf[..n]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200 OK\r\n"),
        "{:?}",
        String::from_utf8_lossy(&head)
    );
    sender.join().unwrap();
    let peak = alloc::peak() - base;
    println!("heap peak above the start during the upload: {peak} bytes");
    assert!(
        peak < BOUND,
        "the upload grew the heap by {peak} bytes for an {BODY}-byte body (bound {BOUND})"
    );
}
