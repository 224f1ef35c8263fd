//! Bounded chunk overhead: the chunk extensions of a body add up to at most
//! `Limits::max_chunk_extension_bytes`, and its framing runs ahead of its
//! data by at most `Limits::max_chunk_overhead_bytes` (each chunk carries 16
//! framing bytes plus two per data byte for free). Both are refused with
//! their own error kind and status, the same way whole, byte by byte and
//! cut at every single point, and sane chunking is never refused.

use bytes::BytesMut;
use h1proto::{ErrorKind, Event, Limits, RequestDecoder, ResponseDecoder};
use http::Method;

const HEAD: &[u8] = b"POST /up HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n";

/// What decoding a chunked request produced.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    data: Vec<u8>,
    ended: bool,
    error: Option<ErrorKind>,
    /// Input bytes handed to the decoder when it failed (or all of them).
    fed: usize,
}

/// Decodes `body` after a chunked request head, fed in pieces cut at
/// `cuts` (sorted offsets into `body`).
fn run(limits: &Limits, body: &[u8], cuts: &[usize]) -> Outcome {
    let mut dec = RequestDecoder::new(limits.clone());
    let mut buf = BytesMut::from(HEAD);
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::Head { .. }))));
    let mut out = Outcome {
        data: Vec::new(),
        ended: false,
        error: None,
        fed: 0,
    };
    let mut from = 0;
    for &to in cuts.iter().chain([body.len()].iter()) {
        buf.extend_from_slice(&body[from..to]);
        out.fed = to;
        from = to;
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(Event::Data(d))) => out.data.extend_from_slice(&d),
                Ok(Some(Event::End(_))) => out.ended = true,
                Ok(Some(other)) => panic!("unexpected {other:?}"),
                Ok(None) => break,
                Err(e) => {
                    assert_eq!(e.status(), e.kind().status());
                    out.error = Some(e.kind());
                    return out;
                }
            }
        }
    }
    out
}

/// The outcome of `body` fed whole, which must be the same byte by byte
/// and, when `body` is short enough, cut at every single point. `fed` is
/// the whole body's length for the whole run; split runs must fail with
/// the same error having been fed no more of the body than needed.
fn decode(limits: &Limits, body: &[u8]) -> Outcome {
    let whole = run(limits, body, &[]);
    let bytewise: Vec<usize> = (1..body.len()).collect();
    let same = |split: Outcome, how: &str| {
        assert_eq!(
            (&split.data, split.ended, split.error),
            (&whole.data, whole.ended, whole.error),
            "{how} differs from whole"
        );
        split
    };
    let by_byte = same(run(limits, body, &bytewise), "byte by byte");
    if body.len() <= 4096 {
        for cut in 1..body.len() {
            same(run(limits, body, &[cut]), &format!("cut at {cut}"));
        }
    }
    Outcome {
        fed: by_byte.fed,
        ..whole
    }
}

/// One chunk of `data`, its size line carrying `ext`.
fn chunk(data: &[u8], ext: &str) -> Vec<u8> {
    [
        format!("{:x}{ext}\r\n", data.len()).as_bytes(),
        data,
        b"\r\n",
    ]
    .concat()
}

fn last(ext: &str) -> Vec<u8> {
    format!("0{ext}\r\n\r\n").into_bytes()
}

/// An extension of exactly `len` bytes: `;e=` and padding.
fn ext_of(len: usize) -> String {
    assert!(len >= 4);
    format!(";e={}", "x".repeat(len - 3))
}

/// The extension flood: 5,000 one-byte chunks, each with about 200
/// bytes of extensions (1 MB of framing for 5 KB of data). Refused by the
/// extension total long before its end, with 413.
#[test]
fn the_attack_of_many_tiny_chunks_with_long_extensions_is_refused() {
    let ext = ext_of(200);
    let body: Vec<u8> = (0..5000).flat_map(|_| chunk(b"x", &ext)).collect();
    let limits = Limits::default();
    let out = decode(&limits, &body);
    assert_eq!(out.error, Some(ErrorKind::ChunkExtensionsTooLarge));
    assert_eq!(
        ErrorKind::ChunkExtensionsTooLarge.status(),
        http::StatusCode::PAYLOAD_TOO_LARGE
    );
    // Refused at the chunk that passes 16 KiB of extensions: 82 chunks of
    // 200 bytes are 16,400.
    assert_eq!(out.data.len(), 81);
    assert!(out.fed <= 82 * chunk(b"x", &ext).len(), "fed {}", out.fed);
    assert!(!out.ended);
}

