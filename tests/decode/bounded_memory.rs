//! A peer that never stops sending cannot make a decoder hold more than
//! `Limits` allows.
//!
//! Each test streams a hostile message in reads of a fixed size (the
//! stream is generated as it goes, never built whole) and, after every
//! `Ok(None)`, measures two things:
//!
//! - the bytes the decoder leaves in the caller's buffer, which must stay
//!   within the relevant limit (for an unfinished head, `max_head_bytes`;
//!   for chunk framing, `max_chunk_line_bytes` or `max_trailer_bytes`; for
//!   body data, nothing);
//! - the heap this thread has live, counted by a test allocator, which
//!   must stay within a small multiple of that limit plus one read,
//!   however many megabytes went through.
//!
//! The stream ends with the limit's error, or (for bodies, which have no
//! limit) after tens of megabytes without growth.

use bytes::BytesMut;
use h1proto::{ErrorKind, Event, Limits, RequestDecoder, ResponseDecoder};
use http::Method;

/// The heap this thread has live (the binary counts with the test allocator).
fn live() -> isize {
    h1proto_test_support::alloc::thread_live()
}

// ------------------------------------------------------------ the driver

const READ: usize = 16 * 1024;

/// What a stream did.
#[derive(Debug)]
struct Report {
    error: Option<ErrorKind>,
    /// Bytes fed to the decoder.
    fed: usize,
    /// Body bytes handed out.
    data: usize,
    /// Most bytes left in the buffer after an `Ok(None)`.
    max_held: usize,
    /// Most heap live (above the start) after an `Ok(None)`.
    max_heap: isize,
}

trait Decode {
    fn next(&mut self, buf: &mut BytesMut) -> Result<Option<usize>, ErrorKind>;
}

/// `Some(n)`: an event with `n` body bytes (0 for other events).
fn size<H: h1proto::MessageHead>(ev: Event<H>) -> usize {
    match ev {
        Event::Data(d) => d.len(),
        _ => 0,
    }
}

impl Decode for RequestDecoder {
    fn next(&mut self, buf: &mut BytesMut) -> Result<Option<usize>, ErrorKind> {
        self.decode(buf).map(|e| e.map(size)).map_err(|e| e.kind())
    }
}

impl Decode for ResponseDecoder {
    fn next(&mut self, buf: &mut BytesMut) -> Result<Option<usize>, ErrorKind> {
        self.decode(buf).map(|e| e.map(size)).map_err(|e| e.kind())
    }
}

/// Feeds `prefix`, then `unit` repeated, in reads of `READ` bytes, until
/// the decoder fails or `max_bytes` were fed.
///
/// `bound` is the most the decoder may leave in the buffer after
/// `Ok(None)`, once the prefix has been consumed.
fn stream(
    dec: &mut impl Decode,
    prefix: &[u8],
    unit: &[u8],
    max_bytes: usize,
    bound: usize,
) -> Report {
    let start = live();
    let mut buf = BytesMut::with_capacity(READ);
    let mut report = Report {
        error: None,
        fed: 0,
        data: 0,
        max_held: 0,
        max_heap: 0,
    };
    let mut read = Vec::with_capacity(READ);
    let mut at = 0usize; // position in the endless stream
    while report.fed < max_bytes {
        read.clear();
        while read.len() < READ {
            if at < prefix.len() {
                let n = (prefix.len() - at).min(READ - read.len());
                read.extend_from_slice(&prefix[at..at + n]);
                at += n;
            } else {
                let off = (at - prefix.len()) % unit.len();
                let n = (unit.len() - off).min(READ - read.len());
                read.extend_from_slice(&unit[off..off + n]);
                at += n;
            }
        }
        buf.extend_from_slice(&read);
        report.fed += read.len();
        loop {
            match dec.next(&mut buf) {
                Ok(Some(n)) => report.data += n,
                Ok(None) => break,
                Err(kind) => {
                    report.error = Some(kind);
                    return report;
                }
            }
        }
        if report.fed > prefix.len() + READ {
            report.max_held = report.max_held.max(buf.len());
            assert!(
                buf.len() <= bound,
                "{} bytes held after {} fed (bound {bound})",
                buf.len(),
                report.fed
            );
        }
        let heap = live() - start;
        report.max_heap = report.max_heap.max(heap);
        // The buffer (one read plus what is held, with the growth slack
        // of BytesMut), the decoder's own state, and the read scratch.
        let allowed = 4 * (bound + READ) as isize + 64 * 1024;
        assert!(
            heap <= allowed,
            "{heap} bytes of heap live after {} fed (allowed {allowed})",
            report.fed
        );
    }
    report
}

