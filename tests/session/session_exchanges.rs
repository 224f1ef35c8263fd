//! Session exchanges, one scenario each: error responses that replace a
//! queued answer, keep-alive after a long body read in full, `100
//! Continue`, pipelining on both sides with bounded output, and what a
//! client keeps of interim responses and trailers.

use h1proto_test_support::session as session_support;

use std::time::Instant;

use bytes::Bytes;
use bytes::BytesMut;
use h1proto::{
    ClientConnection, ClientSession, CloseReason, Config, ErrorKind, Event, InterimResponses, Io,
    KeepAlive, ServerSession, Session, SessionError, TrailerFields,
};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use session_support::{Harness, Outcome, get, post, test_config};

fn server() -> Harness<ServerSession> {
    let t0 = Instant::now();
    Harness::new(ServerSession::new(test_config(), t0), t0)
}

fn client() -> Harness<ClientSession> {
    let t0 = Instant::now();
    Harness::new(ClientSession::new(test_config(), t0), t0)
}

fn close(h: &mut Harness<ServerSession>) {
    h.inbox.clear();
    h.send_eof();
    match h.call(ServerSession::close) {
        Outcome::Ready(()) => {}
        other => panic!("close: {other:?}"),
    }
}

/// The status lines in `wire`: "HTTP/1.1 " and three digits, to the end
/// of the line.
fn status_lines(wire: &str) -> Vec<&str> {
    wire.match_indices("HTTP/1.1 ")
        .map(|(at, _)| &wire[at..])
        .filter(|rest| rest.as_bytes()[9..12].iter().all(u8::is_ascii_digit))
        .map(|rest| &rest[..rest.find("\r\n").unwrap()])
        .collect()
}

// ------------------------------------------------- errors replace answers

#[test]
fn a_malformed_body_replaces_a_queued_streamed_head_with_400() {
    let mut h = server();
    h.send(
        "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n",
    );
    h.call(ServerSession::next_request).ready().unwrap();
    // An echo queues its head before it reads the body.
    h.s.sender().send_head(Response::new(())).unwrap();
    assert_eq!(
        &h.call(ServerSession::read_data).ready().unwrap()[..],
        b"abc"
    );
    h.s.sender().send_data("abc").unwrap();
    let err = h.call(ServerSession::read_data).err();
    let SessionError::Peer(err) = err else {
        panic!("{err:?}")
    };
    assert_eq!(err.status(), 400);
    close(&mut h);
    let wire = h.take_wire();
    assert_eq!(status_lines(&wire), ["HTTP/1.1 400 Bad Request"], "{wire}");
    assert!(wire.contains("connection: close\r\n"), "{wire}");
    assert!(!wire.contains("abc"), "the echoed data went with its head");
}

#[test]
fn an_error_after_a_head_that_left_cannot_be_answered() {
    let mut h = server();
    h.send("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_head(Response::new(())).unwrap();
    assert_eq!(
        &h.call(ServerSession::read_data).ready().unwrap()[..],
        b"abc"
    );
    // Waiting for more writes the head.
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    h.send("zz\r\n");
    h.call(ServerSession::read_data).err();
    close(&mut h);
    let wire = h.take_wire();
    assert_eq!(status_lines(&wire), ["HTTP/1.1 200 OK"], "{wire}");
}

#[test]
fn a_bad_pipelined_request_after_a_queued_answer_gets_its_own_400() {
    let mut h = server();
    h.send(get("/1") + "GET /2 HTTP/1.1\r\nBad Field: x\r\n\r\n");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("one")).unwrap();
    let err = h.call(ServerSession::next_request).err();
    let SessionError::Peer(err) = err else {
        panic!("{err:?}")
    };
    assert_eq!(err.kind(), ErrorKind::InvalidFieldName);
    close(&mut h);
    let wire = h.take_wire();
    // The answer to /1 is whole; the error follows it.
    assert_eq!(
        status_lines(&wire),
        ["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request"],
        "{wire}"
    );
}

// ------------------------------------------------- keep-alive, long bodies

