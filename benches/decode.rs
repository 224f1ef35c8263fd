//! Full request decoding into `http` types, `End` included: h1proto's
//! `RequestDecoder` (one decoder reused across messages, as a connection
//! keeps it) beside httparse followed by building the `http` types as
//! hyper builds them (zero-copy: `httparse+http`) or by copying
//! (`httparse+http-copy`), and splitting the body off the same buffer.
//!
//! `cargo bench --bench decode -- --warm-up-time 1 --measurement-time 3`
//!
//! Both contenders get the message in a `BytesMut` cloned in the untimed
//! setup, and both end with an `http::Request<()>` and the body as `Bytes`.
//! The zero-copy baseline reads `Content-Length`, `Transfer-Encoding` and
//! `Connection` while it builds the map, as hyper does, but checks no
//! `Host` and no framing conflict, so it does less than h1proto.
//! Allocations per request are printed before the timings. The
//! `h1proto+recycle` rows hand each request's field map back to the decoder
//! (`give_spare_fields`), as a server connection does with its responses' maps.

mod common;

use std::hint::black_box;

use bytes::{Buf, Bytes, BytesMut};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use h1proto::{Event, Limits, RequestDecoder};
use h1proto_test_support::corpus::{self, MIX, Message};
use http::header::CONTENT_LENGTH;
use http::{Method, Request};

/// h1proto: `Head`, `Data` if there is a body, `End`.
fn h1proto(dec: &mut RequestDecoder, mut buf: BytesMut) -> (Request<()>, Option<Bytes>, BytesMut) {
    let head = match dec.decode(&mut buf) {
        Ok(Some(Event::Head { head, .. })) => head,
        other => panic!("no head: {other:?}"),
    };
    let mut body = None;
    loop {
        match dec.decode(&mut buf) {
            Ok(Some(Event::Data(data))) => body = Some(data),
            Ok(Some(Event::End(_))) => return (head, body, buf),
            other => panic!("no end: {other:?}"),
        }
    }
}

/// h1proto, then the request's field map handed back to the decoder once
/// the application is done with it, as a `ServerConnection` hands back each
/// response's map: the next head is decoded into it.
fn h1proto_recycle(dec: &mut RequestDecoder, buf: BytesMut) -> (Method, Option<Bytes>, BytesMut) {
    let (head, body, rest) = h1proto(dec, buf);
    let (parts, ()) = head.into_parts();
    dec.give_spare_fields(parts.headers);
    (parts.method, body, rest)
}

/// httparse + `http` types built as hyper builds them (zero-copy, the
/// framing fields read while building), then the body split off by its
/// `Content-Length`.
fn baseline(mut buf: BytesMut) -> (Request<()>, Option<Bytes>, BytesMut) {
    let (head, framing) = corpus::zero_copy_request(&mut buf);
    let body = framing
        .content_length
        .map(|n| buf.split_to(n as usize).freeze());
    (head, body, buf)
}

/// The same with the `http` types built by copying the target and every
/// value: the baseline of figures taken before the zero-copy one.
fn baseline_copy(mut buf: BytesMut) -> (Request<()>, Option<Bytes>, BytesMut) {
    let (head, len) = corpus::copying_request(&buf);
    buf.advance(len);
    let body = match head.headers().get(CONTENT_LENGTH) {
        Some(value) => {
            let n: usize = value.to_str().unwrap().parse().unwrap();
            Some(buf.split_to(n).freeze())
        }
        None => None,
    };
    (head, body, buf)
}

fn requests(c: &mut Criterion) {
    let messages: Vec<&Message> = MIX.iter().filter(|m| m.request).collect();
    let mut dec = RequestDecoder::new(Limits::default());

    for message in &messages {
        let wire = BytesMut::from(&common::wire(message)[..]);
        // Same request, same body, everything consumed.
        let (ours, our_body, rest) = h1proto(&mut dec, wire.clone());
        assert!(rest.is_empty());
        for base in [baseline, baseline_copy] {
            let (theirs, their_body, their_rest) = base(wire.clone());
            assert_eq!(ours.method(), theirs.method());
            assert_eq!(ours.uri(), theirs.uri());
            assert_eq!(ours.headers(), theirs.headers());
            assert_eq!(our_body, their_body);
            assert!(their_rest.is_empty());
        }

        let name = message.name;
        common::report_batched(
            &format!("decode/{name}/h1proto"),
            || wire.clone(),
            |buf| h1proto(&mut dec, buf),
        );
        common::report_batched(
            &format!("decode/{name}/h1proto+recycle"),
            || wire.clone(),
            |buf| h1proto_recycle(&mut dec, buf),
        );
        common::report_batched(
            &format!("decode/{name}/httparse+http"),
            || wire.clone(),
            baseline,
        );
        common::report_batched(
            &format!("decode/{name}/httparse+http-copy"),
            || wire.clone(),
            baseline_copy,
        );
    }

    let mut group = c.benchmark_group("decode");
    for message in &messages {
        let wire = BytesMut::from(&common::wire(message)[..]);
        group.throughput(Throughput::Bytes(wire.len() as u64));
        group.bench_function(format!("{}/h1proto", message.name), |b| {
            b.iter_batched(
                || wire.clone(),
                |buf| h1proto(&mut dec, black_box(buf)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("{}/h1proto+recycle", message.name), |b| {
            b.iter_batched(
                || wire.clone(),
                |buf| h1proto_recycle(&mut dec, black_box(buf)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("{}/httparse+http", message.name), |b| {
            b.iter_batched(
                || wire.clone(),
                |buf| baseline(black_box(buf)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("{}/httparse+http-copy", message.name), |b| {
            b.iter_batched(
                || wire.clone(),
                |buf| baseline_copy(black_box(buf)),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, requests);
criterion_main!(benches);
