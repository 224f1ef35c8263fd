//! What a connection keeps from one message for the next (field maps handed
//! back by the encoder, field names seen before) must never leak into the
//! next message: each head carries exactly its own fields.

use crate::support;

use bytes::BytesMut;
use h1proto::{Event, Limits, RequestDecoder, ResponseDecoder};
use http::{HeaderMap, Method, Request, Response};
use proptest::prelude::*;
use support::{Pair, ServerEvent, poll_server};

/// The fields of a head as (name, value) strings, in order.
fn fields(map: &HeaderMap) -> Vec<(String, String)> {
    map.iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn a_recycled_map_holds_only_the_next_heads_fields() {
    let mut dec = RequestDecoder::new(Limits::default());
    let mut old = HeaderMap::new();
    for i in 0..20 {
        old.insert(
            http::HeaderName::from_bytes(format!("x-old-{i}").as_bytes()).unwrap(),
            http::HeaderValue::from_static("stale"),
        );
    }
    dec.give_spare_fields(old);
    let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\nX-New: 1\r\n\r\n"[..]);
    let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
        panic!("no head")
    };
    assert_eq!(
        fields(head.headers()),
        [("host".into(), "a".into()), ("x-new".into(), "1".into())]
    );
}

#[test]
fn the_response_decoder_takes_a_recycled_map_too() {
    let mut dec = ResponseDecoder::new(Limits::default());
    let mut old = HeaderMap::new();
    old.insert("x-old", http::HeaderValue::from_static("stale"));
    dec.give_spare_fields(old);
    dec.expect_response_to(&Method::GET);
    let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"[..]);
    let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
        panic!("no head")
    };
    assert_eq!(
        fields(head.headers()),
        [("content-length".into(), "0".into())]
    );
}

#[test]
fn a_server_connection_reuses_response_maps_without_leaking_fields() {
    let mut pair = Pair::new();
    let mut seen = Vec::new();
    for i in 0..5 {
        let req = Request::get(format!("/{i}"))
            .header("host", "example.com")
            .header(format!("x-req-{i}"), "r")
            .body("")
            .unwrap();
        pair.client.sender().send_request(req).unwrap();
        pair.run(|server, ev: &ServerEvent| match ev {
            Event::Head { head, .. } => seen.push(fields(head.headers())),
            Event::End(_) => {
                let mut res = Response::builder();
                for j in 0..10 {
                    res = res.header(format!("x-res-{i}-{j}"), "s");
                }
                server
                    .sender()
                    .send_response(res.body("ok").unwrap())
                    .unwrap();
            }
            _ => {}
        });
    }
    for (i, f) in seen.iter().enumerate() {
        assert_eq!(
            *f,
            [
                ("host".to_owned(), "example.com".to_owned()),
                (format!("x-req-{i}"), "r".to_owned())
            ]
        );
    }
    // And the client's response heads hold only their own fields.
    let heads: Vec<_> = pair
        .client_events
        .iter()
        .filter_map(|ev| match ev {
            Event::Head { head, .. } => Some(fields(head.headers())),
            _ => None,
        })
        .collect();
    assert_eq!(heads.len(), 5);
    for (i, f) in heads.iter().enumerate() {
        assert_eq!(f.len(), 11, "{f:?}");
        assert!(
            f.iter()
                .all(|(n, _)| n == "content-length" || n.starts_with(&format!("x-res-{i}-")))
        );
    }
}

/// A field line with one of a few names in varied spellings.
fn field_line() -> impl Strategy<Value = (String, String)> {
    let name = prop::sample::select(vec![
        "Accept",
        "accept",
        "ACCEPT",
        "X-Trace",
        "x-trace",
        "Cookie",
        "sec-ch-ua",
        "Sec-CH-UA",
        "X-A",
        "x-b",
    ]);
    (name, "[a-z0-9]{0,6}").prop_map(|(n, v)| (n.to_owned(), v))
}

proptest! {
    /// Messages decoded one after another on one decoder (names cached,
    /// maps recycled) give the same heads as each message decoded alone.
    #[test]
    fn heads_do_not_depend_on_earlier_messages(
        messages in prop::collection::vec(prop::collection::vec(field_line(), 0..8), 1..8),
    ) {
        let mut conn = RequestDecoder::new(Limits::default());
        let mut buf = BytesMut::new();
        for lines in &messages {
            let mut wire = String::from("GET / HTTP/1.1\r\nHost: h\r\n");
            for (n, v) in lines {
                wire.push_str(&format!("{n}: {v}\r\n"));
            }
            wire.push_str("\r\n");

            let mut alone = RequestDecoder::new(Limits::default());
            let mut own = BytesMut::from(wire.as_bytes());
            let Some(Event::Head { head: expected, .. }) = alone.decode(&mut own).unwrap() else {
                panic!("no head")
            };

            buf.extend_from_slice(wire.as_bytes());
            let Some(Event::Head { head, .. }) = conn.decode(&mut buf).unwrap() else {
                panic!("no head")
            };
            prop_assert_eq!(fields(head.headers()), fields(expected.headers()));
            prop_assert!(matches!(conn.decode(&mut buf).unwrap(), Some(Event::End(_))));
            // Hand the map back, as a connection does with the response's.
            conn.give_spare_fields(head.into_parts().0.headers);
        }
    }
}

#[test]
fn a_repeated_value_is_shared_and_a_new_one_is_read() {
    // From a connection's second message on, a value is kept with its
    // name; a later line with the same bytes gets that value, one with
    // other bytes a slice of its own read.
    let mut dec = RequestDecoder::new(Limits::default());
    let mut hosts = Vec::new();
    for host in [
        "a.example",
        "a.example",
        "a.example",
        "b.example",
        "a.example",
    ] {
        let wire = format!("GET / HTTP/1.1\r\nHost: {host}\r\nX-N: 1\r\n\r\n");
        let mut buf = BytesMut::from(wire.as_bytes());
        let read = buf.as_ptr() as usize..buf.as_ptr() as usize + buf.len();
        let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
            panic!("no head")
        };
        assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Event::End(_))));
        let value = head.headers()["host"].clone();
        assert_eq!(value, host);
        let at = value.as_bytes().as_ptr() as usize;
        hosts.push((value, read.contains(&at), at));
    }
    // The first two are read; the second is kept, and given to the third
    // and the fifth; the fourth differs.
    let from_read: Vec<bool> = hosts.iter().map(|h| h.1).collect();
    assert_eq!(from_read, [true, true, false, true, false]);
    assert_eq!(hosts[2].2, hosts[4].2);
}

#[test]
fn pipelined_requests_on_a_server_keep_their_own_fields() {
    let mut server = h1proto::ServerConnection::new(h1proto::Config::default());
    let mut buf = BytesMut::from(
        &b"GET /1 HTTP/1.1\r\nHost: a\r\nX-One: 1\r\n\r\nGET /2 HTTP/1.1\r\nhost: b\r\nx-two: 2\r\n\r\n"[..],
    );
    let mut heads = Vec::new();
    for _ in 0..2 {
        for ev in poll_server(&mut server, &mut buf).unwrap() {
            if let Event::Head { head, .. } = &ev {
                heads.push(fields(head.headers()));
            }
            if let Event::End(_) = ev {
                let res = Response::builder()
                    .header("x-from-response", "no")
                    .body("")
                    .unwrap();
                server.sender().send_response(res).unwrap();
            }
        }
    }
    assert_eq!(
        heads,
        [
            vec![("host".into(), "a".into()), ("x-one".into(), "1".into())],
            vec![("host".into(), "b".into()), ("x-two".into(), "2".into())],
        ]
    );
}
