//! Graceful shutdown: an idle connection closes at once; the exchange in
//! progress is finished, with `Connection: close` on a response head that
//! has not begun to leave (even one already queued); nothing after it is
//! served.

use h1proto_test_support::session as session_support;

use std::time::Instant;

use bytes::Bytes;
use h1proto::{ClientSession, Io, ServerSession, Session, UsageError};
use http::{Request, Response};
use session_support::{Harness, Outcome, get, post, secs, test_config};

fn server() -> Harness<ServerSession> {
    let t0 = Instant::now();
    Harness::new(ServerSession::new(test_config(), t0), t0)
}

fn close(h: &mut Harness<ServerSession>) {
    match h.call(ServerSession::close) {
        Outcome::Ready(()) => {}
        other => panic!("close: {other:?}"),
    }
}

fn heads(wire: &str) -> Vec<&str> {
    wire.split("HTTP/1.1 ")
        .skip(1)
        .map(|r| &r[..r.find("\r\n\r\n").unwrap()])
        .collect()
}

#[test]
fn a_new_connection_closes_at_once() {
    let mut h = server();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    h.advance_to(h.t0 + secs(3));
    h.s.shutdown(h.now);
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(&mut h);
    assert_eq!(h.closed, Some(h.t0 + secs(3)));
    assert_eq!(h.shut, None, "nothing to linger for");
    assert!(h.wire.is_empty());
}

