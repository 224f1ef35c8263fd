//! The deterministic simulation: a client session and server sessions run
//! through in-memory sockets by a third driver (`test-support/src/sim`), on a
//! virtual clock, with generated plans.
//!
//! A plan is a list of requests (GET, HEAD, POST, PUT; bodies of various
//! sizes, `Content-Length` or chunked, some with trailers, some with
//! `Expect: 100-continue`, some with `Connection: close`), how the server
//! answers each (whole after reading the body, streamed while reading it,
//! or before reading it), how the client pipelines them, read and write
//! sizes for both ends, how much each direction of the socket holds,
//! delays on the virtual clock, an optional half-close, an optional
//! graceful shutdown of the first connection, and how the run ends (the
//! client closes, both sides idle, a stalled head or body, a client that
//! stops reading, a server that stops answering).
//!
//! What every run asserts:
//!
//! - every request gets its own response, in order, once: the server hands
//!   out each request exactly once over all connections, the client gets
//!   exactly one response per request, with the right id, status, body
//!   (byte for byte), trailers and interim responses, on both sides;
//! - each connection is kept or closed after each exchange as predicted
//!   (`Connection: close`, a refused `100-continue`, an unread body past the
//!   drain bound), and a client retries only what was never answered;
//! - every deadline a session announces is the one the table on `Timeouts`
//!   gives, nothing fires just before it, and it acts at it (in
//!   `test-support/src/sim`);
//! - the read buffers hold at most `max_head_bytes` plus one read, and the
//!   output at most `flush_threshold` plus one message;
//! - a timeout or a shutdown ends a connection as documented: `408` for a
//!   partly received head or an unanswered stalled body, a plain close for
//!   an idle connection or a new one that sent nothing, a close at once
//!   when the peer stops reading, `Connection: close` on the answer in
//!   progress after a shutdown.
//!
//! `SIM_CASES=N` runs N generated plans instead of the default 64.
//!
//! The plans (`sim::plan`), the client and server applications and the
//! checks (`sim::exchange`) live in `test-support/src/sim`, which the
//! `simulation` fuzz target runs too; this file generates plans with
//! proptest.

use h1proto_test_support::sim;

use http::Method;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use sim::exchange::{check, run, stats};
use sim::plan::{Answer, BodyPlan, Ending, Plan, ReqPlan};

// ------------------------------------------------------------ strategies

fn delay() -> impl Strategy<Value = u64> {
    prop_oneof![3 => Just(0u64), 1 => 1u64..3000]
}

fn link_pause() -> impl Strategy<Value = usize> {
    prop_oneof![4 => Just(0usize), 1 => 1usize..2000]
}

fn size() -> impl Strategy<Value = usize> {
    prop_oneof![1 => 1usize..=16, 4 => 17usize..=20_000]
}

fn body_len() -> impl Strategy<Value = usize> {
    prop_oneof![2 => 0usize..=100, 2 => 101usize..=5000, 1 => 5001usize..=20_000]
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        Just(Answer::Whole),
        Just(Answer::Stream),
        Just(Answer::BeforeBody)
    ]
}

fn request() -> impl Strategy<Value = ReqPlan> {
    (
        prop_oneof![
            Just(Method::GET),
            Just(Method::HEAD),
            Just(Method::POST),
            Just(Method::PUT)
        ],
        (
            body_len(),
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec(1usize..4000, 1..4),
        ),
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.1),
        answer(),
        body_len(),
        any::<bool>(),
        delay(),
    )
        .prop_map(
            |(
                method,
                (len, chunked, trailers, pieces),
                expect,
                close,
                answer,
                resp_len,
                resp_trailers,
                think,
            )| {
                let has_body = method == Method::POST || method == Method::PUT;
                ReqPlan {
                    body: has_body.then_some(BodyPlan {
                        len,
                        chunked,
                        trailers: chunked && trailers,
                        pieces,
                    }),
                    expect: has_body && expect,
                    method,
                    close,
                    answer,
                    resp_len,
                    resp_trailers,
                    think,
                }
            },
        )
}

fn ending() -> impl Strategy<Value = Ending> {
    prop_oneof![
        Just(Ending::Close),
        Just(Ending::Idle),
        (0usize..40).prop_map(Ending::StallHead),
        (answer(), 0usize..1000).prop_map(|(a, n)| Ending::StallBody(a, n)),
        Just(Ending::StopReading),
        Just(Ending::ServerStallHead),
        Just(Ending::ServerStallBody),
    ]
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        prop::collection::vec(request(), 1..8),
        prop::collection::vec(1usize..=4, 1..4),
        prop::collection::vec(delay(), 1..4),
        prop::collection::vec(delay(), 1..4),
        [
            prop::collection::vec(size(), 1..6),
            prop::collection::vec(size(), 1..6),
        ],
        [
            prop::collection::vec(size(), 1..6),
            prop::collection::vec(size(), 1..6),
        ],
        [
            prop::collection::vec(link_pause(), 1..6),
            prop::collection::vec(link_pause(), 1..6),
        ],
        (
            prop_oneof![Just(512usize), Just(4096), Just(16 * 1024)],
            prop_oneof![Just(1000u64), Just(60_000)],
        ),
        (any::<bool>(), prop_oneof![1usize..=64, 65usize..=65_536]),
        prop::bool::weighted(0.2),
        prop::option::weighted(0.3, 0u64..6000),
        ending(),
    )
        .prop_map(
            |(
                requests,
                depths,
                client_think,
                server_think,
                reads,
                writes,
                pauses,
                (read_size, release_after),
                (narrow_c2s, narrow_cap),
                half_close,
                shutdown_at,
                ending,
            )| {
                // A client that stops reading needs a server whose writes
                // can block.
                let narrow_c2s = narrow_c2s && !matches!(ending, Ending::StopReading);
                Plan {
                    requests,
                    depths,
                    client_think,
                    server_think,
                    reads,
                    writes,
                    pauses,
                    read_size,
                    release_after,
                    narrow_c2s,
                    narrow_cap,
                    half_close,
                    shutdown_at,
                    ending,
                }
            },
        )
}

