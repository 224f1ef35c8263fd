//! The tokio adapter (and the tower bridge, which runs on its driver) keeps
//! time by tokio's clock, the one its timer runs on: under a paused clock
//! (`#[tokio::test(start_paused = true)]`, `tokio::time::pause`), as an
//! application's tests use it, every timeout fires when tokio's time
//! reaches it, at once in real time. A driver that read the system's
//! clock while its timer ran on tokio's would see each deadline still
//! ahead when the timer went off, and never act on it.

use std::time::Duration;

use bytes::Bytes;
use h1proto::adapter::tokio::{Client, Server};
use h1proto::{ClientSession, Config, Timeouts};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::time::Instant;

/// Timeouts far longer than a test may take in real time.
fn config() -> Config {
    let mut config = Config::default();
    let t: &mut Timeouts = &mut config.timeouts;
    t.head = Some(Duration::from_secs(30));
    t.idle = Some(Duration::from_secs(60));
    t.body = Some(Duration::from_secs(40));
    t.write = Some(Duration::from_secs(50));
    t.linger = Duration::from_secs(2);
    config
}

/// Serves every request with `hi`, then closes.
async fn serve(io: DuplexStream) {
    let mut server = Server::new(io, config());
    while let Ok(Some(_)) = server.next_request().await {
        let hi = http::Response::new(Bytes::from_static(b"hi"));
        server.sender().send_response(hi).unwrap();
    }
    server.close().await;
}

/// A server sent `input` that closes the connection `after` it (by tokio's
/// clock, give or take the linger of its close): all the server sent. An
/// hour of tokio's time without the close fails.
async fn served(input: &[u8], after: Duration) -> String {
    let (mut client, io) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(serve(io));
    client.write_all(input).await.unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(3600), client.read_to_end(&mut got))
        .await
        .expect("the server closes within the hour")
        .unwrap();
    let took = start.elapsed();
    assert!(took >= after, "{took:?}");
    assert!(took <= after + Duration::from_secs(3), "{took:?}");
    server.await.unwrap();
    String::from_utf8(got).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_head_cut_short_is_answered_408_at_the_head_timeout() {
    let got = served(b"GET / HTTP/1.1\r\nHo", Duration::from_secs(30)).await;
    assert!(got.starts_with("HTTP/1.1 408 "), "{got}");
}

#[tokio::test(start_paused = true)]
async fn an_idle_connection_is_closed_at_the_idle_timeout() {
    let got = served(
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        Duration::from_secs(60),
    )
    .await;
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(got.ends_with("\r\n\r\nhi"), "{got}");
}

#[tokio::test(start_paused = true)]
async fn a_client_gives_up_on_an_answer_at_its_head_timeout() {
    let (io, mut server) = tokio::io::duplex(1 << 16);
    let start = Instant::now();
    let mut client = Client::new(io, config());
    client
        .sender()
        .send_request(http::Request::get("/").header("host", "a"))
        .unwrap();
    // The server reads the request and never answers.
    let silent = tokio::spawn(async move {
        let mut buf = [0u8; 1024];
        while server.read(&mut buf).await.is_ok_and(|n| n > 0) {}
    });
    let got = tokio::time::timeout(
        Duration::from_secs(3600),
        client.call(ClientSession::next_full_response),
    )
    .await
    .expect("the client gives up within the hour");
    let err = got.expect_err("no answer came");
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    assert!(
        start.elapsed() >= Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    assert!(
        start.elapsed() <= Duration::from_secs(33),
        "{:?}",
        start.elapsed()
    );
    drop(client);
    silent.await.unwrap();
}
