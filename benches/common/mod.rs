//! Shared by the benches: a counting global allocator
//! and the h1proto calls every bench makes the same way.
//!
//! Each bench binary that declares `mod common;` gets the counting
//! allocator, so the allocation figures it prints come from the very code
//! the timings measure.
#![allow(dead_code)]

use bytes::BytesMut;
use h1proto::{Event, RequestDecoder, ResponseDecoder};
use http::{Method, Request, Response};

pub use h1proto_test_support::alloc::counters;
use h1proto_test_support::corpus;

#[global_allocator]
static GLOBAL: h1proto_test_support::alloc::Counting = h1proto_test_support::alloc::Counting;

/// Iterations of the counted loop.
pub const COUNTED: u64 = 1000;
/// Iterations run first, so buffers and tables reach their steady size.
pub const WARM_UP: u64 = 50;

/// Allocations per operation in steady state: `setup` prepares each input
/// before counting starts (as criterion's `iter_batched` does outside the
/// timed section), `routine` runs [`WARM_UP`] times, then [`COUNTED`]
/// times while the allocator counts; outputs are dropped after counting.
/// Prints one line and returns (allocations, bytes) per operation.
pub fn report_batched<I, O>(
    name: &str,
    mut setup: impl FnMut() -> I,
    mut routine: impl FnMut(I) -> O,
) -> (f64, f64) {
    for _ in 0..WARM_UP {
        drop(routine(setup()));
    }
    let inputs: Vec<I> = (0..COUNTED).map(|_| setup()).collect();
    let mut outputs: Vec<O> = Vec::with_capacity(COUNTED as usize);
    let (a0, b0) = counters();
    for input in inputs {
        outputs.push(routine(input));
    }
    let (a1, b1) = counters();
    drop(outputs);
    let n = COUNTED as f64;
    let (allocs, bytes) = ((a1 - a0) as f64 / n, (b1 - b0) as f64 / n);
    println!("alloc {name}: {allocs:.2} allocations, {bytes:.0} bytes per operation");
    (allocs, bytes)
}

/// [`report_batched`] without an input.
pub fn report<O>(name: &str, mut routine: impl FnMut() -> O) -> (f64, f64) {
    report_batched(name, || (), |()| routine())
}

/// A request decoded to its `End` by a decoder that is reused from message
/// to message, as a connection reuses it: `Head`, any `Data` (dropped),
/// then `End`. Returns the head and the number of body bytes.
pub fn h1proto_request(dec: &mut RequestDecoder, buf: &mut BytesMut) -> (Request<()>, usize) {
    let head = match dec.decode(buf) {
        Ok(Some(Event::Head { head, .. })) => head,
        other => panic!("no head: {other:?}"),
    };
    let mut body = 0;
    loop {
        match dec.decode(buf) {
            Ok(Some(Event::Data(data))) => body += data.len(),
            Ok(Some(Event::End(_))) => return (head, body),
            other => panic!("no end: {other:?}"),
        }
    }
}

/// A response head decoded to its `End` by a reused decoder. The decoder
/// is told the response answers a HEAD request, so `End` follows the head
/// whatever its framing fields say (the fields are still parsed and
/// checked).
pub fn h1proto_response_head(dec: &mut ResponseDecoder, buf: &mut BytesMut) -> Response<()> {
    dec.expect_response_to(&Method::HEAD);
    let head = match dec.decode(buf) {
        Ok(Some(Event::Head { head, .. })) => head,
        other => panic!("no head: {other:?}"),
    };
    match dec.decode(buf) {
        Ok(Some(Event::End(_))) => head,
        other => panic!("no end: {other:?}"),
    }
}

/// The bytes h1proto decodes for a message of the mix: the head, and for
/// the JSON POST its 48-byte body, so that the message can end.
pub fn wire(message: &corpus::Message) -> Vec<u8> {
    assert_eq!(corpus::POST_JSON_BODY.len(), 48);
    assert_eq!(corpus::PICO_703.len(), 703);
    let mut wire = message.head.to_vec();
    if message.head == corpus::POST_JSON {
        wire.extend_from_slice(corpus::POST_JSON_BODY);
    }
    wire
}
