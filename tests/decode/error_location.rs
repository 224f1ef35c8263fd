//! Errors say where: `Error::offset` is where in the stream decoding
//! stopped (bytes since the decoder was made, across calls and messages),
//! `Error::field` the field at fault. A head's fault is at the start of its
//! line; a fault of a head as a whole at the head's start; any other at
//! the first byte not consumed. Every case is checked whole, at every
//! single split and byte by byte.

use bytes::BytesMut;
use h1proto::{
    ClientConnection, Config, Error, ErrorKind, Limits, RequestDecoder, ResponseDecoder,
    leniency::RequestLeniency,
};

/// Where a run stopped: the error's kind, offset and field.
type Stop = (ErrorKind, Option<u64>, Option<String>);

fn stop(e: &Error) -> Stop {
    (
        e.kind(),
        e.offset(),
        e.field().map(|f| String::from_utf8_lossy(f).into_owned()),
    )
}

trait Decode {
    /// One call; `Ok(true)` when it produced an event.
    fn call(&mut self, buf: &mut BytesMut, eof: bool) -> Result<bool, Error>;
}

impl Decode for RequestDecoder {
    fn call(&mut self, buf: &mut BytesMut, eof: bool) -> Result<bool, Error> {
        let event = if eof {
            self.decode_eof(buf)
        } else {
            self.decode(buf)
        };
        event.map(|e| e.is_some())
    }
}

impl Decode for ResponseDecoder {
    fn call(&mut self, buf: &mut BytesMut, eof: bool) -> Result<bool, Error> {
        let event = if eof {
            self.decode_eof(buf)
        } else {
            self.decode(buf)
        };
        event.map(|e| e.is_some())
    }
}

/// The error `input` ends in, fed cut at `cuts`, then the end of input.
fn error_cut(mut dec: impl Decode, input: &[u8], cuts: &[usize]) -> Error {
    let mut buf = BytesMut::new();
    let mut from = 0;
    for to in cuts.iter().copied().chain([input.len()]) {
        buf.extend_from_slice(&input[from..to]);
        from = to;
        loop {
            match dec.call(&mut buf, false) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return e,
            }
        }
    }
    loop {
        match dec.call(&mut buf, true) {
            Ok(true) => {}
            Ok(false) => panic!("no error in {:?}", String::from_utf8_lossy(input)),
            Err(e) => return e,
        }
    }
}

/// The error of `input`, the same whole, at every split and byte by byte.
fn error_of<D: Decode>(make: impl Fn() -> D, input: &[u8]) -> Error {
    let whole = error_cut(make(), input, &[]);
    for at in 1..input.len() {
        assert_eq!(error_cut(make(), input, &[at]), whole, "split at {at}");
    }
    let cuts: Vec<usize> = (1..input.len()).collect();
    assert_eq!(error_cut(make(), input, &cuts), whole, "byte by byte");
    whole
}

fn request(input: &[u8]) -> Stop {
    stop(&error_of(|| RequestDecoder::new(small_limits()), input))
}

fn response(input: &[u8]) -> Stop {
    stop(&error_of(|| ResponseDecoder::new(small_limits()), input))
}

fn small_limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_head_bytes = 200;
    limits.max_fields = 4;
    limits.max_target_bytes = 32;
    limits.max_chunk_line_bytes = 16;
    limits
}

/// Where the last `needle` starts in `input`.
fn at(input: &[u8], needle: &str) -> Option<u64> {
    let i = input
        .windows(needle.len())
        .rposition(|w| w == needle.as_bytes())
        .unwrap_or_else(|| panic!("{needle:?} is not in the input"));
    Some(i as u64)
}

fn field(name: &str) -> Option<String> {
    Some(name.to_owned())
}

/// A valid request to put before the one at fault: offsets count it.
const FIRST: &[u8] = b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc";

fn after_first(rest: &str) -> Vec<u8> {
    [FIRST, rest.as_bytes()].concat()
}

