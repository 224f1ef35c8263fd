//! The tokio driver reads while a write waits: a client whose upload the
//! server refuses at once, and then stops reading, sees the refusal at
//! once instead of waiting in a write that cannot complete.

use std::time::Duration;

use bytes::Bytes;
use h1proto::adapter::tokio::Client;
use h1proto::{ClientSession, Config};
use http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Runs `fut` on a current-thread runtime with timers.
fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(fut)
}

/// A GET of `path` with its `Host`.
fn get(path: &str) -> http::Request<Bytes> {
    http::Request::get(path)
        .header("host", "x")
        .body(Bytes::new())
        .unwrap()
}

#[test]
fn an_early_refusal_during_an_upload_is_seen_at_once() {
    block_on(async {
        // A pipe that holds 64 KiB each way: the upload fills it at once.
        let (io, mut peer) = tokio::io::duplex(64 * 1024);
        // The server: reads the head, answers 413, then reads nothing more
        // and holds the connection open.
        let server = tokio::spawn(async move {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = peer.read(&mut buf).await.unwrap();
                head.extend_from_slice(&buf[..n]);
            }
            peer.write_all(
                b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 8\r\nconnection: close\r\n\r\ntoo big!",
            )
            .await
            .unwrap();
            tokio::time::sleep(Duration::from_secs(30)).await;
            drop(peer);
        });
        let mut client = Client::new(io, Config::default());
        let req = http::Request::put("/upload")
            .header("host", "x")
            .header("content-length", (64u64 << 20).to_string())
            .body(())
            .unwrap();
        client.sender().send_head(req).unwrap();
        let outcome = tokio::time::timeout(Duration::from_secs(5), async {
            // Stream the body as an uploader does: queue a piece, then wait
            // while too much is queued.
            let piece = Bytes::from(vec![b'u'; 256 * 1024]);
            for _ in 0..256 {
                client.send_data(piece.clone()).await.unwrap();
                if client.connection().send_state() == h1proto::conn::State::MustClose {
                    break;
                }
            }
            client.next_response().await
        })
        .await;
        let res = outcome
            .expect("the refusal seen at once, not after the server gives up")
            .unwrap()
            .expect("a response");
        assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body = client.read_data().await.unwrap().unwrap();
        assert_eq!(&body[..], b"too big!");
        server.abort();
    });
}

/// `send` is one exchange: with a request pipelined before it still
/// unanswered, the next response would be that one's, so `send` refuses
/// and sends nothing; once the earlier answer is read, it goes.
#[test]
fn send_refuses_while_an_earlier_request_waits_for_its_answer() {
    block_on(async {
        let (io, mut peer) = tokio::io::duplex(64 * 1024);
        let mut client = Client::new(io, Config::default());
        client.sender().send_request(get("/first")).unwrap();
        let err = tokio::time::timeout(Duration::from_secs(5), client.send(get("/second")))
            .await
            .expect("refused at once, not sent to wait for the first answer")
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
        assert_eq!(client.connection().requests_in_flight(), 1);
        let answer = async {
            let head = read_head(&mut peer).await;
            assert!(head.starts_with("GET /first "), "{head}");
            peer.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await
                .unwrap();
        };
        let (res, ()) = tokio::join!(client.next_response(), answer);
        assert_eq!(res.unwrap().unwrap().status(), StatusCode::NOT_FOUND);
        let answer = async {
            let head = read_head(&mut peer).await;
            assert!(head.starts_with("GET /second "), "{head}");
            peer.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi")
                .await
                .unwrap();
        };
        let (res, ()) = tokio::join!(client.send(get("/second")), answer);
        assert_eq!(&res.unwrap().body()[..], b"hi");
    });
}

/// `send` after an answer whose head alone was read (`next_response`, its
/// body of no interest): no request waits for its answer, so it goes, and
/// the rest of the previous body is skipped.
#[test]
fn send_after_reading_only_the_head_of_the_previous_answer() {
    block_on(async {
        let (io, mut peer) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(async move {
            let head = read_head(&mut peer).await;
            assert!(head.starts_with("GET /a "), "{head}");
            peer.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 4\r\n\r\nnope")
                .await
                .unwrap();
            let head = read_head(&mut peer).await;
            assert!(head.starts_with("GET /b "), "{head}");
            peer.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi")
                .await
                .unwrap();
            peer
        });
        let mut client = Client::new(io, Config::default());
        client.sender().send_request(get("/a")).unwrap();
        let res = client.next_response().await.unwrap().unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        let res = tokio::time::timeout(Duration::from_secs(5), client.send(get("/b")))
            .await
            .expect("answered within 5 s")
            .expect("sent: no request waited for its answer");
        assert_eq!(&res.body()[..], b"hi");
        drop(server);
    });
}

