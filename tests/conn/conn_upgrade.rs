//! After a 101 or a 2xx to CONNECT both sides stop parsing
//! HTTP and leave the bytes that follow to the caller.

use crate::support;

use bytes::BytesMut;
use h1proto::conn::State;
use h1proto::{CloseReason, Config, Event, KeepAlive, ServerConnection, UsageError};
use http::{Request, Response, StatusCode};
use support::{Pair, last_end, responses};

fn switching() -> Response<&'static str> {
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header("upgrade", "websocket")
        .header("connection", "upgrade")
        .body("")
        .unwrap()
}

#[test]
fn an_upgrade_switches_both_sides_and_leaves_the_following_bytes() {
    let mut pair = Pair::new();
    let req = Request::post("/chat")
        .header("host", "example.com")
        .header("upgrade", "websocket")
        .header("connection", "upgrade")
        .body("hi")
        .unwrap();
    pair.client.sender().send_request(req).unwrap();
    pair.drain_client();
    // The new protocol's first bytes arrive in the same read.
    pair.inject_to_server(b"\x81\x05hello");

    // The 101 waits until the request body is read.
    let head = pair.server.poll_event(&mut pair.server_in).unwrap();
    assert!(matches!(head, Some(Event::Head { .. })));
    assert_eq!(
        pair.server.sender().send_response(switching()),
        Err(UsageError::WrongState)
    );
    assert!(pair.server.output().is_empty());
    let events = pair.poll_server().unwrap();
    assert_eq!(support::body_of(&events), b"hi");
    assert_eq!(last_end(&events), Some(KeepAlive::Reusable));
    assert!(!pair.server.is_switched());

    pair.server.sender().send_response(switching()).unwrap();
    assert!(pair.server.is_switched());
    assert_eq!(pair.server.recv_state(), State::Switched);
    assert_eq!(pair.server.send_state(), State::Switched);
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::Switched)
    );
    assert!(!pair.server.is_closed());
    assert!(pair.poll_server().unwrap().is_empty());
    assert_eq!(&pair.server_in[..], b"\x81\x05hello");
    assert_eq!(
        pair.server.sender().send_response(Response::new("late")),
        Err(UsageError::WrongState)
    );

    let out = pair.drain_server();
    assert_eq!(
        out.text(),
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n"
    );
    pair.inject_to_client(b"\x81\x02ok");
    let events = pair.poll_client().unwrap();
    assert!(
        matches!(&events[0], Event::Head { head, .. } if head.status() == StatusCode::SWITCHING_PROTOCOLS)
    );
    assert_eq!(
        last_end(&events),
        Some(KeepAlive::Close(CloseReason::Switched))
    );
    assert!(pair.client.is_switched());
    assert_eq!(pair.client.recv_state(), State::Switched);
    assert_eq!(pair.client.send_state(), State::Switched);
    assert_eq!(&pair.client_in[..], b"\x81\x02ok");
    assert!(pair.poll_client().unwrap().is_empty());
    assert_eq!(&pair.client_in[..], b"\x81\x02ok");
    assert_eq!(
        pair.client.sender().send_request(support::get("/")),
        Err(UsageError::WrongState)
    );
}

#[test]
fn connect_answered_200_opens_a_tunnel_on_both_sides() {
    let mut pair = Pair::new();
    let req = Request::connect("example.com:443")
        .header("host", "example.com:443")
        .body("")
        .unwrap();
    pair.client.sender().send_request(req).unwrap();
    // Nothing may follow a CONNECT until it is answered.
    assert_eq!(
        pair.client.sender().send_request(support::get("/")),
        Err(UsageError::WrongState)
    );
    let sent = pair.drain_client();
    assert_eq!(
        sent.text(),
        "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n"
    );
    pair.inject_to_server(b"\x16\x03\x01 client hello");
    let events = pair.poll_server().unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    pair.server
        .sender()
        .send_response(Response::new(""))
        .unwrap();
    assert!(pair.server.is_switched());
    assert_eq!(&pair.server_in[..], b"\x16\x03\x01 client hello");
    assert!(pair.poll_server().unwrap().is_empty());

    // No framing fields on a 2xx to CONNECT.
    assert_eq!(pair.drain_server().text(), "HTTP/1.1 200 OK\r\n\r\n");
    pair.inject_to_client(b"\x16\x03\x03 server hello");
    let events = pair.poll_client().unwrap();
    assert_eq!(responses(&events), vec![(200, Vec::new())]);
    assert_eq!(
        last_end(&events),
        Some(KeepAlive::Close(CloseReason::Switched))
    );
    assert!(pair.client.is_switched());
    assert_eq!(&pair.client_in[..], b"\x16\x03\x03 server hello");
    assert_eq!(pair.client.requests_in_flight(), 0);
}

