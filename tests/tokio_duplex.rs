//! The tokio driver reads while a write waits: a client whose upload the
//! server refuses at once, and then stops reading, sees the refusal at
//! once instead of waiting in a write that cannot complete.

use std::time::Duration;

use bytes::Bytes;
use h1proto::Config;
use h1proto::adapter::tokio::Client;
use http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[test]
fn an_early_refusal_during_an_upload_is_seen_at_once() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
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
                client.sender().send_data(piece.clone()).unwrap();
                client.call(|s, now| Ok(s.poll_flush(now))).await.unwrap();
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
