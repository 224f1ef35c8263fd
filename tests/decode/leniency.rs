//! The leniency switches, one by one: each input is refused with the switch
//! off (the error naming the switch) and read as documented with it on,
//! and every outcome is the same whole, split at every byte boundary, and
//! byte by byte. A response switch never loosens request parsing.

use bytes::BytesMut;
use h1proto::leniency::Tolerance;
use h1proto::{
    ClientConnection, CloseReason, Config, ErrorKind, Event, KeepAlive, Limits, ReasonPhrase,
    RequestDecoder, ResponseDecoder, ServerConnection,
    framing::BodyKind,
    leniency::{RequestLeniency, ResponseLeniency},
};
use http::Method;

// ---------------------------------------------------------------- harness

/// An event reduced to what these tests compare.
#[derive(Debug, Clone, PartialEq)]
enum Ev {
    /// Start line ("GET /", "200 <reason>"), fields (lower-case name,
    /// value), framing.
    Head(String, Vec<(String, String)>, BodyKind),
    Data(Vec<u8>),
    Trailers(Vec<(String, String)>),
    End(KeepAlive),
}

#[derive(Debug, Clone, PartialEq)]
struct Run {
    events: Vec<Ev>,
    /// The error: its kind, the switch it names, its text.
    error: Option<(ErrorKind, Option<Tolerance>, String)>,
}

fn fields(map: &http::HeaderMap) -> Vec<(String, String)> {
    map.iter()
        .map(|(k, v)| {
            let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
            (k.as_str().to_owned(), value)
        })
        .collect()
}

fn push(events: &mut Vec<Ev>, ev: Ev) {
    match (events.last_mut(), ev) {
        (Some(Ev::Data(a)), Ev::Data(b)) => a.extend(b),
        (_, ev) => events.push(ev),
    }
}

fn common<H: h1proto::MessageHead>(ev: Event<H>) -> Ev {
    match ev {
        Event::Data(d) => Ev::Data(d.to_vec()),
        Event::Trailers(t) => Ev::Trailers(fields(&t)),
        Event::End(k) => Ev::End(k),
        _ => panic!("a head here"),
    }
}

