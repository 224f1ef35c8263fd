//! Persistent connections, the keep-alive verdict with
//! its reason, and reuse from the final byte on.

use crate::support;

use bytes::{Bytes, BytesMut};
use h1proto::conn::State;
use h1proto::{
    CloseReason, Config, Event, KeepAlive, ServerConnection, UsageError, framing::BodyKind,
};
use http::{Method, Request, Response};
use support::{Pair, ServerEvent, get, poll_server, request, responses};

/// The four kinds of exchange the long-run test cycles through.
fn send_request_kind(pair: &mut Pair, i: usize) {
    match i % 4 {
        // GET without a body; the answer has a Content-Length body.
        0 => pair
            .client
            .sender()
            .send_request(get(&format!("/get/{i}")))
            .unwrap(),
        // POST with a Content-Length body; the answer is chunked.
        1 => pair
            .client
            .sender()
            .send_request(request(Method::POST, "/cl", "hello"))
            .unwrap(),
        // POST with a chunked body; the answer echoes it with a length.
        2 => {
            let req = Request::post("/chunked")
                .header("host", "example.com")
                .body(())
                .unwrap();
            assert_eq!(
                pair.client.sender().send_head(req).unwrap(),
                BodyKind::Chunked
            );
            pair.client.sender().send_data("abc").unwrap();
            pair.client
                .sender()
                .send_data(Bytes::from(format!("{i}")))
                .unwrap();
            pair.client.sender().finish(None).unwrap();
        }
        // GET answered with an empty body.
        _ => pair.client.sender().send_request(get("/empty")).unwrap(),
    }
}

/// Answers every request once its `End` is polled.
fn answer(server: &mut ServerConnection, ev: &ServerEvent, path: &mut String, body: &mut Vec<u8>) {
    match ev {
        Event::Head { head, .. } => {
            *path = head.uri().path().to_owned();
            body.clear();
        }
        Event::Data(d) => body.extend_from_slice(d),
        Event::End(verdict) => {
            assert_eq!(*verdict, KeepAlive::Reusable);
            if path.starts_with("/get/") {
                server
                    .sender()
                    .send_response(Response::new(format!("got {path}")))
                    .unwrap();
            } else if path == "/cl" {
                assert_eq!(body, b"hello");
                let kind = server.sender().send_head(Response::new(())).unwrap();
                assert_eq!(kind, BodyKind::Chunked);
                server.sender().send_data("part one,").unwrap();
                server.sender().send_data(" part two").unwrap();
                server.sender().finish(None).unwrap();
            } else if path == "/chunked" {
                server
                    .sender()
                    .send_response(Response::new(body.clone()))
                    .unwrap();
            } else {
                server.sender().send_response(Response::new("")).unwrap();
            }
        }
        _ => {}
    }
}

#[test]
fn a_thousand_exchanges_on_one_connection() {
    let mut pair = Pair::new();
    let mut path = String::new();
    let mut body = Vec::new();
    for i in 0..1000 {
        send_request_kind(&mut pair, i);
        assert_eq!(pair.client.requests_in_flight(), 1);
        let events = pair.run(|server, ev| answer(server, ev, &mut path, &mut body));
        let got = responses(&events);
        let expected: Vec<u8> = match i % 4 {
            0 => format!("got /get/{i}").into_bytes(),
            1 => b"part one, part two".to_vec(),
            2 => format!("abc{i}").into_bytes(),
            _ => Vec::new(),
        };
        assert_eq!(got, vec![(200, expected)], "exchange {i}");
        assert!(
            matches!(events.last(), Some(Event::End(KeepAlive::Reusable))),
            "exchange {i}"
        );
        // Both sides are ready for the next exchange, with nothing left over.
        assert_eq!(pair.server.recv_state(), State::Idle, "exchange {i}");
        assert_eq!(pair.server.send_state(), State::Idle, "exchange {i}");
        assert_eq!(pair.client.recv_state(), State::Idle, "exchange {i}");
        assert_eq!(pair.client.send_state(), State::Idle, "exchange {i}");
        assert_eq!(pair.server.keep_alive(), KeepAlive::Reusable);
        assert_eq!(pair.client.keep_alive(), KeepAlive::Reusable);
        assert_eq!(pair.client.requests_in_flight(), 0);
        assert!(pair.server_in.is_empty() && pair.client_in.is_empty());
        assert!(!pair.server.is_closed() && !pair.client.is_closed());
    }
    let wire = support::text(&pair.server_wire);
    assert_eq!(wire.matches("HTTP/1.1 200 OK\r\n").count(), 1000);
    assert!(!wire.contains("connection"));
    assert_eq!(wire.matches("transfer-encoding: chunked\r\n").count(), 250);
    assert_eq!(
        support::text(&pair.client_wire)
            .matches("transfer-encoding: chunked\r\n")
            .count(),
        250
    );
}

