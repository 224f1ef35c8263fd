//! The duplex contract: a driver that reads while it writes, and one that
//! owns the buffers while the kernel works (`lend_read_buf`,
//! `lend_output`), as a completion-based runtime does.

use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use h1proto::{ClientSession, Config, Io, ServerSession, Session, Step};
use http::{Request, Response, StatusCode};

const GET: &[u8] = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";

/// An owned read of `bytes`: lent, filled, given back, reported.
fn owned_read(session: &mut impl Session, bytes: &[u8], now: Instant) {
    let mut buf = session.lend_read_buf();
    assert!(buf.is_empty());
    assert!(buf.capacity() >= bytes.len(), "{}", buf.capacity());
    buf.extend_from_slice(bytes);
    session.return_read_buf(buf);
    session.handle_read(bytes.len(), now);
}

/// The bytes of an owned output, in order.
fn concat(out: &[Bytes]) -> Vec<u8> {
    out.iter().flat_map(|b| b.iter().copied()).collect()
}

#[test]
fn an_owned_read_and_write_make_an_exchange_without_a_copy() {
    let t0 = Instant::now();
    let mut server = ServerSession::new(Config::default(), t0);
    assert!(server.wants_read());
    let Step::Io(Io::Read) = server.next_request(t0).unwrap() else {
        panic!("a read")
    };
    // The first room is small (the session held no buffer).
    let mut room = server.lend_read_buf();
    assert!(room.capacity() < 1024, "{}", room.capacity());
    let at = room.as_ptr();
    // The room is out: no second read is asked for.
    assert!(!server.wants_read());
    room.extend_from_slice(&GET[..5]);
    server.return_read_buf(room);
    server.handle_read(5, t0);
    let Step::Io(Io::Read) = server.next_request(t0).unwrap() else {
        panic!("the rest of the head")
    };
    // Given back, the room rejoined the buffer where it was: the next
    // room follows the bytes read, in the same allocation (no copy).
    let mut room = server.lend_read_buf();
    assert_eq!(room.as_ptr(), at.wrapping_add(5));
    room.extend_from_slice(&GET[5..10]);
    server.return_read_buf(room);
    server.handle_read(5, t0);
    let Step::Io(Io::Read) = server.next_request(t0).unwrap() else {
        panic!("the rest of the head")
    };
    // A second read: the connection is in use, and the next room is a
    // base read's.
    let mut room = server.lend_read_buf();
    assert!(room.capacity() >= 1024, "{}", room.capacity());
    room.extend_from_slice(&GET[10..]);
    server.return_read_buf(room);
    server.handle_read(GET.len() - 10, t0);
    let Step::Ready(Some(req)) = server.next_request(t0).unwrap() else {
        panic!("a request")
    };
    assert_eq!(req.uri().path(), "/a");

    let body = Bytes::from(vec![b'x'; 8 * 1024]);
    let body_at = body.as_ptr();
    server.sender().send_response(Response::new(body)).unwrap();
    let Step::Io(Io::Write) = server.next_request(t0).unwrap() else {
        panic!("a write")
    };
    assert!(server.wants_write());
    let out = server.lend_output();
    assert!(!server.wants_write());
    assert_eq!(out.len(), 2, "the head, then the body as it was given");
    assert_eq!(out[1].as_ptr(), body_at, "the body is not copied");
    let wire = concat(&out);
    assert!(wire.starts_with(b"HTTP/1.1 200 OK\r\ncontent-length: 8192\r\n\r\n"));
    // A partial write: the rest stays first in line.
    server.return_output(out);
    server.handle_write(10, t0);
    let out = server.lend_output();
    assert_eq!(concat(&out), wire[10..]);
    let n = wire.len() - 10;
    server.return_output(out);
    server.handle_write(n, t0);
    assert!(!server.wants_write());
    let Step::Io(Io::Read) = server.next_request(t0).unwrap() else {
        panic!("waiting for the next request")
    };
}

