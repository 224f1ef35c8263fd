//! Session timeouts, one scenario each: every deadline the session
//! announces is checked just before it (nothing happens) and at it (the
//! action of the table on `Timeouts`), on a virtual clock.
//!
//! The configuration (`session_support::test_config`): head 10 s, idle
//! 30 s, body 15 s, write 12 s, linger 2 s, buffers given back after 1 s.

use h1proto_test_support::session as session_support;

use std::time::Instant;

use bytes::Bytes;
use h1proto::{ClientSession, ErrorKind, Io, ServerSession, Session, SessionError, UsageError};
use http::{Request, Response};
use session_support::{Harness, Outcome, get, post, secs, test_config};

fn server() -> Harness<ServerSession> {
    let t0 = Instant::now();
    Harness::new(ServerSession::new(test_config(), t0), t0)
}

fn client() -> Harness<ClientSession> {
    let t0 = Instant::now();
    Harness::new(ClientSession::new(test_config(), t0), t0)
}

#[track_caller]
fn timeout_kind(err: SessionError) -> ErrorKind {
    match err {
        SessionError::Peer(e) => e.kind(),
        other => panic!("expected a peer error, got {other:?}"),
    }
}

/// Runs `close` to its end, which must not need the peer.
fn close_server(h: &mut Harness<ServerSession>) {
    match h.call(ServerSession::close) {
        Outcome::Ready(()) => {}
        other => panic!("close did not complete: {other:?}"),
    }
}

/// Answers one request with `body`, everything written.
fn answer(h: &mut Harness<ServerSession>, body: &'static str) {
    let req = h
        .call(ServerSession::next_request)
        .ready()
        .expect("a request");
    let _ = req;
    h.s.sender().send_response(Response::new(body)).unwrap();
}

// ------------------------------------------------------------ head

#[test]
fn a_new_connection_that_sends_nothing_is_closed_without_a_word() {
    let mut h = server();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    // The buffers go back first; the head deadline runs from the
    // connection, and giving the buffers back does not move it.
    assert_eq!(h.expire(), secs(1));
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(10));
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close_server(&mut h);
    assert!(h.wire.is_empty(), "nothing to answer: {}", h.take_wire());
    assert_eq!(h.shut, None, "no lingering for a peer that sent nothing");
    assert_eq!(h.closed, Some(h.t0 + secs(10)));
    assert!(h.s.is_closed());
}

/// An empty line is no part of a request (RFC 9112 section 2.2), nor is
/// the CR of one whose LF has not come: a connection that sent only that
/// is timed and closed as one that sent nothing, on its first request
/// (the head timeout, then a close without a 408) as between requests
/// (the idle timeout).
#[test]
fn an_empty_line_or_its_cr_alone_is_timed_as_nothing_sent() {
    for rest in ["\r", "\r\n"] {
        let mut h = server();
        h.send(rest);
        assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
        assert_eq!(h.expire(), secs(1), "{rest:?}: release");
        assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
        assert_eq!(h.expire(), secs(10), "{rest:?}");
        assert!(h.call(ServerSession::next_request).ready().is_none());
        close_server(&mut h);
        assert!(h.wire.is_empty(), "{rest:?}: {}", h.take_wire());

        let mut h = server();
        h.send(get("/1"));
        answer(&mut h, "one");
        h.send(rest);
        assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
        assert!(h.take_wire().starts_with("HTTP/1.1 200 OK"));
        assert_eq!(h.expire(), secs(1), "{rest:?}: release");
        assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
        assert_eq!(h.expire(), secs(30), "{rest:?}: the idle timeout");
        assert!(h.call(ServerSession::next_request).ready().is_none());
        assert!(h.wire.is_empty(), "{rest:?}: {}", h.take_wire());
    }
}

