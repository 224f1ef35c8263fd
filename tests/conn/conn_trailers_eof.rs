//! Connection scenarios with trailers in both directions, and with the peer
//! closing its side in the middle of an exchange.

use crate::support;

use bytes::BytesMut;
use h1proto::conn::State;
use h1proto::{
    ClientConnection, CloseReason, Config, ErrorKind, Event, KeepAlive, ServerConnection,
    framing::BodyKind,
};
use http::{HeaderMap, HeaderValue, Request, Response};
use support::{Pair, ServerEvent, body_of, get, poll_client, poll_server};

fn trailers(name: &'static str, value: &'static str) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert(name, HeaderValue::from_static(value));
    map
}

fn trailers_of<H: h1proto::MessageHead>(events: &[Event<H>]) -> Vec<HeaderMap> {
    events
        .iter()
        .filter_map(|ev| match ev {
            Event::Trailers(map) => Some(map.clone()),
            _ => None,
        })
        .collect()
}

/// A chunked request with trailers, answered by a chunked response with
/// trailers; the connection is reusable after both and carries a second
/// exchange.
#[test]
fn trailers_travel_both_ways_and_the_connection_is_reused() {
    let mut pair = Pair::new();
    let req = Request::post("/upload")
        .header("host", "example.com")
        .header("te", "trailers")
        .body(())
        .unwrap();
    assert_eq!(
        pair.client.sender().send_head(req).unwrap(),
        BodyKind::Chunked
    );
    pair.client.sender().send_data("part one, ").unwrap();
    pair.client.sender().send_data("part two").unwrap();
    pair.client
        .sender()
        .finish(Some(trailers("x-checksum", "abc123")))
        .unwrap();

    let mut server_events = Vec::new();
    let client_events = pair.run(|server, ev: &ServerEvent| {
        server_events.push(ev.clone());
        if let Event::End(verdict) = ev {
            assert_eq!(*verdict, KeepAlive::Reusable);
            let kind = server.sender().send_head(Response::new(())).unwrap();
            assert_eq!(kind, BodyKind::Chunked);
            server.sender().send_data("ok").unwrap();
            server
                .sender()
                .finish(Some(trailers("x-status", "done")))
                .unwrap();
        }
    });

    assert_eq!(body_of(&server_events), b"part one, part two");
    let got = trailers_of(&server_events);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["x-checksum"], "abc123");
    // Trailers come after the data and before End.
    let kinds: Vec<&str> = server_events
        .iter()
        .map(|ev| match ev {
            Event::Head { .. } => "head",
            Event::Data(_) => "data",
            Event::Trailers(_) => "trailers",
            Event::End(_) => "end",
            _ => "other",
        })
        .filter(|k| *k != "data")
        .collect();
    assert_eq!(kinds, ["head", "trailers", "end"]);

    assert_eq!(body_of(&client_events), b"ok");
    let got = trailers_of(&client_events);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["x-status"], "done");
    assert!(matches!(
        client_events.last(),
        Some(Event::End(KeepAlive::Reusable))
    ));

    // The same connection carries another exchange.
    pair.client.sender().send_request(get("/again")).unwrap();
    let client_events = pair.run(|server, ev: &ServerEvent| {
        if let Event::End(_) = ev {
            server
                .sender()
                .send_response(Response::new("again"))
                .unwrap();
        }
    });
    assert_eq!(body_of(&client_events), b"again");
}

/// Trailer fields that would change framing or routing after the fact are
/// refused by the receiving connection.
#[test]
fn a_forbidden_trailer_is_a_protocol_error_for_the_server() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(
        &b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nContent-Length: 5\r\n\r\n"[..],
    );
    let err = poll_server(&mut server, &mut buf).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidTrailer);
    assert_eq!(err.status().as_u16(), 400);
}

/// The client closes its side in the middle of a request body: the server
/// gets `UnexpectedEof`, answers with its error response and closes.
#[test]
fn peer_eof_inside_a_request_body_is_an_error_on_the_server() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf =
        BytesMut::from(&b"POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc"[..]);
    let events = poll_server(&mut server, &mut buf).unwrap();
    assert!(matches!(events[0], Event::Head { .. }));
    assert_eq!(support::body_of(&events), b"abc");
    assert_eq!(server.recv_state(), State::Body);

    server.recv_eof();
    let err = poll_server(&mut server, &mut buf).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    server.send_error_response(&err).unwrap();
    let out = support::drain(server.output());
    assert!(out.text().starts_with("HTTP/1.1 400 "), "{}", out.text());
    assert!(out.text().contains("connection: close"), "{}", out.text());
    assert!(server.is_closed());
}

/// The client closes between requests: a clean end, no error, and nothing
/// more is decoded.
#[test]
fn peer_eof_between_requests_is_a_clean_close() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
    let events = poll_server(&mut server, &mut buf).unwrap();
    assert!(matches!(
        events.last(),
        Some(Event::End(KeepAlive::Reusable))
    ));
    server.sender().send_response(Response::new("hi")).unwrap();
    support::drain(server.output());

    server.recv_eof();
    assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
    assert!(server.is_closed());
}