const MIB: usize = 1024 * 1024;

fn chunked_head() -> &'static [u8] {
    b"POST /upload HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
}

// ------------------------------------------------------------------ heads

#[test]
fn endless_field_value() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        b"GET / HTTP/1.1\r\nHost: a\r\nX-Endless: ",
        b"a",
        64 * MIB,
        limits.max_head_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::HeadTooLarge), "{r:?}");
    assert!(r.fed <= limits.max_head_bytes + READ, "{r:?}");
}

#[test]
fn endless_request_line() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(&mut dec, b"GET /", b"a", 64 * MIB, limits.max_head_bytes);
    assert_eq!(r.error, Some(ErrorKind::TargetTooLong), "{r:?}");
    assert!(r.fed <= limits.max_head_bytes + READ, "{r:?}");
}

#[test]
fn endless_field_lines() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        b"GET / HTTP/1.1\r\nHost: a\r\n",
        b"X-A: b\r\n",
        64 * MIB,
        limits.max_head_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::TooManyFields), "{r:?}");
}

#[test]
fn endless_long_field_lines_hit_the_head_limit() {
    let mut limits = Limits::default();
    limits.max_fields = usize::MAX;
    let mut dec = RequestDecoder::new(limits.clone());
    let line = format!("X-Long: {}\r\n", "v".repeat(1000));
    let r = stream(
        &mut dec,
        b"GET / HTTP/1.1\r\nHost: a\r\n",
        line.as_bytes(),
        64 * MIB,
        limits.max_head_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::HeadTooLarge), "{r:?}");
}

/// Empty lines before a request-line are discarded as they arrive, so
/// they hold nothing, and an endless run of them is refused after ten
/// (docs/security.md, N1): with the first read, not after megabytes.
#[test]
fn endless_leading_empty_lines_are_refused() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(&mut dec, b"", b"\r\n", 16 * MIB, 1);
    assert_eq!(r.error, Some(ErrorKind::TooManyEmptyLines), "{r:?}");
    assert_eq!(r.fed, READ, "{r:?}");
}

#[test]
fn endless_status_line_and_fields() {
    let limits = Limits::default();
    let mut dec = ResponseDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        b"HTTP/1.1 200 OK\r\n",
        b"X-A: b\r\n",
        64 * MIB,
        limits.max_head_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::TooManyFields), "{r:?}");
    let mut dec = ResponseDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        b"HTTP/1.1 200 ",
        b"o",
        64 * MIB,
        limits.max_head_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::HeadTooLarge), "{r:?}");
}

/// An endless run of `100 Continue` responses ends at
/// `max_interim_responses`; each is consumed as it is decoded.
#[test]
fn endless_interim_responses() {
    let limits = Limits::default();
    let mut dec = ResponseDecoder::new(limits.clone());
    dec.expect_response_to(&Method::POST);
    let r = stream(
        &mut dec,
        b"",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        64 * MIB,
        limits.max_head_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::TooManyInterimResponses), "{r:?}");
}

// --------------------------------------------------------------- chunked

#[test]
fn endless_chunk_extension() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        &[chunked_head(), b"5"].concat(),
        b";a=b",
        64 * MIB,
        limits.max_chunk_line_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::ChunkLineTooLong), "{r:?}");
    assert!(r.fed <= chunked_head().len() + limits.max_chunk_line_bytes + READ);
}

