//! Pipelined requests are decoded and answered in order, and
//! the client matches each response to the method of its request.

use crate::support;

use bytes::BytesMut;
use h1proto::conn::State;
use h1proto::{CloseReason, Config, Event, KeepAlive, ServerConnection, framing::BodyKind};
use http::{Method, Request, Response, StatusCode};
use support::{Pair, get, last_end, poll_server, request, responses};

/// Polls and answers until the server has nothing more to do; returns the
/// request paths in the order they were answered.
fn answer_all(server: &mut ServerConnection, buf: &mut BytesMut) -> Vec<String> {
    let mut answered = Vec::new();
    let mut path = String::new();
    loop {
        let events = poll_server(server, buf).unwrap();
        if events.is_empty() {
            return answered;
        }
        for ev in events {
            match ev {
                Event::Head { head, .. } => path = head.uri().path().to_owned(),
                Event::End(_) => {
                    // The same handler for GET and HEAD.
                    let body = format!("body {path}");
                    server.sender().send_response(Response::new(body)).unwrap();
                    answered.push(path.clone());
                }
                _ => {}
            }
        }
    }
}

#[test]
fn pipelined_get_head_get_are_answered_in_order_and_drained_in_one_pass() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(
        &b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n"[..],
    );
    // Before the first response, only the first request is decoded.
    let first = poll_server(&mut server, &mut buf).unwrap();
    assert_eq!(first.len(), 2, "{first:?}");
    assert_eq!(server.recv_state(), State::Done);
    assert_eq!(server.send_state(), State::Head);
    assert!(buf.starts_with(b"HEAD /b"));
    server
        .sender()
        .send_response(Response::new("body /a"))
        .unwrap();

    let answered = answer_all(&mut server, &mut buf);
    assert_eq!(answered, ["/b", "/c"]);
    assert!(buf.is_empty());

    let out = support::drain(server.output());
    // Three small responses, queued before a drain: one contiguous segment.
    assert_eq!(out.segments, 1);
    assert_eq!(
        out.text(),
        "HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nbody /a\
         HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n\
         HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nbody /c"
    );
    assert_eq!(server.recv_state(), State::Idle);
    assert_eq!(server.send_state(), State::Idle);
    assert_eq!(server.keep_alive(), KeepAlive::Reusable);
}

#[test]
fn a_pipelining_client_matches_each_response_to_its_request() {
    let mut pair = Pair::new();
    pair.client
        .sender()
        .send_request(request(Method::HEAD, "/h", ""))
        .unwrap();
    pair.client.sender().send_request(get("/g")).unwrap();
    let connect = Request::connect("example.com:443")
        .header("host", "example.com:443")
        .body("")
        .unwrap();
    pair.client.sender().send_request(connect).unwrap();
    assert_eq!(pair.client.requests_in_flight(), 3);
    let sent = pair.drain_client();
    assert_eq!(sent.segments, 1, "three requests, one write");

    let events = pair.run(|server, ev| {
        if let Event::Head { head, .. } = ev {
            // Answer from the head: these requests have no body, and the
            // End that follows is returned after the response is queued.
            let res = match *head.method() {
                Method::HEAD => Response::new("hello"),
                Method::GET => Response::new("world!"),
                _ => Response::builder()
                    .status(StatusCode::PROXY_AUTHENTICATION_REQUIRED)
                    .header("proxy-authenticate", "Basic")
                    .body("auth first")
                    .unwrap(),
            };
            server.sender().send_response(res).unwrap();
        }
    });
    let paths: Vec<String> = support::request_heads(&pair.server_events)
        .iter()
        .map(|r| format!("{} {}", r.method(), r.uri()))
        .collect();
    assert_eq!(paths, ["HEAD /h", "GET /g", "CONNECT example.com:443"]);
    assert_eq!(
        responses(&events),
        vec![
            (200, Vec::new()),
            (200, b"world!".to_vec()),
            (407, b"auth first".to_vec()),
        ]
    );
    let heads: Vec<(BodyKind, Option<&str>)> = events
        .iter()
        .filter_map(|ev| match ev {
            Event::Head { head, body } => Some((
                *body,
                head.headers()
                    .get("content-length")
                    .map(|v| v.to_str().unwrap()),
            )),
            _ => None,
        })
        .collect();
    // The answer to HEAD carries the GET's length and has no body.
    assert_eq!(
        heads,
        [
            (BodyKind::Empty, Some("5")),
            (BodyKind::Length(6), Some("6")),
            (BodyKind::Length(10), Some("10")),
        ]
    );
    assert_eq!(pair.client.requests_in_flight(), 0);
    assert!(!pair.client.is_switched() && !pair.server.is_switched());
    // A refused CONNECT closes the connection: what the client sent after
    // its head was meant for the tunnel. The server says so, and the client
    // closes too.
    assert!(pair.server.is_closed());
    assert_eq!(
        pair.server.keep_alive(),
        KeepAlive::Close(CloseReason::ConnectRefused)
    );
    assert_eq!(
        last_end(&events),
        Some(KeepAlive::Close(CloseReason::PeerClose))
    );
    assert!(pair.client.is_closed());
}

