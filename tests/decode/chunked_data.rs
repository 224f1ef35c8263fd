//! How the data of a chunked body comes out: as much as the buffer holds
//! in one `Data`, small chunks gathered in place, and nothing of 1 KiB or
//! more ever moved or copied: each such piece is a slice of the very
//! buffer the caller read into.

use bytes::{Bytes, BytesMut};
use h1proto::{ErrorKind, Event, Limits, RequestDecoder};
use proptest::prelude::*;

const HEAD: &[u8] = b"POST /up HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n";

fn chunk(data: &[u8]) -> Vec<u8> {
    [format!("{:x}\r\n", data.len()).as_bytes(), data, b"\r\n"].concat()
}

fn text(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| b'a' + (i as u8).wrapping_add(seed) % 26)
        .collect()
}

/// A decoder past the head of a chunked request.
fn decoder(limits: Limits) -> RequestDecoder {
    let mut dec = RequestDecoder::new(limits);
    let mut buf = BytesMut::from(HEAD);
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::Head { .. }))));
    dec
}

/// Every event `body` gives in one buffer: the `Data` pieces, whether the
/// body ended, the error if any; and where the buffer's bytes started.
fn decode_one_read(body: &[u8]) -> (Vec<Bytes>, bool, usize) {
    let mut dec = decoder(Limits::default());
    let mut buf = BytesMut::from(body);
    let base = buf.as_ptr() as usize;
    let mut data = Vec::new();
    let mut ended = false;
    while let Some(event) = dec.decode(&mut buf).expect("a valid body") {
        match event {
            Event::Data(d) => data.push(d),
            Event::End(_) => ended = true,
            other => panic!("unexpected {other:?}"),
        }
    }
    (data, ended, base)
}

#[test]
fn small_chunks_read_together_come_out_as_one_data() {
    let mut body = Vec::new();
    let mut want = Vec::new();
    for i in 0..100u8 {
        let piece = text(64, i);
        body.extend(chunk(&piece));
        want.extend(piece);
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let (data, ended, base) = decode_one_read(&body);
    assert!(ended);
    assert_eq!(data.len(), 1, "{} Data events", data.len());
    assert_eq!(data[0], want);
    // Gathered where the first chunk's data was: in the caller's buffer.
    assert_eq!(data[0].as_ptr() as usize, base + "40\r\n".len());
}

#[test]
fn chunks_of_1_kib_or_more_are_never_moved() {
    let sizes = [10usize, 1024, 1023, 20, 5000, 1, 1024, 4096, 3];
    let mut body = Vec::new();
    let mut offsets = Vec::new();
    let mut want = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        let piece = text(n, i as u8);
        offsets.push(body.len() + format!("{n:x}\r\n").len());
        body.extend(chunk(&piece));
        want.extend(piece);
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let (data, ended, base) = decode_one_read(&body);
    assert!(ended);
    assert_eq!(data.concat(), want);
    // Every chunk of 1 KiB or more starts a Data of its own, at the very
    // place its bytes were read into.
    for (&n, &at) in sizes.iter().zip(&offsets) {
        if n >= 1024 {
            assert!(
                data.iter()
                    .any(|d| d.as_ptr() as usize == base + at && d.len() >= n),
                "the {n}-byte chunk at {at} was moved"
            );
        }
    }
    // 10 | 1024 + 1023 + 20 | 5000 + 1 | 1024 | 4096 + 3: the small ones
    // join the data before them.
    let lens: Vec<usize> = data.iter().map(Bytes::len).collect();
    assert_eq!(lens, [10, 2067, 5001, 1024, 4099]);
}

/// A read that ends inside a large chunk hands out what it holds; the
/// rest comes from the next read, unmoved.
#[test]
fn a_large_chunk_across_reads_is_not_moved() {
    let big = text(3000, 7);
    let body = [chunk(&text(5, 1)), chunk(&big), b"0\r\n\r\n".to_vec()].concat();
    let cut = body.len() - 2000;
    let mut dec = decoder(Limits::default());
    let mut buf = BytesMut::from(&body[..cut]);
    let mut got = Vec::new();
    while let Some(Event::Data(d)) = dec.decode(&mut buf).unwrap() {
        got.extend_from_slice(&d);
    }
    let mut buf = BytesMut::from(&body[cut..]);
    let base = buf.as_ptr() as usize;
    let Some(Event::Data(rest)) = dec.decode(&mut buf).unwrap() else {
        panic!("no data")
    };
    assert_eq!(
        rest.as_ptr() as usize,
        base,
        "the rest of the chunk was moved"
    );
    got.extend_from_slice(&rest);
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::End(_)))));
    assert_eq!(got, [text(5, 1), big].concat());
}