#[test]
fn endless_quoted_chunk_extension() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        &[chunked_head(), b"5;q=\""].concat(),
        b"x",
        64 * MIB,
        limits.max_chunk_line_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::ChunkLineTooLong), "{r:?}");
}

#[test]
fn endless_chunk_size_digits() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        chunked_head(),
        b"0",
        64 * MIB,
        limits.max_chunk_line_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::ChunkLineTooLong), "{r:?}");
}

#[test]
fn endless_trailer_fields() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        &[chunked_head(), b"0\r\n"].concat(),
        b"X-T: v\r\n",
        64 * MIB,
        limits.max_trailer_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::TooManyFields), "{r:?}");
}

#[test]
fn endless_trailer_bytes() {
    let mut limits = Limits::default();
    limits.max_fields = usize::MAX;
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        &[chunked_head(), b"0\r\nX-T: "].concat(),
        b"v",
        64 * MIB,
        limits.max_trailer_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::TrailersTooLarge), "{r:?}");
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        &[chunked_head(), b"0\r\n"].concat(),
        b"X-T: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\r\n",
        64 * MIB,
        limits.max_trailer_bytes,
    );
    assert_eq!(r.error, Some(ErrorKind::TrailersTooLarge), "{r:?}");
}

/// Two million one-byte chunks (12 MB of framing) go through in 16 KiB
/// reads, cut anywhere in a chunk, with nothing but a partial chunk line
/// held between reads.
#[test]
fn millions_of_one_byte_chunks() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let unit = b"1\r\na\r\n";
    let n = 2_000_000;
    let r = stream(
        &mut dec,
        chunked_head(),
        unit,
        chunked_head().len() + n * unit.len(),
        limits.max_chunk_line_bytes,
    );
    assert_eq!(r.error, None, "{r:?}");
    assert!(r.data >= n - READ, "{r:?}");
    assert!(r.max_held < unit.len(), "{r:?}");
}

/// One-byte chunks with the longest extensions the chunk-line limit
/// allows, with the extension total and the overhead bound turned off
/// (the defaults refuse this body after 16 KiB: `tests/decode/chunk_overhead.rs`):
/// memory stays bounded even then.
#[test]
fn many_chunks_with_long_extensions() {
    let mut limits = Limits::default();
    limits.max_chunk_extension_bytes = usize::MAX;
    limits.max_chunk_overhead_bytes = usize::MAX;
    let mut dec = RequestDecoder::new(limits.clone());
    let ext = "e".repeat(limits.max_chunk_line_bytes - "1;\r\n".len());
    let unit = format!("1;{ext}\r\na\r\n");
    let r = stream(
        &mut dec,
        chunked_head(),
        unit.as_bytes(),
        32 * MIB,
        limits.max_chunk_line_bytes,
    );
    assert_eq!(r.error, None, "{r:?}");
    assert!(r.data > 0);
}

// ----------------------------------------------------------------- bodies

/// A huge `Content-Length` body is handed out as it arrives.
#[test]
fn endless_content_length_body_is_not_buffered() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551615\r\n\r\n",
        b"0123456789abcdef",
        16 * MIB,
        0,
    );
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(r.max_held, 0);
}

/// A close-delimited response body likewise.
#[test]
fn endless_close_delimited_body_is_not_buffered() {
    let limits = Limits::default();
    let mut dec = ResponseDecoder::new(limits.clone());
    let r = stream(&mut dec, b"HTTP/1.1 200 OK\r\n\r\n", b"data", 16 * MIB, 0);
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(r.max_held, 0);
}

/// A chunk whose size is huge streams its data without holding it.
#[test]
fn huge_chunk_is_not_buffered() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        &[chunked_head(), b"ffffffffffffffff\r\n"].concat(),
        b"x",
        16 * MIB,
        0,
    );
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(r.max_held, 0);
}

