//! `Expect: 100-continue`, accepted or refused, on both sides.

use crate::support;

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

// ------------------------------------- the natural order: head, then body

/// The statuses of the messages in client events, interim ones included,
/// in the order they were decoded.
fn statuses(events: &[support::ClientEvent]) -> Vec<u16> {
    events
        .iter()
        .filter_map(|ev| match ev {
            Event::Interim(res) | Event::Head { head: res, .. } => Some(res.status().as_u16()),
            _ => None,
        })
        .collect()
}

/// An echo queues its response head before it reads the body: the client
/// still gets `100 Continue`, ahead of the head, and the connection stays
/// reusable. The server's output is decoded back by the client.
#[test]
fn a_head_queued_before_the_body_is_read_gets_100_continue_ahead_of_it() {
    let mut pair = expecting_pair();
    assert_eq!(
        pair.server.sender().send_head(Response::new(())).unwrap(),
        BodyKind::Chunked
    );
    // Still waiting: queued is not sent.
    assert!(pair.server.is_waiting_for_continue());
    assert_eq!(pair.server.keep_alive(), KeepAlive::Reusable);
    // Asking for the body puts `100 Continue` ahead of the queued head.
    assert!(pair.poll_server().unwrap().is_empty());
    assert!(!pair.server.is_waiting_for_continue());
    let out = pair.drain_server().text();
    assert_eq!(
        out,
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    let events = pair.poll_client().unwrap();
    assert_eq!(statuses(&events), [100, 200]);
    assert!(!pair.client.is_waiting_for_continue());
    assert_eq!(pair.client.keep_alive(), KeepAlive::Reusable);

    // The body goes up and is echoed back.
    pair.client.sender().send_data("hello").unwrap();
    pair.client.sender().finish(None).unwrap();
    let events = pair.run(|server, ev| match ev {
        Event::Data(data) => server.sender().send_data(data.clone()).unwrap(),
        Event::End(_) => server.sender().finish(None).unwrap(),
        _ => {}
    });
    assert_eq!(support::body_of(&pair.server_events), b"hello");
    assert_eq!(support::body_of(&events), b"hello");
    assert_eq!(last_end(&events), Some(KeepAlive::Reusable));
    assert_eq!(pair.server.keep_alive(), KeepAlive::Reusable);
    assert_eq!(
        (pair.server.recv_state(), pair.server.send_state()),
        (State::Idle, State::Idle)
    );
    assert_eq!(
        support::text(&pair.server_wire)
            .matches("100 Continue")
            .count(),
        1
    );

    // The connection carries the next exchange.
    pair.client
        .sender()
        .send_request(support::get("/next"))
        .unwrap();
    let events = pair.run(|server, ev| {
        if let Event::End(_) = ev {
            server
                .sender()
                .send_response(Response::new("next"))
                .unwrap();
        }
    });
    assert_eq!(responses(&events), vec![(200, b"next".to_vec())]);
    assert_eq!(last_end(&events), Some(KeepAlive::Reusable));
}

/// Everything queued after the head (a first piece of the body, here a
/// large one that is its own segment) stays behind it, in order.
#[test]
fn continue_goes_ahead_of_the_head_and_what_follows_it() {
    let mut pair = expecting_pair();
    let res = Response::builder()
        .header("content-length", "10005")
        .body(())
        .unwrap();
    assert_eq!(
        pair.server.sender().send_head(res).unwrap(),
        BodyKind::Length(10_005)
    );
    let large = bytes::Bytes::from(vec![b'x'; 10_000]);
    pair.server.sender().send_data(large.clone()).unwrap();
    // By hand, as by polling the body: once.
    pair.server.sender().send_continue();
    pair.server.sender().send_continue();
    assert!(!pair.server.is_waiting_for_continue());
    let out = pair.drain_server();
    let head = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 10005\r\n\r\n";
    assert_eq!(&out.bytes[..head.len()], head.as_bytes());
    assert_eq!(&out.bytes[head.len()..], &large[..]);
    // The body comes up, is read, and the response ends after it: the
    // exchange ends with the connection reusable.
    pair.client.sender().send_data("hello").unwrap();
    pair.client.sender().finish(None).unwrap();
    pair.run(|server, ev| {
        if let Event::End(_) = ev {
            server.sender().send_data("hello").unwrap();
            server.sender().finish(None).unwrap();
        }
    });
    let client = &pair.client_events;
    assert_eq!(statuses(client), [100, 200]);
    assert_eq!(support::body_of(client).len(), 10_005);
    assert_eq!(support::body_of(&pair.server_events), b"hello");
    assert_eq!(last_end(client), Some(KeepAlive::Reusable));
    assert_eq!(pair.server.keep_alive(), KeepAlive::Reusable);
    assert_eq!(pair.server.recv_state(), State::Idle);
}

/// Once part of the final head has been drained, `100 Continue` can no
/// longer go ahead of it: asking for the body refuses it, as a complete
/// response does, and the connection closes after the response.
#[test]
fn a_head_that_started_to_leave_refuses_the_body() {
    for drained in [1, usize::MAX] {
        let mut pair = expecting_pair();
        pair.server.sender().send_head(Response::new(())).unwrap();
        let out = pair.server.output();
        let n = drained.min(bytes::Buf::remaining(out));
        let first = bytes::Buf::chunk(out)[..n].to_vec();
        bytes::Buf::advance(out, n);
        pair.client_in.extend_from_slice(&first);
        pair.server_wire.extend_from_slice(&first);
        assert!(pair.poll_server().unwrap().is_empty());
        assert!(!pair.server.is_waiting_for_continue(), "{drained}");
        assert_eq!(
            pair.server.keep_alive(),
            KeepAlive::Close(CloseReason::RejectedContinue)
        );
        pair.server.sender().finish(None).unwrap();
        pair.drain_server();
        let wire = support::text(&pair.server_wire);
        assert!(!wire.contains("100 Continue"), "{wire}");
        assert!(wire.starts_with("HTTP/1.1 200 OK\r\n"), "{wire}");
        // Too late to say so in the head.
        assert!(!wire.contains("close"), "{wire}");
        assert!(pair.server.is_closed());

        // The client, given a final answer while it waited, stops waiting
        // and will not reuse the connection either.
        let events = pair.poll_client().unwrap();
        assert_eq!(statuses(&events), [200]);
        assert!(!pair.client.is_waiting_for_continue());
        assert_eq!(
            pair.client.keep_alive(),
            KeepAlive::Close(CloseReason::RejectedContinue)
        );
    }
}

/// A streamed response finished without the body being asked for refuses
/// it, as a complete response does.
#[test]
fn a_streamed_response_finished_without_reading_refuses_the_body() {
    let mut pair = expecting_pair();
    pair.server.sender().send_head(Response::new(())).unwrap();
    pair.server.sender().send_data("no").unwrap();
    pair.server.sender().finish(None).unwrap();
    assert!(!pair.server.is_waiting_for_continue());
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::RejectedContinue)
    );
    assert!(pair.server.is_closed());
    // No `100 Continue` after the final response, whatever is polled.
    pair.server.sender().send_continue();
    assert!(pair.poll_server().unwrap().is_empty());
    // The head, still queued when closing was decided, says so (once).
    let wire = pair.drain_server().text();
    assert_eq!(
        wire,
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n\
         2\r\nno\r\n0\r\n\r\n"
    );
}

