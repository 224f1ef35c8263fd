//! The tokio driver while it waits for its peer: the shutdown signal and
//! the session's deadlines are noticed however the task was woken before,
//! including after the server moved to another task. (The driver polls
//! the signal and the timer only when their own waker rang; these tests
//! are what keeps that from missing one.)

use std::time::{Duration, Instant};

use h1proto::adapter::tokio::Server;
use h1proto::{Config, Timeouts};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Reads one `Hello` response (17 bytes of head and body would do; the
/// whole response is read up to its body).
async fn read_response(client: &mut DuplexStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while !got.ends_with(b"Hello") {
        let n = client.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before the response: {got:?}");
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(got).unwrap()
}

/// Serves `GET` requests with `Hello` until the session ends; returns how
/// many it answered.
async fn serve(server: &mut Server<DuplexStream>) -> usize {
    let mut answered = 0;
    while let Ok(Some(_)) = server.next_request().await {
        server
            .sender()
            .send_response(http::Response::new("Hello"))
            .unwrap();
        answered += 1;
    }
    answered
}

#[test]
fn a_shutdown_while_waiting_for_the_next_request_ends_the_connection() {
    runtime().block_on(async {
        let (mut client, io) = tokio::io::duplex(4096);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let mut server = Server::new(io, Config::default());
        server.shutdown_on(async {
            let _ = stopped.await;
        });
        let task = tokio::spawn(async move {
            let answered = serve(&mut server).await;
            server.close().await;
            answered
        });
        // Several exchanges, so that the task is woken by its socket many
        // times between the waits.
        for _ in 0..3 {
            client.write_all(GET).await.unwrap();
            let text = read_response(&mut client).await;
            assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        }
        // The server waits for a fourth request; the signal comes instead.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let since = Instant::now();
        stop.send(()).unwrap();
        // The server shuts down its sending half (it lingers, reading,
        // until the client closes): the client reads the end of the stream.
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut rest))
            .await
            .expect("the connection ended after the signal")
            .unwrap();
        assert!(rest.is_empty(), "{rest:?}");
        assert!(
            since.elapsed() < Duration::from_secs(1),
            "{:?}",
            since.elapsed()
        );
        drop(client);
        let answered = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the server task ended")
            .unwrap();
        assert_eq!(answered, 3);
    });
}

#[test]
fn the_idle_timeout_ends_a_connection_woken_by_its_socket_before() {
    runtime().block_on(async {
        let mut config = Config::default();
        config.timeouts = Timeouts::none();
        config.timeouts.idle = Some(Duration::from_millis(300));
        config.release_after = Duration::from_millis(100);
        let (mut client, io) = tokio::io::duplex(4096);
        let mut server = Server::new(io, config);
        let task = tokio::spawn(async move {
            let answered = serve(&mut server).await;
            server.close().await;
            answered
        });
        for _ in 0..3 {
            client.write_all(GET).await.unwrap();
            read_response(&mut client).await;
        }
        // No fourth request: the buffers are given back after 100 ms (a
        // deadline that passes without ending anything, so the timer is
        // moved), then the idle timeout closes the connection.
        let since = Instant::now();
        let answered = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the idle timeout ended the connection")
            .unwrap();
        assert_eq!(answered, 3);
        let waited = since.elapsed();
        assert!(
            waited >= Duration::from_millis(250) && waited < Duration::from_secs(2),
            "{waited:?}"
        );
    });
}

#[test]
fn a_server_moved_to_another_task_still_hears_the_signal() {
    runtime().block_on(async {
        let (mut client, io) = tokio::io::duplex(4096);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let mut server = Server::new(io, Config::default());
        server.shutdown_on(async {
            let _ = stopped.await;
        });
        // First task: one exchange, then a wait for the next request that
        // is given up, leaving the signal registered with this task.
        let first = tokio::spawn(async move {
            assert!(server.next_request().await.unwrap().is_some());
            server
                .sender()
                .send_response(http::Response::new("Hello"))
                .unwrap();
            let waited =
                tokio::time::timeout(Duration::from_millis(100), server.next_request()).await;
            assert!(waited.is_err(), "no second request was sent");
            server
        });
        client.write_all(GET).await.unwrap();
        read_response(&mut client).await;
        let mut server = first.await.unwrap();
        // Second task: waits again; the signal must wake this one.
        let second = tokio::spawn(async move {
            let answered = serve(&mut server).await;
            server.close().await;
            answered
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        stop.send(()).unwrap();
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut rest))
            .await
            .expect("the moved server heard the signal")
            .unwrap();
        assert!(rest.is_empty(), "{rest:?}");
        drop(client);
        let answered = tokio::time::timeout(Duration::from_secs(5), second)
            .await
            .expect("the server task ended")
            .unwrap();
        assert_eq!(answered, 0);
    });
}