#[test]
fn output_queued_while_the_output_is_out_goes_behind_it() {
    let t0 = Instant::now();
    let mut server = ServerSession::new(Config::default(), t0);
    server.read_buf().extend_from_slice(&[GET, GET].concat());
    server.handle_read(2 * GET.len(), t0);
    let Step::Ready(Some(_)) = server.next_request(t0).unwrap() else {
        panic!("the first request")
    };
    server
        .sender()
        .send_response(Response::new("first"))
        .unwrap();
    let out = server.lend_output();
    let first = concat(&out);
    // A second lend while the first is out lends nothing.
    assert!(server.lend_output().is_empty());
    // The pipelined request is taken and answered while the first answer
    // is being written.
    let Step::Ready(Some(_)) = server.next_request(t0).unwrap() else {
        panic!("the second request")
    };
    server
        .sender()
        .send_response(Response::new("second"))
        .unwrap();
    server.return_output(out);
    server.handle_write(4, t0);
    let mut wire = first[..4].to_vec();
    let out = server.output();
    while out.has_remaining() {
        wire.extend_from_slice(out.chunk());
        let n = out.chunk().len();
        out.advance(n);
    }
    let text = String::from_utf8(wire).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\nfirstHTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecond"));
}

#[test]
fn a_server_reads_ahead_while_it_writes_but_no_more_than_one_read() {
    let t0 = Instant::now();
    let mut config = Config::default();
    config.read_size = 1024;
    let mut server = ServerSession::new(config, t0);
    server.read_buf().extend_from_slice(GET);
    server.handle_read(GET.len(), t0);
    let Step::Ready(Some(_)) = server.next_request(t0).unwrap() else {
        panic!("a request")
    };
    server.sender().send_response(Response::new("hi")).unwrap();
    let Step::Io(Io::Write) = server.next_request(t0).unwrap() else {
        panic!("a write")
    };
    // Writing the answer, the session still takes input: reads that
    // fill their room, until more than a read's worth (`read_size`)
    // waits undecoded; no more then until the application takes some.
    assert!(server.wants_read());
    let mut undecoded = 0;
    while server.wants_read() {
        assert!(undecoded < 1024, "read on past a read's worth: {undecoded}");
        let mut room = server.lend_read_buf();
        let n = room.capacity();
        room.extend_from_slice(&vec![b'G'; n]);
        server.return_read_buf(room);
        server.handle_read(n, t0);
        undecoded += n;
    }
    assert!(undecoded >= 1024, "{undecoded}");
}

#[test]
fn a_client_sees_an_early_refusal_while_its_upload_is_out_and_stops() {
    let t0 = Instant::now();
    let mut client = ClientSession::new(Config::default(), t0);
    let req = Request::put("/big")
        .header("host", "x")
        .header("content-length", (1u64 << 30).to_string())
        .body(())
        .unwrap();
    client.sender().send_head(req).unwrap();
    client
        .sender()
        .send_data(Bytes::from(vec![b'u'; 128 * 1024]))
        .unwrap();
    let Step::Io(Io::Write) = client.poll_flush(t0).unwrap() else {
        panic!("backpressure")
    };
    let out = client.lend_output();
    assert!(concat(&out).starts_with(b"PUT /big HTTP/1.1\r\n"));
    // While the upload is out (a server that stopped reading), the answer
    // comes in.
    assert!(client.wants_read());
    owned_read(
        &mut client,
        b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbig!",
        t0,
    );
    // The sender learns it at once: no more waiting to write.
    assert_eq!(client.poll_flush(t0).unwrap(), Step::Ready(()));
    // What comes back from the write is dropped, and nothing more leaves.
    client.return_output(out);
    client.handle_write(1000, t0);
    assert!(!client.wants_write());
    assert!(client.output().is_empty());
    client.sender().send_data(vec![b'u'; 1000]).unwrap();
    assert!(client.output().is_empty());
    let Step::Ready(Some(res)) = client.next_response(t0).unwrap() else {
        panic!("the refusal")
    };
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let Step::Ready(body) = client.read_body(t0).unwrap() else {
        panic!("the body is buffered")
    };
    assert_eq!(&body[..], b"big!");
}