#[test]
fn a_half_sent_first_head_gets_408_when_the_connection_is_10_s_old() {
    let mut h = server();
    h.advance_to(h.t0 + secs(3));
    h.send("GET / HTTP/1.1\r\nHo");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    // From the connection on, not from the first byte (3 s).
    assert_eq!(h.deadline(), Some(secs(4)), "release first");
    assert_eq!(h.expire(), secs(4));
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(10));
    let err = h.call(ServerSession::next_request).err();
    assert_eq!(timeout_kind(err), ErrorKind::HeadTimeout);
    // The 408 is written, then the lingering close: shut down, read and
    // discard until the peer closes or the linger time is over.
    assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
    let wire = h.take_wire();
    assert!(
        wire.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
        "{wire}"
    );
    assert!(wire.contains("connection: close\r\n"), "{wire}");
    assert_eq!(h.shut, Some(h.t0 + secs(10)));
    assert_eq!(h.expire(), secs(12));
    close_server(&mut h);
    assert_eq!(h.closed, Some(h.t0 + secs(12)));
}

#[test]
fn a_half_sent_later_head_has_10_s_from_its_first_byte() {
    let mut h = server();
    h.send(get("/1"));
    answer(&mut h, "one");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert!(h.take_wire().starts_with("HTTP/1.1 200 OK"));
    h.advance_to(h.t0 + secs(5));
    h.send("GET /2 HTTP/1.1\r\n");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(6), "release");
    // More bytes do not move the head deadline.
    h.advance_to(h.t0 + secs(9));
    h.send("Host: a\r\n");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(h.deadline(), Some(secs(10)), "release again, after a read");
    assert_eq!(h.expire(), secs(10));
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(15));
    let err = h.call(ServerSession::next_request).err();
    assert_eq!(timeout_kind(err), ErrorKind::HeadTimeout);
    close_server_until_linger(&mut h);
    let wire = h.take_wire();
    assert!(wire.starts_with("HTTP/1.1 408 "), "{wire}");
}

/// A head whose first bytes came with the previous request (pipelined)
/// has the head timeout from when the session starts waiting for the
/// rest, and bytes trickling in do not move it (a slowloris peer).
#[test]
fn a_pipelined_half_head_cannot_be_stretched_by_trickling_bytes() {
    let mut h = server();
    h.send(get("/1") + "GET /2 HTTP/1.1\r\n");
    answer(&mut h, "one");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert!(h.take_wire().starts_with("HTTP/1.1 200 OK"));
    for t in [3, 6, 9] {
        h.advance_to(h.t0 + secs(t));
        h.send("X");
        assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    }
    // Release at 10 s (1 s after the last read), then the head at 10 s:
    // the head wins a tie.
    assert_eq!(h.deadline(), Some(secs(10)));
    assert_eq!(h.expire(), secs(10));
    let err = h.call(ServerSession::next_request).err();
    assert_eq!(timeout_kind(err), ErrorKind::HeadTimeout);
    close_server_until_linger(&mut h);
    assert!(h.take_wire().starts_with("HTTP/1.1 408 "));
}

/// The same when the next head's first bytes came with the end of a
/// request body.
#[test]
fn a_half_head_read_with_the_previous_body_has_a_fixed_deadline() {
    let mut h = server();
    h.send(post("/1", "hello") + "GET /2 HT");
    let req = h.call(ServerSession::next_full_request).ready().unwrap();
    assert_eq!(req.body(), "hello");
    h.advance_to(h.t0 + secs(2));
    h.s.sender().send_response(Response::new("ok")).unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    h.advance_to(h.t0 + secs(8));
    h.send("TP/1.1\r\n");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(9), "release");
    assert_eq!(h.expire(), secs(12), "2 s (waiting began) + 10 s");
    let err = h.call(ServerSession::next_request).err();
    assert_eq!(timeout_kind(err), ErrorKind::HeadTimeout);
}