/// The same attack with the extension total lifted: the framing outruns
/// the data, and the overhead bound refuses it with 400.
#[test]
fn the_attack_is_refused_by_the_overhead_bound_alone_too() {
    let ext = ext_of(200);
    let body: Vec<u8> = (0..5000).flat_map(|_| chunk(b"x", &ext)).collect();
    let mut limits = Limits::default();
    limits.max_chunk_extension_bytes = usize::MAX;
    let out = decode(&limits, &body);
    assert_eq!(out.error, Some(ErrorKind::ExcessiveChunkOverhead));
    assert_eq!(
        ErrorKind::ExcessiveChunkOverhead.status(),
        http::StatusCode::BAD_REQUEST
    );
    // Each chunk is 1 + 200 + 2 + 2 = 205 framing bytes against an
    // allowance of 18: 187 more per chunk, over 16 KiB at the 88th.
    assert_eq!(out.data.len(), 87);
}

/// Framing without any extension can be padded too: leading zeros in the
/// chunk size. The overhead bound catches it; the extension total does
/// not apply.
#[test]
fn zero_padded_chunk_sizes_are_refused_by_the_overhead_bound() {
    let padded = format!("{}1\r\nx\r\n", "0".repeat(4000));
    let body: Vec<u8> = (0..100).flat_map(|_| padded.bytes()).collect();
    let out = decode(&Limits::default(), &body);
    assert_eq!(out.error, Some(ErrorKind::ExcessiveChunkOverhead));
    // 4,005 framing bytes a chunk, 3,987 over its allowance: past 16 KiB
    // at the 5th chunk.
    assert_eq!(out.data.len(), 4);
}

/// A sender streaming one byte per chunk, as curl or a proxy relaying
/// keystrokes may, is never refused: 5 framing bytes per chunk stay within
/// the allowance forever. Short extensions on every such chunk too.
#[test]
fn one_byte_chunks_are_accepted_however_many() {
    let mut body: Vec<u8> = (0..100_000u32)
        .flat_map(|i| chunk(&[b'a' + (i % 26) as u8], ""))
        .collect();
    body.extend(last(""));
    let out = run(&Limits::default(), &body, &[]);
    assert_eq!(
        (out.error, out.ended, out.data.len()),
        (None, true, 100_000)
    );

    // `1;a=b\r\nx\r\n`: 9 framing bytes for 1 data byte, within the 18 a
    // one-byte chunk may carry. 1,000 of them are 5,000 extension bytes.
    let mut body: Vec<u8> = (0..1000).flat_map(|_| chunk(b"x", ";a=b")).collect();
    body.extend(last(""));
    let out = decode(&Limits::default(), &body);
    assert_eq!((out.error, out.ended, out.data.len()), (None, true, 1000));
}

/// Real bodies: chunks of every size up to 16 KiB and of 64 KiB, a long
/// extension now and then (a signature on some chunks), extensions on the
/// last-chunk: all accepted with the defaults.
#[test]
fn sane_chunking_is_never_refused() {
    let mut body = Vec::new();
    let mut data = Vec::new();
    let mut n: u32 = 1;
    for i in 0..400u32 {
        n = n.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let size = if i % 50 == 49 {
            64 * 1024
        } else {
            1 + (n >> 8) as usize % (16 * 1024)
        };
        let piece: Vec<u8> = (0..size).map(|k| (k % 251) as u8).collect();
        let ext = if i % 10 == 0 {
            format!(";sig={}", "0123456789abcdef".repeat(4))
        } else {
            String::new()
        };
        body.extend(chunk(&piece, &ext));
        data.extend(piece);
    }
    body.extend(last(";done;count=400"));
    let out = run(&Limits::default(), &body, &[]);
    assert_eq!((out.error, out.ended), (None, true));
    assert_eq!(out.data, data);
    // And one extension just under the chunk-line bound on a tiny chunk.
    let big = ext_of(Limits::default().max_chunk_line_bytes - 3);
    let body = [chunk(b"x", &big), last("")].concat();
    let out = decode(&Limits::default(), &body);
    assert_eq!((out.error, out.ended), (None, true));
}