fn long_body_config() -> h1proto::Config {
    let mut config = test_config();
    config.max_drain_bytes = 1000;
    config
}

#[test]
fn answering_while_reading_a_long_body_in_full_keeps_the_connection() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(long_body_config(), t0), t0);
    h.read_size = 700;
    let body = "x".repeat(5000);
    h.send(post("/1", &body) + &get("/2"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_head(Response::new(())).unwrap();
    let mut echoed = 0;
    while let Some(data) = h.call(ServerSession::read_data).ready() {
        echoed += data.len();
        h.s.sender().send_data(data).unwrap();
    }
    assert_eq!(echoed, 5000);
    h.s.sender().finish(None).unwrap();
    let second = h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(second.uri(), "/2", "the connection is kept");
    h.s.sender().send_response(Response::new("two")).unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    let wire = h.take_wire();
    assert!(!wire.contains("connection: close"), "{wire}");
    assert_eq!(status_lines(&wire).len(), 2);
}

#[test]
fn answering_whole_before_a_long_body_closes() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(long_body_config(), t0), t0);
    h.send(post("/1", &"x".repeat(5000)) + &get("/2"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("early")).unwrap();
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(&mut h);
    let wire = h.take_wire();
    assert_eq!(status_lines(&wire).len(), 1);
    assert!(wire.contains("connection: close\r\n"), "{wire}");
}

