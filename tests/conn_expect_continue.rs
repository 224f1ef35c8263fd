//! Behaviour 9: `Expect: 100-continue`, accepted or refused, on both sides.

mod support;

use h1proto::conn::State;
use h1proto::{CloseReason, Event, KeepAlive, UsageError, framing::BodyKind};
use http::{Request, Response, StatusCode};
use support::{Pair, last_end, responses};

/// A client that sent a 5-byte POST head with `Expect: 100-continue`, and
/// a server that decoded only the head.
fn expecting_pair() -> Pair {
    let mut pair = Pair::new();
    let req = Request::post("/upload")
        .header("host", "example.com")
        .header("content-length", "5")
        .header("expect", "100-continue")
        .body(())
        .unwrap();
    assert_eq!(
        pair.client.sender().send_head(req).unwrap(),
        BodyKind::Length(5)
    );
    assert!(pair.client.is_waiting_for_continue());
    pair.drain_client();
    let head = pair.server.poll_event(&mut pair.server_in).unwrap();
    assert!(matches!(
        head,
        Some(Event::Head {
            body: BodyKind::Length(5),
            ..
        })
    ));
    assert!(pair.server.is_waiting_for_continue());
    assert!(
        pair.server.output().is_empty(),
        "nothing before the app asks"
    );
    pair
}

#[test]
fn polling_the_body_sends_100_continue_once() {
    let mut pair = expecting_pair();
    for _ in 0..3 {
        assert!(
            pair.server
                .poll_event(&mut pair.server_in)
                .unwrap()
                .is_none()
        );
    }
    assert!(!pair.server.is_waiting_for_continue());
    let out = pair.drain_server();
    assert_eq!(out.text(), "HTTP/1.1 100 Continue\r\n\r\n");
    assert_eq!(pair.server.send_state(), State::Head);

    // The client still waits until it has decoded the 100.
    assert!(pair.client.is_waiting_for_continue());
    let events = pair.poll_client().unwrap();
    assert!(
        matches!(&events[..], [Event::Interim(res)] if res.status() == StatusCode::CONTINUE),
        "{events:?}"
    );
    assert!(!pair.client.is_waiting_for_continue());

    pair.client.sender().send_data("hello").unwrap();
    pair.client.sender().finish(None).unwrap();
    let events = pair.run(|server, ev| {
        if let Event::End(_) = ev {
            server
                .sender()
                .send_response(Response::new("stored"))
                .unwrap();
        }
    });
    assert_eq!(support::body_of(&pair.server_events), b"hello");
    assert_eq!(responses(&events), vec![(200, b"stored".to_vec())]);
    assert_eq!(last_end(&events), Some(KeepAlive::Reusable));
    assert_eq!(
        support::text(&pair.server_wire)
            .matches("100 Continue")
            .count(),
        1
    );
    assert_eq!(pair.server.recv_state(), State::Idle);
    assert_eq!(pair.client.send_state(), State::Idle);
    assert_eq!(pair.server.keep_alive(), KeepAlive::Reusable);
}

#[test]
fn send_continue_by_hand_queues_it_once() {
    let mut pair = expecting_pair();
    pair.server.sender().send_continue();
    pair.server.sender().send_continue();
    assert!(
        pair.server
            .poll_event(&mut pair.server_in)
            .unwrap()
            .is_none()
    );
    assert_eq!(pair.drain_server().text(), "HTTP/1.1 100 Continue\r\n\r\n");
}

#[test]
fn a_final_response_first_refuses_the_body_and_closes() {
    let mut pair = expecting_pair();
    let res = Response::builder()
        .status(StatusCode::EXPECTATION_FAILED)
        .body("no")
        .unwrap();
    pair.server.sender().send_response(res).unwrap();
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::RejectedContinue)
    );
    assert!(pair.server.is_closed());
    assert!(!pair.server.is_waiting_for_continue());
    let out = pair.drain_server();
    assert_eq!(
        out.text(),
        "HTTP/1.1 417 Expectation Failed\r\ncontent-length: 2\r\nconnection: close\r\n\r\nno"
    );
    // The server reads no body and sends no 100 afterwards.
    pair.inject_to_server(b"hello");
    assert!(pair.poll_server().unwrap().is_empty());
    assert!(pair.server.output().is_empty());

    // The client stops waiting, drops its body and closes.
    let events = pair.poll_client().unwrap();
    assert_eq!(responses(&events), vec![(417, b"no".to_vec())]);
    assert!(!pair.client.is_waiting_for_continue());
    assert_eq!(pair.client.sender().send_data("hello"), Ok(()));
    assert_eq!(pair.client.sender().finish(None), Ok(()));
    assert!(pair.client.output().is_empty());
    assert!(pair.client.is_closed());
    assert!(!pair.client.keep_alive().is_reusable());
}

#[test]
fn the_client_waits_through_other_interim_responses() {
    let mut pair = expecting_pair();
    pair.inject_to_client(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n");
    let events = pair.poll_client().unwrap();
    assert!(matches!(&events[..], [Event::Interim(_)]));
    assert!(pair.client.is_waiting_for_continue());
    pair.inject_to_client(b"HTTP/1.1 100 Continue\r\n\r\n");
    pair.poll_client().unwrap();
    assert!(!pair.client.is_waiting_for_continue());
    assert_eq!(pair.client.send_state(), State::Body);
}

#[test]
fn no_continue_without_expect_or_after_the_body_arrived() {
    let mut pair = Pair::new();
    pair.inject_to_server(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n");
    pair.poll_server().unwrap();
    assert!(!pair.server.is_waiting_for_continue());
    pair.server.sender().send_continue();
    assert!(pair.server.output().is_empty());
    // A second final response to the same request is refused.
    pair.server
        .sender()
        .send_response(Response::new("x"))
        .unwrap();
    assert_eq!(
        pair.server.sender().send_response(Response::new("y")),
        Err(UsageError::WrongState)
    );
}