#[test]
fn a_2xx_to_connect_cannot_carry_a_body() {
    let mut pair = Pair::new();
    pair.inject_to_server(b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n");
    pair.poll_server().unwrap();
    assert_eq!(
        pair.server.sender().send_response(Response::new("body")),
        Err(UsageError::BodyNotAllowed)
    );
    assert!(pair.server.output().is_empty());
    assert!(!pair.server.is_switched());
    assert_eq!(pair.server.send_state(), State::Head);
}

#[test]
fn a_101_without_an_upgrade_request_is_a_usage_error() {
    for raw in [
        &b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        // Upgrade without the `Connection: upgrade` that makes it count.
        &b"GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n"[..],
    ] {
        let mut pair = Pair::new();
        pair.inject_to_server(raw);
        pair.poll_server().unwrap();
        assert_eq!(
            pair.server.sender().send_response(switching()),
            Err(UsageError::InvalidHead)
        );
        assert!(pair.server.output().is_empty());
        assert!(!pair.server.is_switched());
        assert_eq!(pair.server.send_state(), State::Head);
        // A normal answer still goes out, and the connection is reused.
        pair.server
            .sender()
            .send_response(Response::new("no"))
            .unwrap();
        assert_eq!(pair.server.recv_state(), State::Idle);
    }
}

/// A CONNECT after which the connection would close (HTTP/1.0 without
/// `keep-alive`, or `Connection: close`) can still be answered with a
/// tunnel: the 2xx is accepted, the connection switches and the bytes
/// after the head are the tunnel's. A refusal closes it as before. The
/// head arrives whole and byte by byte. (Found by the `server_connection`
/// fuzz target: the 2xx was refused with `WrongState`.)
#[test]
fn a_connect_that_would_close_can_still_open_a_tunnel() {
    let heads = [
        (
            "CONNECT example.com:443 HTTP/1.0\r\nHost: example.com:443\r\n\r\n",
            CloseReason::Http10,
        ),
        (
            "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n",
            CloseReason::PeerClose,
        ),
    ];
    for (head, reason) in heads {
        let input = [head.as_bytes(), b"\x16\x03\x01 hello"].concat();
        for step in [input.len(), 1] {
            let mut server = ServerConnection::new(Config::default());
            let mut buf = BytesMut::new();
            let mut events = Vec::new();
            for piece in input.chunks(step) {
                buf.extend_from_slice(piece);
                events.extend(support::poll_server(&mut server, &mut buf).unwrap());
            }
            assert_eq!(events.len(), 2, "{head:?}: {events:?}");
            assert!(matches!(events[1], Event::End(KeepAlive::Close(r)) if r == reason));
            server.sender().send_response(Response::new("")).unwrap();
            assert!(server.is_switched(), "{head:?}");
            assert_eq!(&buf[..], b"\x16\x03\x01 hello", "{head:?}");
            assert_eq!(
                support::drain(server.output()).text(),
                "HTTP/1.1 200 OK\r\n\r\n"
            );
            assert!(
                support::poll_server(&mut server, &mut buf)
                    .unwrap()
                    .is_empty()
            );

            // Refused: no tunnel, the connection closes after the answer.
            let mut server = ServerConnection::new(Config::default());
            let mut buf = BytesMut::from(&input[..]);
            support::poll_server(&mut server, &mut buf).unwrap();
            let forbidden = Response::builder().status(403).body("").unwrap();
            server.sender().send_response(forbidden).unwrap();
            assert!(!server.is_switched(), "{head:?}");
            assert!(!server.keep_alive().is_reusable());
            let out = support::drain(server.output()).text();
            assert!(out.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{out}");
            assert!(out.contains("connection: close\r\n"), "{out}");
        }
    }
}

/// A CONNECT pipelined behind a request whose answer closes the
/// connection (HTTP/1.0) is never answered: the client's connection is
/// closed once that answer is in, as for any request left unanswered,
/// instead of waiting for the switch for ever (what remains of the input
/// is never read).
#[test]
fn a_connect_behind_a_closing_answer_is_never_answered_and_the_connection_closes() {
    let mut client = h1proto::ClientConnection::new(Config::default());
    let get = Request::get("/").header("host", "a").body("").unwrap();
    client.sender().send_request(get).unwrap();
    let connect = Request::connect("a:443")
        .header("host", "a:443")
        .body("")
        .unwrap();
    client.sender().send_request(connect).unwrap();
    let mut buf = BytesMut::from(&b"HTTP/1.0 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"[..]);
    let events = support::poll_client(&mut client, &mut buf).unwrap();
    assert_eq!(
        last_end(&events),
        Some(KeepAlive::Close(CloseReason::Http10)),
        "{events:?}"
    );
    assert_eq!(client.send_state(), State::MustClose);
    assert!(client.is_closed());
    assert!(!client.is_switched());
}
