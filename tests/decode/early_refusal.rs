//! Early refusal: a head is refused at the first byte that proves it
//! invalid, not once it is complete or has reached `max_head_bytes`, and
//! the error is the same (kind, offset, field, switch) however the input
//! was cut into reads, whole included.
//!
//! Each case is a head that goes bad at a known byte, followed by 64 KiB
//! that never end it. It is decoded whole, cut at every point around the
//! byte that decides, and byte by byte: the decoder must say nothing
//! before that byte arrives and refuse as soon as it has, with the error
//! the whole input gets.

use bytes::BytesMut;
use h1proto::{Error, ErrorKind, Limits, RequestDecoder, ResponseDecoder};

trait Decode {
    /// One call: `Ok(true)` for an event, `Ok(false)` for "need more".
    fn call(&mut self, buf: &mut BytesMut) -> Result<bool, Error>;
}

impl Decode for RequestDecoder {
    fn call(&mut self, buf: &mut BytesMut) -> Result<bool, Error> {
        self.decode(buf).map(|e| e.is_some())
    }
}

impl Decode for ResponseDecoder {
    fn call(&mut self, buf: &mut BytesMut) -> Result<bool, Error> {
        self.decode(buf).map(|e| e.is_some())
    }
}

/// Feeds `piece` and decodes until the decoder needs more: its error, if
/// it gave one.
fn feed(dec: &mut impl Decode, buf: &mut BytesMut, piece: &[u8]) -> Option<Error> {
    buf.extend_from_slice(piece);
    loop {
        match dec.call(buf) {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => return Some(e),
        }
    }
}

/// 64 KiB that never end a head.
fn filler() -> Vec<u8> {
    b"abcdefgh".repeat(8 * 1024)
}

/// `bad` followed by the filler is refused as soon as its first `known`
/// bytes have arrived, with the same error whole, at every cut around
/// that byte and byte by byte; returns the error.
fn refused_at<D: Decode>(make: impl Fn() -> D, bad: &[u8], known: usize) -> Error {
    let input = [bad, &filler()].concat();
    let whole = {
        let mut buf = BytesMut::new();
        feed(&mut make(), &mut buf, &input).expect("refused whole")
    };
    // One cut anywhere up to a little past the byte that decides.
    for cut in 0..=(known + 16).min(input.len()) {
        let mut dec = make();
        let mut buf = BytesMut::new();
        let first = feed(&mut dec, &mut buf, &input[..cut]);
        if cut < known {
            assert_eq!(first, None, "refused before byte {known}, cut at {cut}");
            let rest = feed(&mut dec, &mut buf, &input[cut..]);
            assert_eq!(rest.as_ref(), Some(&whole), "cut at {cut}");
        } else {
            assert_eq!(first.as_ref(), Some(&whole), "cut at {cut}");
        }
    }
    // Byte by byte: the error comes with byte `known`, not later.
    let mut dec = make();
    let mut buf = BytesMut::new();
    let mut fed = 0;
    let error = loop {
        fed += 1;
        if let Some(e) = feed(&mut dec, &mut buf, &input[fed - 1..fed]) {
            break e;
        }
    };
    assert_eq!((fed, &error), (known, &whole), "byte by byte");
    // In reads of 1 KiB, as a socket would give them: the first read.
    let mut dec = make();
    let mut buf = BytesMut::new();
    let reads = input
        .chunks(1024)
        .position(|read| feed(&mut dec, &mut buf, read).is_some());
    assert_eq!(
        reads,
        Some(0),
        "refused only after {reads:?} reads of 1 KiB"
    );
    whole
}

fn requests() -> RequestDecoder {
    RequestDecoder::new(Limits::default())
}

fn responses() -> ResponseDecoder {
    ResponseDecoder::new(Limits::default())
}

/// (the head up to and including the byte that decides, the error, its
/// offset, its field)
type Case = (&'static [u8], ErrorKind, u64, Option<&'static [u8]>);

