//! Decodes a chunked body N times, for `scripts/callgrind.sh chunked`,
//! which counts the instructions with `valgrind --tool=callgrind` at two
//! values of N and divides the difference: instructions per 64 KiB of body
//! data, repeatable on a noisy machine where timings are not.
//!
//! `chunked_probe OPERATION CHUNK ITERATIONS`
//!
//! Each iteration copies the wire bytes of 64 KiB of data framed as chunks
//! of CHUNK bytes (`benches/common/chunks.rs`, the `chunked` bench's input)
//! into a new buffer, then:
//!
//! - `h1proto`: a `RequestDecoder` inside an endless chunked body takes
//!   every `Data` event until it asks for more (as the bench does);
//! - `httparse`: `httparse::parse_chunk_size` drives the same splits;
//! - `memchr`: a memchr count of b'\n' over the bytes (the floor);
//! - `refill`: nothing more, to show the share of the copy itself.

#[path = "../benches/common/chunks.rs"]
mod chunks;
#[path = "../benches/common/corpus.rs"]
mod corpus;

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
    let mut sink = 0usize;
    for _ in 0..iterations {
        let mut buf = BytesMut::from(black_box(&wire[..]));
        sink += match op.as_str() {
            "h1proto" => {
                let mut n = 0;
                loop {
                    match dec.decode(&mut buf) {
                        Ok(Some(Event::Data(data))) => n += black_box(data).len(),
                        Ok(None) => break,
                        other => panic!("{other:?}"),
                    }
                }
                assert_eq!(n, chunks::BODY);
                n
            }
            "httparse" => chunks::httparse_chunks(buf).0,
            "memchr" => corpus::floor(black_box(&buf)),
            "refill" => black_box(buf).len(),
            other => panic!("no operation {other}"),
        };
    }
    println!("{sink}");
}
