//! Responses before the request body is read: a server that answers
//! before reading the request body drains a bounded amount or closes; a client that gets a
//! final response while still sending stops and closes.

use crate::support;

use bytes::BytesMut;
use h1proto::conn::State;
use h1proto::{CloseReason, Config, Event, KeepAlive, ServerConnection, framing::BodyKind};
use http::{Request, Response, StatusCode};
use support::{Pair, poll_server, request_heads};

fn small_drain() -> Config {
    let mut config = Config::default();
    config.max_drain_bytes = 100;
    config
}

/// A server that decoded only the head of `raw`.
fn after_head(config: Config, raw: &[u8]) -> (ServerConnection, BytesMut) {
    let mut server = ServerConnection::new(config);
    let mut buf = BytesMut::from(raw);
    let head = server.poll_event(&mut buf).unwrap();
    assert!(matches!(head, Some(Event::Head { .. })), "{head:?}");
    (server, buf)
}

#[test]
fn a_small_unread_body_is_drained_and_the_connection_reused() {
    let (mut server, mut buf) = after_head(
        Config::default(),
        b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234",
    );
    server
        .sender()
        .send_response(Response::new("early"))
        .unwrap();
    assert_eq!(server.keep_alive(), KeepAlive::Reusable);
    assert_eq!(server.send_state(), State::Done);
    assert_eq!(server.recv_state(), State::Body);
    let out = support::drain(server.output());
    assert_eq!(
        out.text(),
        "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nearly"
    );

    // The body is discarded, not handed to the application.
    assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
    assert!(buf.is_empty());
    assert!(!server.is_closed());
    buf.extend_from_slice(b"56789GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    let events = poll_server(&mut server, &mut buf).unwrap();
    assert_eq!(request_heads(&events)[0].uri().path(), "/b");
    assert!(
        events.iter().all(|ev| support::data_of(ev).is_none()),
        "{events:?}"
    );
    assert_eq!(support::last_end(&events), Some(KeepAlive::Reusable));
    server.sender().send_response(Response::new("b")).unwrap();
    assert_eq!(server.recv_state(), State::Idle);
    assert_eq!(server.send_state(), State::Idle);
}

#[test]
fn a_declared_length_past_the_drain_bound_closes_at_once() {
    let (mut server, mut buf) = after_head(
        small_drain(),
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n0123456789",
    );
    server
        .sender()
        .send_response(
            Response::builder()
                .status(StatusCode::PAYLOAD_TOO_LARGE)
                .body("too big")
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        server.keep_alive(),
        KeepAlive::Close(CloseReason::UnreadBody)
    );
    assert!(server.is_closed());
    assert_eq!(server.recv_state(), State::MustClose);
    let out = support::drain(server.output());
    assert_eq!(
        out.text(),
        "HTTP/1.1 413 Payload Too Large\r\ncontent-length: 7\r\nconnection: close\r\n\r\ntoo big"
    );
    // Nothing more is read.
    assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
    assert_eq!(&buf[..], b"0123456789");
}

#[test]
fn a_declared_length_at_the_drain_bound_is_drained() {
    let (mut server, mut buf) = after_head(
        small_drain(),
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
    );
    server.sender().send_response(Response::new("ok")).unwrap();
    assert_eq!(server.keep_alive(), KeepAlive::Reusable);
    buf.extend_from_slice(&[b'z'; 100]);
    assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
    assert_eq!(server.recv_state(), State::Idle);
    assert!(!server.is_closed());
}

#[test]
fn a_chunked_body_past_the_drain_bound_closes() {
    let (mut server, mut buf) = after_head(
        small_drain(),
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    server
        .sender()
        .send_response(Response::new("early"))
        .unwrap();
    // The length is unknown: the response cannot say close.
    assert_eq!(server.keep_alive(), KeepAlive::Reusable);
    assert!(
        !support::drain(server.output())
            .text()
            .contains("connection")
    );
    // The bound counts bytes read off the wire, chunk framing included:
    // 2 x (4 + 40 + 2) = 92 bytes are within it.
    let chunk = format!("28\r\n{}\r\n", "y".repeat(40));
    buf.extend_from_slice(chunk.as_bytes());
    buf.extend_from_slice(chunk.as_bytes());
    assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
    assert!(!server.is_closed(), "92 bytes are within the bound");
    buf.extend_from_slice(b"1\r\ny\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
    assert!(server.is_closed());
    assert_eq!(
        server.keep_alive(),
        KeepAlive::Close(CloseReason::UnreadBody)
    );
    assert_eq!(server.recv_state(), State::MustClose);
    assert_eq!(server.send_state(), State::MustClose);
    // The request behind the body is never parsed.
    assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
    assert!(support::text(&buf).ends_with("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
}

#[test]
fn a_client_answered_while_sending_stops_and_closes() {
    let mut pair = Pair::new();
    let req = Request::put("/big")
        .header("host", "example.com")
        .header("content-length", "10")
        .body(())
        .unwrap();
    assert_eq!(
        pair.client.sender().send_head(req).unwrap(),
        BodyKind::Length(10)
    );
    pair.client.sender().send_data("01234").unwrap();
    pair.drain_client();
    pair.inject_to_client(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno");
    let events = pair.poll_client().unwrap();
    assert_eq!(support::responses(&events), vec![(403, b"no".to_vec())]);
    assert_eq!(
        pair.client.keep_alive(),
        KeepAlive::Close(CloseReason::RequestWithdrawn)
    );
    // The rest of the body is dropped without an error.
    assert_eq!(pair.client.sender().send_data("56789"), Ok(()));
    assert_eq!(pair.client.sender().finish(None), Ok(()));
    assert!(pair.client.output().is_empty());
    assert!(pair.client.is_closed());
    assert_eq!(pair.client.send_state(), State::MustClose);
    assert_eq!(pair.client.recv_state(), State::MustClose);
    assert_eq!(pair.client.requests_in_flight(), 0);
}

#[test]
fn an_early_refusal_between_pair_members() {
    let mut config = Config::default();
    config.max_drain_bytes = 4;
    let mut pair = Pair::with_configs(Config::default(), config);
    let req = Request::post("/upload")
        .header("host", "example.com")
        .body(())
        .unwrap();
    assert_eq!(
        pair.client.sender().send_head(req).unwrap(),
        BodyKind::Chunked
    );
    pair.client.sender().send_data("first").unwrap();
    pair.run(|server, ev| {
        if let Event::Head { .. } = ev {
            server
                .sender()
                .send_response(
                    Response::builder()
                        .status(StatusCode::UNAUTHORIZED)
                        .body("")
                        .unwrap(),
                )
                .unwrap();
        }
    });
    // The server drained past its bound and closed; the client stopped.
    assert!(pair.server.is_closed());
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::UnreadBody)
    );
    assert_eq!(pair.client.sender().send_data("second"), Ok(()));
    assert!(pair.client.output().is_empty());
    assert!(pair.client.is_closed());
    assert_eq!(
        pair.client.keep_alive(),
        KeepAlive::Close(CloseReason::RequestWithdrawn)
    );
}

/// A 2xx that comes while the body is still being sent is a server
/// answering as it reads (an echo): the client sends the body to its end,
/// and the connection stays reusable for the next request.
#[test]
fn a_client_answered_2xx_while_sending_finishes_the_body() {
    let mut pair = Pair::new();
    let req = Request::put("/echo")
        .header("host", "example.com")
        .header("content-length", "10")
        .body(())
        .unwrap();
    assert_eq!(
        pair.client.sender().send_head(req).unwrap(),
        BodyKind::Length(10)
    );
    pair.client.sender().send_data("01234").unwrap();
    pair.drain_client();
    pair.inject_to_client(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234");
    let events = pair.poll_client().unwrap();
    assert!(matches!(events[0], Event::Head { .. }), "{events:?}");
    assert_eq!(pair.client.keep_alive(), KeepAlive::Reusable);
    // The rest of the body still goes out, and the request ends.
    pair.client.sender().send_data("56789").unwrap();
    pair.client.sender().finish(None).unwrap();
    assert_eq!(pair.drain_client().text(), "56789");
    pair.inject_to_client(b"56789");
    let events = pair.poll_client().unwrap();
    assert_eq!(support::last_end(&events), Some(KeepAlive::Reusable));
    assert_eq!(pair.client.requests_in_flight(), 0);
    assert_eq!(pair.client.send_state(), State::Idle);
    assert_eq!(pair.client.recv_state(), State::Idle);
    assert!(!pair.client.is_closed());
    // A next request may go on the same connection.
    pair.client
        .sender()
        .send_request(support::get("/next"))
        .unwrap();
    assert!(
        pair.drain_client()
            .text()
            .starts_with("GET /next HTTP/1.1\r\n")
    );
}

/// The same between a client and a server that echoes as it reads: both
/// finish the exchange and stay open.
#[test]
fn an_echo_answered_while_the_body_streams_keeps_both_open() {
    let mut pair = Pair::new();
    let req = Request::post("/echo")
        .header("host", "example.com")
        .body(())
        .unwrap();
    assert_eq!(
        pair.client.sender().send_head(req).unwrap(),
        BodyKind::Chunked
    );
    pair.client.sender().send_data("first").unwrap();
    let echo = |server: &mut ServerConnection, ev: &support::ServerEvent| match ev {
        Event::Head { .. } => {
            server.sender().send_head(Response::new(())).unwrap();
        }
        Event::Data(data) => server.sender().send_data(data.clone()).unwrap(),
        Event::End(_) => server.sender().finish(None).unwrap(),
        _ => {}
    };
    let first = pair.run(echo);
    // The echo's head and first piece are in; the request is not done.
    assert!(matches!(first[0], Event::Head { .. }), "{first:?}");
    assert_eq!(support::body_of(&first), b"first");
    assert_eq!(support::last_end(&first), None);
    pair.client.sender().send_data("second").unwrap();
    pair.client.sender().finish(None).unwrap();
    let events = pair.run(echo);
    assert_eq!(support::body_of(&events), b"second");
    assert_eq!(support::last_end(&events), Some(KeepAlive::Reusable));
    assert!(!pair.client.is_closed());
    assert!(!pair.server.is_closed());
    assert_eq!(pair.client.keep_alive(), KeepAlive::Reusable);
}
