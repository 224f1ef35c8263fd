//! Chunk extensions, read on decode (when asked for) and written on
//! encode, so that a proxy can forward them: `Event::ChunkExtensions`
//! before the data of its chunk, or after the last data for the
//! last-chunk; `Encoder::send_chunk_extensions` for the next chunk
//! written. Encoded then decoded back, whole, byte by byte and cut
//! anywhere, the same extensions come back with the same data.

use bytes::{Buf, Bytes, BytesMut};
use h1proto::{
    ChunkExtensions, ClientConnection, Config, ErrorKind, Event, Limits, RequestDecoder,
    RequestEncoder, ResponseContext, ResponseEncoder, ServerConnection, UsageError,
    framing::BodyKind,
};
use http::{HeaderMap, HeaderValue, Method, Request};
use proptest::prelude::*;

const HEAD: &[u8] = b"POST /up HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n";

/// An event of a body, consecutive data merged.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Data(Vec<u8>),
    Ext(Vec<u8>),
    Trailers(Vec<(String, Vec<u8>)>),
    End,
}

fn push(events: &mut Vec<Ev>, ev: Ev) {
    match (events.last_mut(), ev) {
        (Some(Ev::Data(prev)), Ev::Data(more)) => prev.extend(more),
        (_, ev) => events.push(ev),
    }
}

/// The body events of a request fed in pieces cut at `cuts`, extensions
/// asked for when `report`; and the error, if any.
fn decode(input: &[u8], cuts: &[usize], report: bool) -> (Vec<Ev>, Option<ErrorKind>) {
    let mut dec = RequestDecoder::new(Limits::default());
    dec.set_chunk_extensions(report);
    assert_eq!(dec.chunk_extensions(), report);
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain([input.len()].iter()) {
        buf.extend_from_slice(&input[from..to]);
        from = to;
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(Event::Head { .. })) => {}
                Ok(Some(Event::Data(d))) => push(&mut events, Ev::Data(d.to_vec())),
                Ok(Some(Event::ChunkExtensions(e))) => {
                    assert!(report, "extensions handed out unasked");
                    assert!(!e.is_empty());
                    push(&mut events, Ev::Ext(e.as_bytes().to_vec()))
                }
                Ok(Some(Event::Trailers(t))) => push(
                    &mut events,
                    Ev::Trailers(
                        t.iter()
                            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
                            .collect(),
                    ),
                ),
                Ok(Some(Event::End(_))) => push(&mut events, Ev::End),
                Ok(Some(other)) => panic!("unexpected {other:?}"),
                Ok(None) => break,
                Err(e) => return (events, Some(e.kind())),
            }
        }
    }
    (events, None)
}

/// Decodes `input` whole, byte by byte and cut at every single point (or
/// at `extra` cuts), requires one outcome, and returns it.
fn decode_all_ways(input: &[u8], report: bool, extra: &[usize]) -> (Vec<Ev>, Option<ErrorKind>) {
    let whole = decode(input, &[], report);
    let bytewise: Vec<usize> = (1..input.len()).collect();
    assert_eq!(decode(input, &bytewise, report), whole, "byte by byte");
    if extra.is_empty() {
        for cut in 1..input.len() {
            assert_eq!(decode(input, &[cut], report), whole, "cut at {cut}");
        }
    } else {
        assert_eq!(decode(input, extra, report), whole, "cuts {extra:?}");
    }
    whole
}

fn request(body: &str) -> Vec<u8> {
    [HEAD, body.as_bytes()].concat()
}

