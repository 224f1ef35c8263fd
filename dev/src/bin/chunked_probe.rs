//! Decodes a chunked body N times, for `scripts/callgrind.sh chunked`,
//! which counts the instructions with `valgrind --tool=callgrind` at two
//! values of N and divides the difference: instructions per 64 KiB of body
//! data, repeatable on a noisy machine where timings are not.
//!
//! `chunked_probe OPERATION CHUNK ITERATIONS`
//!
//! Each iteration copies the wire bytes of 64 KiB of data framed as chunks
//! of CHUNK bytes (`test-support/src/chunks.rs`, the `chunked` bench's input)
//! into a new buffer, then:
//!
//! - `h1proto`: a `RequestDecoder` inside an endless chunked body takes
//!   every `Data` event until it asks for more (as the bench does);
//! - `httparse`: `httparse::parse_chunk_size` drives the same splits;
//! - `memchr`: a memchr count of b'\n' over the bytes (the floor);
//! - `refill`: nothing more, to show the share of the copy itself.
//!
//! `chunked_probe time CHUNK ITERATIONS` times instead: it runs the
//! three operations in turn ITERATIONS times, the copy left out of the
//! timed part, and prints the fastest run of each in nanoseconds and
//! h1proto's bytes/s as a share of the floor's. The fastest of many runs
//! is what the code costs when nothing else gets in the way, which on a
//! shared machine is the figure that repeats.

use h1proto_test_support::chunks;
use h1proto_test_support::corpus;

use std::hint::black_box;

use bytes::BytesMut;
use h1proto::{Event, Limits, RequestDecoder};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, op, chunk, iterations] = &args[..] else {
        eprintln!("usage: chunked_probe OPERATION CHUNK ITERATIONS");
        std::process::exit(2);
    };
    let chunk: usize = chunk.parse().expect("CHUNK");
    let iterations: u64 = iterations.parse().expect("ITERATIONS");
    let wire = chunks::chunks(chunk);

    let mut dec = RequestDecoder::new(Limits::default());
    let mut head = BytesMut::from(chunks::HEAD);
    assert!(matches!(
        dec.decode(&mut head),
        Ok(Some(Event::Head { .. }))
    ));
    if op == "time" {
        time(&mut dec, &wire, iterations);
        return;
    }
    let mut sink = 0usize;
    for _ in 0..iterations {
        let mut buf = BytesMut::from(black_box(&wire[..]));
        sink += match op.as_str() {
            "h1proto" => h1proto(&mut dec, &mut buf),
            "httparse" => chunks::httparse_chunks(buf).0,
            "memchr" => corpus::floor(black_box(&buf)),
            "refill" => black_box(buf).len(),
            other => panic!("no operation {other}"),
        };
    }
    println!("{sink}");
}

/// Every `Data` event in `buf`: the data bytes seen.
fn h1proto(dec: &mut RequestDecoder, buf: &mut BytesMut) -> usize {
    let mut n = 0;
    loop {
        match dec.decode(buf) {
            Ok(Some(Event::Data(data))) => n += black_box(data).len(),
            Ok(None) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(n, chunks::BODY);
    n
}

/// The fastest of `iterations` runs of each operation.
fn time(dec: &mut RequestDecoder, wire: &[u8], iterations: u64) {
    use std::time::{Duration, Instant};
    let mut best = [Duration::MAX; 3];
    for _ in 0..iterations {
        for (op, best) in best.iter_mut().enumerate() {
            let mut buf = BytesMut::from(wire);
            let start = Instant::now();
            let (n, rest) = match op {
                0 => (h1proto(dec, &mut buf), buf),
                1 => chunks::httparse_chunks(buf),
                _ => (corpus::floor(black_box(wire)), buf),
            };
            let took = start.elapsed();
            black_box((n, rest));
            *best = (*best).min(took);
        }
    }
    let [h, p, m] = best.map(|d| d.as_nanos());
    println!(
        "h1proto {h} ns, httparse {p} ns, memchr {m} ns per {} wire bytes; \
         h1proto at {:.1}% of the floor's bytes/s",
        wire.len(),
        100.0 * m as f64 / h as f64
    );
}