#[test]
fn connection_close_from_the_client_ends_the_connection() {
    let mut pair = Pair::new();
    pair.client.sender().send_request(get("/1")).unwrap();
    let events = pair.run(|server, ev| {
        if let Event::End(_) = ev {
            server.sender().send_response(Response::new("one")).unwrap();
        }
    });
    assert_eq!(responses(&events), vec![(200, b"one".to_vec())]);

    let req = Request::get("/2")
        .header("host", "example.com")
        .header("connection", "close")
        .body("")
        .unwrap();
    pair.client.sender().send_request(req).unwrap();
    // The client's own verdict is known as soon as the request is queued.
    assert_eq!(
        pair.client.keep_alive(),
        KeepAlive::Close(CloseReason::LocalClose)
    );
    pair.drain_client();
    let events = pair.poll_server().unwrap();
    assert!(matches!(events[0], Event::Head { .. }));
    // Known after the request head, before the response.
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::PeerClose)
    );
    assert_eq!(
        support::last_end(&events),
        Some(KeepAlive::Close(CloseReason::PeerClose))
    );
    pair.server
        .sender()
        .send_response(Response::new("two"))
        .unwrap();
    let out = pair.drain_server();
    assert_eq!(
        out.text(),
        "HTTP/1.1 200 OK\r\ncontent-length: 3\r\nconnection: close\r\n\r\ntwo"
    );
    assert!(pair.server.is_closed());
    assert_eq!(pair.server.recv_state(), State::MustClose);
    assert_eq!(pair.server.send_state(), State::MustClose);
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::PeerClose)
    );

    let events = pair.poll_client().unwrap();
    assert_eq!(
        support::last_end(&events),
        Some(KeepAlive::Close(CloseReason::PeerClose))
    );
    assert!(pair.client.is_closed());
    assert_eq!(
        pair.client.keep_alive(),
        KeepAlive::Close(CloseReason::LocalClose)
    );
    assert_eq!(
        pair.client.sender().send_request(get("/3")),
        Err(UsageError::WrongState)
    );
}

#[test]
fn close_after_response_from_the_server_app_ends_the_connection() {
    let mut pair = Pair::new();
    pair.client.sender().send_request(get("/")).unwrap();
    let events = pair.run(|server, ev| {
        if let Event::End(verdict) = ev {
            assert_eq!(*verdict, KeepAlive::Reusable);
            assert_eq!(server.keep_alive(), KeepAlive::Reusable);
            server.close_after_response();
            // The verdict changes as soon as the application decides.
            assert_eq!(
                server.keep_alive(),
                KeepAlive::Close(CloseReason::LocalClose)
            );
            server.sender().send_response(Response::new("bye")).unwrap();
        }
    });
    assert_eq!(
        support::text(&pair.server_wire),
        "HTTP/1.1 200 OK\r\ncontent-length: 3\r\nconnection: close\r\n\r\nbye"
    );
    assert!(pair.server.is_closed());
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::LocalClose)
    );
    assert_eq!(
        support::last_end(&events),
        Some(KeepAlive::Close(CloseReason::PeerClose))
    );
    assert!(pair.client.is_closed());
    assert_eq!(
        pair.client.keep_alive(),
        KeepAlive::Close(CloseReason::PeerClose)
    );
    assert_eq!(pair.client.recv_state(), State::MustClose);
    assert_eq!(pair.client.send_state(), State::MustClose);
}

#[test]
fn close_after_response_during_a_streamed_response_still_says_close() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
    poll_server(&mut server, &mut buf).unwrap();
    server.close_after_response();
    server.sender().send_head(Response::new(())).unwrap();
    server.sender().send_data("x").unwrap();
    server.sender().finish(None).unwrap();
    let out = support::drain(server.output());
    assert_eq!(
        out.text(),
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n1\r\nx\r\n0\r\n\r\n"
    );
    assert!(server.is_closed());
}

/// A queued head is amended once, however often closing is asked for
/// (a shutdown signal twice, say) or decided again when the response ends.
#[test]
fn a_queued_head_says_close_once() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
    poll_server(&mut server, &mut buf).unwrap();
    server.sender().send_head(Response::new(())).unwrap();
    server.close_after_response();
    server.close_after_response();
    server.sender().send_data("x").unwrap();
    server.sender().finish(None).unwrap();
    let out = support::drain(server.output());
    assert_eq!(
        out.text(),
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n1\r\nx\r\n0\r\n\r\n"
    );
    assert!(server.is_closed());
}

/// Once the next request's head has come, closing is said in the
/// response to it: the answer before it, still queued whole, is left as
/// it is.
#[test]
fn a_close_asked_for_after_the_next_head_amends_its_response_only() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(
        &b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n"[..],
    );
    poll_server(&mut server, &mut buf).unwrap();
    server.sender().send_response(Response::new("a")).unwrap();
    poll_server(&mut server, &mut buf).unwrap();
    assert_eq!(server.send_state(), State::Head);
    server.close_after_response();
    server.sender().send_response(Response::new("b")).unwrap();
    let out = support::drain(server.output());
    assert_eq!(
        out.text(),
        "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na\
         HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\nb"
    );
    assert!(server.is_closed());
}