/// And when the answer before it is past the flush threshold, so that it
/// is written before the session even looks at the next head.
#[test]
fn a_half_head_behind_a_large_answer_counts_from_the_first_write() {
    let mut h = server();
    h.send(post("/1", "hello") + "GET /2 HT");
    h.write_budget = Some(1000);
    h.call(ServerSession::next_full_request).ready().unwrap();
    h.s.sender()
        .send_response(Response::new(Bytes::from(vec![b'x'; 100_000])))
        .unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Write);
    // The peer is slow to take the answer: 3 s.
    h.advance_to(h.t0 + secs(3));
    h.write_budget = None;
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert!(h.take_wire().ends_with(&"x".repeat(100)));
    assert_eq!(h.deadline(), Some(secs(4)), "release");
    assert_eq!(h.expire(), secs(4));
    assert_eq!(h.expire(), secs(10), "from when the answer began to leave");
    let err = h.call(ServerSession::next_request).err();
    assert_eq!(timeout_kind(err), ErrorKind::HeadTimeout);
}

fn close_server_until_linger(h: &mut Harness<ServerSession>) {
    assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
    assert!(h.shut.is_some(), "lingering");
}

// ------------------------------------------------------------ idle

#[test]
fn an_idle_keep_alive_connection_is_closed_after_30_s_without_a_word() {
    let mut h = server();
    h.advance_to(h.t0 + secs(2));
    h.send(get("/1"));
    answer(&mut h, "one");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert!(h.take_wire().starts_with("HTTP/1.1 200 OK"));
    assert_eq!(h.expire(), secs(3), "release");
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(
        h.expire(),
        secs(32),
        "idle from the end of the exchange, not moved by the release"
    );
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close_server(&mut h);
    assert!(h.wire.is_empty());
    assert_eq!(h.shut, None);
    assert_eq!(h.closed, Some(h.t0 + secs(32)));
}

// ------------------------------------------------------------ body

#[test]
fn a_stalled_body_gets_408_while_no_response_has_left() {
    let mut h = server();
    h.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabcd");
    h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(
        &h.call(ServerSession::read_data).ready().unwrap()[..],
        b"abcd"
    );
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(1), "release");
    // Progress moves the body deadline: 15 s from the last read.
    h.advance_to(h.t0 + secs(5));
    h.send("ef");
    assert_eq!(
        &h.call(ServerSession::read_data).ready().unwrap()[..],
        b"ef"
    );
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(6), "release");
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(20), "5 s + 15 s, not moved by the release");
    let err = h.call(ServerSession::read_data).err();
    assert_eq!(timeout_kind(err), ErrorKind::BodyTimeout);
    close_server_until_linger(&mut h);
    let wire = h.take_wire();
    assert!(
        wire.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
        "{wire}"
    );
}

#[test]
fn a_stalled_body_after_the_response_head_left_is_a_plain_close() {
    let mut h = server();
    h.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabcd");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_head(Response::new(())).unwrap();
    assert_eq!(
        &h.call(ServerSession::read_data).ready().unwrap()[..],
        b"abcd"
    );
    h.s.sender().send_data("abcd").unwrap();
    // Waiting for more body: what is queued is written first.
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    let head = h.take_wire();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert_eq!(h.expire(), secs(1));
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(15));
    let err = h.call(ServerSession::read_data).err();
    assert_eq!(timeout_kind(err), ErrorKind::BodyTimeout);
    close_server_until_linger(&mut h);
    assert_eq!(h.take_wire(), "", "no 408 after a 200 began to leave");
}

#[test]
fn a_body_drained_after_an_early_response_is_cut_after_15_s_without_progress() {
    let mut h = server();
    h.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabcd");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("early")).unwrap();
    // The session drains the body the application left.
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert!(h.take_wire().ends_with("\r\n\r\nearly"));
    assert_eq!(h.expire(), secs(1));
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(15));
    let err = h.call(ServerSession::next_request).err();
    assert_eq!(timeout_kind(err), ErrorKind::BodyTimeout);
    close_server_until_linger(&mut h);
    assert_eq!(h.take_wire(), "", "the answer has left: nothing more");
}

