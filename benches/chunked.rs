//! Chunked body decoding: 64 KiB of body in 4 KiB chunks and in 64-byte
//! chunks, in bytes per second of wire input, beside httparse's chunk-size
//! parser driving the same splits and a memchr pass over the same bytes
//! (the floor).
//!
//! `cargo bench --bench chunked -- --warm-up-time 1 --measurement-time 3`
//!
//! The decoder sits in the middle of an endless chunked body: each
//! iteration hands it 64 KiB more of chunks (a buffer cloned in the untimed
//! setup) and takes every `Data` event until it asks for more, so only body
//! decoding is timed, never a head or an `End`.

mod common;

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use h1proto::{Event, Limits, RequestDecoder};

use h1proto_test_support::chunks::{BODY, HEAD, chunks, httparse_chunks};

/// A decoder inside a chunked request body that never ends.
fn open_decoder() -> RequestDecoder {
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::from(HEAD);
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::Head { .. }))));
    assert!(matches!(dec.decode(&mut buf), Ok(None)));
    dec
}

/// Every `Data` event in `buf`; returns the data bytes seen and the buffer
/// (dropped outside the timed section).
fn h1proto(dec: &mut RequestDecoder, mut buf: BytesMut) -> (usize, BytesMut) {
    let mut n = 0;
    loop {
        match dec.decode(&mut buf) {
            Ok(Some(Event::Data(data))) => n += data.len(),
            Ok(None) => return (n, buf),
            other => panic!("unexpected: {other:?}"),
        }
    }
}

fn chunked(c: &mut Criterion) {
    let mut group = c.benchmark_group("chunked");
    for chunk in [4096usize, 64] {
        let wire = BytesMut::from(&chunks(chunk)[..]);
        let bytes = wire.to_vec();
        let mut dec = open_decoder();
        assert_eq!(h1proto(&mut dec, wire.clone()).0, BODY);
        assert_eq!(httparse_chunks(wire.clone()).0, BODY);

        let label = if chunk == 4096 { "4KiB" } else { "64B" };
        common::report_batched(
            &format!("chunked/{label}/h1proto (per 64 KiB)"),
            || wire.clone(),
            |buf| h1proto(&mut dec, buf),
        );
        common::report_batched(
            &format!("chunked/{label}/httparse (per 64 KiB)"),
            || wire.clone(),
            httparse_chunks,
        );

        group.throughput(Throughput::Bytes(wire.len() as u64));
        group.bench_function(format!("{label}/h1proto"), |b| {
            b.iter_batched(
                || wire.clone(),
                |buf| h1proto(&mut dec, black_box(buf)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("{label}/httparse"), |b| {
            b.iter_batched(
                || wire.clone(),
                |buf| httparse_chunks(black_box(buf)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("{label}/memchr_floor"), |b| {
            b.iter(|| h1proto_test_support::corpus::floor(black_box(&bytes)))
        });
    }
    group.finish();
}

criterion_group!(benches, chunked);
criterion_main!(benches);