/// Endless pipelined requests are decoded one after the other: the buffer
/// holds at most one unfinished head.
#[test]
fn endless_pipelined_requests() {
    let limits = Limits::default();
    let mut dec = RequestDecoder::new(limits.clone());
    let r = stream(
        &mut dec,
        b"",
        b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
        16 * MIB,
        limits.max_head_bytes,
    );
    assert_eq!(r.error, None, "{r:?}");
    assert!(r.max_held < 128, "{r:?}");
}

/// What a decoder keeps between messages (field names, a recycled map)
/// stays bounded when every request brings names never seen before, short
/// and long, and each head's map is handed back.
#[test]
fn endless_requests_with_new_field_names() {
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::new();
    let mut baseline = None;
    for i in 0..50_000u32 {
        let head = format!(
            "GET / HTTP/1.1\r\nHost: a\r\nX-N{i}: 1\r\nX-Long-{i:0>40}: 2\r\nx-n{i}: 3\r\n\r\n"
        );
        buf.extend_from_slice(head.as_bytes());
        let Ok(Some(Event::Head { head, .. })) = dec.decode(&mut buf) else {
            panic!("no head at request {i}")
        };
        assert_eq!(head.headers().len(), 4);
        assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::End(_)))));
        dec.give_spare_fields(head.into_parts().0.headers);
        if i == 1_000 {
            baseline = Some(live());
        }
        if let Some(base) = baseline {
            let grown = live() - base;
            assert!(
                grown <= 16 * 1024,
                "{grown} more bytes live after {i} requests"
            );
        }
    }
}

// ------------------------------------------------------------- draining

/// A server that answered before reading the request body drains at most
/// `max_drain_bytes` of it before closing (as Go's net/http does). The
/// bound must hold for the bytes read from the peer, not only for the body
/// data inside them: otherwise a client sends one-byte chunks each carrying
/// the longest chunk extension the limit allows, and the server reads about
/// 4 KiB of framing per counted byte, a 256 KiB drain becoming ~1 GiB of
/// reading (Go's CVE-2023-39326 is this amplification). The decoder's own
/// bounds on extensions and overhead would refuse such a body sooner; they
/// are off here, so that the drain bound is tested on its own.
#[test]
fn draining_an_unread_body_is_bounded_by_bytes_read() {
    use h1proto::{Config, ServerConnection};
    let mut config = Config::default();
    config.limits.max_chunk_extension_bytes = usize::MAX;
    config.limits.max_chunk_overhead_bytes = usize::MAX;
    let max_drain = config.max_drain_bytes as usize;
    let limits = config.limits.clone();
    let mut conn = ServerConnection::new(config);
    let mut buf = BytesMut::from(chunked_head());
    let Ok(Some(Event::Head { .. })) = conn.poll_event(&mut buf) else {
        panic!("no head")
    };
    // The application answers without reading the body.
    conn.sender()
        .send_response(http::Response::new(bytes::Bytes::from_static(b"no\n")))
        .unwrap();
    let ext = "e".repeat(limits.max_chunk_line_bytes - "1;\r\n".len());
    let unit = format!("1;{ext}\r\na\r\n");
    let mut read = 0usize;
    // Feed up to 4x the drain bound of wire bytes; the server must have
    // stopped draining (decided to close) well before that.
    while read < 4 * max_drain && !conn.is_closed() {
        buf.extend_from_slice(unit.as_bytes());
        read += unit.len();
        while let Some(ev) = conn.poll_event(&mut buf).expect("a valid body") {
            assert!(!matches!(ev, Event::Head { .. }), "a second request");
        }
    }
    assert!(
        conn.is_closed(),
        "after reading {read} bytes of an unread body ({} bytes of data) the \
         server still drains (max_drain_bytes {max_drain})",
        read / unit.len()
    );
    assert!(
        read <= 2 * max_drain,
        "drained {read} bytes (max {max_drain})"
    );
}
