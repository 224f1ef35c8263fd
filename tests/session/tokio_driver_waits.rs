//! The tokio driver while it waits for its peer: the shutdown signal and
//! the session's deadlines are noticed however the task was woken before,
//! including after the server moved to another task. (The driver polls
//! the signal and the timer only when their own waker rang; these tests
//! are what keeps that from missing one.)

use std::time::{Duration, Instant};

use h1proto::adapter::tokio::Server;
use h1proto::{Config, Session, Timeouts};
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

/// A stream that hands out a request head and part of its body, then
/// waits (without a waker: only the driver's timer wakes the task), then
/// hands out one more byte, then waits for good. `gave_more` turns true
/// with that byte.
struct Trickle {
    polls: usize,
    gave_more: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl tokio::io::AsyncRead for Trickle {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.polls += 1;
        match self.polls {
            1 => buf.put_slice(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhello"),
            3 => {
                buf.put_slice(b"x");
                self.gave_more
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
            _ => return std::task::Poll::Pending,
        }
        std::task::Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for Trickle {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// The timer rings while a read is ready (the read is taken, the timer's
/// ring is not), and the shutdown signal is ready when the next wait moves
/// the timer: the moved timer must still wake the task. Before, the
/// driver returned the signal without polling the timer it had just
/// moved, so the timer had no waker, and the waits that followed kept it:
/// the body timeout (and a lingering close's end) never came, which held
/// a shutting-down server open.
#[test]
fn a_signal_that_comes_as_the_timer_moves_leaves_the_timer_armed() {
    runtime().block_on(async {
        let mut config = Config::default();
        config.timeouts = Timeouts::none();
        config.timeouts.body = Some(Duration::from_millis(300));
        config.release_after = Duration::from_millis(50);
        let gave_more = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let io = Trickle {
            polls: 0,
            gave_more: gave_more.clone(),
        };
        let mut server = Server::new(io, config);
        // Ready once the stream gave its last byte; no waker needed, the
        // driver polls the signal at each new wait.
        server.shutdown_on(std::future::poll_fn(move |_| {
            if gave_more.load(std::sync::atomic::Ordering::SeqCst) {
                std::task::Poll::Ready(())
            } else {
                std::task::Poll::Pending
            }
        }));
        let outcome = tokio::time::timeout(Duration::from_secs(5), async {
            assert!(server.next_request().await.unwrap().is_some());
            let mut body = Vec::new();
            loop {
                match server.read_data().await {
                    Ok(Some(data)) => body.extend_from_slice(&data),
                    Ok(None) => return Ok(body),
                    Err(err) => return Err((err, body)),
                }
            }
        })
        .await
        .expect("the body timeout ended the wait");
        let (err, body) = outcome.expect_err("the body never completes");
        assert_eq!(body, b"hellox");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    });
}

#[test]
fn an_idle_connection_past_release_after_waits_without_a_read_buffer() {
    runtime().block_on(async {
        let (mut client, io) = tokio::io::duplex(4096);
        let mut config = Config::default();
        config.release_after = Duration::from_millis(20);
        let mut server = Server::new(io, config);
        client.write_all(GET).await.unwrap();
        assert!(server.next_request().await.unwrap().is_some());
        server
            .sender()
            .send_response(http::Response::new("Hello"))
            .unwrap();
        // The response goes out, then the server waits past release_after.
        let waiting = tokio::time::timeout(Duration::from_millis(200), server.next_request());
        assert!(waiting.await.is_err(), "nothing was sent");
        read_response(&mut client).await;
        // The wait went on without a read buffer of the session's.
        assert!(!server.holds_read_buf());
        // Bytes again: read into a buffer made for them, and answered.
        client.write_all(GET).await.unwrap();
        assert!(server.next_request().await.unwrap().is_some());
        assert!(server.holds_read_buf());
        server
            .sender()
            .send_response(http::Response::new("Hello"))
            .unwrap();
        let waiting = tokio::time::timeout(Duration::from_millis(5), server.next_request());
        let _ = waiting.await;
        assert!(read_response(&mut client).await.ends_with("Hello"));
    });
}