#[test]
fn a_field_line_at_fault_is_found_by_its_start_and_name() {
    use ErrorKind::*;
    let cases: [(&str, ErrorKind, &str, Option<&str>); 10] = [
        (
            "GET / HTTP/1.1\r\nHost: a\r\nX-Bad: a\x01b\r\n\r\n",
            InvalidFieldValue,
            "X-Bad",
            Some("X-Bad"),
        ),
        (
            "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
            WhitespaceBeforeColon,
            "Host ",
            Some("Host"),
        ),
        // An invalid name is named whole: the bytes before the colon
        // (without whitespace before it), or the line up to its end.
        (
            "GET / HTTP/1.1\r\nHost: a\r\nX(y): z\r\n\r\n",
            InvalidFieldName,
            "X(y)",
            Some("X(y)"),
        ),
        (
            "GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n",
            InvalidFieldName,
            "Bad Header",
            Some("Bad Header"),
        ),
        (
            "GET / HTTP/1.1\r\nHost: a\r\nBad Header \t: x\r\n\r\n",
            InvalidFieldName,
            "Bad Header",
            Some("Bad Header"),
        ),
        (
            "GET / HTTP/1.1\r\nHost: a\r\nno colon\r\n\r\n",
            InvalidFieldName,
            "no colon",
            Some("no colon"),
        ),
        (
            "GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n",
            InvalidFieldName,
            ": empty",
            None,
        ),
        (
            "GET / HTTP/1.1\r\nHost: a\r\nno-colon\r\n\r\n",
            MissingColon,
            "no-colon",
            None,
        ),
        (
            "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n b\r\n\r\n",
            ObsFold,
            " b",
            None,
        ),
        (
            "GET / HTTP/1.1\r\nHost: a\r\nX-Lf: 1\nX-B: 2\r\n\r\n",
            BareLineFeed,
            "X-Lf",
            Some("X-Lf"),
        ),
    ];
    for (rest, kind, line, name) in cases {
        let input = after_first(rest);
        assert_eq!(
            request(&input),
            (kind, at(&input, line), name.map(str::to_owned)),
            "{rest:?}"
        );
    }
    // A name cut short by the end of the input, or by `max_head_bytes`
    // (200 here), is named up to there.
    let input = after_first("GET / HTTP/1.1\r\nHost: a\r\nBad Header");
    assert_eq!(
        request(&input),
        (InvalidFieldName, at(&input, "Bad"), field("Bad Header"))
    );
    let long = format!("GET / HTTP/1.1\r\nBad {}", "x".repeat(200));
    let input = after_first(&long);
    let name = &long[16..200];
    assert_eq!(
        request(&input),
        (InvalidFieldName, at(&input, "Bad"), field(name))
    );
    // The empty line that ends the head, ended by LF alone.
    let input = after_first("GET / HTTP/1.1\r\nHost: a\r\n\n");
    assert_eq!(
        request(&input),
        (BareLineFeed, Some(input.len() as u64 - 1), None)
    );
}

