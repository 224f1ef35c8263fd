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

/// `raw` handed to the client in two reads cut at every place (and
/// whole), each on a fresh pair made by `setup`: the events and the pair.
fn at_every_cut(setup: impl Fn() -> Pair, raw: &[u8]) -> Vec<(Pair, Vec<support::ClientEvent>)> {
    (0..=raw.len())
        .map(|cut| {
            let mut pair = setup();
            pair.inject_to_client(&raw[..cut]);
            let mut events = pair.poll_client().unwrap();
            pair.inject_to_client(&raw[cut..]);
            events.extend(pair.poll_client().unwrap());
            (pair, events)
        })
        .collect()
}

/// A pair whose client sent the head of `req` (with `Content-Length: 10`)
/// and `first` of its body, all of it drained to the wire.
fn half_an_upload(pair: Pair, req: http::request::Builder, first: &'static str) -> Pair {
    let mut pair = pair;
    let req = req
        .header("host", "example.com")
        .header("content-length", "10")
        .body(())
        .unwrap();
    pair.client.sender().send_head(req).unwrap();
    if !first.is_empty() {
        pair.client.sender().send_data(first).unwrap();
    }
    pair.drain_client();
    pair
}

/// A GET, then a POST whose body is half sent: the two pipelined.
fn get_then_half_an_upload() -> Pair {
    let mut pair = Pair::new();
    pair.client
        .sender()
        .send_request(support::get("/missing"))
        .unwrap();
    half_an_upload(pair, Request::post("/upload"), "01234")
}