#[test]
fn extensions_come_before_the_data_of_their_chunk() {
    let input = request(
        "3\r\nabc\r\n4;sig=ab12\r\ndefg\r\n2\r\nhi\r\n1 ; q=\"a;b\"\r\nj\r\n0;last;n=3\r\nX-Sum: 9\r\n\r\n",
    );
    let (events, error) = decode_all_ways(&input, true, &[]);
    assert_eq!(error, None);
    assert_eq!(
        events,
        [
            Ev::Data(b"abc".to_vec()),
            Ev::Ext(b";sig=ab12".to_vec()),
            Ev::Data(b"defghi".to_vec()),
            Ev::Ext(b" ; q=\"a;b\"".to_vec()),
            Ev::Data(b"j".to_vec()),
            Ev::Ext(b";last;n=3".to_vec()),
            Ev::Trailers(vec![("x-sum".into(), b"9".to_vec())]),
            Ev::End,
        ]
    );
    // Not asked for: the same body, no extension.
    let (events, error) = decode_all_ways(&input, false, &[]);
    assert_eq!(error, None);
    assert_eq!(
        events,
        [
            Ev::Data(b"abcdefghij".to_vec()),
            Ev::Trailers(vec![("x-sum".into(), b"9".to_vec())]),
            Ev::End,
        ]
    );
}

/// The end is still known with the last data: the last-chunk's
/// extensions and the trailers follow without another read.
#[test]
fn the_end_is_known_with_the_last_data() {
    let input = request("5\r\nhello\r\n0;done\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let mut dec = RequestDecoder::new(Limits::default());
    dec.set_chunk_extensions(true);
    let mut buf = BytesMut::from(&input[..]);
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::Head { .. }))));
    let Ok(Some(Event::Data(d))) = dec.decode(&mut buf) else {
        panic!("no data")
    };
    assert_eq!(d, "hello");
    assert!(dec.is_body_complete());
    let Ok(Some(Event::ChunkExtensions(e))) = dec.decode(&mut buf) else {
        panic!("no extensions")
    };
    assert_eq!(e.as_bytes(), b";done");
    assert_eq!(e.iter().next().map(|x| x.name()), Some("done"));
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::End(_)))));
    assert!(dec.is_idle());
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::Head { .. }))));
}

/// Extensions are slices of the read buffer, like data.
#[test]
fn extensions_are_not_copied() {
    let input = request("2;a=b\r\nhi\r\n0\r\n\r\n");
    let mut dec = RequestDecoder::new(Limits::default());
    dec.set_chunk_extensions(true);
    let mut buf = BytesMut::from(&input[..]);
    let base = buf.as_ptr() as usize;
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::Head { .. }))));
    let Ok(Some(Event::ChunkExtensions(e))) = dec.decode(&mut buf) else {
        panic!("no extensions")
    };
    assert_eq!(e.as_bytes().as_ptr() as usize, base + HEAD.len() + 1);
}

/// Bad extensions are refused as before, and their total is bounded,
/// whether they are handed out or not.
#[test]
fn extensions_handed_out_are_checked_as_before() {
    for report in [false, true] {
        let (_, error) = decode_all_ways(&request("3;a b\r\nabc\r\n0\r\n\r\n"), report, &[]);
        assert_eq!(error, Some(ErrorKind::InvalidChunkExtension));
        let long = format!(";e={}", "x".repeat(3000));
        let body: String = (0..7).map(|_| format!("1{long}\r\nx\r\n")).collect();
        let input = request(&body);
        let (events, error) = decode_all_ways(&input, report, &[7, 3001, 9000]);
        assert_eq!(error, Some(ErrorKind::ChunkExtensionsTooLarge));
        let data: usize = events
            .iter()
            .map(|e| match e {
                Ev::Data(d) => d.len(),
                _ => 0,
            })
            .sum();
        assert_eq!(data, 5, "16 KiB pass at the sixth chunk's line");
    }
}

/// What the encoder writes.
fn encoded(f: impl FnOnce(&mut RequestEncoder)) -> Vec<u8> {
    let mut enc = RequestEncoder::default();
    enc.send_head(Request::post("http://example.com/up"))
        .unwrap();
    f(&mut enc);
    let out = enc.output();
    out.copy_to_bytes(out.remaining()).to_vec()
}

fn ext(s: &str) -> ChunkExtensions {
    ChunkExtensions::new(Bytes::copy_from_slice(s.as_bytes())).expect("valid extensions")
}