#[test]
fn a_request_is_refused_at_the_byte_that_proves_it_invalid() {
    use ErrorKind::*;
    let cases: &[Case] = &[
        // A byte that can never be in a method.
        (b"G\x01", InvalidMethod, 0, None),
        (b"GE(", InvalidMethod, 0, None),
        // A bare CR followed by a letter in the request line.
        (b"GET /a\rb", InvalidTarget, 0, None),
        (b"GET /a\"", InvalidTarget, 0, None),
        (b"GET #", InvalidTarget, 0, None),
        // A target whose form does not fit the method, once it ends.
        (b"GET example.com:443 ", InvalidTarget, 0, None),
        (b"GET / HTTP/1.x", InvalidVersion, 0, None),
        (b"GET / h", InvalidVersion, 0, None),
        (b"GET / HTTP/1.1 ", InvalidStartLine, 0, None),
        (b"GET / HTTP/1.1\rX", InvalidStartLine, 0, None),
        // A line end where the version should be.
        (b"GET /\r\n", InvalidStartLine, 0, None),
        (b"GET / HTTP/2.0\r\n", UnsupportedVersion, 0, None),
        (b"GET / HTTP/1.1\n", BareLineFeed, 0, None),
        // Field lines: placed at their start, with the name at fault. An
        // invalid name is refused where it ends (its colon or line end), to
        // be named whole.
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nX\x01:",
            InvalidFieldName,
            25,
            Some(b"X\x01"),
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nX Y\r\n",
            InvalidFieldName,
            25,
            Some(b"X Y"),
        ),
        (
            b"GET / HTTP/1.1\r\nHost :",
            WhitespaceBeforeColon,
            16,
            Some(b"Host"),
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\x00",
            InvalidFieldValue,
            16,
            Some(b"Host"),
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\rb",
            InvalidFieldValue,
            16,
            Some(b"Host"),
        ),
        (b"GET / HTTP/1.1\r\nNoColon\r\n", MissingColon, 16, None),
        (b"GET / HTTP/1.1\r\nHost: a\r\n ", ObsFold, 25, None),
        (
            b"GET / HTTP/1.1\r\nHost: a\n",
            BareLineFeed,
            16,
            Some(b"Host"),
        ),
    ];
    for &(bad, kind, offset, field) in cases {
        let error = refused_at(requests, bad, bad.len());
        let what = String::from_utf8_lossy(bad);
        assert_eq!(error.kind(), kind, "{what:?}");
        assert_eq!(error.offset(), Some(offset), "{what:?}");
        assert_eq!(error.field(), field, "{what:?}");
    }
}

#[test]
fn a_response_is_refused_at_the_byte_that_proves_it_invalid() {
    use ErrorKind::*;
    let cases: &[Case] = &[
        (b"HTP", InvalidVersion, 0, None),
        (b"HTTP/1.1x", InvalidStartLine, 0, None),
        (b"HTTP/2.0 ", UnsupportedVersion, 0, None),
        (b"HTTP/1.1 2x", InvalidStatus, 0, None),
        (b"HTTP/1.1 0", InvalidStatus, 0, None),
        (b"HTTP/1.1 200x", InvalidStatus, 0, None),
        (b"HTTP/1.1 200 O\x01", InvalidReason, 0, None),
        (
            b"HTTP/1.1 200 OK\r\nA\x7fb :",
            InvalidFieldName,
            17,
            Some(b"A\x7fb"),
        ),
        (
            b"HTTP/1.1 200 OK\r\nA: \x01",
            InvalidFieldValue,
            17,
            Some(b"A"),
        ),
        (b"HTTP/1.1 200 OK\r\n ", ObsFold, 17, None),
    ];
    for &(bad, kind, offset, field) in cases {
        let error = refused_at(responses, bad, bad.len());
        let what = String::from_utf8_lossy(bad);
        assert_eq!(error.kind(), kind, "{what:?}");
        assert_eq!(error.offset(), Some(offset), "{what:?}");
        assert_eq!(error.field(), field, "{what:?}");
    }
}