#[test]
fn nothing_is_parsed_after_a_connection_close_request() {
    let mut server = ServerConnection::new(Config::default());
    let rest = &b"GET /2 HTTP/1.1\r\nHost: x\r\n\r\n\x00not http at all"[..];
    let mut buf = BytesMut::from(&b"GET /1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"[..]);
    buf.extend_from_slice(rest);
    let events = poll_server(&mut server, &mut buf).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(
        last_end(&events),
        Some(KeepAlive::Close(CloseReason::PeerClose))
    );
    server.sender().send_response(Response::new("one")).unwrap();
    assert!(server.is_closed());
    // Neither the pipelined request nor the garbage after it is touched.
    for _ in 0..2 {
        assert!(server.poll_event(&mut buf).unwrap().is_none());
    }
    assert_eq!(&buf[..], rest);
    let out = support::drain(server.output());
    assert_eq!(out.text().matches("HTTP/1.1").count(), 1);
    assert!(out.text().contains("connection: close\r\n"));
}

#[test]
fn a_client_stops_at_a_response_that_closes_the_connection() {
    let mut pair = Pair::new();
    pair.client.sender().send_request(get("/1")).unwrap();
    pair.client.sender().send_request(get("/2")).unwrap();
    pair.drain_client();
    pair.inject_to_client(
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx\
          HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ny",
    );
    let events = pair.poll_client().unwrap();
    assert_eq!(responses(&events), vec![(200, b"x".to_vec())]);
    assert_eq!(
        last_end(&events),
        Some(KeepAlive::Close(CloseReason::PeerClose))
    );
    assert!(pair.client.is_closed());
    // The second request was never answered: the caller may retry it.
    assert_eq!(pair.client.requests_in_flight(), 1);
    assert!(pair.client_in.starts_with(b"HTTP/1.1 200 OK"));
    assert!(pair.poll_client().unwrap().is_empty());
}

/// A request that says `Connection: close` behind others closes the
/// connection after its own response, not after the first one; a
/// response that says it closes it at once, answered or not.
#[test]
fn a_closing_request_behind_others_waits_for_its_own_response() {
    let mut pair = Pair::new();
    pair.client.sender().send_request(get("/1")).unwrap();
    let close = http::Request::get("/2")
        .header("host", "example.com")
        .header("connection", "close")
        .body("")
        .unwrap();
    pair.client.sender().send_request(close).unwrap();
    assert_eq!(
        pair.client.sender().send_request(get("/3")),
        Err(h1proto::UsageError::WrongState),
        "nothing after a request that closes"
    );
    pair.drain_client();
    pair.inject_to_client(
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx\
          HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    let events = pair.poll_client().unwrap();
    assert_eq!(
        responses(&events),
        vec![(200, b"x".to_vec()), (200, Vec::new())]
    );
    assert!(pair.client.is_closed());
    assert_eq!(pair.client.requests_in_flight(), 0);

    // A bodiless response that closes, with a request still unanswered.
    let mut pair = Pair::new();
    pair.client.sender().send_request(get("/1")).unwrap();
    pair.client.sender().send_request(get("/2")).unwrap();
    pair.drain_client();
    pair.inject_to_client(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
    let events = pair.poll_client().unwrap();
    assert_eq!(responses(&events), vec![(204, Vec::new())]);
    assert!(pair.client.is_closed());
    assert_eq!(pair.client.requests_in_flight(), 1);
}
