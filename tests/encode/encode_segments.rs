//! The output queue's contiguity contract: how many segments a response
//! costs, zero-copy large bodies, partial writes, and a vectored view that
//! never skips a byte.

use std::io::IoSlice;

use bytes::{Buf, Bytes};
use h1proto::{EncoderConfig, ResponseContext, ResponseEncoder, Segments, framing::RequestKind};
use http::Response;
use proptest::prelude::*;

fn drain(out: &mut Segments) -> Vec<u8> {
    let mut v = Vec::new();
    while out.has_remaining() {
        let written = {
            let mut slices = [IoSlice::new(&[]); 4];
            let n = out.io_slices(&mut slices);
            let mut written = 0;
            for s in &slices[..n] {
                v.extend_from_slice(s);
                written += s.len();
            }
            written
        };
        out.advance(written);
    }
    v
}

fn get_response<B: Into<Bytes>>(body: B) -> (usize, Vec<u8>) {
    let mut enc = ResponseEncoder::default();
    enc.send_response(Response::new(body), ResponseContext::default())
        .unwrap();
    let segments = enc.output().segment_count();
    (segments, drain(enc.output()))
}

#[test]
fn small_get_response_is_one_segment_whatever_the_body_type() {
    let expected = b"HTTP/1.1 200 OK\r\ncontent-length: 13\r\n\r\nHello, world!".to_vec();
    let results = [
        get_response("Hello, world!"),
        get_response(String::from("Hello, world!")),
        get_response(b"Hello, world!".to_vec()),
        get_response(Bytes::from_static(b"Hello, world!")),
        get_response(&b"Hello, world!"[..]),
    ];
    for (segments, bytes) in results {
        assert_eq!(segments, 1);
        assert_eq!(bytes, expected);
    }
}

#[test]
fn head_response_is_one_segment() {
    let mut enc = ResponseEncoder::default();
    let ctx = ResponseContext {
        request: RequestKind::Head,
        ..ResponseContext::default()
    };
    enc.send_response(Response::new("Hello, world!"), ctx)
        .unwrap();
    assert_eq!(enc.output().segment_count(), 1);
    assert_eq!(
        drain(enc.output()),
        b"HTTP/1.1 200 OK\r\ncontent-length: 13\r\n\r\n"
    );
}

#[test]
fn four_chunked_writes_and_the_end_are_one_segment() {
    let mut enc = ResponseEncoder::default();
    enc.send_head(Response::new(()), ResponseContext::default())
        .unwrap();
    for i in 0..4u8 {
        enc.send_data(vec![b'a' + i; 1024]).unwrap();
    }
    enc.finish(None).unwrap();
    assert_eq!(enc.output().segment_count(), 1);
    let bytes = drain(enc.output());
    let head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
    assert!(bytes.starts_with(head));
    let mut expected = head.to_vec();
    for i in 0..4u8 {
        expected.extend_from_slice(b"400\r\n");
        expected.extend_from_slice(&[b'a' + i; 1024]);
        expected.extend_from_slice(b"\r\n");
    }
    expected.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(bytes, expected);
}

#[test]
fn large_body_is_the_head_plus_the_same_allocation() {
    let body = Bytes::from(vec![7u8; 1 << 20]);
    let ptr = body.as_ptr();
    let mut enc = ResponseEncoder::default();
    enc.send_response(Response::new(body), ResponseContext::default())
        .unwrap();
    let out = enc.output();
    assert_eq!(out.segment_count(), 2);
    let mut slices = [IoSlice::new(&[]); 4];
    assert_eq!(out.io_slices(&mut slices), 2);
    assert_eq!(
        &*slices[0],
        b"HTTP/1.1 200 OK\r\ncontent-length: 1048576\r\n\r\n"
    );
    assert_eq!(slices[1].as_ptr(), ptr);
    assert_eq!(slices[1].len(), 1 << 20);
}

#[test]
fn large_chunk_keeps_its_framing_in_the_tail() {
    let body = Bytes::from(vec![1u8; 64 * 1024]);
    let ptr = body.as_ptr();
    let mut enc = ResponseEncoder::default();
    enc.send_head(Response::new(()), ResponseContext::default())
        .unwrap();
    enc.send_data(body).unwrap();
    enc.send_data("tail").unwrap();
    enc.finish(None).unwrap();
    // head + size line | the body | CRLF, small chunk and last-chunk
    let out = enc.output();
    assert_eq!(out.segment_count(), 3);
    let mut slices = [IoSlice::new(&[]); 4];
    out.io_slices(&mut slices);
    assert!(slices[0].ends_with(b"\r\n\r\n10000\r\n"));
    assert_eq!(slices[1].as_ptr(), ptr);
    assert_eq!(&*slices[2], b"\r\n4\r\ntail\r\n0\r\n\r\n");
}

