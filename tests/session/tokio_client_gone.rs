//! The tokio driver watches the client while the application works on its
//! answer (`Server::while_connected`, which `serve` awaits its handler
//! through): a client that goes has the work dropped, and bytes it sends
//! meanwhile (a pipelined request) are read ahead and kept.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use h1proto::Config;
use h1proto::adapter::tokio::{Server, serve};
use http::Response;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Sets its flag when dropped: what a handler's future holds.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// `serve` with a handler that never answers: the client's close ends the
/// connection with `UnexpectedEof`, and the handler's future is dropped.
#[test]
fn serve_drops_the_handler_of_a_client_that_went() {
    runtime().block_on(async {
        let (io, mut peer) = tokio::io::duplex(4096);
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = dropped.clone();
        let served = tokio::spawn(serve(io, Config::default(), move |_req| {
            let guard = Dropped(flag.clone());
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                Response::new(Bytes::new())
            }
        }));
        peer.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !dropped.load(Ordering::SeqCst),
            "dropped while the client waits"
        );
        drop(peer);
        let outcome = tokio::time::timeout(Duration::from_secs(5), served).await;
        let err = outcome.expect("serve goes on").unwrap().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
        assert!(
            dropped.load(Ordering::SeqCst),
            "the handler's future was kept"
        );
    });
}

/// A request pipelined while the first one's answer is worked on is read
/// ahead by the watch and taken next; both are answered in order, and the
/// client's close after them ends nothing early.
#[test]
fn what_the_client_sends_while_it_is_watched_is_kept() {
    runtime().block_on(async {
        let (io, mut peer) = tokio::io::duplex(4096);
        let server = tokio::spawn(async move {
            let mut server = Server::new(io, Config::default());
            while let Some(req) = server.next_request().await? {
                let path = req.uri().path().to_owned();
                let res = server.while_connected(async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Response::new(Bytes::from(path))
                });
                let res = res.await?;
                server.sender().send_response(res)?;
            }
            server.close().await;
            std::io::Result::Ok(())
        });
        peer.write_all(b"GET /first HTTP/1.1\r\nHost: a\r\n\r\n")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        peer.write_all(b"GET /second HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut got = String::new();
        peer.read_to_string(&mut got).await.unwrap();
        assert_eq!(got.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{got}");
        let (first, second) = (got.find("/first").unwrap(), got.find("/second").unwrap());
        assert!(first < second, "{got}");
        drop(peer);
        server.await.unwrap().unwrap();
    });
}
