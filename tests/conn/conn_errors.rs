//! A protocol error ends the connection, with the status the
//! error suggests and `Connection: close`; the error is sticky.

use crate::support;

use bytes::{Buf, BytesMut};
use h1proto::conn::State;
use h1proto::{
    CloseReason, Config, ErrorKind, Event, KeepAlive, Limits, ResponseDecoder, ServerConnection,
    UsageError,
};
use http::Method;
use http::Response;
use support::{Pair, poll_server};

/// Feeds `raw` to a fresh server, answering every complete request, until
/// the error; returns the server, its buffer and the error.
fn until_error(config: Config, raw: &[u8]) -> (ServerConnection, BytesMut, h1proto::Error) {
    let mut server = ServerConnection::new(config);
    let mut buf = BytesMut::from(raw);
    loop {
        match server.poll_event(&mut buf) {
            Ok(Some(Event::End(_))) => server.sender().send_response(Response::new("ok")).unwrap(),
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error in {:?}", String::from_utf8_lossy(raw)),
            Err(err) => return (server, buf, err),
        }
    }
}

/// Checks the error response and the closed, sticky state after it.
fn answer_error(server: &mut ServerConnection, buf: &mut BytesMut, err: &h1proto::Error) -> String {
    assert_eq!(server.recv_state(), State::Error);
    assert_eq!(
        server.keep_alive(),
        KeepAlive::Close(CloseReason::ProtocolError),
        "known from the error on"
    );
    assert!(server.is_closed());
    server.send_error_response(err).unwrap();
    assert!(server.is_closed());
    // Sticky: the same error, even with valid input after it.
    buf.extend_from_slice(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    for _ in 0..2 {
        assert_eq!(server.poll_event(buf).unwrap_err(), *err);
    }
    assert_eq!(server.send_error_response(err), Err(UsageError::WrongState));
    assert_eq!(
        server.sender().send_response(Response::new("x")),
        Err(UsageError::WrongState)
    );
    support::drain(server.output()).text()
}

#[test]
fn a_bad_field_in_the_second_pipelined_request() {
    let (mut server, mut buf, err) = until_error(
        Config::default(),
        b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\nBad Field: x\r\n\r\n",
    );
    assert_eq!(err.kind(), ErrorKind::InvalidFieldName);
    assert_eq!(err.status(), 400);
    let wire = answer_error(&mut server, &mut buf, &err);
    let (first, second) = wire.split_at(wire.find("HTTP/1.1 400").unwrap());
    assert_eq!(first, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    assert!(
        second.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{second}"
    );
    assert!(second.contains("\r\nconnection: close\r\n"), "{second}");
    assert_eq!(second.matches("connection").count(), 1, "{second}");
}

/// The error answers the request that failed, not the exchange before
/// it: after a HEAD, the 400 for a malformed next request still carries
/// its body, and a client decoding it as the answer to that request
/// (not to a HEAD) reads it whole.
#[test]
fn an_error_after_a_head_exchange_has_its_body() {
    let (mut server, mut buf, err) = until_error(
        Config::default(),
        b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\nGET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(err.status(), 400);
    let wire = answer_error(&mut server, &mut buf, &err);
    let mut input = BytesMut::from(wire.as_bytes());
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.expect_response_to(&Method::HEAD);
    dec.expect_response_to(&Method::GET);
    let mut statuses = Vec::new();
    let mut body = Vec::new();
    while let Some(event) = dec.decode(&mut input).unwrap() {
        match event {
            Event::Head { head, .. } => statuses.push(head.status().as_u16()),
            Event::Data(data) if statuses.len() == 2 => body.extend_from_slice(&data),
            Event::End(_) if statuses.len() == 2 => break,
            _ => {}
        }
    }
    assert_eq!(statuses, [200, 400], "{wire}");
    assert!(input.is_empty(), "bytes after the 400: {wire}");
    assert_eq!(body, format!("{err}\n").as_bytes(), "{wire}");
}

#[test]
fn an_oversized_head_gets_431() {
    let mut config = Config::default();
    config.limits.max_head_bytes = 1024;
    let mut raw = b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: ".to_vec();
    raw.extend(std::iter::repeat_n(b'a', 2000));
    raw.extend_from_slice(b"\r\n\r\n");
    let (mut server, mut buf, err) = until_error(config, &raw);
    assert_eq!(err.kind(), ErrorKind::HeadTooLarge);
    let wire = answer_error(&mut server, &mut buf, &err);
    assert!(
        wire.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{wire}"
    );
    assert!(wire.contains("\r\nconnection: close\r\n"));
}

#[test]
fn an_oversized_head_is_refused_whatever_the_read_size() {
    let mut config = Config::default();
    config.limits.max_head_bytes = 1024;
    let mut server = ServerConnection::new(config);
    let mut buf = BytesMut::new();
    buf.extend_from_slice(b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: ");
    let mut fed = buf.len();
    let err = loop {
        buf.extend_from_slice(&[b'a'; 100]);
        fed += 100;
        match server.poll_event(&mut buf) {
            Ok(None) => assert!(fed <= 1024 + 100, "the limit was not enforced"),
            Ok(Some(ev)) => panic!("{ev:?}"),
            Err(err) => break err,
        }
    };
    assert_eq!(err.kind(), ErrorKind::HeadTooLarge);
    assert!(buf.len() <= 1024 + 100, "buffered past the limit");
}

#[test]
fn an_invalid_chunk_size_mid_body() {
    let (mut server, mut buf, err) = until_error(
        Config::default(),
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n",
    );
    assert_eq!(err.kind(), ErrorKind::InvalidChunkSize);
    let wire = answer_error(&mut server, &mut buf, &err);
    assert!(wire.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{wire}");
    assert!(wire.contains("\r\nconnection: close\r\n"));
}

#[test]
fn an_undrained_response_is_withdrawn_for_the_error_response() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf =
        BytesMut::from(&b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"[..]);
    poll_server(&mut server, &mut buf).unwrap();
    // An echo: the head and the first piece queued before the body fails.
    server.sender().send_head(Response::new(())).unwrap();
    server.sender().send_data("partial").unwrap();
    buf.extend_from_slice(b"1\r\nx\r\nQ\r\n");
    let err = poll_server(&mut server, &mut buf).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidChunkSize);
    server.send_error_response(&err).unwrap();
    let wire = support::drain(server.output()).text();
    assert!(wire.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{wire}");
    assert!(
        !wire.contains("200 OK") && !wire.contains("partial"),
        "{wire}"
    );
    assert!(wire.contains("\r\nconnection: close\r\n"), "{wire}");
    assert!(server.is_closed());
    assert_eq!(
        server.keep_alive(),
        KeepAlive::Close(CloseReason::ProtocolError)
    );
}

#[test]
fn no_error_response_once_a_response_has_started_to_leave() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf =
        BytesMut::from(&b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"[..]);
    poll_server(&mut server, &mut buf).unwrap();
    server.sender().send_head(Response::new(())).unwrap();
    // One byte of the head reaches the socket.
    server.output().advance(1);
    server.sender().send_data("partial").unwrap();
    buf.extend_from_slice(b"1\r\nx\r\nQ\r\n");
    let err = poll_server(&mut server, &mut buf).unwrap_err();
    let before = server.output().len();
    assert_eq!(
        server.send_error_response(&err),
        Err(UsageError::WrongState)
    );
    assert_eq!(server.output().len(), before);
    assert!(server.is_closed());
    assert_eq!(
        server.keep_alive(),
        KeepAlive::Close(CloseReason::ProtocolError)
    );
}

#[test]
fn a_client_error_is_sticky_and_closes() {
    let mut pair = Pair::new();
    pair.client
        .sender()
        .send_request(support::get("/"))
        .unwrap();
    pair.drain_client();
    pair.inject_to_client(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab");
    let err = pair.poll_client().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidContentLength);
    assert!(pair.client.is_closed());
    assert_eq!(pair.client.recv_state(), State::Error);
    assert_eq!(
        pair.client.keep_alive(),
        KeepAlive::Close(CloseReason::ProtocolError)
    );
    pair.inject_to_client(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(pair.poll_client().unwrap_err(), err);
    assert_eq!(
        pair.client.sender().send_request(support::get("/")),
        Err(UsageError::WrongState)
    );
}