/// Either decoder, events reduced.
trait Dec {
    fn next(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Ev>, h1proto::Error>;
}

impl Dec for RequestDecoder {
    fn next(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Ev>, h1proto::Error> {
        let ev = if eof {
            self.decode_eof(buf)?
        } else {
            self.decode(buf)?
        };
        Ok(ev.map(|ev| match ev {
            Event::Head { head, body } => Ev::Head(
                format!("{} {}", head.method(), head.uri()),
                fields(head.headers()),
                body,
            ),
            other => common(other),
        }))
    }
}

impl Dec for ResponseDecoder {
    fn next(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Ev>, h1proto::Error> {
        let ev = if eof {
            self.decode_eof(buf)?
        } else {
            self.decode(buf)?
        };
        Ok(ev.map(|ev| match ev {
            Event::Head { head, body } => {
                let reason = match head.extensions().get::<ReasonPhrase>() {
                    Some(r) => String::from_utf8_lossy(r.as_bytes()).into_owned(),
                    None => head.status().canonical_reason().unwrap_or("").to_owned(),
                };
                Ev::Head(
                    format!("{} <{reason}>", head.status().as_u16()),
                    fields(head.headers()),
                    body,
                )
            }
            other => common(other),
        }))
    }
}

/// Feeds `raw` cut at `cuts`, then the end of input.
fn run_cut<D: Dec>(mut dec: D, raw: &[u8], cuts: &[usize]) -> Run {
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    let mut from = 0;
    let mut ends: Vec<usize> = cuts.to_vec();
    ends.push(raw.len());
    for (i, &to) in ends.iter().enumerate() {
        buf.extend_from_slice(&raw[from..to]);
        from = to;
        let eof = i + 1 == ends.len();
        loop {
            match dec.next(&mut buf, eof) {
                Ok(Some(ev)) => push(&mut events, ev),
                Ok(None) => break,
                Err(e) => {
                    let error = Some((e.kind(), e.tolerance(), e.to_string()));
                    return Run { events, error };
                }
            }
        }
    }
    Run {
        events,
        error: None,
    }
}

/// The outcome of `raw`, the same whole, at every single split point, and
/// byte by byte.
fn run<D: Dec>(make: impl Fn() -> D, raw: &[u8]) -> Run {
    let whole = run_cut(make(), raw, &[]);
    for at in 1..raw.len() {
        assert_eq!(run_cut(make(), raw, &[at]), whole, "split at {at}");
    }
    let bytes: Vec<usize> = (1..raw.len()).collect();
    assert_eq!(run_cut(make(), raw, &bytes), whole, "byte by byte");
    whole
}

fn requests(leniency: RequestLeniency, raw: &[u8]) -> Run {
    run(
        || RequestDecoder::with_leniency(Limits::default(), leniency),
        raw,
    )
}

fn responses(leniency: ResponseLeniency, raw: &[u8]) -> Run {
    run(
        || ResponseDecoder::with_leniency(Limits::default(), leniency),
        raw,
    )
}

fn request_with(switch: Tolerance) -> RequestLeniency {
    let mut l = RequestLeniency::strict();
    l.set(switch, true).unwrap();
    l
}

fn response_with(switch: Tolerance) -> ResponseLeniency {
    let mut l = ResponseLeniency::strict();
    l.set(switch, true).unwrap();
    l
}

/// Refused with `kind`, the error naming `switch` in code and in its text.
#[track_caller]
fn names_switch(run: &Run, kind: ErrorKind, switch: Tolerance) {
    let (k, s, text) = run.error.as_ref().expect("refused");
    assert_eq!((*k, *s), (kind, Some(switch)), "{run:?}");
    let hint = format!("(enable `{}` to accept)", switch.name());
    assert!(text.ends_with(&hint), "{text}");
}

/// Refused with `kind`, naming no switch.
#[track_caller]
fn refused_plainly(run: &Run, kind: ErrorKind) {
    let (k, s, text) = run.error.as_ref().expect("refused");
    assert_eq!((*k, *s), (kind, None), "{run:?}");
    assert!(!text.contains("enable"), "{text}");
}

fn head(start: &str, fields: &[(&str, &str)], body: BodyKind) -> Ev {
    let fields = fields
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    Ev::Head(start.to_owned(), fields, body)
}

fn data(d: &str) -> Ev {
    Ev::Data(d.as_bytes().to_vec())
}

const REUSABLE: Ev = Ev::End(KeepAlive::Reusable);

// ------------------------------------------------- no_space_after_status

#[test]
fn no_space_after_status() {
    let raw = b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok";
    names_switch(
        &responses(ResponseLeniency::strict(), raw),
        ErrorKind::InvalidStatus,
        Tolerance::NoSpaceAfterStatus,
    );
    let read = vec![
        head("200 <>", &[("content-length", "2")], BodyKind::Length(2)),
        data("ok"),
        REUSABLE,
    ];
    let on = responses(response_with(Tolerance::NoSpaceAfterStatus), raw);
    assert_eq!((on.events, on.error), (read.clone(), None));
    // The client default: on.
    let default = run(|| ResponseDecoder::new(Limits::default()), raw);
    assert_eq!(default.events, read);
    assert!(
        ResponseDecoder::new(Limits::default())
            .leniency()
            .no_space_after_status
    );
}

#[test]
fn no_space_after_status_accepts_nothing_else() {
    let on = response_with(Tolerance::NoSpaceAfterStatus);
    for (raw, strict_kind, lenient_kind) in [
        (
            &b"HTTP/1.1 2x0\r\n\r\n"[..],
            ErrorKind::InvalidStatus,
            ErrorKind::InvalidStatus,
        ),
        (
            b"HTTP/1.1 200\t\r\n\r\n",
            ErrorKind::InvalidStatus,
            ErrorKind::InvalidStatus,
        ),
        (
            b"HTTP/1.1 20\r\n\r\n",
            ErrorKind::InvalidStartLine,
            ErrorKind::InvalidStartLine,
        ),
        (
            b"HTTP/1.1 2000\r\n\r\n",
            ErrorKind::InvalidStatus,
            ErrorKind::InvalidStatus,
        ),
        // The version is refused at the SP after it, before the rest.
        (
            b"HTTP/2.0 200\r\n\r\n",
            ErrorKind::UnsupportedVersion,
            ErrorKind::UnsupportedVersion,
        ),
    ] {
        refused_plainly(&responses(ResponseLeniency::strict(), raw), strict_kind);
        refused_plainly(&responses(on, raw), lenient_kind);
    }
}

// ---------------------------------------------------- space_before_colon

#[test]
fn space_before_colon() {
    let raw = b"HTTP/1.1 200 OK\r\nServer \t: x\r\nContent-Length : 2\r\n\r\nok";
    names_switch(
        &responses(ResponseLeniency::strict(), raw),
        ErrorKind::WhitespaceBeforeColon,
        Tolerance::SpaceBeforeColon,
    );
    let on = responses(response_with(Tolerance::SpaceBeforeColon), raw);
    assert_eq!(
        (on.events, on.error),
        (
            vec![
                head(
                    "200 <OK>",
                    &[("server", "x"), ("content-length", "2")],
                    BodyKind::Length(2)
                ),
                data("ok"),
                REUSABLE,
            ],
            None
        )
    );
    // In a trailer section too.
    let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T : 1\r\n\r\n";
    names_switch(
        &responses(ResponseLeniency::strict(), raw),
        ErrorKind::WhitespaceBeforeColon,
        Tolerance::SpaceBeforeColon,
    );
    let on = responses(response_with(Tolerance::SpaceBeforeColon), raw);
    assert_eq!(on.error, None);
    assert!(
        on.events
            .contains(&Ev::Trailers(vec![("x-t".into(), "1".into())]))
    );
}

#[test]
fn space_before_colon_does_not_make_an_invalid_name_valid() {
    let raw = b"HTTP/1.1 200 OK\r\nBad Name : x\r\nContent-Length: 0\r\n\r\n";
    let on = responses(response_with(Tolerance::SpaceBeforeColon), raw);
    // Only skipping the line would accept it: the error says so. The name
    // is refused at its SP followed by more name, before any colon.
    names_switch(
        &on,
        ErrorKind::InvalidFieldName,
        Tolerance::SkipInvalidFields,
    );
}

// --------------------------------------------------- skip_invalid_fields

#[test]
fn skip_invalid_fields() {
    let expected = |body: BodyKind| {
        vec![
            head(
                "200 <OK>",
                &[("a", "1"), ("content-length", "2")],
                BodyKind::Length(2),
            ),
            data("ok"),
            REUSABLE,
        ]
        .into_iter()
        .map(|e| match e {
            Ev::Head(s, f, _) => Ev::Head(s, f, body),
            e => e,
        })
        .collect::<Vec<_>>()
    };
    for (bad, kind, switch) in [
        (
            "NotAField\r\n",
            ErrorKind::MissingColon,
            Tolerance::SkipInvalidFields,
        ),
        // Words: the second one proves the first is no field name.
        (
            "this is not a field\r\n",
            ErrorKind::InvalidFieldName,
            Tolerance::SkipInvalidFields,
        ),
        (
            "X(y): z\r\n",
            ErrorKind::InvalidFieldName,
            Tolerance::SkipInvalidFields,
        ),
        (
            ": no name\r\n",
            ErrorKind::InvalidFieldName,
            Tolerance::SkipInvalidFields,
        ),
        (
            "Bad Name : x\r\n",
            ErrorKind::InvalidFieldName,
            Tolerance::SkipInvalidFields,
        ),
        // Without space_before_colon, such a line is not a valid field.
        (
            "X-Sp : x\r\n",
            ErrorKind::WhitespaceBeforeColon,
            Tolerance::SpaceBeforeColon,
        ),
        // An invalid line and its obs-fold continuation go together.
        (
            "no-colon\r\n  continued\r\n",
            ErrorKind::MissingColon,
            Tolerance::SkipInvalidFields,
        ),
    ] {
        let raw = format!("HTTP/1.1 200 OK\r\nA: 1\r\n{bad}Content-Length: 2\r\n\r\nok");
        names_switch(
            &responses(ResponseLeniency::strict(), raw.as_bytes()),
            kind,
            switch,
        );
        let on = responses(response_with(Tolerance::SkipInvalidFields), raw.as_bytes());
        assert_eq!(
            (on.events, on.error),
            (expected(BodyKind::Length(2)), None),
            "{bad:?}"
        );
    }
}

#[test]
fn skip_invalid_fields_skips_whitespace_before_the_first_field() {
    // RFC 9112 section 2.2: such a line may be consumed without processing.
    let raw = b"HTTP/1.1 200 OK\r\n  stray\r\n\tmore\r\nContent-Length: 0\r\n\r\n";
    names_switch(
        &responses(ResponseLeniency::strict(), raw),
        ErrorKind::ObsFold,
        Tolerance::SkipInvalidFields,
    );
    let on = responses(response_with(Tolerance::SkipInvalidFields), raw);
    assert_eq!(
        on.events,
        vec![
            head("200 <OK>", &[("content-length", "0")], BodyKind::Length(0)),
            REUSABLE
        ]
    );
}

#[test]
fn skip_invalid_fields_still_refuses_invalid_values_and_folded_trailers() {
    let on = response_with(Tolerance::SkipInvalidFields);
    let raw = b"HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 0\r\n\r\n";
    refused_plainly(&responses(on, raw), ErrorKind::InvalidFieldValue);
    let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n 2\r\n\r\n";
    refused_plainly(&responses(on, raw), ErrorKind::ObsFold);
}

/// A trailer section whose every line is skipped has no fields: no
/// `Trailers` event (found by the split-invariance proptests).
#[test]
fn skip_invalid_fields_can_empty_a_trailer_section() {
    let raw =
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nno colon\r\n\r\n";
    // Read as a head's field lines are: the SP after `no` cannot be
    // followed by anything but more whitespace and the colon.
    names_switch(
        &responses(ResponseLeniency::strict(), raw),
        ErrorKind::InvalidFieldName,
        Tolerance::SkipInvalidFields,
    );
    let on = responses(response_with(Tolerance::SkipInvalidFields), raw);
    assert_eq!(
        (on.events, on.error),
        (
            vec![
                head(
                    "200 <OK>",
                    &[("transfer-encoding", "chunked")],
                    BodyKind::Chunked
                ),
                data("ok"),
                REUSABLE
            ],
            None
        )
    );
}

// ---------------------------------------------------------------- bare_lf

#[test]
fn bare_lf_in_every_request_line_end() {
    let on = request_with(Tolerance::BareLf);
    let body = || {
        vec![
            head(
                "POST /up",
                &[("host", "a"), ("transfer-encoding", "chunked")],
                BodyKind::Chunked,
            ),
            data("abc"),
            Ev::Trailers(vec![("x-t".into(), "1".into())]),
            REUSABLE,
        ]
    };
    let crlf = "POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n";
    assert_eq!(
        requests(RequestLeniency::strict(), crlf.as_bytes()).events,
        body()
    );
    // Each CRLF of the message in turn replaced by a bare LF, then all.
    let places: Vec<usize> = crlf.match_indices("\r\n").map(|(i, _)| i).collect();
    let mut variants: Vec<String> = places
        .iter()
        .map(|&i| format!("{}{}", &crlf[..i], &crlf[i + 1..]))
        .collect();
    variants.push(crlf.replace("\r\n", "\n"));
    for raw in &variants {
        let strict = requests(RequestLeniency::strict(), raw.as_bytes());
        let (kind, switch, _) = strict.error.clone().expect("refused strictly");
        assert!(
            matches!(kind, ErrorKind::BareLineFeed | ErrorKind::MissingChunkCrlf),
            "{raw:?}: {kind:?}"
        );
        assert_eq!(switch, Some(Tolerance::BareLf), "{raw:?}");
        let lenient = requests(on, raw.as_bytes());
        assert_eq!((lenient.events, lenient.error), (body(), None), "{raw:?}");
    }
}

#[test]
fn bare_lf_before_a_request_line() {
    let raw = b"\n\r\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";
    names_switch(
        &requests(RequestLeniency::strict(), raw),
        ErrorKind::InvalidStartLine,
        Tolerance::BareLf,
    );
    let on = requests(request_with(Tolerance::BareLf), raw);
    assert_eq!(
        on.events,
        vec![head("GET /", &[("host", "a")], BodyKind::Empty), REUSABLE]
    );
}

#[test]
fn bare_lf_in_every_response_line_end() {
    let on = response_with(Tolerance::BareLf);
    let crlf = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
    let read = vec![
        head(
            "200 <OK>",
            &[("transfer-encoding", "chunked")],
            BodyKind::Chunked,
        ),
        data("ok"),
        REUSABLE,
    ];
    let places: Vec<usize> = crlf.match_indices("\r\n").map(|(i, _)| i).collect();
    let mut variants: Vec<String> = places
        .iter()
        .map(|&i| format!("{}{}", &crlf[..i], &crlf[i + 1..]))
        .collect();
    variants.push(crlf.replace("\r\n", "\n"));
    for raw in &variants {
        let strict = responses(ResponseLeniency::strict(), raw.as_bytes());
        assert_eq!(strict.error.unwrap().1, Some(Tolerance::BareLf), "{raw:?}");
        let lenient = responses(on, raw.as_bytes());
        assert_eq!(
            (lenient.events, lenient.error),
            (read.clone(), None),
            "{raw:?}"
        );
    }
}

#[test]
fn bare_lf_does_not_make_a_lone_cr_a_line_end() {
    let on = request_with(Tolerance::BareLf);
    let raw = b"GET / HTTP/1.1\r\nHost: a\rX: b\n\n";
    refused_plainly(&requests(on, raw), ErrorKind::InvalidFieldValue);
    let raw = b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n\n1\nx\rz\n";
    refused_plainly(&requests(on, raw), ErrorKind::MissingChunkCrlf);
}

// --------------------------------------------------------------- obs_fold

#[test]
fn obs_fold_in_a_request() {
    let raw =
        b"GET / HTTP/1.1\r\nHost: a\r\nX: one\r\n \t two\r\nContent-Length: 3\r\n \t\r\n\r\nabc";
    names_switch(
        &requests(RequestLeniency::strict(), raw),
        ErrorKind::ObsFold,
        Tolerance::ObsFold,
    );
    let on = requests(request_with(Tolerance::ObsFold), raw);
    assert_eq!(
        (on.events, on.error),
        (
            vec![
                head(
                    "GET /",
                    &[("host", "a"), ("x", "one two"), ("content-length", "3")],
                    BodyKind::Length(3)
                ),
                data("abc"),
                REUSABLE
            ],
            None
        )
    );
}

#[test]
fn obs_fold_without_a_field_above_or_in_trailers_stays_refused() {
    let on = request_with(Tolerance::ObsFold);
    let raw = b"GET / HTTP/1.1\r\n x\r\nHost: a\r\n\r\n";
    refused_plainly(
        &requests(RequestLeniency::strict(), raw),
        ErrorKind::ObsFold,
    );
    refused_plainly(&requests(on, raw), ErrorKind::ObsFold);
    let raw =
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n 2\r\n\r\n";
    refused_plainly(
        &requests(RequestLeniency::strict(), raw),
        ErrorKind::ObsFold,
    );
    refused_plainly(&requests(on, raw), ErrorKind::ObsFold);
}

// ------------------------------------------- chunked_with_content_length

const CL_TE: &[u8] = b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n";

#[test]
fn chunked_with_content_length() {
    names_switch(
        &requests(RequestLeniency::strict(), CL_TE),
        ErrorKind::ContentLengthWithTransferEncoding,
        Tolerance::ChunkedWithContentLength,
    );
    let on = requests(request_with(Tolerance::ChunkedWithContentLength), CL_TE);
    assert_eq!(
        (on.events, on.error),
        (
            vec![
                // Content-Length is gone from the head.
                head(
                    "POST /a",
                    &[("host", "h"), ("transfer-encoding", "chunked")],
                    BodyKind::Chunked
                ),
                data("abc"),
                // The next request is not read: the connection closes.
                Ev::End(KeepAlive::Close(CloseReason::FramingConflict)),
            ],
            None
        )
    );
}

#[test]
fn chunked_with_content_length_needs_a_chunked_request_and_a_valid_length() {
    let on = request_with(Tolerance::ChunkedWithContentLength);
    for (fields, kind_on) in [
        (
            "Content-Length: 6\r\nTransfer-Encoding: gzip\r\n",
            ErrorKind::InvalidTransferEncoding,
        ),
        (
            "Content-Length: 6\r\nTransfer-Encoding: gzip, chunked\r\n",
            ErrorKind::UnsupportedTransferCoding,
        ),
        (
            "Content-Length: +6\r\nTransfer-Encoding: chunked\r\n",
            ErrorKind::InvalidContentLength,
        ),
        (
            "Content-Length: 6\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n",
            ErrorKind::InvalidContentLength,
        ),
    ] {
        let raw = format!("POST / HTTP/1.1\r\nHost: h\r\n{fields}\r\n0\r\n\r\n");
        refused_plainly(
            &requests(RequestLeniency::strict(), raw.as_bytes()),
            ErrorKind::ContentLengthWithTransferEncoding,
        );
        refused_plainly(&requests(on, raw.as_bytes()), kind_on);
    }
    let raw =
        b"POST / HTTP/1.0\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    refused_plainly(&requests(on, raw), ErrorKind::TransferEncodingInHttp10);
}

#[test]
fn a_server_closes_after_answering_a_request_read_with_the_switch() {
    let mut config = Config::default();
    config.request_leniency.chunked_with_content_length = true;
    let mut server = ServerConnection::new(config);
    let mut buf = BytesMut::from(CL_TE);
    let mut body = Vec::new();
    loop {
        match server.poll_event(&mut buf).unwrap() {
            Some(Event::Head { head, body }) => {
                assert_eq!(body, BodyKind::Chunked);
                assert!(!head.headers().contains_key("content-length"));
            }
            Some(Event::Data(d)) => body.extend_from_slice(&d),
            Some(Event::End(_)) => {
                server
                    .sender()
                    .send_response(http::Response::new("done"))
                    .expect("a response is due");
            }
            Some(_) => {}
            None => break,
        }
    }
    assert_eq!(body, b"abc");
    let out = server.output();
    let mut wire = Vec::new();
    while bytes::Buf::has_remaining(out) {
        let chunk = bytes::Buf::chunk(out).to_vec();
        bytes::Buf::advance(out, chunk.len());
        wire.extend(chunk);
    }
    let wire = String::from_utf8(wire).unwrap();
    assert!(wire.starts_with("HTTP/1.1 200 OK\r\n"), "{wire}");
    assert!(wire.contains("connection: close\r\n"), "{wire}");
    assert_eq!(wire.matches("HTTP/1.1").count(), 1, "{wire}");
    assert!(server.is_closed());
    // The strict default refuses the same request.
    let mut server = ServerConnection::new(Config::default());
    let err = server.poll_event(&mut BytesMut::from(CL_TE)).unwrap_err();
    assert_eq!(err.tolerance(), Some(Tolerance::ChunkedWithContentLength));
}

// ------------------------------------------------------- sides stay apart

/// Every request switch on still refuses what only a response switch would
/// accept, and names no switch.
#[test]
fn response_switches_never_loosen_requests() {
    let all = RequestLeniency::all();
    for (raw, kind) in [
        (
            &b"GET / HTTP/1.1\r\nHost : a\r\n\r\n"[..],
            ErrorKind::WhitespaceBeforeColon,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nno-colon\r\n\r\n",
            ErrorKind::MissingColon,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nX(y): z\r\n\r\n",
            ErrorKind::InvalidFieldName,
        ),
    ] {
        refused_plainly(&requests(RequestLeniency::strict(), raw), kind);
        refused_plainly(&requests(all, raw), kind);
    }
}

/// A response decoder with every switch on still refuses a response with
/// what only request switches concern, and names none.
#[test]
fn request_switches_are_not_named_for_responses() {
    let all = ResponseLeniency::all();
    // A fold in a trailer section (obs_fold is request-only, heads only).
    let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n 2\r\n\r\n";
    refused_plainly(
        &responses(ResponseLeniency::strict(), raw),
        ErrorKind::ObsFold,
    );
    refused_plainly(&responses(all, raw), ErrorKind::ObsFold);
    // An empty line before a status line is not a bare-LF matter.
    let raw = b"\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    refused_plainly(
        &responses(ResponseLeniency::strict(), raw),
        ErrorKind::InvalidStartLine,
    );
}

#[test]
fn a_client_connection_takes_its_switches_from_the_config() {
    let raw = b"HTTP/1.1 200 OK\r\nServer : x\r\nContent-Length: 2\r\n\r\nok";
    let poll = |config: Config| {
        let mut client = ClientConnection::new(config);
        client
            .sender()
            .send_request(
                http::Request::get("/")
                    .header("host", "a")
                    .body(bytes::Bytes::new())
                    .unwrap(),
            )
            .unwrap();
        let mut buf = BytesMut::from(&raw[..]);
        let mut events = Vec::new();
        loop {
            match client.poll_event(&mut buf) {
                Ok(Some(ev)) => events.push(ev),
                Ok(None) => return Ok(events),
                Err(e) => return Err(e),
            }
        }
    };
    let err = poll(Config::default()).unwrap_err();
    assert_eq!(err.tolerance(), Some(Tolerance::SpaceBeforeColon));
    let mut config = Config::default();
    config.response_leniency = ResponseLeniency::all();
    let events = poll(config).unwrap();
    assert!(matches!(
        events.last(),
        Some(Event::End(KeepAlive::Reusable))
    ));
}

#[test]
fn the_decoders_report_their_switches() {
    let dec = RequestDecoder::with_leniency(Limits::default(), RequestLeniency::all());
    assert_eq!(dec.leniency(), RequestLeniency::all());
    assert_eq!(
        RequestDecoder::new(Limits::default()).leniency(),
        RequestLeniency::strict()
    );
    let dec = ResponseDecoder::with_leniency(Limits::default(), ResponseLeniency::strict());
    assert_eq!(dec.leniency(), ResponseLeniency::strict());
    let mut dec = ResponseDecoder::with_leniency(Limits::default(), ResponseLeniency::all());
    assert_eq!(dec.leniency(), ResponseLeniency::all());
    dec.expect_response_to(&Method::GET);
}