fn cases() -> u32 {
    std::env::var("SIM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// The same plans on every run unless `SIM_SEED` says otherwise (a
/// number, or `random`).
fn seed() -> RngSeed {
    match std::env::var("SIM_SEED") {
        Ok(v) if v == "random" => RngSeed::Random,
        Ok(v) => RngSeed::Fixed(v.parse().expect("SIM_SEED: a number or `random`")),
        Err(_) => RngSeed::Fixed(0x5eed_5e55_1045_0f11),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        rng_seed: seed(),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn sessions_through_a_simulated_network(plan in plan()) {
        let rec = run(plan.clone());
        check(&plan, &rec);
        stats(&plan, &rec);
    }
}

// ------------------------------------------------------------ regressions

/// A plan with `requests`, everything else the simplest: one-byte reads
/// and writes, no delays, no pipelining, no narrow pipe.
fn simple(requests: Vec<ReqPlan>, ending: Ending) -> Plan {
    Plan {
        requests,
        depths: vec![1],
        client_think: vec![0],
        server_think: vec![0],
        reads: [vec![1], vec![1]],
        writes: [vec![1], vec![1]],
        pauses: [vec![0], vec![0]],
        read_size: 512,
        release_after: 1000,
        narrow_c2s: false,
        narrow_cap: usize::MAX / 4,
        half_close: false,
        shutdown_at: None,
        ending,
    }
}

fn get(answer: Answer, resp_len: usize, think: u64) -> ReqPlan {
    ReqPlan {
        method: Method::GET,
        body: None,
        expect: false,
        close: false,
        answer,
        resp_len,
        resp_trailers: false,
        think,
    }
}

/// A shutdown while a streamed answer whose head has left is paused: the
/// answer finishes, the request after it is not served, and the client
/// gets every answer the server gave.
#[test]
fn shutdown_during_a_paused_stream() {
    let mut plan = simple(
        vec![
            get(Answer::BeforeBody, 0, 1784),
            get(Answer::BeforeBody, 0, 0),
            get(Answer::Whole, 0, 0),
            get(Answer::Whole, 0, 0),
            get(Answer::Stream, 2, 0),
            get(Answer::Whole, 0, 0),
        ],
        Ending::Close,
    );
    plan.depths = vec![2];
    plan.client_think = vec![0, 2034];
    plan.server_think = vec![0, 831];
    plan.shutdown_at = Some(3819);
    let rec = run(plan.clone());
    check(&plan, &rec);
}

/// The head of a pipelined request that came with the end of a body
/// answered past `flush_threshold`: its deadline runs from when the
/// session starts writing that answer, like any head begun in an earlier
/// read.
#[test]
fn a_pipelined_head_behind_a_large_answer() {
    let post = ReqPlan {
        method: Method::POST,
        body: Some(BodyPlan {
            len: 8143,
            chunked: true,
            trailers: false,
            pieces: vec![1],
        }),
        expect: false,
        close: false,
        answer: Answer::Whole,
        resp_len: 0,
        resp_trailers: false,
        think: 0,
    };
    let mut plan = simple(vec![post, get(Answer::Whole, 0, 0)], Ending::Close);
    plan.depths = vec![2];
    plan.reads = [vec![1], vec![2]];
    plan.pauses = [vec![0], vec![1]];
    plan.release_after = 60_000;
    let rec = run(plan.clone());
    check(&plan, &rec);
}

/// The bodies the plans send and answer, built a slice at a time, are the
/// alphabet from a letter of the request's id, byte for byte.
#[test]
fn bodies_are_the_alphabet_from_the_ids_letter() {
    use sim::plan::{gen_body, req_body};
    for len in [0, 1, 25, 26, 27, 100, 1000] {
        for id in 0..9 {
            let want = |first: u8, step: usize| -> Vec<u8> {
                (0..len)
                    .map(|i| first + ((id * step + i) % 26) as u8)
                    .collect()
            };
            assert_eq!(req_body(id, len), want(b'a', 7));
            assert_eq!(gen_body(id, len), want(b'A', 13));
        }
    }
}