/// The shortcut through runs of small chunks keeps every rule of the
/// general reading: the chunk-line limit, CRLF after the data, the size
/// digits, whole and byte by byte.
#[test]
fn gathering_keeps_the_rules() {
    let run = |limits: &Limits, body: &[u8], bytewise: bool| {
        let mut dec = decoder(limits.clone());
        let mut buf = BytesMut::new();
        let mut data = Vec::new();
        let pieces: Vec<&[u8]> = if bytewise {
            body.chunks(1).collect()
        } else {
            vec![body]
        };
        for piece in pieces {
            buf.extend_from_slice(piece);
            loop {
                match dec.decode(&mut buf) {
                    Ok(Some(Event::Data(d))) => data.extend_from_slice(&d),
                    Ok(Some(Event::End(_))) => return (data, Ok(true)),
                    Ok(Some(other)) => panic!("unexpected {other:?}"),
                    Ok(None) => break,
                    Err(e) => return (data, Err(e.kind())),
                }
            }
        }
        (data, Ok(false))
    };
    let check = |limits: &Limits, body: &[u8], data: &[u8], outcome: Result<bool, ErrorKind>| {
        for bytewise in [false, true] {
            let got = run(limits, body, bytewise);
            assert_eq!(
                (&got.0[..], got.1),
                (data, outcome),
                "bytewise {bytewise}: {:?}",
                String::from_utf8_lossy(body)
            );
        }
    };
    let small = [chunk(b"abc"), chunk(&text(16, 0))].concat();
    let mut limits = Limits::default();
    limits.max_chunk_line_bytes = 4;
    // `10\r\n` is 4 bytes: fine; `100\r\n` is 5: refused, in the middle of
    // a run of small chunks.
    let data = [&b"abc"[..], &text(16, 0)].concat();
    check(
        &limits,
        &[&small[..], b"0\r\n\r\n"].concat(),
        &data,
        Ok(true),
    );
    check(
        &limits,
        &[&small[..], &chunk(&text(256, 3))[..], b"0\r\n\r\n"].concat(),
        &data,
        Err(ErrorKind::ChunkLineTooLong),
    );
    let limits = Limits::default();
    // Data not followed by CRLF, a size that is not hex, a sign.
    for (bad, kind) in [
        (&b"3\r\nabcX\n"[..], ErrorKind::MissingChunkCrlf),
        (b"3\r\nabc\r\nx\r\n", ErrorKind::InvalidChunkSize),
        (b"3\r\nabc\r\n+2\r\nzz\r\n", ErrorKind::InvalidChunkSize),
        (b"3\r\nabc\r\n2\rzz\r\n", ErrorKind::InvalidChunkSize),
    ] {
        let body = [&small[..], bad].concat();
        check(&limits, &body, &[&data[..], b"abc"].concat()[..], Err(kind));
    }
    // Upper-case digits and leading zeros are sizes like any other.
    let body = [&small[..], b"00A\r\n0123456789\r\n0\r\n\r\n"].concat();
    check(
        &limits,
        &body,
        &[&data[..], b"0123456789"].concat(),
        Ok(true),
    );
}