#[test]
fn an_idle_connection_gives_its_buffers_back_with_an_owned_read_out() {
    let t0 = Instant::now();
    let config = Config::default();
    let (release, idle) = (config.release_after, config.timeouts.idle.unwrap());
    let mut server = ServerSession::new(config, t0);
    server.read_buf().extend_from_slice(GET);
    server.handle_read(GET.len(), t0);
    let Step::Ready(Some(_)) = server.next_request(t0).unwrap() else {
        panic!("a request")
    };
    server.sender().send_response(Response::new("hi")).unwrap();
    let Step::Io(Io::Write) = server.next_request(t0).unwrap() else {
        panic!("a write")
    };
    let n = server.output().remaining();
    server.handle_write(n, t0);
    let Step::Io(Io::Read) = server.next_request(t0).unwrap() else {
        panic!("waiting for the next request")
    };
    let room = server.lend_read_buf();
    // The release comes first, and needs no cancel: the read stays out.
    assert_eq!(server.poll_timeout(), Some(t0 + release));
    server.handle_timeout(t0 + release);
    assert_eq!(server.poll_timeout(), Some(t0 + idle));
    // The read comes back (cancelled, empty) and the next one is small.
    server.return_read_buf(room);
    assert!(server.lend_read_buf().capacity() < 1024);
}

#[test]
fn one_handle_timeout_settles_every_deadline_that_passed() {
    let t0 = Instant::now();
    let config = Config::default();
    let idle = config.timeouts.idle.unwrap();
    let mut server = ServerSession::new(config, t0);
    server.read_buf().extend_from_slice(GET);
    server.handle_read(GET.len(), t0);
    let Step::Ready(Some(_)) = server.next_request(t0).unwrap() else {
        panic!("a request")
    };
    server.sender().send_response(Response::new("hi")).unwrap();
    let Step::Io(Io::Write) = server.next_request(t0).unwrap() else {
        panic!("a write")
    };
    let n = server.output().remaining();
    server.handle_write(n, t0);
    let Step::Io(Io::Read) = server.next_request(t0).unwrap() else {
        panic!("waiting for the next request")
    };
    // Woken late: the buffers' release and the idle timeout have both
    // passed, and one call acts on both.
    server.handle_timeout(t0 + idle + Duration::from_secs(1));
    assert_eq!(server.poll_timeout(), None);
    assert!(matches!(server.next_request(t0), Ok(Step::Ready(None))));
    assert_eq!(server.close(t0), Ok(Step::Io(Io::Close)));
}

#[test]
fn a_write_timeout_with_the_output_out_drops_it_when_it_comes_back() {
    let t0 = Instant::now();
    let config = Config::default();
    let write = config.timeouts.write.unwrap();
    let mut server = ServerSession::new(config, t0);
    server.read_buf().extend_from_slice(GET);
    server.handle_read(GET.len(), t0);
    let Step::Ready(Some(_)) = server.next_request(t0).unwrap() else {
        panic!("a request")
    };
    server.sender().send_response(Response::new("hi")).unwrap();
    let Step::Io(Io::Write) = server.next_request(t0).unwrap() else {
        panic!("a write")
    };
    let out = server.lend_output();
    // The peer does not read: the write is still out at the deadline.
    assert_eq!(server.poll_timeout(), Some(t0 + write));
    server.handle_timeout(t0 + write);
    assert!(server.next_request(t0 + write).is_err());
    // The close does not wait for the write under way: the driver
    // cancels it and closes.
    assert_eq!(server.close(t0 + write), Ok(Step::Io(Io::Close)));
    // What comes back from the cancelled write is not written again.
    server.return_output(out);
    server.handle_write(0, t0 + write);
    assert!(!server.wants_write());
    assert_eq!(server.close(t0 + write), Ok(Step::Ready(())));
}

#[test]
#[should_panic(expected = "the room lent before was not given back")]
fn a_second_room_while_the_first_is_out_is_refused() {
    let t0 = Instant::now();
    let mut server = ServerSession::new(Config::default(), t0);
    let _first = server.lend_read_buf();
    // Two rooms out could be joined back out of order: a driver bug the
    // session stops at once, not a stream it reorders.
    let _second = server.lend_read_buf();
}

#[test]
fn a_room_given_back_may_be_lent_again() {
    let t0 = Instant::now();
    let mut server = ServerSession::new(Config::default(), t0);
    owned_read(&mut server, &GET[..10], t0);
    owned_read(&mut server, &GET[10..], t0);
    let Step::Ready(Some(req)) = server.next_request(t0).unwrap() else {
        panic!("the request, read in two owned reads")
    };
    assert_eq!(req.uri(), "/a");
}
