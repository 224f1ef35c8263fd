//! `poll_write_all` / `Server::flush`: a streaming response can be pushed
//! out before the application waits on something other than its peer,
//! however little of it is queued.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use bytes::Buf;
use h1proto::{Config, ErrorKind, Io, ServerSession, Session, SessionError, Step};

const REQUEST: &[u8] = b"GET /stream HTTP/1.1\r\nHost: a\r\n\r\n";

/// A session with one request read and the head plus a small first piece
/// of a chunked response queued (far below the flush threshold).
fn session_with_a_piece_queued() -> ServerSession {
    let now = Instant::now();
    let mut session = ServerSession::new(Config::default(), now);
    loop {
        match session.next_request(now).unwrap() {
            Step::Ready(Some(_)) => break,
            Step::Ready(None) => panic!("no request"),
            Step::Io(Io::Read) => {
                session.read_buf().extend_from_slice(REQUEST);
                session.handle_read(REQUEST.len(), now);
            }
            Step::Io(io) => panic!("unexpected {io:?}"),
        }
    }
    session.sender().send_head(http::Response::new(())).unwrap();
    session.sender().send_data("first").unwrap();
    session
}

#[test]
fn small_output_is_held_by_poll_flush_and_written_by_poll_write_all() {
    let now = Instant::now();
    let mut session = session_with_a_piece_queued();
    // Below the threshold the backpressure call lets it wait...
    assert_eq!(session.poll_flush(now), Ok(Step::Ready(())));
    // ...while poll_write_all asks for writes until it is all gone, even
    // when each write takes only part of it.
    let mut wire = Vec::new();
    while let Step::Io(io) = session.poll_write_all(now).unwrap() {
        assert_eq!(io, Io::Write);
        let out = session.output();
        let n = out.chunk().len().min(7);
        wire.extend_from_slice(&out.chunk()[..n]);
        session.handle_write(n, now);
    }
    assert!(session.output().is_empty());
    let text = String::from_utf8(wire).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\n5\r\nfirst\r\n"), "{text}");
    // Nothing queued: ready at once.
    assert_eq!(session.poll_write_all(now), Ok(Step::Ready(())));
}

#[test]
fn poll_write_all_is_bounded_by_the_write_timeout() {
    let now = Instant::now();
    let mut session = session_with_a_piece_queued();
    assert_eq!(session.poll_write_all(now), Ok(Step::Io(Io::Write)));
    let deadline = session.poll_timeout().expect("a write deadline");
    assert_eq!(deadline, now + Config::default().timeouts.write.unwrap());
    // The peer never takes anything: the session gives up, and the call
    // that waited says why, once.
    session.handle_timeout(deadline);
    let Err(SessionError::Peer(err)) = session.poll_write_all(deadline) else {
        panic!("the write timeout is reported to the call that waited");
    };
    assert_eq!(err.kind(), ErrorKind::WriteTimeout);
    assert_eq!(session.poll_write_all(deadline), Ok(Step::Ready(())));
    assert!(matches!(
        session.next_request(deadline),
        Ok(Step::Ready(None))
    ));
    assert_eq!(session.close(deadline), Ok(Step::Io(Io::Close)));
}

/// A client that reads the response head and the first piece while the
/// server still holds the rest back: with `flush`, it arrives; the test
/// fails on the read timeout otherwise.
fn read_first_piece(client: &mut std::net::TcpStream) -> String {
    client.write_all(REQUEST).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"5\r\nfirst\r\n") {
        let n = client.read(&mut buf).expect("the first piece arrives");
        assert!(n > 0, "closed early: {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(got).unwrap()
}

#[test]
fn tokio_server_flush_sends_a_piece_while_the_response_is_open() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (stream, _) = listener.accept().unwrap();
            stream.set_nonblocking(true).unwrap();
            let stream = tokio::net::TcpStream::from_std(stream).unwrap();
            let mut server = h1proto::adapter::tokio::Server::new(stream, Config::default());
            server.next_request().await.unwrap().unwrap();
            server.sender().send_head(http::Response::new(())).unwrap();
            server.send_data("first").await.unwrap();
            server.flush().await.unwrap();
            // The rest waits for the client to have seen the first piece.
            tokio::task::spawn_blocking(move || released.recv().unwrap())
                .await
                .unwrap();
            server.send_data("second").await.unwrap();
            server.sender().finish(None).unwrap();
            server.close().await;
        });
    });
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    let head = read_first_piece(&mut client);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    release.send(()).unwrap();
    let mut rest = Vec::new();
    let mut buf = [0u8; 1024];
    while !rest.ends_with(b"0\r\n\r\n") {
        let n = client.read(&mut buf).unwrap();
        assert!(n > 0);
        rest.extend_from_slice(&buf[..n]);
    }
    assert_eq!(rest, b"6\r\nsecond\r\n0\r\n\r\n");
    drop(client);
    server.join().unwrap();
}

#[test]
fn blocking_server_flush_sends_a_piece_while_the_response_is_open() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut server = h1proto::adapter::blocking::Server::new(stream, Config::default());
        server.next_request().unwrap().unwrap();
        server.sender().send_head(http::Response::new(())).unwrap();
        server.send_data("first").unwrap();
        server.flush().unwrap();
        released.recv().unwrap();
        server.send_data("second").unwrap();
        server.sender().finish(None).unwrap();
        server.close();
    });
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    let head = read_first_piece(&mut client);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    release.send(()).unwrap();
    let mut rest = Vec::new();
    let mut buf = [0u8; 1024];
    while !rest.ends_with(b"0\r\n\r\n") {
        let n = client.read(&mut buf).unwrap();
        assert!(n > 0);
        rest.extend_from_slice(&buf[..n]);
    }
    assert_eq!(rest, b"6\r\nsecond\r\n0\r\n\r\n");
    drop(client);
    server.join().unwrap();
}
