//! h1proto's side of the differential harness (`scripts/differential.sh`).
//!
//! Reads one input per line on stdin, a JSON object
//! `{"side": "request" | "response", "raw": "...", "seed": N}` where `raw`
//! holds one byte per code point (U+0000..U+00FF, as in the corpus format),
//! and prints one JSON line per input with what h1proto made of it:
//!
//! ```text
//! {"messages": [{"start": [...], "body": "...", "trailers": [[name, value]],
//!                "keep_alive": true}],
//!  "end": "complete" | "pending" | "body" | "error" | "closed" | "tunnel"
//!         | "switched",
//!  "error": "ErrorKind", "split": null | "how the split outcome differed"}
//! ```
//!
//! `start` is `[method, target, version]` for a request and
//! `[version, status]` for a response (interim responses are messages of
//! their own). `end` says how parsing stopped once all of `raw` was given
//! (the peer does not close): `pending` when bytes wait that are not a
//! head yet, `body` inside a body whose head was decoded, `closed` when
//! bytes follow a message whose
//! verdict closed the connection, `tunnel` after a CONNECT request, and
//! `switched` after a 101. Each input is decoded whole, then again cut at
//! random points chosen from `seed` (and one byte at a time for some
//! seeds); `split` reports an outcome that differs from the whole one.
//!
//! Responses are decoded as answers to GET requests.
//!
//! Build and run: `cargo build --release -p h1proto-dev --bin differential`,
//! then `target/release/differential < inputs.jsonl` (with `--line`,
//! each answer is flushed as soon as it is written).

use std::io::{BufRead, BufWriter, Write};

use bytes::BytesMut;
use h1proto::{Event, Limits, RequestDecoder, ResponseDecoder};
use http::{HeaderMap, Method, Request, Response, Version};
use serde_json::{Value, json};

/// One decoded message, as the harness compares messages.
#[derive(Debug, Clone, PartialEq)]
struct Message {
    start: Vec<String>,
    body: Vec<u8>,
    trailers: Vec<(String, Vec<u8>)>,
    keep_alive: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    messages: Vec<Message>,
    end: &'static str,
    error: Option<String>,
}

/// Either decoder, driven the same way.
trait Decoder {
    type Head: h1proto::MessageHead;
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Self::Head>>, h1proto::Error>;
    fn start(head: &Self::Head) -> Vec<String>;
    /// The start line of an interim response (requests have none).
    fn interim_start(i: &<Self::Head as h1proto::MessageHead>::Interim) -> Vec<String>;
    fn is_idle(&self) -> bool;
    fn is_closed(&self) -> bool;
    fn is_switched(&self) -> bool;
}

fn version(v: Version) -> String {
    match v {
        Version::HTTP_10 => "1.0".into(),
        Version::HTTP_11 => "1.1".into(),
        other => format!("{other:?}"),
    }
}

impl Decoder for RequestDecoder {
    type Head = Request<()>;
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Self::Head>>, h1proto::Error> {
        RequestDecoder::decode(self, buf)
    }
    fn start(head: &Self::Head) -> Vec<String> {
        vec![
            head.method().as_str().to_owned(),
            head.uri().to_string(),
            version(head.version()),
        ]
    }
    fn interim_start(i: &std::convert::Infallible) -> Vec<String> {
        match *i {}
    }
    fn is_idle(&self) -> bool {
        RequestDecoder::is_idle(self)
    }
    fn is_closed(&self) -> bool {
        RequestDecoder::is_closed(self)
    }
    fn is_switched(&self) -> bool {
        RequestDecoder::is_switched(self)
    }
}

impl Decoder for ResponseDecoder {
    type Head = Response<()>;
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Self::Head>>, h1proto::Error> {
        ResponseDecoder::decode(self, buf)
    }
    fn start(head: &Self::Head) -> Vec<String> {
        vec![version(head.version()), head.status().as_str().to_owned()]
    }
    fn interim_start(i: &Response<()>) -> Vec<String> {
        Self::start(i)
    }
    fn is_idle(&self) -> bool {
        ResponseDecoder::is_idle(self)
    }
    fn is_closed(&self) -> bool {
        ResponseDecoder::is_closed(self)
    }
    fn is_switched(&self) -> bool {
        ResponseDecoder::is_switched(self)
    }
}

fn fields(map: &HeaderMap) -> Vec<(String, Vec<u8>)> {
    map.iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
        .collect()
}

