//! Encoding throughput, segments per response and heap allocations per
//! response in steady state.
//!
//! Run: `cargo bench --bench encode`.

use std::fs::File;
use std::hint::black_box;
use std::io::{IoSlice, Write};
use std::time::Duration;

use bytes::{Buf, Bytes};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use h1proto::{EncoderConfig, ResponseContext, ResponseEncoder, Segments};
use http::Response;

/// Counts allocations (not frees) made through the global allocator.
#[global_allocator]
static GLOBAL: h1proto_test_support::alloc::Counting = h1proto_test_support::alloc::Counting;

/// Allocations so far.
fn allocs() -> u64 {
    h1proto_test_support::alloc::counters().0
}

const HELLO: &str = "Hello, world!";

/// Drains the queue the way a driver would, into a sink that discards.
fn drain(out: &mut Segments) -> usize {
    let n = out.remaining();
    out.advance(n);
    n
}

fn hello(enc: &mut ResponseEncoder, res: Response<&'static str>) {
    enc.send_response(res, ResponseContext::default()).unwrap();
}

fn chunked(enc: &mut ResponseEncoder, res: Response<()>, piece: &Bytes) {
    enc.send_head(res, ResponseContext::default()).unwrap();
    for _ in 0..4 {
        enc.send_data(piece.clone()).unwrap();
    }
    enc.finish(None).unwrap();
}

fn big(enc: &mut ResponseEncoder, res: Response<Bytes>) {
    enc.send_response(res, ResponseContext::default()).unwrap();
}

fn hello_res() -> Response<&'static str> {
    Response::builder()
        .header("content-type", "text/plain")
        .body(HELLO)
        .unwrap()
}

fn stream_res() -> Response<()> {
    Response::builder()
        .header("content-type", "text/plain")
        .body(())
        .unwrap()
}

/// Segments and allocations per response, in steady state: responses are
/// built beforehand (building an `http::Response` allocates its HeaderMap,
/// which is the application's cost, not the encoder's), then encoded and
/// drained while the allocator counts.
fn report() {
    const N: u64 = 1000;
    let piece = Bytes::from(vec![b'x'; 1024]);
    let mib = Bytes::from(vec![b'y'; 1 << 20]);
    let mut enc = ResponseEncoder::default();

    let mut measure = |name: &str, f: &mut dyn FnMut(&mut ResponseEncoder, u64)| {
        // Warm up: the tail buffer and the segment list reach their size.
        for i in 0..10 {
            f(&mut enc, i);
            drain(enc.output());
        }
        let mut segments = 0;
        let before = allocs();
        for i in 0..N {
            f(&mut enc, i);
            segments += enc.output().segment_count() as u64;
            drain(enc.output());
        }
        let allocs = allocs() - before;
        println!(
            "{name}: {:.2} segments/response, {:.3} allocations/response",
            segments as f64 / N as f64,
            allocs as f64 / N as f64
        );
    };
    let mut hellos: Vec<_> = (0..N + 10).map(|_| hello_res()).collect();
    measure("hello-world", &mut |e, _| hello(e, hellos.pop().unwrap()));
    let mut streams: Vec<_> = (0..N + 10).map(|_| stream_res()).collect();
    measure("4 x 1 KiB chunked", &mut |e, _| {
        chunked(e, streams.pop().unwrap(), &piece)
    });
    let mut bigs: Vec<_> = (0..N + 10).map(|_| Response::new(mib.clone())).collect();
    measure("1 MiB body", &mut |e, _| big(e, bigs.pop().unwrap()));
}

fn bench_encode(c: &mut Criterion) {
    report();
    let piece = Bytes::from(vec![b'x'; 1024]);
    let mib = Bytes::from(vec![b'y'; 1 << 20]);
    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(3));
    let mut enc = ResponseEncoder::default();
    g.bench_function("hello-world", |b| {
        b.iter(|| {
            hello(&mut enc, hello_res());
            black_box(drain(enc.output()))
        })
    });
    g.bench_function("4x1KiB-chunked", |b| {
        b.iter(|| {
            chunked(&mut enc, stream_res(), &piece);
            black_box(drain(enc.output()))
        })
    });
    g.bench_function("1MiB-body", |b| {
        b.iter(|| {
            big(&mut enc, Response::new(mib.clone()));
            black_box(drain(enc.output()))
        })
    });
    g.finish();
}

/// The cost of copying a body into the tail (one iovec) against queueing
/// it as its own segment (two iovecs), written with one real
/// `write_vectored` to /dev/null: the data behind the default threshold.
fn bench_threshold(c: &mut Criterion) {
    let mut null = File::create("/dev/null").unwrap();
    let mut g = c.benchmark_group("threshold");
    g.measurement_time(Duration::from_secs(2));
    for size in [512usize, 2048, 8192, 32768] {
        let body = Bytes::from(vec![b'z'; size]);
        for (label, threshold) in [("copy", usize::MAX), ("segment", 0)] {
            let mut config = EncoderConfig::default();
            config.coalesce_threshold = threshold;
            let mut enc = ResponseEncoder::new(config);
            g.bench_function(format!("{label}/{size}"), |b| {
                b.iter(|| {
                    enc.send_response(Response::new(body.clone()), ResponseContext::default())
                        .unwrap();
                    let out = enc.output();
                    while out.has_remaining() {
                        let written = {
                            let mut slices = [IoSlice::new(&[]); 4];
                            let n = out.io_slices(&mut slices);
                            null.write_vectored(&slices[..n]).unwrap()
                        };
                        out.advance(written);
                    }
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_encode, bench_threshold);
criterion_main!(benches);