/// `max_chunk_extension_bytes` is exact: extensions adding up to the
/// limit pass, one byte more is refused, at the line that passes it,
/// the last-chunk's extensions included.
#[test]
fn the_extension_total_is_exact() {
    let mut limits = Limits::default();
    limits.max_chunk_extension_bytes = 100;
    let at = [
        chunk(b"abc", &ext_of(60)),
        chunk(b"de", &ext_of(40)),
        last(""),
    ]
    .concat();
    let out = decode(&limits, &at);
    assert_eq!(
        (out.error, out.ended, &out.data[..]),
        (None, true, &b"abcde"[..])
    );

    let over = [
        chunk(b"abc", &ext_of(60)),
        chunk(b"de", &ext_of(41)),
        last(""),
    ]
    .concat();
    let out = decode(&limits, &over);
    assert_eq!(out.error, Some(ErrorKind::ChunkExtensionsTooLarge));
    assert_eq!(out.data, b"abc");

    let in_last = [chunk(b"abc", &ext_of(60)), last(&ext_of(41))].concat();
    let out = decode(&limits, &in_last);
    assert_eq!(out.error, Some(ErrorKind::ChunkExtensionsTooLarge));
    assert!(!out.ended);
    // Whitespace before the `;` is part of the extensions.
    let spaced = [chunk(b"abc", &format!("  {}", ext_of(99))), last("")].concat();
    let out = decode(&limits, &spaced);
    assert_eq!(out.error, Some(ErrorKind::ChunkExtensionsTooLarge));
}

/// `max_chunk_overhead_bytes` is exact, and unused allowance pays back
/// what earlier chunks ran ahead.
#[test]
fn the_overhead_bound_is_exact_and_paid_back_by_data() {
    let mut limits = Limits::default();
    limits.max_chunk_extension_bytes = usize::MAX;
    limits.max_chunk_overhead_bytes = 0;
    // `1;eee…\r\n` of 16 bytes and the CRLF after the data: 18 framing
    // bytes, exactly what one data byte and one chunk may carry.
    let fits = [chunk(b"x", &ext_of(13)), last("")].concat();
    let out = decode(&limits, &fits);
    assert_eq!((out.error, out.ended), (None, true));
    let over = [chunk(b"x", &ext_of(14)), last("")].concat();
    let out = decode(&limits, &over);
    assert_eq!(out.error, Some(ErrorKind::ExcessiveChunkOverhead));
    assert!(out.data.is_empty());
    // The same with padded sizes and no extension, after a run of plain
    // small chunks: 14 digits are 18 bytes of framing, 15 are one too many.
    let plain: Vec<u8> = (0..20).flat_map(|_| chunk(b"ab", "")).collect();
    let padded = |digits: usize| {
        let mut body = plain.clone();
        body.extend(format!("{}1\r\nx\r\n", "0".repeat(digits - 1)).bytes());
        body.extend(last(""));
        body
    };
    let out = decode(&limits, &padded(14));
    assert_eq!((out.error, out.ended, out.data.len()), (None, true, 41));
    let out = decode(&limits, &padded(15));
    assert_eq!(out.error, Some(ErrorKind::ExcessiveChunkOverhead));
    assert_eq!(out.data.len(), 40);

    // With a bound of 100: a chunk 90 over; then 30 data bytes with 6
    // bytes of framing (`1e\r\n` and CRLF), 70 under their allowance of
    // 76, which brings the count down to 20; then a chunk 80 over: 100,
    // still fine. One byte more refuses. Without the payback it would be
    // 170.
    limits.max_chunk_overhead_bytes = 100;
    let thirty = [b'y'; 30];
    let body = |extra: usize| {
        [
            chunk(b"x", &ext_of(13 + 90)),
            chunk(&thirty, ""),
            chunk(b"x", &ext_of(13 + 80 + extra)),
            last(""),
        ]
        .concat()
    };
    let out = decode(&limits, &body(0));
    assert_eq!((out.error, out.ended, out.data.len()), (None, true, 32));
    let out = decode(&limits, &body(1));
    assert_eq!(out.error, Some(ErrorKind::ExcessiveChunkOverhead));
    assert_eq!(out.data.len(), 31);
}

/// The count never goes below zero: a large chunk earns nothing for the
/// chunks after it.
#[test]
fn allowance_is_not_saved_up() {
    let mut limits = Limits::default();
    limits.max_chunk_extension_bytes = usize::MAX;
    limits.max_chunk_overhead_bytes = 10;
    let big = vec![b'z'; 10_000];
    let body = [chunk(&big, ""), chunk(b"x", &ext_of(13 + 11)), last("")].concat();
    let out = decode(&limits, &body);
    assert_eq!(out.error, Some(ErrorKind::ExcessiveChunkOverhead));
    assert_eq!(out.data.len(), 10_000);
}

/// Responses are bounded the same way.
#[test]
fn responses_are_bounded_too() {
    let ext = ext_of(200);
    let mut wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..200 {
        wire.extend(chunk(b"x", &ext));
    }
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.expect_response_to(&Method::GET);
    let mut buf = BytesMut::from(&wire[..]);
    let err = loop {
        match dec.decode(&mut buf) {
            Ok(Some(_)) => {}
            Ok(None) => panic!("not refused"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.kind(), ErrorKind::ChunkExtensionsTooLarge);
    assert_eq!(err.status(), http::StatusCode::PAYLOAD_TOO_LARGE);
}
