//! `adapter::driver::Shutdown` with the tokio adapter: one `begin` reaches every
//! connection's `Server::shutdown_on`, an idle connection closes at once,
//! a busy one after its exchange, and `drained` completes when the last
//! connection task ends.

use std::time::Duration;

use h1proto::Config;
use h1proto::adapter::driver::Shutdown;
use h1proto::adapter::tokio::Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads until `end` came.
async fn read_until(stream: &mut TcpStream, end: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).ends_with(end) {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(got).unwrap()
}

async fn read_to_end(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    stream.read_to_end(&mut got).await.unwrap();
    String::from_utf8(got).unwrap()
}

#[tokio::test]
async fn one_begin_reaches_every_tokio_connection_and_drained_waits_for_them() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let accepting = shutdown.clone();
    let server = tokio::spawn(async move {
        loop {
            let (stream, _) = tokio::select! {
                accepted = listener.accept() => accepted.unwrap(),
                () = accepting.signal() => break,
            };
            let (guard, signal) = (accepting.enter(), accepting.signal());
            tokio::spawn(async move {
                let _guard = guard;
                let mut server = Server::new(stream, Config::default());
                server.shutdown_on(signal);
                // An echo of each request body, read piece by piece.
                while let Ok(Some(_)) = server.next_request().await {
                    let sent = server.sender().send_head(http::Response::new(()));
                    if sent.is_err() {
                        break;
                    }
                    while let Ok(Some(data)) = server.read_data().await {
                        let _ = server.send_data(data).await;
                    }
                    let _ = server.sender().finish(None);
                }
                server.close().await;
            });
        }
    });

    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi")
        .await
        .unwrap();
    read_until(&mut idle, "2\r\nhi\r\n0\r\n\r\n").await;
    let mut busy = TcpStream::connect(addr).await.unwrap();
    busy.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234")
        .await
        .unwrap();
    read_until(&mut busy, "01234\r\n").await;
    assert_eq!(shutdown.live(), 2);

    shutdown.begin();
    let closed = tokio::time::timeout(Duration::from_secs(5), read_to_end(&mut idle)).await;
    assert_eq!(
        closed.as_deref(),
        Ok(""),
        "the idle connection closes at once"
    );
    // Not drained while the exchange in progress goes on.
    let drained = shutdown.drained();
    tokio::pin!(drained);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut drained)
            .await
            .is_err()
    );
    busy.write_all(b"56789").await.unwrap();
    let rest = read_to_end(&mut busy).await;
    assert_eq!(rest, "5\r\n56789\r\n0\r\n\r\n");
    drop((idle, busy));
    tokio::time::timeout(Duration::from_secs(5), drained)
        .await
        .expect("drained once both connections ended");
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the accept loop stopped")
        .unwrap();
    assert_eq!(shutdown.live(), 0);
}