#[test]
fn threshold_is_configurable() {
    let mut config = EncoderConfig::default();
    config.coalesce_threshold = 4;
    let mut enc = ResponseEncoder::new(config);
    enc.send_response(Response::new("Hello"), ResponseContext::default())
        .unwrap();
    assert_eq!(enc.output().segment_count(), 2);
    assert_eq!(enc.output().threshold(), 4);
}

#[test]
fn partial_advance_across_segments() {
    let mut out = Segments::with_threshold(8);
    out.push_slice(b"head:");
    out.push_bytes(Bytes::from_static(b"0123456789"));
    out.push_slice(b":end");
    assert_eq!(out.len(), 19);
    out.advance(3);
    assert_eq!(out.chunk(), b"d:");
    assert_eq!(out.segment_count(), 3);
    out.advance(4); // "d:" and "01"
    assert_eq!(out.chunk(), b"23456789");
    assert_eq!(out.segment_count(), 2);
    out.advance(10); // rest of the body and ":e"
    assert_eq!(out.chunk(), b"nd");
    assert_eq!(out.segment_count(), 1);
    assert_eq!(out.chunks_vectored(&mut [IoSlice::new(&[]); 2]), 1);
    out.advance(2);
    assert!(out.is_empty());
    assert_eq!(out.chunks_vectored(&mut [IoSlice::new(&[]); 2]), 0);
    assert_eq!(out.chunk(), b"");
}

#[test]
fn short_iovec_array_gets_a_prefix() {
    let mut out = Segments::with_threshold(1);
    for piece in [&b"ab"[..], b"cd", b"ef"] {
        out.push_bytes(Bytes::from_static(piece));
    }
    let mut slices = [IoSlice::new(&[]); 2];
    assert_eq!(out.chunks_vectored(&mut slices), 2);
    assert_eq!((&*slices[0], &*slices[1]), (&b"ab"[..], &b"cd"[..]));
}

#[test]
fn nothing_leaves_until_drained_and_the_tail_is_reused() {
    let mut enc = ResponseEncoder::default();
    for _ in 0..3 {
        enc.send_response(Response::new("x"), ResponseContext::default())
            .unwrap();
    }
    // Three pipelined responses, one segment.
    assert_eq!(enc.output().segment_count(), 1);
    let first = drain(enc.output());
    assert_eq!(first.len(), 3 * 39);
    enc.send_response(Response::new("x"), ResponseContext::default())
        .unwrap();
    assert_eq!(enc.output().segment_count(), 1);
}

#[derive(Debug, Clone)]
enum Op {
    Slice(Vec<u8>),
    Bytes(Vec<u8>),
    Advance(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Op::Slice),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Op::Bytes),
        (0usize..60).prop_map(Op::Advance),
    ]
}

proptest! {
    /// Against a naive model (one Vec), chunks_vectored always returns the
    /// remaining bytes in order, and as a prefix when the iovec array is
    /// short.
    #[test]
    fn vectored_view_matches_a_naive_concatenation(
        threshold in 0usize..32,
        ops in proptest::collection::vec(op(), 0..40),
        iovecs in 1usize..6,
    ) {
        let mut out = Segments::with_threshold(threshold);
        let mut model: Vec<u8> = Vec::new();
        for op in ops {
            match op {
                Op::Slice(v) => { out.push_slice(&v); model.extend_from_slice(&v); }
                Op::Bytes(v) => { model.extend_from_slice(&v); out.push_bytes(Bytes::from(v)); }
                Op::Advance(n) => {
                    let n = n.min(model.len());
                    out.advance(n);
                    model.drain(..n);
                }
            }
            prop_assert_eq!(out.remaining(), model.len());
            let mut all = vec![IoSlice::new(&[]); out.segment_count() + 1];
            let n = out.chunks_vectored(&mut all);
            prop_assert_eq!(n, out.segment_count());
            let flat: Vec<u8> = all[..n].iter().flat_map(|s| s.iter().copied()).collect();
            prop_assert_eq!(&flat, &model);
            prop_assert!(all[..n].iter().all(|s| !s.is_empty()));
            let mut few = vec![IoSlice::new(&[]); iovecs];
            let k = out.chunks_vectored(&mut few);
            let prefix: Vec<u8> = few[..k].iter().flat_map(|s| s.iter().copied()).collect();
            prop_assert!(model.starts_with(&prefix));
            prop_assert_eq!(out.chunk(), &model[..out.chunk().len()]);
        }
    }
}