#[test]
fn the_encoder_writes_extensions_on_the_next_chunk() {
    let bytes = encoded(|enc| {
        enc.send_chunk_extensions(ext(";a=1")).unwrap();
        // An empty write is no chunk: the extensions wait for one.
        enc.send_data("").unwrap();
        enc.send_chunk_extensions(ext(" ; b")).unwrap();
        enc.send_data("hello").unwrap();
        enc.send_data("world").unwrap();
        enc.send_chunk_extensions(ChunkExtensions::new("").unwrap())
            .unwrap();
        enc.send_chunk_extensions(ext(";end=\"x y\"")).unwrap();
        let mut trailers = HeaderMap::new();
        trailers.insert("x-sum", HeaderValue::from_static("10"));
        enc.finish(Some(trailers)).unwrap();
    });
    let body = &bytes[bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
    assert_eq!(
        body,
        b"5;a=1 ; b\r\nhello\r\n5\r\nworld\r\n0;end=\"x y\"\r\nx-sum: 10\r\n\r\n"
    );
}

#[test]
fn the_encoder_refuses_extensions_it_cannot_write() {
    let mut enc = RequestEncoder::default();
    assert_eq!(
        enc.send_chunk_extensions(ext(";a")),
        Err(UsageError::WrongState)
    );
    enc.send_head(
        Request::post("http://example.com/")
            .header("content-length", "2")
            .body(())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        enc.send_chunk_extensions(ext(";a")),
        Err(UsageError::ChunkExtensionsNotAllowed)
    );
    // A response to HEAD drops them with its data.
    let mut enc = ResponseEncoder::default();
    let ctx = ResponseContext {
        request: h1proto::framing::RequestKind::Head,
        ..ResponseContext::default()
    };
    enc.send_head(http::Response::builder(), ctx).unwrap();
    enc.send_chunk_extensions(ext(";a")).unwrap();
    enc.send_data("x").unwrap();
    enc.finish(None).unwrap();
    let out = enc.output();
    let bytes = out.copy_to_bytes(out.remaining());
    assert!(bytes.ends_with(b"\r\n\r\n"));
    assert!(!bytes.windows(2).any(|w| w == b";a"));
    // Text that could break the line never makes extensions.
    for bad in [";a\r\n0\r\n\r\n", ";a=b c", "a", ";", ";a=\"\n\""] {
        assert!(ChunkExtensions::new(bad).is_none(), "{bad:?}");
    }
}

// ------------------------------------------------------ encode, then decode

const EXTS: &[&str] = &[
    "",
    "",
    ";a",
    ";sig=0123abcd",
    " ; sp = tok",
    ";q=\"quoted; \\\"string\\\"\"",
    ";a;b=c;d",
];

#[derive(Debug, Clone)]
struct Body {
    chunks: Vec<(Vec<u8>, &'static str)>,
    last: &'static str,
    trailers: bool,
}

fn body() -> impl Strategy<Value = Body> {
    (
        prop::collection::vec(
            (
                prop_oneof![
                    4 => prop::collection::vec(any::<u8>(), 1..80),
                    1 => prop::collection::vec(any::<u8>(), 1000..1100),
                ],
                prop::sample::select(EXTS),
            ),
            0..6,
        ),
        prop::sample::select(EXTS),
        any::<bool>(),
    )
        .prop_map(|(chunks, last, trailers)| Body {
            chunks,
            last,
            trailers,
        })
}

impl Body {
    /// Sent by a `RequestEncoder`: the extensions before each chunk's data.
    fn encode(&self) -> Vec<u8> {
        encoded(|enc| {
            for (data, e) in &self.chunks {
                enc.send_chunk_extensions(ext(e)).unwrap();
                enc.send_data(Bytes::copy_from_slice(data)).unwrap();
            }
            enc.send_chunk_extensions(ext(self.last)).unwrap();
            let trailers = self.trailers.then(|| {
                let mut t = HeaderMap::new();
                t.insert("x-check", HeaderValue::from_static("ok"));
                t
            });
            enc.finish(trailers).unwrap();
        })
    }

    /// The events a decoder handing out extensions gives.
    fn events(&self, report: bool) -> Vec<Ev> {
        let mut events = Vec::new();
        for (data, e) in &self.chunks {
            if report && !e.is_empty() {
                push(&mut events, Ev::Ext(e.as_bytes().to_vec()));
            }
            push(&mut events, Ev::Data(data.clone()));
        }
        if report && !self.last.is_empty() {
            push(&mut events, Ev::Ext(self.last.as_bytes().to_vec()));
        }
        if self.trailers {
            push(
                &mut events,
                Ev::Trailers(vec![("x-check".into(), b"ok".to_vec())]),
            );
        }
        push(&mut events, Ev::End);
        events
    }
}

proptest! {
    #[test]
    fn encoded_extensions_decode_back_however_split(
        body in body(),
        picks in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let wire = body.encode();
        let mut cuts: Vec<usize> = picks.iter().map(|p| 1 + p % (wire.len() - 1)).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let bytewise: Vec<usize> = (1..wire.len()).collect();
        for report in [true, false] {
            for cuts in [&[][..], &cuts[..], &bytewise[..]] {
                let (events, error) = decode(&wire, cuts, report);
                prop_assert_eq!(error, None);
                prop_assert_eq!(&events, &body.events(report), "report {}, cuts {:?}", report, cuts);
            }
        }
    }
}

// ------------------------------------------------------------ connections

/// `Config::chunk_extensions` asks a connection's decoder for them: a
/// server reads a client's, a client a server's, and what one reads the
/// other can write again (a proxy's two halves).
#[test]
fn connections_forward_extensions() {
    let mut config = Config::default();
    config.chunk_extensions = true;
    let mut server = ServerConnection::new(config.clone());
    let mut buf = BytesMut::from(&request("3;n=1\r\nabc\r\n0;fin\r\n\r\n")[..]);
    let mut seen = Vec::new();
    while let Some(ev) = server.poll_event(&mut buf).unwrap() {
        seen.push(ev);
    }
    let exts: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            Event::ChunkExtensions(x) => Some(x.as_bytes().to_vec()),
            _ => None,
        })
        .collect();
    assert_eq!(exts, [b";n=1".to_vec(), b";fin".to_vec()]);

    // The server answers with them on its own chunked response...
    let res = http::Response::builder()
        .header("transfer-encoding", "chunked")
        .body(())
        .unwrap();
    server.sender().send_head(res).unwrap();
    for ev in seen {
        match ev {
            Event::ChunkExtensions(x) => server.sender().send_chunk_extensions(x).unwrap(),
            Event::Data(d) => server.sender().send_data(d).unwrap(),
            _ => {}
        }
    }
    server.sender().finish(None).unwrap();
    let out = server.output();
    let wire = out.copy_to_bytes(out.remaining());

    // ...and a client connection asked for them reads them back.
    let mut client = ClientConnection::new(config);
    client
        .sender()
        .send_request(Request::get("http://example.com/"))
        .unwrap();
    let mut buf = BytesMut::from(&wire[..]);
    let mut events = Vec::new();
    while let Some(ev) = client.poll_event(&mut buf).unwrap() {
        events.push(match ev {
            Event::Head { body, .. } => {
                assert_eq!(body, BodyKind::Chunked);
                continue;
            }
            Event::ChunkExtensions(x) => Ev::Ext(x.as_bytes().to_vec()),
            Event::Data(d) => Ev::Data(d.to_vec()),
            Event::End(_) => Ev::End,
            other => panic!("unexpected {other:?}"),
        });
    }
    assert_eq!(
        events,
        [
            Ev::Ext(b";n=1".to_vec()),
            Ev::Data(b"abc".to_vec()),
            Ev::Ext(b";fin".to_vec()),
            Ev::End
        ]
    );
    // Off by default.
    let mut client = ClientConnection::new(Config::default());
    client
        .sender()
        .send_request(
            http::Request::builder()
                .method(Method::GET)
                .uri("http://example.com/"),
        )
        .unwrap();
    let mut buf = BytesMut::from(&wire[..]);
    while let Some(ev) = client.poll_event(&mut buf).unwrap() {
        assert!(!matches!(ev, Event::ChunkExtensions(_)));
    }
}