/// Offsets count the stream: a bad head after a valid message is placed
/// where it is, and the decoder still refuses it at once.
#[test]
fn a_second_head_is_refused_early_and_placed_in_the_stream() {
    let first = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    let bad = [&first[..], b"GET /\x7f"].concat();
    let error = refused_at(requests, &bad, bad.len());
    assert_eq!(
        (error.kind(), error.offset()),
        (ErrorKind::InvalidTarget, Some(first.len() as u64))
    );
}

/// A switch that accepts the deviation lets the head go on; the error
/// names the switch where there is one.
#[test]
fn the_switches_apply_before_the_head_ends() {
    use h1proto::leniency::ResponseLeniency;
    let lenient = || {
        let mut leniency = ResponseLeniency::strict();
        leniency.skip_invalid_fields = true;
        ResponseDecoder::with_leniency(Limits::default(), leniency)
    };
    // Skipped, not refused: the head is only too large in the end.
    let input = [&b"HTTP/1.1 200 OK\r\nA\x7f"[..], &filler()].concat();
    let mut buf = BytesMut::new();
    let error = feed(&mut lenient(), &mut buf, &input).unwrap();
    assert_eq!(error.kind(), ErrorKind::HeadTooLarge);
    // Strictly, the error names the switch.
    let error = refused_at(responses, b"HTTP/1.1 200 OK\r\nA\x7f:", 20);
    assert_eq!(
        error.tolerance(),
        Some(h1proto::leniency::Tolerance::SkipInvalidFields)
    );
}

/// What only a complete head can show waits for its end: a missing
/// `Host` is refused with the empty line, not before.
#[test]
fn faults_of_the_whole_head_wait_for_its_end() {
    let head = b"GET / HTTP/1.1\r\nX-A: b\r\n\r\n";
    for cut in 0..head.len() {
        let mut dec = requests();
        let mut buf = BytesMut::new();
        assert_eq!(feed(&mut dec, &mut buf, &head[..cut]), None, "cut at {cut}");
        let error = feed(&mut dec, &mut buf, &head[cut..]).unwrap();
        assert_eq!(error.kind(), ErrorKind::InvalidHost);
    }
}

/// Empty lines before a request line: up to ten are skipped; the
/// eleventh is refused as it arrives (docs/limits.md).
#[test]
fn at_most_ten_empty_lines_come_before_a_request_line() {
    let ten = b"\r\n".repeat(10);
    let head = [&ten[..], b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"].concat();
    for cut in 0..=head.len() {
        let mut dec = requests();
        let mut buf = BytesMut::new();
        assert_eq!(feed(&mut dec, &mut buf, &head[..cut]), None);
        assert_eq!(feed(&mut dec, &mut buf, &head[cut..]), None, "cut at {cut}");
        assert_eq!(dec.consumed(), head.len() as u64);
    }
    let eleven = b"\r\n".repeat(11);
    let error = refused_at(requests, &eleven, 22);
    assert_eq!(
        (error.kind(), error.status().as_u16(), error.offset()),
        (ErrorKind::TooManyEmptyLines, 400, Some(20))
    );
    // The count is per request line: ten before each of two requests.
    let two = [&head[..], &head[..]].concat();
    let mut buf = BytesMut::new();
    assert_eq!(feed(&mut requests(), &mut buf, &two), None);
    // With bare_lf, a LF alone is an empty line, and counts as one.
    let lenient = || {
        let mut leniency = h1proto::leniency::RequestLeniency::strict();
        leniency.bare_lf = true;
        RequestDecoder::with_leniency(Limits::default(), leniency)
    };
    let mixed = [&b"\n\r\n".repeat(5)[..], b"\n"].concat();
    let error = refused_at(lenient, &mixed, 16);
    assert_eq!(error.kind(), ErrorKind::TooManyEmptyLines);
}