#[test]
fn a_start_line_at_fault_is_found_at_the_head_start() {
    use ErrorKind::*;
    // Empty lines skipped before a request line count.
    let input = after_first("\r\n\r\nG(T / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(request(&input), (InvalidMethod, at(&input, "G(T"), None));
    let input = after_first("GET /a\x01b HTTP/1.1\r\n\r\n");
    assert_eq!(request(&input), (InvalidTarget, at(&input, "GET /a"), None));
    // After the SP that ends the target comes the version.
    let input = after_first("GET /a b HTTP/1.1\r\n\r\n");
    assert_eq!(
        request(&input),
        (InvalidVersion, at(&input, "GET /a"), None)
    );
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 2x0 OK\r\n\r\n";
    assert_eq!(
        response(input),
        (InvalidStatus, at(input, "HTTP/1.1 2x0"), None)
    );
}

#[test]
fn a_framing_or_host_field_at_fault_is_found_by_its_line() {
    use ErrorKind::*;
    // (the request, the error, the line at fault and its field name)
    type Case = (
        &'static str,
        ErrorKind,
        Option<(&'static str, &'static str)>,
    );
    let cases: [Case; 9] = [
        (
            "GET / HTTP/1.1\r\nHost: a\r\nX: y\r\nhost: b\r\n\r\n",
            InvalidHost,
            Some(("host: b", "host")),
        ),
        ("GET / HTTP/1.1\r\nX: y\r\n\r\n", InvalidHost, None),
        (
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n",
            InvalidContentLength,
            Some(("Content-Length", "Content-Length")),
        ),
        (
            "POST / HTTP/1.1\r\nHost: a\r\ncontent-length: 1\r\nContent-Length: 1\r\n\r\n",
            InvalidContentLength,
            Some(("Content-Length: 1", "Content-Length")),
        ),
        (
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n",
            ContentLengthWithTransferEncoding,
            Some(("Content-Length", "Content-Length")),
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 1\r\nHost: a\r\nTransfer-encoding: chunked\r\n\r\n",
            ContentLengthWithTransferEncoding,
            Some(("Transfer-encoding", "Transfer-encoding")),
        ),
        (
            "POST / HTTP/1.0\r\nTE-X: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            TransferEncodingInHttp10,
            Some(("Transfer-Encoding", "Transfer-Encoding")),
        ),
        (
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTRANSFER-ENCODING: gzip\r\n\r\n",
            InvalidTransferEncoding,
            Some(("TRANSFER-ENCODING", "TRANSFER-ENCODING")),
        ),
        (
            "CONNECT a:443 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n",
            ConnectWithContent,
            Some(("Content-Length", "Content-Length")),
        ),
    ];
    for (rest, kind, line) in cases {
        let input = after_first(rest);
        let want = match line {
            Some((line, name)) => (kind, at(&input, line), field(name)),
            // No line to blame: the head's start.
            None => (kind, Some(FIRST.len() as u64), None),
        };
        assert_eq!(request(&input), want, "{rest:?}");
    }
    // The lenient parse places them the same way.
    let mut lenient = RequestLeniency::strict();
    lenient.bare_lf = true;
    let input = b"GET / HTTP/1.1\nHost: a\nhost: b\n\n";
    let got = error_of(
        || RequestDecoder::with_leniency(small_limits(), lenient),
        input,
    );
    assert_eq!(
        stop(&got),
        (InvalidHost, at(input, "host: b"), field("host"))
    );

    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n";
    assert_eq!(
        response(input),
        (
            InvalidContentLength,
            at(input, "Content-Length: -1"),
            field("Content-Length")
        )
    );
}

#[test]
fn a_head_over_a_limit_is_found_at_its_start() {
    use ErrorKind::*;
    let input = after_first(&format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(40)));
    assert_eq!(
        request(&input),
        (TargetTooLong, Some(FIRST.len() as u64), None)
    );
    let input = after_first("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n");
    assert_eq!(
        request(&input),
        (TooManyFields, Some(FIRST.len() as u64), None)
    );
    let input = after_first(&format!("GET / HTTP/1.1\r\nA: {}\r\n\r\n", "a".repeat(200)));
    assert_eq!(
        request(&input),
        (HeadTooLarge, Some(FIRST.len() as u64), None)
    );
    // A head the peer closed the connection inside.
    let input = after_first("GET / HTTP/1.1\r\nHost: a\r\n");
    assert_eq!(
        request(&input),
        (UnexpectedEof, Some(FIRST.len() as u64), None)
    );
}

#[test]
fn a_body_at_fault_is_found_where_its_decoder_stopped() {
    use ErrorKind::*;
    let chunked = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
    // A bad chunk-size line: at its start, however the data before it came.
    let input = after_first(&format!("{chunked}3\r\nabc\r\n+5\r\nhello\r\n0\r\n\r\n"));
    assert_eq!(request(&input), (InvalidChunkSize, at(&input, "+5"), None));
    let input = after_first(&format!("{chunked}3\r\nabc\r\n{}\r\n", "1".repeat(20)));
    assert_eq!(
        request(&input),
        (ChunkLineTooLong, at(&input, &"1".repeat(20)), None)
    );
    let input = after_first(&format!("{chunked}3\r\nabcX\r\n0\r\n\r\n"));
    assert_eq!(
        request(&input),
        (MissingChunkCrlf, at(&input, "X\r\n0"), None)
    );
    // A body the peer cut short: the end of the stream.
    let input = after_first("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc");
    assert_eq!(
        request(&input),
        (UnexpectedEof, Some(input.len() as u64), None)
    );
    // A trailer section is consumed whole before it is checked: after it.
    let input = after_first(&format!("{chunked}0\r\nContent-Length: 3\r\n\r\n"));
    assert_eq!(
        request(&input),
        (InvalidTrailer, Some(input.len() as u64), None)
    );
}

#[test]
fn too_many_interim_responses_are_found_at_the_one_too_many() {
    let mut limits = Limits::default();
    limits.max_interim_responses = 1;
    let input = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n";
    let got = error_of(|| ResponseDecoder::new(limits.clone()), input);
    assert_eq!(
        stop(&got),
        (
            ErrorKind::TooManyInterimResponses,
            at(input, "HTTP/1.1 103"),
            None
        )
    );
}

#[test]
fn a_connection_places_what_it_refuses_itself() {
    // A response with no request in flight, after one that had one.
    let mut conn = ClientConnection::new(Config::default());
    conn.sender()
        .send_request(http::Request::get("http://a/").body("").unwrap())
        .unwrap();
    let first = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let mut buf = BytesMut::from(&[&first[..], b"HTTP/1.1 200 OK\r\n\r\n"].concat()[..]);
    let err = loop {
        match conn.poll_event(&mut buf) {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert_eq!(
        stop(&err),
        (
            ErrorKind::UnsolicitedResponse,
            Some(first.len() as u64),
            None
        )
    );
    // The same error again, from the same place.
    assert_eq!(conn.poll_event(&mut buf).unwrap_err(), err);
}

#[test]
fn the_text_says_where() {
    let input = after_first("GET / HTTP/1.1\r\nHost: a\r\nX-Bad: \x7f\r\n\r\n");
    let err = error_of(|| RequestDecoder::new(Limits::default()), &input);
    assert_eq!(
        err.to_string(),
        "protocol error at byte 76, field `X-Bad`: invalid field value"
    );
    let input = after_first("GET / HTTP/1.1\r\nX\u{e9}: a\r\n\r\n");
    let err = error_of(|| RequestDecoder::new(Limits::default()), &input);
    assert_eq!(
        err.to_string(),
        "protocol error at byte 67, field `X\\xc3\\xa9`: invalid field name"
    );
    // An error that is not about bytes received has no place.
    let timeout = Error::from(ErrorKind::HeadTimeout);
    assert_eq!((timeout.offset(), timeout.field()), (None, None));
    assert_eq!(
        timeout.to_string(),
        "protocol error: request head not received in time"
    );
}

#[test]
fn an_error_stays_two_words() {
    // Where it happened is boxed: results carrying an error stay small.
    assert!(std::mem::size_of::<Error>() <= 2 * std::mem::size_of::<usize>());
    assert!(std::mem::size_of::<Option<Error>>() <= 2 * std::mem::size_of::<usize>());
}