// ------------------------------------------------------------ write

#[test]
fn a_peer_that_stops_reading_is_cut_12_s_after_the_last_write_that_took_bytes() {
    let mut h = server();
    h.send(get("/big"));
    h.write_budget = Some(1000);
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender()
        .send_response(Response::new(Bytes::from(vec![b'x'; 100_000])))
        .unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Write);
    assert_eq!(h.wire.len(), 1000);
    // The peer takes 500 more at 5 s: the deadline moves.
    h.advance_to(h.t0 + secs(5));
    h.write_budget = Some(500);
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Write);
    assert_eq!(h.wire.len(), 1500);
    assert_eq!(h.expire(), secs(17));
    let err = h.call(ServerSession::next_request).err();
    assert_eq!(timeout_kind(err), ErrorKind::WriteTimeout);
    // Closed at once: nothing more is written, no lingering.
    close_server(&mut h);
    assert_eq!(h.wire.len(), 1500);
    assert_eq!(h.shut, None);
    assert_eq!(h.closed, Some(h.t0 + secs(17)));
}

/// A streaming sender that only sends (no read would report the timeout)
/// is stopped at its next send after the write timeout: the connection is
/// over, and nothing more is queued for a peer that does not read.
#[test]
fn a_sender_is_stopped_after_the_write_timeout() {
    let mut h = server();
    h.send(get("/events"));
    h.write_budget = Some(0);
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_head(Response::new(())).unwrap();
    let piece = Bytes::from(vec![b'e'; 10_000]);
    let mut sent = 0;
    let err = loop {
        h.s.sender().send_data(piece.clone()).unwrap();
        sent += 1;
        assert!(sent < 100, "still sending after {:?}", h.elapsed());
        if let Outcome::Blocked(io) = h.call(ServerSession::poll_flush) {
            assert_eq!(io, Io::Write);
            h.expire();
            // The call that waited, made again, says why it ends.
            break h.call(ServerSession::poll_flush).err();
        }
    };
    assert_eq!(timeout_kind(err), ErrorKind::WriteTimeout);
    assert_eq!(
        h.s.sender().send_data(piece.clone()),
        Err(UsageError::WrongState)
    );
    assert_eq!(
        h.elapsed(),
        secs(12),
        "one write timeout, not one per flush"
    );
    // Reported once: the next call finds the connection over.
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close_server(&mut h);
    assert_eq!(h.shut, None);
    assert!(h.wire.is_empty());
}

/// The same for a client streaming a request body to a server that stopped
/// reading: after the write timeout nothing more is queued.
#[test]
fn a_client_sender_is_stopped_after_the_write_timeout() {
    let mut h = client();
    h.write_budget = Some(0);
    let req = Request::post("/upload")
        .header("host", "a")
        .header("transfer-encoding", "chunked")
        .body(())
        .unwrap();
    h.s.sender().send_head(req).unwrap();
    let piece = Bytes::from(vec![b'u'; 10_000]);
    let mut sent = 0;
    let err = loop {
        h.s.sender().send_data(piece.clone()).unwrap();
        sent += 1;
        assert!(sent < 100, "still queueing after {:?}", h.elapsed());
        if let Outcome::Blocked(io) = h.call(ClientSession::poll_flush) {
            assert_eq!(io, Io::Write);
            h.expire();
            // The call that waited, made again, says why it ends.
            break h.call(ClientSession::poll_flush).err();
        }
    };
    assert_eq!(timeout_kind(err), ErrorKind::WriteTimeout);
    assert_eq!(
        h.s.sender().send_data(piece.clone()),
        Err(UsageError::WrongState)
    );
    assert_eq!(h.elapsed(), secs(12));
    assert!(h.s.output().len() <= 64 * 1024 + 10_100, "bounded");
    assert!(h.call(ClientSession::next_response).ready().is_none());
}

// ------------------------------------------------------------ linger

const LAST: &str = "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";

