//! HTTP/1.0 peers: no chunked body, no 1xx, and
//! persistence only with `Connection: keep-alive`.

use crate::support;

use bytes::BytesMut;
use h1proto::conn::State;
use h1proto::{
    CloseReason, Config, Event, KeepAlive, ServerConnection, UsageError, framing::BodyKind,
};
use http::{Response, StatusCode};
use support::{Pair, last_end, poll_server};

fn server_with(raw: &[u8]) -> (ServerConnection, BytesMut, Vec<support::ServerEvent>) {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(raw);
    let events = poll_server(&mut server, &mut buf).unwrap();
    (server, buf, events)
}

fn status(code: u16) -> Response<()> {
    let mut res = Response::new(());
    *res.status_mut() = StatusCode::from_u16(code).unwrap();
    res
}

#[test]
fn http10_without_keep_alive_closes_after_the_response() {
    let mut pair = Pair::new();
    pair.inject_to_server(b"GET / HTTP/1.0\r\n\r\n");
    let events = pair.poll_server().unwrap();
    let Event::Head { head, .. } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(head.version(), http::Version::HTTP_10);
    assert_eq!(
        last_end(&events),
        Some(KeepAlive::Close(CloseReason::Http10))
    );
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::Http10)
    );
    pair.server
        .sender()
        .send_response(Response::new("hello"))
        .unwrap();
    let out = pair.drain_server();
    assert_eq!(
        out.text(),
        "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello"
    );
    assert!(pair.server.is_closed());
}

#[test]
fn http10_with_keep_alive_is_echoed_and_reused() {
    let mut pair = Pair::new();
    for i in 0..3 {
        pair.inject_to_server(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let events = pair.poll_server().unwrap();
        assert_eq!(last_end(&events), Some(KeepAlive::Reusable), "request {i}");
        pair.server
            .sender()
            .send_response(Response::new("hi"))
            .unwrap();
        let out = pair.drain_server();
        assert_eq!(
            out.text(),
            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nhi",
            "request {i}"
        );
        assert_eq!(pair.server.recv_state(), State::Idle);
        assert_eq!(pair.server.send_state(), State::Idle);
        assert!(!pair.server.is_closed());
    }
}

#[test]
fn a_streamed_body_to_http10_is_close_delimited_not_chunked() {
    for raw in [
        &b"GET / HTTP/1.0\r\n\r\n"[..],
        &b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"[..],
    ] {
        let (mut server, _, _) = server_with(raw);
        let kind = server.sender().send_head(Response::new(())).unwrap();
        assert_eq!(kind, BodyKind::CloseDelimited);
        // Known from the head on.
        assert!(!server.keep_alive().is_reusable());
        server.sender().send_data("part 1, ").unwrap();
        server.sender().send_data("part 2").unwrap();
        server.sender().finish(None).unwrap();
        let out = support::drain(server.output());
        assert_eq!(
            out.text(),
            "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\npart 1, part 2"
        );
        assert!(server.is_closed());
        assert_eq!(server.recv_state(), State::MustClose);
        assert_eq!(server.send_state(), State::MustClose);
    }
    // With keep-alive asked, the reason is the close-delimited body.
    let (mut server, _, _) = server_with(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    server.sender().send_head(Response::new(())).unwrap();
    assert_eq!(
        server.keep_alive(),
        KeepAlive::Close(CloseReason::CloseDelimited)
    );
}

#[test]
fn no_interim_response_goes_to_an_http10_client() {
    let (mut server, mut buf, events) = server_with(
        b"POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
    );
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(!server.is_waiting_for_continue());
    server.sender().send_continue();
    assert!(server.output().is_empty());
    for code in [100, 102, 103] {
        assert_eq!(
            server.sender().send_head(status(code)),
            Err(UsageError::InterimToHttp10),
            "{code}"
        );
        assert!(server.output().is_empty());
        assert_eq!(server.send_state(), State::Head);
    }
    // Polling the body sends nothing either.
    buf.extend_from_slice(b"hello");
    let events = poll_server(&mut server, &mut buf).unwrap();
    assert_eq!(support::body_of(&events), b"hello");
    assert!(server.output().is_empty());
    server.sender().send_response(Response::new("ok")).unwrap();
    let out = support::drain(server.output());
    assert!(out.text().starts_with("HTTP/1.1 200 OK\r\n"));
    assert!(!out.text().contains("100"));
    assert_eq!(server.recv_state(), State::Idle);
}
