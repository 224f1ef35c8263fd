//! Head parsing: h1proto beside httparse, httparse followed by building the
//! `http` types (zero-copy, as hyper builds them: `httparse+http`; by
//! copying: `httparse+http-copy`), and a memchr pass over the same bytes
//! as the floor, on the six heads of the mix (`common::corpus::MIX`).
//!
//! `cargo bench --bench parse -- --warm-up-time 1 --measurement-time 3`
//!
//! Two h1proto rows per message:
//!
//! - `h1proto/reused`: one decoder for all iterations, as a connection
//!   keeps one; each iteration decodes `Head` then `End` from a fresh clone
//!   of the bytes made in the untimed setup. This is the like-for-like row.
//! - `h1proto/fresh`: a new decoder per message, decoding up to `Head`
//!   (the first version of this bench; it pays for the decoder's line
//!   vector growing from empty every time).
//!
//! Before the timings, the bench prints the heap allocations per message of
//! every contender in steady state.

mod common;

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use h1proto::{Event, Limits, RequestDecoder, ResponseDecoder};
use h1proto_test_support::corpus::{self, MIX, Message};

/// A fresh decoder per message, up to the `Head` event.
fn fresh(message: &Message, buf: BytesMut) -> usize {
    let mut buf = buf;
    if message.request {
        let mut dec = RequestDecoder::new(Limits::default());
        match dec.decode(&mut buf) {
            Ok(Some(Event::Head { head, .. })) => head.headers().len(),
            other => panic!("no head: {other:?}"),
        }
    } else {
        let mut dec = ResponseDecoder::new(Limits::default());
        match dec.decode(&mut buf) {
            Ok(Some(Event::Head { head, .. })) => head.headers().len(),
            other => panic!("no head: {other:?}"),
        }
    }
}

/// The decoders one connection would keep.
struct Reused {
    req: RequestDecoder,
    res: ResponseDecoder,
}

impl Reused {
    fn new() -> Self {
        Reused {
            req: RequestDecoder::new(Limits::default()),
            res: ResponseDecoder::new(Limits::default()),
        }
    }

    /// `Head` then `End`; returns the buffer so that dropping it is not timed.
    fn decode(&mut self, message: &Message, mut buf: BytesMut) -> (usize, BytesMut) {
        let n = if message.request {
            common::h1proto_request(&mut self.req, &mut buf)
                .0
                .headers()
                .len()
        } else {
            common::h1proto_response_head(&mut self.res, &mut buf)
                .headers()
                .len()
        };
        (n, buf)
    }
}

fn httparse_only(message: &Message) -> usize {
    if message.request {
        corpus::httparse_request(message.head)
    } else {
        corpus::httparse_response(message.head)
    }
}

/// The zero-copy baseline (`corpus::zero_copy_request`): the head split
/// off `buf` and frozen, values and target sliced out of it, as hyper
/// builds them. Returns the buffer so that dropping it is not timed.
fn httparse_http(message: &Message, mut buf: BytesMut) -> (usize, BytesMut) {
    let n = if message.request {
        corpus::zero_copy_request(&mut buf).0.headers().len()
    } else {
        corpus::zero_copy_response(&mut buf).0.headers().len()
    };
    (n, buf)
}

/// The copying construction (`corpus::copying_request`), for comparison
/// with figures taken before the zero-copy baseline.
fn httparse_http_copy(message: &Message) -> usize {
    if message.request {
        corpus::copying_request(message.head).0.headers().len()
    } else {
        corpus::copying_response(message.head).0.headers().len()
    }
}

/// Every contender must agree on the input before it is timed.
fn check(message: &Message, reused: &mut Reused) {
    let mut buf = BytesMut::from(&common::wire(message)[..]);
    let mut head = BytesMut::from(message.head);
    if message.request {
        let (ours, _) = common::h1proto_request(&mut reused.req, &mut buf);
        let (theirs, _) = corpus::zero_copy_request(&mut head);
        let (copied, _) = corpus::copying_request(message.head);
        for theirs in [theirs, copied] {
            assert_eq!(ours.method(), theirs.method());
            assert_eq!(ours.uri(), theirs.uri());
            assert_eq!(ours.headers(), theirs.headers());
        }
    } else {
        let ours = common::h1proto_response_head(&mut reused.res, &mut buf);
        let (theirs, _) = corpus::zero_copy_response(&mut head);
        let (copied, _) = corpus::copying_response(message.head);
        for theirs in [theirs, copied] {
            assert_eq!(ours.status(), theirs.status());
            assert_eq!(ours.headers(), theirs.headers());
        }
    }
    assert!(head.is_empty());
    assert!(buf.is_empty());
}

fn allocations() {
    let mut reused = Reused::new();
    for message in &MIX {
        let wire = BytesMut::from(&common::wire(message)[..]);
        let head = BytesMut::from(message.head);
        let name = message.name;
        common::report_batched(
            &format!("{name}/h1proto/reused"),
            || wire.clone(),
            |buf| reused.decode(message, buf),
        );
        common::report_batched(
            &format!("{name}/h1proto/fresh"),
            || head.clone(),
            |buf| fresh(message, buf),
        );
        common::report(&format!("{name}/httparse"), || httparse_only(message));
        common::report_batched(
            &format!("{name}/httparse+http"),
            || head.clone(),
            |buf| httparse_http(message, buf),
        );
        common::report(&format!("{name}/httparse+http-copy"), || {
            httparse_http_copy(message)
        });
    }
}

fn heads(c: &mut Criterion) {
    allocations();
    let mut reused = Reused::new();
    for message in &MIX {
        check(message, &mut reused);
        let wire = BytesMut::from(&common::wire(message)[..]);
        let head = BytesMut::from(message.head);
        let input = message.head;
        let mut group = c.benchmark_group(message.name);
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function("h1proto/reused", |b| {
            b.iter_batched(
                || wire.clone(),
                |buf| reused.decode(message, black_box(buf)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("h1proto/fresh", |b| {
            b.iter_batched(
                || head.clone(),
                |buf| fresh(message, black_box(buf)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("httparse", |b| b.iter(|| httparse_only(black_box(message))));
        group.bench_function("httparse+http", |b| {
            b.iter_batched(
                || head.clone(),
                |buf| httparse_http(message, black_box(buf)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("httparse+http-copy", |b| {
            b.iter(|| httparse_http_copy(black_box(message)))
        });
        group.bench_function("memchr_floor", |b| {
            b.iter(|| corpus::floor(black_box(input)))
        });
        group.finish();
    }
}

criterion_group!(benches, heads);
criterion_main!(benches);