fn closing_after_an_answer() -> Harness<ServerSession> {
    let mut h = server();
    h.send(LAST);
    answer(&mut h, "bye");
    assert!(h.call(ServerSession::next_request).ready().is_none());
    h
}

#[test]
fn linger_ends_after_2_s() {
    let mut h = closing_after_an_answer();
    assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
    assert!(h.take_wire().ends_with("bye"));
    assert_eq!(h.shut, Some(h.t0));
    // The peer keeps sending a little: read and discarded, the end stays.
    h.advance_to(h.t0 + secs(1));
    h.send("more bytes");
    assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
    assert_eq!(h.bytes_read, LAST.len() + 10);
    assert_eq!(h.expire(), secs(2));
    close_server(&mut h);
    assert_eq!(h.closed, Some(h.t0 + secs(2)));
}

#[test]
fn linger_ends_when_the_peer_closes() {
    let mut h = closing_after_an_answer();
    assert_eq!(h.call(ServerSession::close).blocked(), Io::Read);
    h.advance_to(h.t0 + secs(1));
    h.send_eof();
    close_server(&mut h);
    assert_eq!(h.closed, Some(h.t0 + secs(1)));
}

#[test]
fn linger_reads_at_most_linger_bytes() {
    let t0 = Instant::now();
    let mut config = test_config();
    config.linger_bytes = 1000;
    let mut h = Harness::new(ServerSession::new(config, t0), t0);
    h.send(LAST);
    answer(&mut h, "bye");
    assert!(h.call(ServerSession::next_request).ready().is_none());
    h.read_size = 300;
    h.send(vec![b'z'; 5000]);
    close_server(&mut h);
    assert!(h.closed.is_some());
    // The request, then reads of 300 until 1000 are discarded.
    assert_eq!(h.bytes_read - LAST.len(), 1200);
    assert_eq!(h.closed, Some(t0), "no time spent");
}

#[test]
fn a_peer_that_half_closed_gets_no_linger() {
    let mut h = server();
    h.send(get("/"));
    h.send_eof();
    answer(&mut h, "last");
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close_server(&mut h);
    assert!(h.take_wire().ends_with("last"));
    assert_eq!(h.shut, None);
    assert!(h.closed.is_some());
}

// ------------------------------------------------------------ client

#[test]
fn client_response_head_timeout_runs_from_the_request_written() {
    let mut h = client();
    h.advance_to(h.t0 + secs(4));
    h.s.sender()
        .send_request(
            Request::get("/")
                .header("host", "a")
                .body(Bytes::new())
                .unwrap(),
        )
        .unwrap();
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    assert!(h.take_wire().starts_with("GET / HTTP/1.1\r\n"));
    // The buffers were given back at 1 s (idle); the head is due at 14 s.
    assert_eq!(h.deadline(), Some(secs(14)));
    // Part of the head does not move the deadline.
    h.advance_to(h.t0 + secs(8));
    h.send("HTTP/1.1 200 OK\r\n");
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(9), "release");
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(14));
    let err = h.call(ClientSession::next_response).err();
    assert_eq!(timeout_kind(err), ErrorKind::ResponseTimeout);
    assert!(h.s.is_closed());
    h.call(ClientSession::close).ready();
    assert_eq!(h.closed, Some(h.t0 + secs(14)));
}

/// While the request body is still going out, the response head's time
/// has not begun: a server may read the whole body before it answers. An
/// upload that takes longer than the head timeout (10 s here), with the
/// caller waiting for an answer between its pieces, is not cut; the
/// head's 10 s start once the request is out.
#[test]
fn client_head_timeout_starts_once_the_request_body_is_out() {
    let mut h = client();
    let req = Request::post("/up")
        .header("host", "a")
        .header("transfer-encoding", "chunked")
        .body(())
        .unwrap();
    h.s.sender().send_head(req).unwrap();
    for piece in 1..=4u64 {
        h.s.sender().send_data(vec![b'x'; 10]).unwrap();
        // Waiting for an early answer between two pieces.
        assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
        h.advance_to(h.t0 + secs(6 * piece));
        assert!(!h.s.is_closed(), "cut after {} s of upload", 6 * piece);
    }
    h.s.sender().finish(None).unwrap();
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    assert!(h.take_wire().ends_with("a\r\nxxxxxxxxxx\r\n0\r\n\r\n"));
    // Out at 24 s: the head is due at 34 s.
    assert_eq!(h.expire(), secs(34));
    let err = h.call(ClientSession::next_response).err();
    assert_eq!(timeout_kind(err), ErrorKind::ResponseTimeout);
}