/// Every event of `body` fed in the given pieces: its data, and whether
/// it ended or the error that stopped it.
fn decode_pieces(body: &[u8], cuts: &[usize]) -> (Vec<u8>, Outcome) {
    let mut dec = decoder(Limits::default());
    let mut buf = BytesMut::new();
    let mut data = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain([&body.len()]) {
        buf.extend_from_slice(&body[from..to]);
        from = to;
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(Event::Data(d))) => data.extend_from_slice(&d),
                Ok(Some(Event::End(_))) => return (data, Ok(true)),
                Ok(Some(other)) => panic!("unexpected {other:?}"),
                Ok(None) => break,
                Err(e) => return (data, Err(e.kind())),
            }
        }
    }
    (data, Ok(false))
}

/// A run of chunks with the same framing: `count` chunks of `size` bytes,
/// the size written with `zeros` leading zeros, in upper or lower case.
#[derive(Debug, Clone)]
struct Run {
    size: usize,
    zeros: usize,
    upper: bool,
    count: usize,
}

fn run() -> impl Strategy<Value = Run> {
    (
        prop::sample::select(&[1usize, 2, 5, 10, 16, 26, 42, 64, 255][..]),
        0usize..8,
        any::<bool>(),
        1usize..6,
    )
        .prop_map(|(size, zeros, upper, count)| Run {
            size,
            zeros,
            upper,
            count,
        })
}

/// How a body ends: `Ok(true)` when complete, or the error that stops it.
type Outcome = Result<bool, ErrorKind>;

/// What comes after the runs, the data it adds, and how the body ends then.
const ENDINGS: &[(&[u8], &[u8], Outcome)] = &[
    (b"0\r\n\r\n", b"", Ok(true)),
    (b"000\r\n\r\n", b"", Ok(true)),
    (b"3\r\nabcX\n", b"abc", Err(ErrorKind::MissingChunkCrlf)),
    (b"x\r\n", b"", Err(ErrorKind::InvalidChunkSize)),
    (b"2;a=b\r\nzz\r\n0\r\n\r\n", b"zz", Ok(true)),
    (b"1\nz\r\n0\r\n\r\n", b"", Err(ErrorKind::BareLineFeed)),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Runs of chunks whose framing repeats byte for byte are read by a
    /// shortcut that compares each framing with the one before: it reads
    /// them as the general reading does, with framings that differ only
    /// in case or leading zeros, or not at all, whole, byte by byte and
    /// cut anywhere in two.
    #[test]
    fn repeated_framing_reads_as_any_other(
        runs in prop::collection::vec(run(), 1..5),
        ending in 0..ENDINGS.len(),
        seed in any::<u8>(),
    ) {
        let mut body = Vec::new();
        let mut want = Vec::new();
        for (r, run) in runs.iter().enumerate() {
            let digits = if run.upper {
                format!("{:X}", run.size)
            } else {
                format!("{:x}", run.size)
            };
            for i in 0..run.count {
                let piece = text(run.size, seed.wrapping_add((r * 7 + i) as u8));
                body.extend_from_slice("0".repeat(run.zeros).as_bytes());
                body.extend_from_slice(digits.as_bytes());
                body.extend_from_slice(b"\r\n");
                body.extend_from_slice(&piece);
                body.extend_from_slice(b"\r\n");
                want.extend(piece);
            }
        }
        let (tail, tail_data, outcome) = ENDINGS[ending];
        body.extend_from_slice(tail);
        want.extend_from_slice(tail_data);
        let whole = decode_pieces(&body, &[]);
        prop_assert_eq!((&whole.0[..], whole.1), (&want[..], outcome));
        let bytewise: Vec<usize> = (1..body.len()).collect();
        prop_assert_eq!(decode_pieces(&body, &bytewise), whole.clone());
        for cut in 1..body.len() {
            prop_assert_eq!(decode_pieces(&body, &[cut]), whole.clone(), "cut at {}", cut);
        }
    }
}