/// A refusal answers the request it follows in order (RFC 9112 section
/// 9.3.2): a 404 to a GET pipelined before an upload does not refuse the
/// upload, whose body goes on, and the connection stays reusable.
#[test]
fn a_refusal_of_an_earlier_request_leaves_the_upload_behind_it_going() {
    let raw = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    for (mut pair, events) in at_every_cut(get_then_half_an_upload, raw) {
        assert_eq!(support::responses(&events), vec![(404, vec![])]);
        assert_eq!(pair.client.keep_alive(), KeepAlive::Reusable);
        assert_eq!(pair.client.requests_in_flight(), 1);
        pair.client.sender().send_data("56789").unwrap();
        pair.client.sender().finish(None).unwrap();
        assert_eq!(pair.drain_client().text(), "56789");
        pair.inject_to_client(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
        let events = pair.poll_client().unwrap();
        assert_eq!(support::responses(&events), vec![(201, vec![])]);
        assert!(!pair.client.is_closed());
        assert_eq!(pair.client.send_state(), State::Idle);
    }
}

/// The same against a server: the GET is refused, the upload completes
/// and is answered, and neither side waits for the other.
#[test]
fn a_refused_get_and_the_upload_behind_it_both_complete_against_a_server() {
    let mut pair = Pair::new();
    pair.client
        .sender()
        .send_request(support::get("/missing"))
        .unwrap();
    let post = Request::post("/upload")
        .header("host", "example.com")
        .header("content-length", "10")
        .body(())
        .unwrap();
    pair.client.sender().send_head(post).unwrap();
    pair.client.sender().send_data("01234").unwrap();
    let answer = |server: &mut ServerConnection, ev: &support::ServerEvent| match ev {
        Event::Head { head, .. } if head.method() == http::Method::GET => {
            let res = Response::builder().status(404).body("").unwrap();
            server.sender().send_response(res).unwrap();
        }
        Event::End(_) if server.send_state() == State::Head => {
            let res = Response::builder().status(201).body("").unwrap();
            server.sender().send_response(res).unwrap();
        }
        _ => {}
    };
    let events = pair.run(answer);
    assert_eq!(support::responses(&events), vec![(404, vec![])]);
    pair.client.sender().send_data("56789").unwrap();
    pair.client.sender().finish(None).unwrap();
    let events = pair.run(answer);
    assert_eq!(support::responses(&events), vec![(201, vec![])]);
    assert_eq!(pair.client.requests_in_flight(), 0);
    assert!(!pair.client.is_closed());
    assert!(!pair.server.is_closed());
}

/// A 2xx during the upload that closes the connection: once it is
/// complete the server stops reading (it closes), so the client stops
/// sending, and the rest of the body is dropped without an error, as
/// after a refusal (RFC 9112 section 9.5).
#[test]
fn a_closing_2xx_during_the_upload_drops_the_rest_without_an_error() {
    let setup = || half_an_upload(Pair::new(), Request::put("/up"), "01234");
    let raw = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
    for (mut pair, events) in at_every_cut(setup, raw) {
        assert_eq!(support::responses(&events), vec![(200, b"ok".to_vec())]);
        assert_eq!(pair.client.sender().send_data("56789"), Ok(()));
        assert_eq!(pair.client.sender().finish(None), Ok(()));
        assert!(pair.client.output().is_empty());
        assert!(pair.client.is_closed());
    }
}

/// A final answer to a request waiting for `100 Continue`, before any
/// `100`: the body is refused (whether the server reads it is unknown)
/// and the calls that would send it queue nothing, without an error.
#[test]
fn a_final_answer_before_100_continue_refuses_the_body_without_an_error() {
    let setup = || {
        let expect = Request::put("/up").header("expect", "100-continue");
        let pair = half_an_upload(Pair::new(), expect, "");
        assert!(pair.client.is_waiting_for_continue());
        pair
    };
    let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    for (mut pair, events) in at_every_cut(setup, raw) {
        assert_eq!(support::responses(&events), vec![(200, b"ok".to_vec())]);
        assert_eq!(
            pair.client.keep_alive(),
            KeepAlive::Close(CloseReason::RejectedContinue)
        );
        assert_eq!(pair.client.sender().send_data("0123456789"), Ok(()));
        assert_eq!(pair.client.sender().finish(None), Ok(()));
        assert!(pair.client.output().is_empty());
        assert!(pair.client.is_closed());
    }
}

/// A 101 that comes while the upgrade request's body is being sent: the
/// new protocol begins after the request (RFC 9110 section 7.8; RFC 9113
/// section 3.2 asks for the whole body first), so the body is sent to its
/// end, and the connection is handed over then.
#[test]
fn a_101_during_the_upload_lets_the_body_finish_first() {
    let setup = || {
        let upgrade = Request::post("/up")
            .header("connection", "upgrade")
            .header("upgrade", "websocket");
        half_an_upload(Pair::new(), upgrade, "01234")
    };
    let raw =
        b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n";
    for (mut pair, events) in at_every_cut(setup, raw) {
        assert!(
            matches!(&events[0], Event::Head { head, .. } if head.status() == 101),
            "{events:?}"
        );
        assert!(pair.client.is_switched());
        pair.client.sender().send_data("56789").unwrap();
        pair.client.sender().finish(None).unwrap();
        assert_eq!(pair.drain_client().text(), "56789");
        assert_eq!(pair.client.send_state(), State::Switched);
        assert_eq!(
            pair.client.keep_alive(),
            KeepAlive::Close(CloseReason::Switched)
        );
    }
}

/// A client whose own request said `Connection: close` closes after
/// reading the final response (RFC 9112 section 9.6): a 2xx complete
/// before the upload is, ends it, and the rest is dropped without an
/// error, as when the answer itself closes.
#[test]
fn a_closing_request_answered_2xx_during_its_upload_drops_the_rest() {
    let setup = || {
        let close = Request::post("/up").header("connection", "close");
        half_an_upload(Pair::new(), close, "01234")
    };
    let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    for (mut pair, events) in at_every_cut(setup, raw) {
        assert_eq!(support::responses(&events), vec![(200, vec![])]);
        assert_eq!(pair.client.sender().send_data("56789"), Ok(()));
        assert_eq!(pair.client.sender().finish(None), Ok(()));
        assert!(pair.client.output().is_empty());
        assert!(pair.client.is_closed());
    }
}