/// `next_response` skips what is left of the previous body; the time that
/// takes is the body's, and the next head has its own 10 s from when the
/// session starts waiting for it.
#[test]
fn client_head_timeout_does_not_count_skipping_the_previous_body() {
    let mut h = client();
    let get = || {
        Request::get("/")
            .header("host", "a")
            .body(Bytes::new())
            .unwrap()
    };
    h.s.sender().send_request(get()).unwrap();
    h.s.sender().send_request(get()).unwrap();
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc");
    h.call(ClientSession::next_response).ready().unwrap();
    // The application does not want the body: the next call skips it.
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    h.advance_to(h.t0 + secs(8));
    h.send("def");
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(9), "release");
    assert_eq!(h.expire(), secs(18), "8 s + 10 s");
    let err = h.call(ClientSession::next_response).err();
    assert_eq!(timeout_kind(err), ErrorKind::ResponseTimeout);
}

#[test]
fn client_body_timeout_runs_from_the_last_read() {
    let mut h = client();
    h.s.sender()
        .send_request(
            Request::get("/")
                .header("host", "a")
                .body(Bytes::new())
                .unwrap(),
        )
        .unwrap();
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
    h.call(ClientSession::next_response).ready().unwrap();
    assert_eq!(
        &h.call(ClientSession::read_data).ready().unwrap()[..],
        b"abc"
    );
    assert_eq!(h.call(ClientSession::read_data).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(1), "release");
    assert_eq!(h.call(ClientSession::read_data).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(15), "not moved by the release");
    let err = h.call(ClientSession::read_data).err();
    assert_eq!(timeout_kind(err), ErrorKind::BodyTimeout);
}

#[test]
fn client_idle_pool_timeout_with_nothing_in_flight() {
    let mut h = client();
    // A new connection with no request is idle from the start.
    assert_eq!(h.expire(), secs(1), "release");
    h.advance_to(h.t0 + secs(3));
    h.s.sender()
        .send_request(
            Request::get("/")
                .header("host", "a")
                .body(Bytes::new())
                .unwrap(),
        )
        .unwrap();
    assert_eq!(h.deadline(), None, "a queued request: not idle");
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let res = h.call(ClientSession::next_full_response).ready().unwrap();
    assert_eq!(res.body(), "ok");
    assert!(h.s.is_reusable());
    // Idle from the end of the response: 3 s + 30 s.
    assert_eq!(h.expire(), secs(4), "release");
    assert_eq!(h.expire(), secs(33));
    assert!(h.s.is_closed());
    assert!(!h.s.is_reusable());
    assert_eq!(h.deadline(), None);
    let again = Request::get("/")
        .header("host", "a")
        .body(Bytes::new())
        .unwrap();
    assert_eq!(
        h.s.sender().send_request(again),
        Err(UsageError::WrongState)
    );
}

#[test]
fn client_write_timeout_when_the_server_stops_reading() {
    let mut h = client();
    h.write_budget = Some(100);
    let body = Bytes::from(vec![b'b'; 50_000]);
    h.s.sender()
        .send_request(Request::post("/").header("host", "a").body(body).unwrap())
        .unwrap();
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Write);
    assert_eq!(h.expire(), secs(12));
    let err = h.call(ClientSession::next_response).err();
    assert_eq!(timeout_kind(err), ErrorKind::WriteTimeout);
}