#[test]
fn answering_before_a_short_body_drains_it_and_keeps_the_connection() {
    let mut h = server();
    h.send(post("/1", "0123456789") + &get("/2"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("early")).unwrap();
    let second = h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(second.uri(), "/2");
}

#[test]
fn a_request_without_a_body_is_read_to_its_end_with_its_head() {
    let mut h = server();
    h.send(get("/1") + &post("/2", "ab") + &get("/3"));
    h.call(ServerSession::next_request).ready().unwrap();
    assert!(h.s.is_request_body_read());
    assert_eq!(h.call(ServerSession::read_data).ready(), None);
    h.s.sender().send_response(Response::new("1")).unwrap();
    h.call(ServerSession::next_request).ready().unwrap();
    assert!(!h.s.is_request_body_read());
    h.s.sender().send_response(Response::new("2")).unwrap();
    let third = h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(third.uri(), "/3");
    assert!(h.s.is_request_body_read());
    let body = h.call(ServerSession::read_body).ready();
    assert!(body.is_empty());
}

// ------------------------------------------------- 100 Continue

#[test]
fn reading_the_body_sends_100_continue_first() {
    let mut h = server();
    h.send("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    h.call(ServerSession::next_request).ready().unwrap();
    assert!(h.s.connection().is_waiting_for_continue());
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    assert_eq!(h.take_wire(), "HTTP/1.1 100 Continue\r\n\r\n");
    h.send("hello");
    assert_eq!(h.call(ServerSession::read_body).ready(), "hello");
    h.s.sender().send_response(Response::new("ok")).unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert!(h.take_wire().starts_with("HTTP/1.1 200 OK\r\n"));
}

#[test]
fn answering_first_refuses_the_body_and_closes() {
    let mut h = server();
    h.send("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_response(Response::new("no")).unwrap();
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(&mut h);
    let wire = h.take_wire();
    assert_eq!(status_lines(&wire), ["HTTP/1.1 200 OK"]);
    assert!(wire.contains("connection: close\r\n"), "{wire}");
}

/// An echo in the natural order: the response head queued, then the body
/// read. `100 Continue` goes out ahead of the head, the body is read and
/// echoed, and the connection serves the next request. What the session
/// wrote is decoded back by a client connection.
#[test]
fn an_echo_that_queues_its_head_first_still_gets_100_continue() {
    let mut h = server();
    let head =
        "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n";
    h.send(head);
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_head(Response::new(())).unwrap();
    assert!(h.s.connection().is_waiting_for_continue());
    // Asking for the body writes `100 Continue`, then the queued head.
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    assert!(!h.s.connection().is_waiting_for_continue());
    let mut wire = h.take_wire();
    assert_eq!(
        wire,
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    h.send("hello");
    while let Some(data) = h.call(ServerSession::read_data).ready() {
        h.s.sender().send_data(data).unwrap();
    }
    h.s.sender().finish(None).unwrap();
    assert_eq!(h.s.connection().keep_alive(), KeepAlive::Reusable);
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    wire.push_str(&h.take_wire());

    // Decoded back: 100, then the echo, and the connection is reusable.
    let mut client = ClientConnection::new(Config::default());
    let req = Request::post("/echo")
        .header("host", "a")
        .header("expect", "100-continue")
        .header("content-length", "5")
        .body(())
        .unwrap();
    client.sender().send_head(req).unwrap();
    let mut buf = BytesMut::from(wire.as_bytes());
    let mut statuses = Vec::new();
    let mut body = Vec::new();
    let mut end = None;
    while let Some(ev) = client.poll_event(&mut buf).unwrap() {
        match ev {
            Event::Interim(res) | Event::Head { head: res, .. } => statuses.push(res.status()),
            Event::Data(data) => body.extend_from_slice(&data),
            Event::End(keep_alive) => end = Some(keep_alive),
            _ => {}
        }
        if statuses == [StatusCode::CONTINUE] {
            // Only now does the client send its body.
            client.sender().send_data("hello").unwrap();
            client.sender().finish(None).unwrap();
        }
    }
    assert_eq!(statuses, [StatusCode::CONTINUE, StatusCode::OK]);
    assert_eq!(body, b"hello");
    assert_eq!(end, Some(KeepAlive::Reusable));

    // The same connection serves the next request.
    h.send(get("/next"));
    let next = h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(next.uri(), "/next");
}

/// A head already written when the body is asked for: too late for
/// `100 Continue`, so the body is refused and the connection closes after
/// the response, as after a complete response.
#[test]
fn an_echo_whose_head_was_written_first_refuses_the_body() {
    let mut h = server();
    h.send("POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_head(Response::new(())).unwrap();
    h.call(ServerSession::poll_write_all).ready();
    assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
    assert!(!h.s.connection().is_waiting_for_continue());
    assert_eq!(
        h.s.connection().keep_alive(),
        KeepAlive::Close(CloseReason::RejectedContinue)
    );
    h.s.sender().finish(None).unwrap();
    assert!(h.call(ServerSession::next_request).ready().is_none());
    close(&mut h);
    let wire = h.take_wire();
    assert_eq!(status_lines(&wire), ["HTTP/1.1 200 OK"], "{wire}");
}

/// A driver that owns the output while the kernel writes it
/// (`lend_output`): the head may be on the wire, so asking for the body
/// then refuses it. Given back unwritten (a cancelled write), the head has
/// not left, and `100 Continue` still goes ahead of it.
#[test]
fn a_head_lent_to_the_driver_has_left_until_given_back_unwritten() {
    for written in [true, false] {
        let mut h = server();
        h.send(
            "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n",
        );
        h.call(ServerSession::next_request).ready().unwrap();
        h.s.sender().send_head(Response::new(())).unwrap();
        let lent = h.s.lend_output();
        let len: usize = lent.iter().map(Bytes::len).sum();
        assert!(len > 0);
        if written {
            // The body is asked for while the write is in flight.
            let _ = h.s.read_data(h.now).unwrap();
            assert!(!h.s.connection().is_waiting_for_continue());
            assert_eq!(
                h.s.connection().keep_alive(),
                KeepAlive::Close(CloseReason::RejectedContinue)
            );
            let now = h.now;
            h.s.return_output(lent);
            h.s.handle_write(len, now);
            assert!(h.s.output().is_empty(), "no 100 Continue after the head");
        } else {
            let now = h.now;
            h.s.return_output(lent);
            h.s.handle_write(0, now);
            assert_eq!(h.call(ServerSession::read_data).blocked(), Io::Read);
            assert!(!h.s.connection().is_waiting_for_continue());
            assert_eq!(h.s.connection().keep_alive(), KeepAlive::Reusable);
            assert_eq!(
                h.take_wire(),
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
            );
        }
    }
}

// ------------------------------------------------- pipelining

/// Answers to pipelined requests leave together, but never more than
/// `flush_threshold` plus one answer is held: the output is written
/// before the next request is taken once it is past the threshold.
#[test]
fn pipelined_answers_are_held_within_the_flush_threshold_plus_one() {
    let mut h = server();
    let requests: String = (0..50).map(|i| get(&format!("/{i}"))).collect();
    h.send(requests);
    let threshold = test_config().flush_threshold;
    let answer = Bytes::from(vec![b'x'; 10_000]);
    let mut most = 0;
    for i in 0..50 {
        let req = h.call(ServerSession::next_request).ready().unwrap();
        assert_eq!(req.uri().path(), format!("/{i}"));
        h.s.sender()
            .send_response(Response::new(answer.clone()))
            .unwrap();
        most = most.max(h.s.output().len());
    }
    assert!(
        most <= threshold + 10_100,
        "{most} bytes queued, threshold {threshold}"
    );
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(status_lines(&h.take_wire()).len(), 50);
}

#[test]
fn small_pipelined_answers_leave_in_one_write() {
    let mut h = server();
    h.send(get("/1") + &get("/2") + &get("/3"));
    for _ in 0..3 {
        h.call(ServerSession::next_request).ready().unwrap();
        h.s.sender().send_response(Response::new("hi")).unwrap();
        assert!(h.wire.is_empty(), "nothing leaves before the session waits");
    }
    let mut writes = 0;
    loop {
        match h.s.next_request(h.now).unwrap() {
            h1proto::Step::Io(Io::Write) => {
                writes += 1;
                assert!(h.perform(Io::Write));
            }
            h1proto::Step::Io(Io::Read) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(writes, 1);
    assert_eq!(status_lines(&h.take_wire()).len(), 3);
}

#[test]
fn a_paused_stream_is_written_out_on_demand() {
    let mut h = server();
    h.send(get("/events"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender().send_head(Response::new(())).unwrap();
    h.s.sender().send_data("event 1\n").unwrap();
    // Below the threshold: backpressure asks for nothing...
    h.call(ServerSession::poll_flush).ready();
    assert!(h.wire.is_empty(), "corked");
    // ...but before waiting for a slow source, the application pushes out
    // what it has, head included.
    h.call(ServerSession::poll_write_all).ready();
    let wire = h.take_wire();
    assert!(wire.starts_with("HTTP/1.1 200 OK\r\n"), "{wire}");
    assert!(wire.ends_with("\r\n\r\n8\r\nevent 1\n\r\n"), "{wire}");
    h.call(ServerSession::poll_write_all).ready();
    assert!(h.wire.is_empty(), "nothing more to write");
}

fn get_req(path: &str) -> Request<Bytes> {
    Request::get(path)
        .header("host", "a")
        .body(Bytes::new())
        .unwrap()
}

#[test]
fn a_client_pipelines_and_reads_the_responses_in_order() {
    let mut h = client();
    for path in ["/1", "/2", "/3"] {
        h.s.sender().send_request(get_req(path)).unwrap();
    }
    h.s.sender()
        .send_request(
            Request::head("/4")
                .header("host", "a")
                .body(Bytes::new())
                .unwrap(),
        )
        .unwrap();
    // All four leave in one write before the first response is awaited.
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    let wire = h.take_wire();
    assert_eq!(wire.matches(" HTTP/1.1\r\n").count(), 4);
    assert_eq!(h.s.connection().requests_in_flight(), 4);
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na");
    h.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n");
    h.send("HTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nc");
    // The answer to HEAD announces a length and has no body.
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
    for (status, body) in [(200, "a"), (200, "b"), (404, "c"), (200, "")] {
        let res = h.call(ClientSession::next_full_response).ready().unwrap();
        assert_eq!(res.status(), status);
        assert_eq!(res.body(), body);
    }
    assert!(h.call(ClientSession::next_full_response).ready().is_none());
    assert!(h.s.is_reusable());
}

#[test]
fn a_client_keeps_interim_responses_and_trailers_in_the_extensions() {
    let mut h = client();
    h.s.sender().send_request(get_req("/")).unwrap();
    h.send("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n");
    h.send("HTTP/1.1 102 Processing\r\n\r\n");
    h.send(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-sum\r\n\r\n\
         2\r\nhi\r\n0\r\nx-sum: 2\r\n\r\n",
    );
    let res = h.call(ClientSession::next_full_response).ready().unwrap();
    assert_eq!(res.body(), "hi");
    let interim = &res.extensions().get::<InterimResponses>().unwrap().0;
    let statuses: Vec<u16> = interim.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(statuses, [103, 102]);
    assert_eq!(interim[0].headers()["link"], "</a.css>");
    let trailers = &res.extensions().get::<TrailerFields>().unwrap().0;
    assert_eq!(trailers["x-sum"], "2");
    // The next response starts with none.
    h.s.sender().send_request(get_req("/2")).unwrap();
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    let res = h.call(ClientSession::next_full_response).ready().unwrap();
    assert!(res.extensions().get::<InterimResponses>().is_none());
    assert!(res.extensions().get::<TrailerFields>().is_none());
}

/// Bytes that come while no request is in flight answer none (a server's
/// 408 before it closes an idle connection): a pool must not hand the
/// connection out, and a request sent anyway must not take them for its
/// answer (response queue poisoning, which `ClientConnection` refuses as
/// `UnsolicitedResponse` too). In reads of every size.
#[test]
fn bytes_read_while_idle_answer_no_later_request() {
    let stale = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    for read_size in 1..=stale.len() {
        let mut h = client();
        h.s.sender().send_request(get_req("/1")).unwrap();
        h.send("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na");
        let res = h.call(ClientSession::next_full_response).ready().unwrap();
        assert_eq!(res.status(), 200);
        assert!(h.s.is_reusable() && h.s.wants_read());
        h.read_size = read_size;
        h.send(stale);
        // A driver reads while the session wants it (a pool's connection
        // sitting idle, watched for the server's close).
        while h.s.wants_read() && h.perform(Io::Read) {}
        assert!(!h.s.is_reusable(), "read size {read_size}");
        assert_eq!(
            h.s.sender().send_request(get_req("/2")),
            Err(h1proto::UsageError::WrongState)
        );
        let SessionError::Peer(err) = h.call(ClientSession::next_response).err() else {
            panic!("read size {read_size}: not the peer's error");
        };
        assert_eq!(err.kind(), ErrorKind::UnsolicitedResponse);
        assert!(h.s.is_closed());
    }
}

/// The same when the bytes come while the application has a response to
/// finish (a 204's head handed out, its end not yet taken): the response
/// ends as sent, and the bytes are refused once it has.
#[test]
fn bytes_read_before_a_bodiless_answer_is_finished_answer_no_later_request() {
    let mut h = client();
    h.s.sender().send_request(get_req("/1")).unwrap();
    h.send("HTTP/1.1 204 No Content\r\n\r\n");
    let head = h.call(ClientSession::next_response).ready().unwrap();
    assert_eq!(head.status(), StatusCode::NO_CONTENT);
    h.send("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n");
    while h.s.wants_read() && h.perform(Io::Read) {}
    assert!(h.call(ClientSession::read_data).ready().is_none());
    assert!(!h.s.is_reusable());
    let SessionError::Peer(err) = h.call(ClientSession::next_response).err() else {
        panic!("not the peer's error");
    };
    assert_eq!(err.kind(), ErrorKind::UnsolicitedResponse);
}

#[test]
fn a_client_waits_for_100_continue_before_its_body() {
    let mut h = client();
    let req = Request::post("/")
        .header("host", "a")
        .header("expect", "100-continue")
        .header("content-length", "5")
        .body(())
        .unwrap();
    h.s.sender().send_head(req).unwrap();
    assert!(h.s.connection().is_waiting_for_continue());
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    assert!(h.take_wire().ends_with("\r\n\r\n"), "the head alone");
    h.send("HTTP/1.1 100 Continue\r\n\r\n");
    let interim = h.call(ClientSession::next_response).ready().unwrap();
    assert_eq!(interim.status(), StatusCode::CONTINUE);
    assert!(!h.s.connection().is_waiting_for_continue());
    h.s.sender().send_data("hello").unwrap();
    h.s.sender().finish(None).unwrap();
    assert_eq!(h.call(ClientSession::next_response).blocked(), Io::Read);
    assert_eq!(h.take_wire(), "hello");
    h.send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    let res = h.call(ClientSession::next_response).ready().unwrap();
    assert_eq!(res.status(), 200);
}

#[test]
fn a_server_streams_trailers_the_client_keeps() {
    let t0 = Instant::now();
    let mut server = Harness::new(ServerSession::new(test_config(), t0), t0);
    let mut client = Harness::new(ClientSession::new(test_config(), t0), t0);
    let mut trailers = HeaderMap::new();
    trailers.insert("x-sum", HeaderValue::from_static("5"));
    let req = Request::post("/")
        .header("host", "a")
        .header("transfer-encoding", "chunked")
        .body(())
        .unwrap();
    client.s.sender().send_head(req).unwrap();
    client.s.sender().send_data("hello").unwrap();
    client.s.sender().finish(Some(trailers.clone())).unwrap();
    assert_eq!(
        client.call(ClientSession::next_response).blocked(),
        Io::Read
    );
    let wire = client.take_wire();
    server.send(wire);
    let req = server
        .call(ServerSession::next_full_request)
        .ready()
        .unwrap();
    assert_eq!(req.body(), "hello");
    assert_eq!(req.extensions().get::<TrailerFields>().unwrap().0, trailers);
    server.s.sender().send_head(Response::new(())).unwrap();
    server.s.sender().send_data(req.into_body()).unwrap();
    server.s.sender().finish(Some(trailers.clone())).unwrap();
    assert_eq!(server.call(ServerSession::next_request).blocked(), Io::Read);
    client.send(server.take_wire());
    let res = client
        .call(ClientSession::next_full_response)
        .ready()
        .unwrap();
    assert_eq!(res.body(), "hello");
    assert_eq!(res.extensions().get::<TrailerFields>().unwrap().0, trailers);
}

#[test]
fn a_client_reads_a_close_delimited_body_to_the_end() {
    let mut h = client();
    h.s.sender().send_request(get_req("/")).unwrap();
    h.send("HTTP/1.1 200 OK\r\n\r\nhello, ");
    assert_eq!(
        h.call(ClientSession::next_full_response).blocked(),
        Io::Read
    );
    h.send("world");
    h.send_eof();
    let res = h.call(ClientSession::next_full_response).ready().unwrap();
    assert_eq!(res.body(), "hello, world");
    assert!(!h.s.is_reusable());
}

// ------------------------------------------------------ the peer's close

/// An empty line after a request (RFC 9112 section 2.2), then the
/// client's close, read in pieces of every size (the CR and the LF apart
/// among them): the request is answered, the next `next_request` ends
/// the session, and no read is asked for after the close. A CR read alone
/// once began a head that the LF then ended as nothing, and the session
/// asked for that head's bytes again and again.
#[test]
fn an_empty_line_then_the_close_end_the_session_in_reads_of_any_size() {
    let input = format!("{}\r\n", get("/"));
    let mut wires = Vec::new();
    for read_size in 1..=input.len() {
        let mut h = server();
        h.read_size = read_size;
        h.send(&input);
        h.send_eof();
        assert!(h.call(ServerSession::next_request).ready().is_some());
        h.s.sender()
            .send_response(Response::new(Bytes::from_static(b"ok")))
            .unwrap();
        match h.call(ServerSession::next_request) {
            Outcome::Ready(None) => {}
            other => panic!("reads of {read_size}: {other:?}"),
        }
        assert!(matches!(h.call(ServerSession::close), Outcome::Ready(())));
        assert!(h.closed.is_some(), "reads of {read_size}");
        wires.push(h.take_wire());
    }
    assert!(wires[0].ends_with("\r\n\r\nok"), "{}", wires[0]);
    assert!(wires.iter().all(|wire| *wire == wires[0]), "{wires:?}");
}
