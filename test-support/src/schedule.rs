//! What the drivers' schedule property tests share
//! (`tests/session/driver_wakes.rs` on the runtime-neutral driver,
//! `paused/tests/paused_schedules.rs` on the tokio driver and the tower
//! bridge): the requests of a plan, the input they make cut into timed
//! pieces, what each must be answered with, and the answers read back.
//! Each test serves them with the same application: `GET /pN` answers its
//! path, `GET /slow/N` works N ms first, `GET /wait` works until the
//! client goes, `GET /stream/N` sends its path in 3-byte pieces N ms
//! apart, and a `POST` answers its body.

use bytes::BytesMut;
use http::Method;

use h1proto::{Event, Limits, ResponseDecoder};

/// One request of a plan.
#[derive(Debug, Clone)]
pub enum Req {
    /// `GET /pN`.
    Get(u8),
    /// Work of N ms, the client watched meanwhile.
    Slow(u8),
    /// Work that never ends: only the client's close ends it.
    Wait,
    /// Answered in 3-byte pieces, N ms apart.
    Stream(u8),
    /// A body, framed by `Content-Length` or chunked (`true`).
    Post(Vec<u8>, bool),
}

impl Req {
    /// The request's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let get = |target: String| format!("GET {target} HTTP/1.1\r\nHost: a\r\n\r\n").into_bytes();
        match self {
            Req::Get(n) => get(format!("/p{n}")),
            Req::Slow(ms) => get(format!("/slow/{ms}")),
            Req::Wait => get("/wait".to_owned()),
            Req::Stream(ms) => get(format!("/stream/{ms}")),
            Req::Post(body, false) => {
                let head = format!(
                    "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                [head.as_bytes(), body].concat()
            }
            Req::Post(body, true) => {
                let mut b =
                    b"POST /e HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                for piece in body.chunks(7) {
                    b.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                    b.extend_from_slice(piece);
                    b.extend_from_slice(b"\r\n");
                }
                b.extend_from_slice(b"0\r\n\r\n");
                b
            }
        }
    }

    /// The body of its answer.
    pub fn answer(&self) -> Vec<u8> {
        match self {
            Req::Get(n) => format!("/p{n}").into_bytes(),
            Req::Slow(ms) => format!("/slow/{ms}").into_bytes(),
            Req::Wait => b"never".to_vec(),
            Req::Stream(ms) => format!("/stream/{ms}").into_bytes(),
            Req::Post(body, _) => body.clone(),
        }
    }
}

/// What the client of a plan does, and how the server takes it: its
/// requests, the pieces its input is cut into, whether it closes its side
/// after them (or goes silent), whether the server allows half-closes,
/// and when a graceful shutdown's signal fires.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub reqs: Vec<Req>,
    /// Where the input is cut into pieces, and the pause (ms) before each
    /// ([`pieces`]).
    pub cuts: Vec<(usize, u64)>,
    /// The client closes its side after its last piece.
    pub fin: bool,
    /// The server counts that close as no reason to give work up.
    pub half_close: bool,
    /// A graceful shutdown's signal fires then (ms).
    pub shutdown: Option<u64>,
}

/// Any [`Schedule`]: up to five requests of every kind, up to ten cuts.
/// Work that never ends ([`Req::Wait`]) comes with a close the server does
/// not allow, the only thing that ends it.
#[cfg(feature = "proptest")]
pub fn schedule() -> impl proptest::strategy::Strategy<Value = Schedule> {
    use proptest::prelude::*;
    let req = prop_oneof![
        3 => any::<u8>().prop_map(Req::Get),
        2 => (0u8..40).prop_map(Req::Slow),
        1 => Just(Req::Wait),
        2 => (0u8..20).prop_map(Req::Stream),
        3 => (proptest::collection::vec(b'a'..=b'z', 0..300), any::<bool>())
            .prop_map(|(b, c)| Req::Post(b, c)),
    ];
    (
        proptest::collection::vec(req, 1..6),
        proptest::collection::vec((any::<usize>(), 0u64..30), 0..10),
        (any::<bool>(), any::<bool>()),
        proptest::option::weighted(0.3, 0u64..200),
    )
        .prop_map(|(reqs, cuts, (fin, half_close), shutdown)| Schedule {
            fin: fin || waits(&reqs),
            half_close: half_close && !waits(&reqs),
            reqs,
            cuts,
            shutdown,
        })
}

/// Whether some work in `reqs` never ends.
pub fn waits(reqs: &[Req]) -> bool {
    reqs.iter().any(|r| matches!(r, Req::Wait))
}

/// The ends of the pieces `input_len` bytes are cut into, each with the
/// pause (ms) before it: `cuts` (any offsets, taken modulo the length,
/// each with its pause) sorted and deduplicated, then the end.
pub fn pieces(input_len: usize, cuts: &[(usize, u64)]) -> Vec<(usize, u64)> {
    let mut at: Vec<(usize, u64)> = (cuts.iter())
        .map(|&(c, gap)| (c % (input_len + 1), gap))
        .collect();
    at.sort();
    at.dedup_by_key(|(c, _)| *c);
    at.push((input_len, 1));
    at
}

/// The bodies of the `200` answers in `wire`, decoded; none may follow
/// them but whole answers.
pub fn answers(wire: &[u8], n: usize) -> Vec<Vec<u8>> {
    let mut dec = ResponseDecoder::new(Limits::default());
    for _ in 0..n {
        dec.expect_response_to(&Method::GET);
    }
    let mut buf = BytesMut::from(wire);
    let (mut out, mut body) = (Vec::new(), Vec::new());
    while let Some(event) = dec.decode(&mut buf).unwrap() {
        match event {
            Event::Head { head, .. } => assert_eq!(head.status(), 200),
            Event::Data(data) => body.extend_from_slice(&data),
            Event::End(_) => out.push(std::mem::take(&mut body)),
            other => panic!("{other:?}"),
        }
    }
    assert!(buf.is_empty(), "bytes past the answers: {buf:?}");
    out
}