#[test]
fn an_idle_keep_alive_connection_stops_at_once_and_lingers() {
    let mut h = server();
    h.send(get("/1"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("one")).unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    let wire = h.take_wire();
    assert!(!wire.contains("connection: close"), "{wire}");
    // The client pipelined /2 just before; the server has not read it.
    h.send(get("/2"));
    h.advance_to(h.t0 + secs(1) / 2);
    h.s.shutdown(h.now);
    assert!(h.call(ServerSession::next_request).ready().is_none());
    // The answer to /1 may not have reached the client: closing with /2
    // unread would reset the connection and could destroy it. The session
    // shuts its sending half down and reads and discards instead.
    assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
    assert_eq!(h.shut, Some(h.t0 + secs(1) / 2));
    assert!(h.inbox.is_empty(), "/2 read and discarded");
    assert!(h.wire.is_empty(), "/2 not served");
    // The client sees the end, and closes.
    h.send_eof();
    close(&mut h);
    assert_eq!(h.closed, Some(h.t0 + secs(1) / 2));
}

/// A CR read after an answer may begin the empty line a client may send
/// after a request (RFC 9112 section 2.2), which is no part of a request:
/// with it alone in the buffer the connection is idle, and a shutdown
/// stops it at once, as it does once the LF has come.
#[test]
fn a_lone_cr_after_an_answer_is_no_request_in_progress() {
    for rest in ["\r", "\r\n"] {
        let mut h = server();
        h.send(get("/1"));
        h.call(ServerSession::next_request).ready().unwrap();
        h.s.sender().send_response(Response::new("one")).unwrap();
        h.send(rest);
        assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
        assert!(h.inbox.is_empty(), "{rest:?} read");
        h.s.shutdown(h.now);
        assert!(
            h.call(ServerSession::next_request).ready().is_none(),
            "after {rest:?}"
        );
        assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
        assert!(h.shut.is_some(), "after {rest:?}: lingering");
    }
}

#[test]
fn the_exchange_in_progress_is_finished_with_connection_close() {
    let mut h = server();
    h.send(post("/1", "hello") + &get("/2"));
    let req = h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(req.uri(), "/1");
    h.s.shutdown(h.now);
    // The request is still read and answered in full.
    assert_eq!(h.call(ServerSession::read_body).ready(), "hello");
    h.s.sender().send_response(Response::new("one")).unwrap();
    // The pipelined request after it is not served.
    assert!(h.call(ServerSession::next_request).ready().is_none());
    assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
    let wire = h.take_wire();
    assert_eq!(heads(&wire).len(), 1, "{wire}");
    assert!(wire.contains("connection: close\r\n"), "{wire}");
    assert!(wire.ends_with("\r\n\r\none"), "{wire}");
    assert!(h.shut.is_some(), "the peer may still send: lingering close");
}

#[test]
fn a_queued_head_that_has_not_left_is_amended() {
    let mut h = server();
    h.send(get("/1") + &get("/2"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("one")).unwrap();
    // Queued, not written (output is corked until the session waits).
    h.s.shutdown(h.now);
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(h.with_peer_gone());
    let wire = h.take_wire();
    let heads = heads(&wire);
    assert_eq!(heads.len(), 1, "{wire}");
    assert!(heads[0].contains("connection: close"), "{wire}");
    assert!(heads[0].contains("content-length: 3"), "{wire}");
    assert!(wire.ends_with("\r\n\r\none"), "{wire}");
}

#[test]
fn a_streamed_head_queued_before_the_shutdown_is_amended() {
    let mut h = server();
    h.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\nabc");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_head(Response::new(())).unwrap();
    h.s.shutdown(h.now);
    // Reading the rest writes the head first: amended.
    assert_eq!(
        &h.call(ServerSession::read_data).ready().unwrap()[..],
        b"abc"
    );
    h.s.sender().send_data("abc").unwrap();
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    h.send("def");
    assert_eq!(
        &h.call(ServerSession::read_data).ready().unwrap()[..],
        b"def"
    );
    h.s.sender().send_data("def").unwrap();
    assert!(h.call(ServerSession::read_data).ready().is_none());
    h.s.sender().finish(None).unwrap();
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(h.with_peer_gone());
    let wire = h.take_wire();
    assert!(wire.contains("connection: close\r\n"), "{wire}");
    assert!(wire.contains("transfer-encoding: chunked\r\n"), "{wire}");
    assert!(
        wire.ends_with("3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n"),
        "{wire}"
    );
}

#[test]
fn a_head_that_began_to_leave_is_not_amended_but_the_connection_closes() {
    let mut h = server();
    h.send(get("/1"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender()
        .send_response(Response::new(Bytes::from(vec![b'x'; 10_000])))
        .unwrap();
    h.write_budget = Some(5);
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Write);
    // The client pipelines a second request; then the shutdown.
    h.send(get("/2"));
    h.s.shutdown(h.now);
    h.write_budget = None;
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(h.with_peer_gone());
    let wire = h.take_wire();
    let heads = heads(&wire);
    assert_eq!(heads.len(), 1, "/2 is not served");
    assert!(!heads[0].contains("connection: close"), "{wire}");
    assert_eq!(wire.len(), heads[0].len() + 4 + 10_000 + "HTTP/1.1 ".len());
    assert!(h.closed.is_some());
}

#[test]
fn pipelined_answers_queued_together_the_last_is_amended() {
    let mut h = server();
    h.send(get("/1") + &get("/2") + &get("/3"));
    for body in ["one", "two"] {
        h.call(ServerSession::next_request).ready().unwrap();
        h.s.sender().send_response(Response::new(body)).unwrap();
    }
    // Both answers are queued, none written; /3 waits in the buffer.
    assert!(h.wire.is_empty());
    h.s.shutdown(h.now);
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(h.with_peer_gone());
    let wire = h.take_wire();
    let heads = heads(&wire);
    assert_eq!(heads.len(), 2, "/3 is not served: {wire}");
    assert!(!heads[0].contains("connection: close"), "{wire}");
    assert!(heads[1].contains("connection: close"), "{wire}");
    assert!(wire.ends_with("\r\n\r\ntwo"), "{wire}");
}

#[test]
fn a_body_drained_after_an_early_answer_is_not_waited_for() {
    let mut h = server();
    h.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("early")).unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    let wire = h.take_wire();
    assert!(!wire.contains("connection: close"), "{wire}");
    // Draining the rest of the body, then the shutdown: no more draining.
    h.s.shutdown(h.now);
    assert!(h.call(ServerSession::next_request).ready().is_none());
    assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
    assert!(h.shut.is_some(), "lingering: the peer is still sending");
}

#[test]
fn a_half_received_head_is_still_answered_with_connection_close() {
    let mut h = server();
    h.send("GET / HTTP/1.1\r\n");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    h.s.shutdown(h.now);
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    h.send("Host: a\r\n\r\n");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("late")).unwrap();
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(h.with_peer_gone());
    let wire = h.take_wire();
    assert!(wire.contains("connection: close\r\n"), "{wire}");
}

/// An HTTP/1.0 client was promised `connection: keep-alive`; the amended
/// head says close instead, not both.
#[test]
fn shutdown_during_an_http10_keep_alive_exchange() {
    let mut h = server();
    h.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("old")).unwrap();
    h.s.shutdown(h.now);
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(h.with_peer_gone());
    let wire = h.take_wire();
    let head = &wire[..wire.find("\r\n\r\n").unwrap()];
    let connection: Vec<&str> = head
        .split("\r\n")
        .filter(|l| l.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    assert_eq!(connection, ["connection: close"], "{wire}");
}

// ------------------------------------------------------------ client

fn client() -> Harness<ClientSession> {
    let t0 = Instant::now();
    Harness::new(ClientSession::new(test_config(), t0), t0)
}

fn get_req(path: &str) -> Request<Bytes> {
    Request::get(path)
        .header("host", "a")
        .body(Bytes::new())
        .unwrap()
}

#[test]
fn an_idle_client_connection_closes_at_once() {
    let mut h = client();
    h.s.shutdown(h.now);
    assert!(h.s.is_closed());
    assert!(!h.s.is_reusable());
    assert_eq!(
        h.s.sender().send_request(get_req("/")),
        Err(UsageError::WrongState)
    );
}

#[test]
fn a_busy_client_connection_finishes_its_responses_then_closes() {
    let mut h = client();
    h.s.sender().send_request(get_req("/1")).unwrap();
    h.s.sender().send_request(get_req("/2")).unwrap();
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    h.s.shutdown(h.now);
    assert!(!h.s.is_reusable(), "no new request after a shutdown");
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na");
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb");
    let one = h.call(ClientSession::next_full_response).ready().unwrap();
    assert_eq!(one.body(), "a");
    let two = h.call(ClientSession::next_full_response).ready().unwrap();
    assert_eq!(two.body(), "b");
    assert!(h.s.is_closed(), "closed once the responses are in");
    assert_eq!(
        h.s.sender().send_request(get_req("/3")),
        Err(UsageError::WrongState)
    );
}

/// The peer closed its side: `close` does not linger.
trait PeerGone {
    fn with_peer_gone(&mut self) -> &mut Self;
}

impl PeerGone for Harness<ServerSession> {
    fn with_peer_gone(&mut self) -> &mut Self {
        self.inbox.clear();
        self.send_eof();
        self
    }
}