#[test]
fn a_request_pipelined_while_an_answer_is_written_is_read_and_answered_in_order() {
    block_on(async {
        let (io, mut peer) = tokio::io::duplex(16 * 1024);
        let server = tokio::spawn(async move {
            // No `Date`, so that the answers' bytes are known in full.
            let mut config = Config::default();
            config.send_date = false;
            let mut server = h1proto::adapter::tokio::Server::new(io, config);
            while let Some(req) = server.next_request().await.unwrap() {
                let body = match req.uri().path() {
                    "/big" => Bytes::from(vec![b'b'; 1 << 20]),
                    _ => Bytes::from_static(b"small"),
                };
                server
                    .sender()
                    .send_response(http::Response::new(body))
                    .unwrap();
            }
            server.close().await;
        });
        peer.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        // The answer has begun and fills the pipe: the server is in a write
        // that has to wait when the next request comes.
        let mut got = vec![0u8; 4096];
        let n = peer.read(&mut got).await.unwrap();
        got.truncate(n);
        peer.write_all(b"GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), peer.read_to_end(&mut got))
            .await
            .expect("both answers, then the close")
            .unwrap();
        server.await.unwrap();
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 1048576\r\n\r\n";
        assert!(got.starts_with(head));
        let rest = &got[head.len() + (1 << 20)..];
        assert!(
            got[head.len()..head.len() + (1 << 20)]
                .iter()
                .all(|&b| b == b'b')
        );
        let rest = String::from_utf8(rest.to_vec()).unwrap();
        assert!(rest.starts_with("HTTP/1.1 200 OK\r\n"), "{rest}");
        assert!(rest.ends_with("\r\n\r\nsmall"), "{rest}");
    });
}

/// Reads the head of one request from `peer`.
async fn read_head(peer: &mut tokio::io::DuplexStream) -> String {
    let mut head = Vec::new();
    let mut buf = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = peer.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed in the head");
        head.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(head).unwrap()
}

/// A proxy waits for its client's body and watches the upstream meanwhile:
/// `read_ahead` brings an answer in with no response deadline running (the
/// upstream is waiting for the body), and the session's next call takes it.
#[test]
fn read_ahead_brings_an_early_answer_in_without_a_deadline() {
    block_on(async {
        let (io, mut peer) = tokio::io::duplex(64 * 1024);
        let mut config = Config::default();
        config.timeouts.head = Some(Duration::from_millis(100));
        let mut client = Client::new(io, config);
        let req = http::Request::post("/")
            .header("host", "x")
            .header("content-length", "10")
            .body(())
            .unwrap();
        client.sender().send_head(req).unwrap();
        client.sender().send_data(&b"01234"[..]).unwrap();
        client.call(ClientSession::poll_write_all).await.unwrap();
        read_head(&mut peer).await;
        // Later than the head timeout: read_ahead does not time out.
        let answer = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            peer.write_all(b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 0\r\n\r\n")
                .await
                .unwrap();
            peer
        };
        let (read, _peer) = tokio::join!(client.read_ahead(), answer);
        read.unwrap();
        let res = client.next_response().await.unwrap().unwrap();
        assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
        // Once the session has a read's worth ahead, or the peer closed,
        // read_ahead waits for ever (the application's other wait decides).
        drop(_peer);
        client.read_ahead().await.unwrap();
        let waits = tokio::time::timeout(Duration::from_millis(50), client.read_ahead()).await;
        assert!(waits.is_err(), "read ahead after the end of the stream");
    });
}

/// A pool's look at an idle connection: alive while the server neither
/// closed it nor sent anything; not once it sent bytes nobody asked for,
/// closed it, or the idle timeout passed.
#[test]
fn is_alive_looks_at_an_idle_connection_without_waiting() {
    block_on(async {
        let exchange = |config: Config| async move {
            let (io, mut peer) = tokio::io::duplex(64 * 1024);
            let mut client = Client::new(io, config);
            let req = http::Request::get("/")
                .header("host", "x")
                .body(Bytes::new())
                .unwrap();
            let answer = async {
                read_head(&mut peer).await;
                peer.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi")
                    .await
                    .unwrap();
            };
            let (res, ()) = tokio::join!(client.send(req), answer);
            assert_eq!(&res.unwrap().body()[..], b"hi");
            (client, peer)
        };
        // Alive, and still after a look that found nothing.
        let (mut client, mut peer) = exchange(Config::default()).await;
        assert!(client.is_alive());
        assert!(client.is_alive());
        // Bytes nobody asked for.
        peer.write_all(b"HTTP/1.1 200 OK\r\n").await.unwrap();
        assert!(!client.is_alive());
        // Bytes nobody asked for, read ahead before the look.
        let (mut client, mut peer) = exchange(Config::default()).await;
        peer.write_all(b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        client.read_ahead().await.unwrap();
        assert!(!client.is_alive());
        let req = http::Request::get("/").header("host", "x");
        assert!(client.send(req.body(Bytes::new()).unwrap()).await.is_err());
        // Closed by the server.
        let (mut client, peer) = exchange(Config::default()).await;
        drop(peer);
        assert!(!client.is_alive());
        // The idle timeout passed.
        let mut config = Config::default();
        config.timeouts.idle = Some(Duration::from_millis(50));
        let (mut client, _peer) = exchange(config).await;
        assert!(client.is_alive());
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!client.is_alive());
    });
}