/// A queued head that `100 Continue` went ahead of can still be withdrawn
/// for an error response: the `100` stays, the head goes.
#[test]
fn an_error_response_replaces_the_head_behind_100_continue() {
    let mut pair = Pair::new();
    pair.inject_to_server(
        b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    pair.poll_server().unwrap();
    pair.server.sender().send_head(Response::new(())).unwrap();
    assert!(pair.poll_server().unwrap().is_empty());
    assert!(!pair.server.is_waiting_for_continue());
    // The client's body turns out malformed before anything was drained.
    pair.inject_to_server(b"zz\r\n");
    let err = pair.poll_server().unwrap_err();
    pair.server.send_error_response(&err).unwrap();
    let out = pair.drain_server().text();
    assert!(
        out.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 Bad Request\r\n"),
        "{out}"
    );
    assert!(!out.contains("200 OK"), "the withdrawn head left: {out}");
    assert!(out.contains("connection: close\r\n"), "{out}");
}

/// A client pipelines a request waiting for `100 Continue` behind a GET:
/// the complete answer to the GET refuses nothing of the later request's
/// body, which still waits for its own answer.
#[test]
fn the_answer_to_an_earlier_request_leaves_the_wait_for_100_continue() {
    let mut pair = Pair::new();
    let get = Request::get("/a").header("host", "example.com");
    pair.client.sender().send_request(get).unwrap();
    let post = Request::post("/upload")
        .header("host", "example.com")
        .header("content-length", "5")
        .header("expect", "100-continue")
        .body(())
        .unwrap();
    pair.client.sender().send_head(post).unwrap();
    assert!(pair.client.is_waiting_for_continue());
    assert_eq!(pair.client.requests_in_flight(), 2);
    pair.inject_to_client(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    let events = pair.poll_client().unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(pair.client.is_waiting_for_continue());
    assert_eq!(pair.client.keep_alive(), KeepAlive::Reusable);
    assert_eq!(pair.client.requests_in_flight(), 1);
    pair.inject_to_client(b"HTTP/1.1 100 Continue\r\n\r\n");
    pair.poll_client().unwrap();
    assert!(!pair.client.is_waiting_for_continue());
    pair.client.sender().send_data("hello").unwrap();
    pair.client.sender().finish(None).unwrap();
    pair.inject_to_client(b"HTTP/1.1 204 No Content\r\n\r\n");
    pair.poll_client().unwrap();
    assert_eq!(pair.client.keep_alive(), KeepAlive::Reusable);
    assert_eq!(pair.client.requests_in_flight(), 0);
    assert_eq!(pair.client.send_state(), State::Idle);
}