/// The server closes in the middle of a Content-Length response: the
/// client gets `UnexpectedEof` rather than a short body taken as complete.
#[test]
fn peer_eof_inside_a_response_body_is_an_error_on_the_client() {
    let mut client = ClientConnection::new(Config::default());
    client.sender().send_request(get("/")).unwrap();
    support::drain(client.output());
    let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"[..]);
    let events = poll_client(&mut client, &mut buf).unwrap();
    assert_eq!(support::body_of(&events), b"abc");

    client.recv_eof();
    let err = poll_client(&mut client, &mut buf).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    assert!(client.is_closed());
}

/// A response without framing fields runs until the server closes: the
/// client's `End` comes with the EOF, with a verdict to close.
#[test]
fn a_close_delimited_response_ends_with_the_peer_eof() {
    let mut client = ClientConnection::new(Config::default());
    client.sender().send_request(get("/")).unwrap();
    support::drain(client.output());
    let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\n\r\nall of it"[..]);
    let events = poll_client(&mut client, &mut buf).unwrap();
    assert!(matches!(
        events[0],
        Event::Head {
            body: BodyKind::CloseDelimited,
            ..
        }
    ));
    assert!(!events.iter().any(|ev| matches!(ev, Event::End(_))));

    client.recv_eof();
    let events = poll_client(&mut client, &mut buf).unwrap();
    assert_eq!(support::body_of(&events), b"");
    assert!(
        matches!(
            events.last(),
            Some(Event::End(KeepAlive::Close(CloseReason::CloseDelimited)))
        ),
        "{events:?}"
    );
    assert!(client.is_closed());
}

/// The client closes its side after a complete request (a half-close):
/// the server still answers it, then the connection is over.
#[test]
fn a_half_closed_client_still_gets_its_response() {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
    server.recv_eof();
    let events = poll_server(&mut server, &mut buf).unwrap();
    assert!(matches!(events[0], Event::Head { .. }));
    assert!(matches!(events.last(), Some(Event::End(_))));
    server
        .sender()
        .send_response(Response::new("still here"))
        .unwrap();
    let out = support::drain(server.output());
    assert!(out.text().ends_with("still here"), "{}", out.text());
    assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
    assert!(server.is_closed());
}

/// A client may send an empty line after a request (RFC 9112 section
/// 2.2), then close. Cut anywhere, its CR and LF apart included, the
/// close ends the connection the same way: the empty line begins no
/// head, and the answer still queued says `Connection: close`. (A CR
/// read alone once started a head that its LF then ended as nothing:
/// the close was not seen, and a session waited for that head.)
#[test]
fn an_empty_line_then_the_close_end_the_connection_however_cut() {
    let input = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n\r\n";
    let run = |cut: usize| {
        let mut server = ServerConnection::new(Config::default());
        let mut buf = BytesMut::new();
        for (k, piece) in [&input[..cut], &input[cut..], b""].into_iter().enumerate() {
            buf.extend_from_slice(piece);
            if k == 2 {
                server.recv_eof();
            }
            let events = poll_server(&mut server, &mut buf).unwrap();
            if let Some(Event::End(_)) = events.last() {
                // Left queued: the output is drained at the end.
                server.sender().send_response(Response::new("ok")).unwrap();
                assert!(poll_server(&mut server, &mut buf).unwrap().is_empty());
            }
        }
        assert!(buf.is_empty(), "cut at {cut}");
        assert!(server.is_closed(), "cut at {cut}");
        support::drain(server.output()).text()
    };
    let whole = run(input.len());
    assert!(whole.contains("connection: close\r\n"), "{whole}");
    for cut in 0..input.len() {
        assert_eq!(run(cut), whole, "cut at {cut}");
    }
}

/// The server closes with requests unanswered, before any byte of the
/// answer due (an idle timeout racing a pipelined request, a crash): the
/// client learns it as `UnexpectedEof`, as a `ClientSession` does, and
/// its connection is closed; it was `Ok(None)` for ever, the connection
/// waiting for an answer that could not come. Whether no answer came at
/// all or some did first.
#[test]
fn the_server_closing_before_an_answer_due_is_an_error_on_the_client() {
    for answered in [0, 1] {
        let mut client = ClientConnection::new(Config::default());
        for path in ["/1", "/2"] {
            client.sender().send_request(get(path)).unwrap();
        }
        support::drain(client.output());
        let answer = &b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"[..];
        let mut buf = BytesMut::from(&answer.repeat(answered)[..]);
        let events = poll_client(&mut client, &mut buf).unwrap();
        assert_eq!(
            events
                .iter()
                .filter(|ev| matches!(ev, Event::End(_)))
                .count(),
            answered
        );
        assert!(!client.is_closed());

        client.recv_eof();
        let err = poll_client(&mut client, &mut buf).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEof, "after {answered}");
        assert_eq!(err.offset(), Some((answer.len() * answered) as u64));
        assert!(client.is_closed(), "after {answered}");
        // The error is kept.
        let again = poll_client(&mut client, &mut buf).unwrap_err();
        assert_eq!(again.kind(), ErrorKind::UnexpectedEof);
    }
}