#[test]
fn the_server_is_ready_for_the_next_request_when_the_final_byte_is_queued() {
    let mut server = ServerConnection::new(Config::default());
    // A request with a body, and a second one behind it.
    let mut buf = BytesMut::from(
        &b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nHost: a\r\n\r\n"[..],
    );
    let first = poll_server(&mut server, &mut buf).unwrap();
    // Head, Data and End of the first request in one pass: the final body
    // byte completes the request without another read.
    assert_eq!(first.len(), 3, "{first:?}");
    assert_eq!(support::data_of(&first[1]), Some(&b"hello"[..]));
    assert_eq!(support::end_of(&first[2]), Some(KeepAlive::Reusable));
    assert_eq!(server.recv_state(), State::Done);
    assert_eq!(server.send_state(), State::Head);

    server.sender().send_head(Response::new(())).unwrap();
    assert_eq!(server.send_state(), State::Body);
    server.sender().send_data("ok").unwrap();
    assert_eq!(server.recv_state(), State::Done);
    server.sender().finish(None).unwrap();
    // No further input, no poll: the next exchange has started.
    assert_eq!(server.recv_state(), State::Idle);
    assert_eq!(server.send_state(), State::Idle);
    assert_eq!(server.keep_alive(), KeepAlive::Reusable);

    // The pipelined request is decoded from what is already buffered.
    let second = poll_server(&mut server, &mut buf).unwrap();
    let Event::Head { head, .. } = &second[0] else {
        panic!("{second:?}")
    };
    assert_eq!(head.uri().path(), "/b");
    assert_eq!(support::last_end(&second), Some(KeepAlive::Reusable));
    server.sender().send_response(Response::new("")).unwrap();
    assert_eq!(server.recv_state(), State::Idle);
    assert_eq!(server.send_state(), State::Idle);
}

#[test]
fn a_chunked_request_ends_with_its_last_chunk_in_the_same_pass() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(
        &b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"[..],
    );
    let events = poll_server(&mut server, &mut buf).unwrap();
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(support::end_of(&events[2]), Some(KeepAlive::Reusable));
    assert_eq!(server.recv_state(), State::Done);
    server.sender().send_response(Response::new("x")).unwrap();
    assert_eq!(server.recv_state(), State::Idle);
}

#[test]
fn the_client_is_ready_when_the_last_response_byte_is_decoded() {
    for (label, raw) in [
        (
            "content-length",
            &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"[..],
        ),
        (
            "chunked",
            &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"[..],
        ),
    ] {
        let mut pair = Pair::new();
        pair.client.sender().send_request(get("/")).unwrap();
        pair.drain_client();
        pair.inject_to_client(raw);
        let head = pair.client.poll_event(&mut pair.client_in).unwrap();
        assert!(matches!(head, Some(Event::Head { .. })), "{label}");
        assert_eq!(pair.client.recv_state(), State::Body, "{label}");
        let data = pair.client.poll_event(&mut pair.client_in).unwrap();
        assert_eq!(
            data.as_ref().and_then(support::data_of),
            Some(&b"hello"[..])
        );
        // No new input: End comes from what was already decoded.
        let mut nothing_new = pair.client_in.split();
        let end = pair.client.poll_event(&mut nothing_new).unwrap();
        assert_eq!(
            end.as_ref().and_then(support::end_of),
            Some(KeepAlive::Reusable),
            "{label}"
        );
        assert!(nothing_new.is_empty());
        assert_eq!(pair.client.recv_state(), State::Idle, "{label}");
        assert_eq!(pair.client.send_state(), State::Idle, "{label}");
        assert_eq!(pair.client.requests_in_flight(), 0, "{label}");
        pair.client.sender().send_request(get("/next")).unwrap();
        assert_eq!(pair.client.recv_state(), State::Head, "{label}");
    }
}

#[test]
fn the_client_end_comes_without_input_after_the_last_data() {
    // The last Data leaves the buffer empty; End must not wait for a read.
    let mut pair = Pair::new();
    pair.client.sender().send_request(get("/")).unwrap();
    pair.drain_client();
    pair.inject_to_client(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
    let events = pair.poll_client().unwrap();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(pair.client_in.is_empty());
    assert_eq!(support::end_of(&events[2]), Some(KeepAlive::Reusable));
}

#[test]
fn the_client_closes_after_its_own_close_even_if_the_server_ignores_it() {
    let mut pair = Pair::new();
    let req = Request::get("/")
        .header("host", "example.com")
        .header("connection", "close")
        .body("")
        .unwrap();
    pair.client.sender().send_request(req).unwrap();
    pair.drain_client();
    // A server that does not echo `Connection: close`.
    pair.inject_to_client(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let events = pair.poll_client().unwrap();
    assert_eq!(responses(&events), vec![(200, b"ok".to_vec())]);
    assert!(pair.client.is_closed());
    assert_eq!(pair.client.recv_state(), State::MustClose);
    assert_eq!(pair.client.send_state(), State::MustClose);
    assert_eq!(
        pair.client.keep_alive(),
        KeepAlive::Close(CloseReason::LocalClose)
    );
    assert_eq!(
        pair.client.sender().send_request(get("/again")),
        Err(UsageError::WrongState)
    );
}