/// Feeds `raw` cut at `cuts` (ascending offsets inside it).
fn run<D: Decoder>(mut dec: D, raw: &[u8], cuts: &[usize]) -> Outcome {
    let mut buf = BytesMut::new();
    let mut messages = Vec::new();
    let mut current: Option<Message> = None;
    let mut error = None;
    let mut from = 0;
    'feed: for &to in cuts.iter().chain(std::iter::once(&raw.len())) {
        buf.extend_from_slice(&raw[from..to]);
        from = to;
        loop {
            match dec.decode(&mut buf) {
                Ok(None) => break,
                Ok(Some(Event::Head { head, .. })) => {
                    current = Some(Message {
                        start: D::start(&head),
                        body: Vec::new(),
                        trailers: Vec::new(),
                        keep_alive: true,
                    });
                }
                Ok(Some(Event::Interim(head))) => messages.push(Message {
                    start: D::interim_start(&head),
                    body: Vec::new(),
                    trailers: Vec::new(),
                    keep_alive: true,
                }),
                Ok(Some(Event::Data(d))) => {
                    if let Some(m) = current.as_mut() {
                        m.body.extend_from_slice(&d);
                    }
                }
                Ok(Some(Event::Trailers(t))) => {
                    if let Some(m) = current.as_mut() {
                        m.trailers = fields(&t);
                    }
                }
                Ok(Some(Event::End(verdict))) => {
                    if let Some(mut m) = current.take() {
                        m.keep_alive = verdict.is_reusable();
                        messages.push(m);
                    }
                }
                Ok(Some(_)) => {}
                Err(e) => {
                    error = Some(format!("{:?}", e.kind()));
                    break 'feed;
                }
            }
        }
    }
    let connect_last = messages
        .last()
        .is_some_and(|m: &Message| m.start.first().is_some_and(|s| s == "CONNECT"));
    let end = if error.is_some() {
        "error"
    } else if dec.is_switched() {
        "switched"
    } else if current.is_some() {
        "body"
    } else if dec.is_closed() && connect_last {
        "tunnel"
    } else if dec.is_closed() && !buf.is_empty() {
        "closed"
    } else if buf.is_empty() && (dec.is_idle() || dec.is_closed()) {
        "complete"
    } else {
        "pending"
    };
    Outcome {
        messages,
        end,
        error,
    }
}

fn decode(side: &str, raw: &[u8], cuts: &[usize]) -> Outcome {
    if side == "request" {
        run(RequestDecoder::new(Limits::default()), raw, cuts)
    } else {
        let mut dec = ResponseDecoder::new(Limits::default());
        // More answers than any input holds.
        for _ in 0..64 {
            dec.expect_response_to(&Method::GET);
        }
        run(dec, raw, cuts)
    }
}

/// A small deterministic generator for split points.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The ways to cut `len` bytes for this seed: two random sets of cuts, and
/// one byte at a time for one seed in eight.
fn split_ways(len: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = XorShift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut ways = Vec::new();
    if len < 2 {
        return ways;
    }
    for _ in 0..2 {
        let n = 1 + (rng.next() % 8) as usize;
        let mut cuts: Vec<usize> = (0..n)
            .map(|_| 1 + (rng.next() as usize % (len - 1)))
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        ways.push(cuts);
    }
    if seed % 8 == 0 {
        ways.push((1..len).collect());
    }
    ways
}

/// A byte string as a JSON string of U+0000..U+00FF code points.
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

fn bytes_of(s: &str) -> Option<Vec<u8>> {
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

fn outcome_json(o: &Outcome, split: Option<String>) -> Value {
    let messages: Vec<Value> = o
        .messages
        .iter()
        .map(|m| {
            json!({
                "start": m.start,
                "body": latin1(&m.body),
                "trailers": m.trailers.iter().map(|(n, v)| json!([n, latin1(v)])).collect::<Vec<_>>(),
                "keep_alive": m.keep_alive,
            })
        })
        .collect();
    json!({
        "messages": messages,
        "end": o.end,
        "error": o.error,
        "split": split,
    })
}

fn main() {
    // `--line`: answer each line at once (for a caller that waits for it).
    let per_line = std::env::args().any(|a| a == "--line");
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for line in stdin.lock().lines() {
        let line = line.expect("stdin is readable");
        if line.trim().is_empty() {
            continue;
        }
        let input: Value = serde_json::from_str(&line).expect("an input is a JSON object");
        let side = input["side"].as_str().unwrap_or("request");
        let raw = bytes_of(input["raw"].as_str().unwrap_or("")).expect("raw holds bytes only");
        let seed = input["seed"].as_u64().unwrap_or(0);
        let whole = decode(side, &raw, &[]);
        let mut split = None;
        for cuts in split_ways(raw.len(), seed) {
            let cut = decode(side, &raw, &cuts);
            if cut != whole {
                split = Some(format!("cut at {cuts:?}: {cut:?}"));
                break;
            }
        }
        let value = outcome_json(&whole, split);
        serde_json::to_writer(&mut out, &value).expect("stdout is writable");
        out.write_all(b"\n").expect("stdout is writable");
        if per_line {
            out.flush().expect("stdout is writable");
        }
    }
    out.flush().expect("stdout is writable");
}
