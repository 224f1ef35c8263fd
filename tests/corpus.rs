//! The conformance corpus runner (see `tests/corpus/` and design "Testing").
//!
//! Every case of every `*.jsonl` file in `tests/corpus/` (and in the folder
//! named by `H1PROTO_CORPUS_DIR`, when set) is decoded whole, one byte at a
//! time, split at the boundaries of its `raw` pieces, and at random split
//! points; every way must reach the expected outcome (or one of its
//! alternatives), and all ways the same one. Prints one summary line per
//! file and one for all, and fails naming each failing case.
//!
//! A case with a `lenient` list is decoded with exactly the leniency
//! switches it names on and every other switch off; without one, with the
//! decoder's defaults for its side (`RequestDecoder::new`,
//! `ResponseDecoder::new`).

use std::path::{Path, PathBuf};

use bytes::BytesMut;
use h1proto::leniency::Tolerance;
use h1proto::{
    Event, Limits, ReasonPhrase, RequestDecoder, ResponseDecoder,
    leniency::{RequestLeniency, ResponseLeniency},
};
use http::{HeaderMap, Method, Request, Response, Version};
use serde_json::Value;

/// A message as the corpus describes it, in a form both sides share.
#[derive(Debug, Clone, PartialEq)]
struct Message {
    start: Vec<String>,
    /// (lower-case name, value) in arrival order.
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    trailers: Vec<(String, Vec<u8>)>,
    keep_alive: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    messages: Vec<Message>,
    then: String,
    rest: Option<Vec<u8>>,
    status: Option<u16>,
}

/// A string of U+0000..U+00FF code points as the bytes they stand for.
fn bytes_of(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).expect("code point above U+00FF"))
        .collect()
}

/// `raw`, `body` or `rest`: a string or a list of pieces. Returns the bytes
/// and the offsets where pieces meet.
fn pieces(v: &Value) -> (Vec<u8>, Vec<usize>) {
    match v {
        Value::String(s) => (bytes_of(s), vec![]),
        Value::Array(parts) => {
            let mut out = Vec::new();
            let mut cuts = Vec::new();
            for p in parts {
                match p {
                    Value::String(s) => out.extend(bytes_of(s)),
                    Value::Object(o) => {
                        let unit = bytes_of(o["repeat"].as_str().unwrap());
                        for _ in 0..o["times"].as_u64().unwrap() {
                            out.extend_from_slice(&unit);
                        }
                    }
                    other => panic!("bad piece {other}"),
                }
                cuts.push(out.len());
            }
            cuts.pop();
            (out, cuts)
        }
        Value::Null => (vec![], vec![]),
        other => panic!("bad byte string {other}"),
    }
}

fn trim(v: &[u8]) -> &[u8] {
    let s = v
        .iter()
        .position(|b| !b" \t".contains(b))
        .unwrap_or(v.len());
    let e = v
        .iter()
        .rposition(|b| !b" \t".contains(b))
        .map_or(s, |e| e + 1);
    &v[s..e.max(s)]
}

fn fields_of(v: Option<&Value>) -> Vec<(String, Vec<u8>)> {
    v.and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|pair| {
                    let name = pair[0].as_str().unwrap().to_ascii_lowercase();
                    (name, trim(&bytes_of(pair[1].as_str().unwrap())).to_vec())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn expected_message(side: &str, m: &Value) -> Message {
    let start = if side == "request" {
        vec![
            m["method"].as_str().unwrap().to_owned(),
            m["target"].as_str().unwrap().to_owned(),
            m["version"].as_str().unwrap().to_owned(),
        ]
    } else {
        let mut s = vec![
            m["version"].as_str().unwrap().to_owned(),
            m["status"].as_u64().unwrap().to_string(),
        ];
        if let Some(r) = m.get("reason").and_then(Value::as_str) {
            s.push(format!("{:?}", bytes_of(r)));
        }
        s
    };
    Message {
        start,
        headers: fields_of(m.get("headers")),
        body: pieces(m.get("body").unwrap_or(&Value::Null)).0,
        trailers: fields_of(m.get("trailers")),
        keep_alive: m.get("keep_alive").and_then(Value::as_bool),
    }
}

fn expected_outcome(side: &str, v: &Value) -> Outcome {
    Outcome {
        messages: v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| expected_message(side, m))
            .collect(),
        then: v["then"].as_str().unwrap().to_owned(),
        rest: v.get("rest").map(|r| pieces(r).0),
        status: None,
    }
}

fn version_str(v: Version) -> String {
    match v {
        Version::HTTP_10 => "HTTP/1.0".into(),
        Version::HTTP_11 => "HTTP/1.1".into(),
        other => format!("{other:?}"),
    }
}

fn header_list(map: &HeaderMap) -> Vec<(String, Vec<u8>)> {
    map.iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
        .collect()
}

fn request_start(r: &Request<()>) -> Vec<String> {
    vec![
        r.method().as_str().to_owned(),
        r.uri().to_string(),
        version_str(r.version()),
    ]
}

/// Version, status and reason; a case that gives no reason compares only
/// the first two (see `matches`).
fn response_start(r: &Response<()>) -> Vec<String> {
    let reason = match r.extensions().get::<ReasonPhrase>() {
        Some(p) => p.as_bytes().to_vec(),
        None => r
            .status()
            .canonical_reason()
            .unwrap_or("")
            .as_bytes()
            .to_vec(),
    };
    vec![
        version_str(r.version()),
        r.status().as_u16().to_string(),
        format!("{reason:?}"),
    ]
}

/// Abstracts over the two decoders.
trait Decoder {
    type Head: h1proto::MessageHead;
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Self::Head>>, h1proto::Error>;
    fn decode_eof(
        &mut self,
        buf: &mut BytesMut,
    ) -> Result<Option<Event<Self::Head>>, h1proto::Error>;
    fn is_idle(&self) -> bool;
    fn is_switched(&self) -> bool;
    fn is_closed(&self) -> bool;
    /// An interim response as the decoder's head type (requests have none).
    fn interim(i: <Self::Head as h1proto::MessageHead>::Interim) -> Self::Head;
}

macro_rules! impl_decoder {
    ($t:ty, $h:ty, $interim:expr) => {
        impl Decoder for $t {
            type Head = $h;
            fn interim(i: <$h as h1proto::MessageHead>::Interim) -> $h {
                $interim(i)
            }
            fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<$h>>, h1proto::Error> {
                <$t>::decode(self, buf)
            }
            fn decode_eof(
                &mut self,
                buf: &mut BytesMut,
            ) -> Result<Option<Event<$h>>, h1proto::Error> {
                <$t>::decode_eof(self, buf)
            }
            fn is_idle(&self) -> bool {
                <$t>::is_idle(self)
            }
            fn is_switched(&self) -> bool {
                <$t>::is_switched(self)
            }
            fn is_closed(&self) -> bool {
                <$t>::is_closed(self)
            }
        }
    };
}
impl_decoder!(
    RequestDecoder,
    Request<()>,
    |i: std::convert::Infallible| match i {}
);
impl_decoder!(ResponseDecoder, Response<()>, |i| i);

/// The start line and fields of a decoded head, as the corpus compares them.
type StartAndFields = (Vec<String>, Vec<(String, Vec<u8>)>);

/// Feeds `raw` in pieces cut at `cuts` and collects the outcome.
fn run<D: Decoder>(
    mut dec: D,
    raw: &[u8],
    cuts: &[usize],
    peer_closes: bool,
    start: &dyn Fn(&D::Head) -> StartAndFields,
) -> Outcome {
    let mut buf = BytesMut::new();
    let mut messages: Vec<Message> = Vec::new();
    let mut current: Option<Message> = None;
    let mut bounds: Vec<usize> = cuts.to_vec();
    bounds.push(raw.len());
    let mut from = 0;
    let mut error = None;
    let total = bounds.len();
    'feed: for (i, &to) in bounds.iter().enumerate() {
        buf.extend_from_slice(&raw[from..to]);
        from = to;
        let last = i + 1 == total;
        loop {
            let r = if last && peer_closes {
                dec.decode_eof(&mut buf)
            } else {
                dec.decode(&mut buf)
            };
            match r {
                Err(e) => {
                    error = Some(e);
                    break 'feed;
                }
                Ok(None) => break,
                Ok(Some(ev)) => match ev {
                    Event::Head { head, .. } => {
                        let (start, headers) = start(&head);
                        current = Some(Message {
                            start,
                            headers,
                            body: vec![],
                            trailers: vec![],
                            keep_alive: None,
                        });
                    }
                    Event::Interim(interim) => {
                        let head = D::interim(interim);
                        let (start, headers) = start(&head);
                        messages.push(Message {
                            start,
                            headers,
                            body: vec![],
                            trailers: vec![],
                            keep_alive: Some(true),
                        });
                    }
                    Event::Data(d) => current.as_mut().expect("data without head").body.extend(&d),
                    Event::Trailers(t) => {
                        current.as_mut().expect("trailers without head").trailers = header_list(&t)
                    }
                    Event::End(ka) => {
                        let mut m = current.take().expect("end without head");
                        m.keep_alive = Some(ka.is_reusable());
                        messages.push(m);
                    }
                    _ => panic!("unknown event"),
                },
            }
        }
    }
    let (then, rest, status) = if let Some(e) = error {
        ("reject".to_owned(), None, Some(e.status().as_u16()))
    } else if dec.is_switched() {
        ("switched".to_owned(), Some(buf.to_vec()), None)
    } else if current.is_none() && buf.is_empty() && (dec.is_idle() || dec.is_closed()) {
        ("complete".to_owned(), None, None)
    } else if dec.is_closed() {
        // Bytes after a message that closed the connection: not parsed.
        ("closed".to_owned(), None, None)
    } else {
        ("partial".to_owned(), None, None)
    };
    Outcome {
        messages,
        then,
        rest,
        status,
    }
}

/// Does `actual` satisfy `expected`? Returns what differed.
fn matches(expected: &Outcome, actual: &Outcome, reject_status: &[u16]) -> Result<(), String> {
    if expected.messages.len() != actual.messages.len() {
        return Err(format!(
            "{} messages expected, {} decoded: {:?}",
            expected.messages.len(),
            actual.messages.len(),
            actual.messages.iter().map(|m| &m.start).collect::<Vec<_>>()
        ));
    }
    for (i, (e, a)) in expected.messages.iter().zip(&actual.messages).enumerate() {
        // A response expected without a reason compares version and status.
        if a.start.get(..e.start.len()) != Some(&e.start[..]) {
            return Err(format!("message {i}: start {:?} != {:?}", a.start, e.start));
        }
        // Per name, values in arrival order (HeaderMap groups by name).
        for (what, ef, af) in [
            ("header", &e.headers, &a.headers),
            ("trailer", &e.trailers, &a.trailers),
        ] {
            let mut names: Vec<&String> = ef.iter().map(|(n, _)| n).collect();
            names.extend(af.iter().map(|(n, _)| n));
            names.sort();
            names.dedup();
            for n in names {
                let ev: Vec<&[u8]> = ef
                    .iter()
                    .filter(|(k, _)| k == n)
                    .map(|(_, v)| &v[..])
                    .collect();
                let av: Vec<&[u8]> = af
                    .iter()
                    .filter(|(k, _)| k == n)
                    .map(|(_, v)| &v[..])
                    .collect();
                if ev != av {
                    return Err(format!(
                        "message {i}: {what} {n}: {:?} != {:?}",
                        av.iter()
                            .map(|v| String::from_utf8_lossy(v))
                            .collect::<Vec<_>>(),
                        ev.iter()
                            .map(|v| String::from_utf8_lossy(v))
                            .collect::<Vec<_>>()
                    ));
                }
            }
        }
        if e.body != a.body {
            return Err(format!(
                "message {i}: body {:?} != {:?}",
                String::from_utf8_lossy(&a.body),
                String::from_utf8_lossy(&e.body)
            ));
        }
        if e.keep_alive.is_some() && e.keep_alive != a.keep_alive {
            return Err(format!(
                "message {i}: keep_alive {:?} != {:?}",
                a.keep_alive, e.keep_alive
            ));
        }
    }
    let then_ok = match expected.then.as_str() {
        "any" => true,
        "switched" => actual.then == "switched" && expected.rest == actual.rest,
        "complete" => actual.then == "complete",
        other => other == actual.then,
    };
    if !then_ok {
        return Err(format!("then {:?} != {:?}", actual.then, expected.then));
    }
    if let (Some(s), false) = (actual.status, reject_status.is_empty()) {
        if !reject_status.contains(&s) {
            return Err(format!("suggested status {s} not in {reject_status:?}"));
        }
    }
    Ok(())
}

/// A small deterministic generator, so failures can be replayed.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn splits(raw_len: usize, piece_cuts: &[usize], seed: u64) -> Vec<(String, Vec<usize>)> {
    let mut ways = vec![("whole".to_owned(), vec![])];
    if raw_len <= 64 * 1024 {
        ways.push(("byte-by-byte".to_owned(), (1..raw_len).collect()));
    } else {
        // Large inputs: one byte at a time through the first 64 KiB.
        ways.push(("byte-by-byte-prefix".to_owned(), (1..64 * 1024).collect()));
    }
    if !piece_cuts.is_empty() {
        ways.push(("pieces".to_owned(), piece_cuts.to_vec()));
    }
    let mut rng = XorShift(seed | 1);
    for round in 0..4 {
        if raw_len < 2 {
            break;
        }
        let n = 1 + (rng.next() % 8) as usize;
        let mut cuts: Vec<usize> = (0..n)
            .map(|_| 1 + (rng.next() as usize % (raw_len - 1)))
            .collect();
        cuts.sort();
        cuts.dedup();
        ways.push((format!("random-{round}"), cuts));
    }
    ways
}

fn run_case(case: &Value) -> Result<(), String> {
    let side = case["side"].as_str().unwrap();
    let (raw, piece_cuts) = pieces(&case["raw"]);
    let peer_closes = case
        .get("peer_closes")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut candidates = vec![expected_outcome(side, case)];
    for alt in case
        .get("alternatives")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut alt = alt.clone();
        if alt.get("rest").is_none() {
            if let Some(r) = case.get("rest") {
                alt["rest"] = r.clone();
            }
        }
        candidates.push(expected_outcome(side, &alt));
    }
    if let Some(r) = case.get("rest") {
        candidates[0].rest = Some(pieces(r).0);
    }
    let reject_status: Vec<u16> = case
        .get("reject_status")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|s| s.as_u64().unwrap() as u16).collect())
        .unwrap_or_default();
    let lenient = switches(case)?;
    let seed = case["id"]
        .as_str()
        .unwrap()
        .bytes()
        .fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });

    let mut first: Option<(String, Outcome)> = None;
    for (way, cuts) in splits(raw.len(), &piece_cuts, seed) {
        let actual = if side == "request" {
            let dec = match &lenient {
                Some(on) => {
                    let mut leniency = RequestLeniency::strict();
                    for &s in on {
                        leniency.set(s, true).map_err(|e| e.to_string())?;
                    }
                    RequestDecoder::with_leniency(Limits::default(), leniency)
                }
                None => RequestDecoder::new(Limits::default()),
            };
            run(dec, &raw, &cuts, peer_closes, &|r: &Request<()>| {
                (request_start(r), header_list(r.headers()))
            })
        } else {
            let mut dec = match &lenient {
                Some(on) => {
                    let mut leniency = ResponseLeniency::strict();
                    for &s in on {
                        leniency.set(s, true).map_err(|e| e.to_string())?;
                    }
                    ResponseDecoder::with_leniency(Limits::default(), leniency)
                }
                None => ResponseDecoder::new(Limits::default()),
            };
            let methods: Vec<String> = case
                .get("request_methods")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|m| m.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default();
            for m in &methods {
                dec.expect_response_to(&Method::from_bytes(m.as_bytes()).unwrap());
            }
            run(dec, &raw, &cuts, peer_closes, &|r: &Response<()>| {
                (response_start(r), header_list(r.headers()))
            })
        };
        let errors: Vec<String> = candidates
            .iter()
            .map(|c| matches(c, &actual, &reject_status))
            .filter_map(Result::err)
            .collect();
        if errors.len() == candidates.len() {
            return Err(format!("fed {way}: {}", errors[0]));
        }
        match &first {
            None => first = Some((way, actual)),
            Some((w, o)) if *o != actual => {
                return Err(format!(
                    "fed {way} the outcome differs from fed {w}: {actual:?} vs {o:?}"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The switches a case's `lenient` field names (`None` without the field).
/// A name that is unknown, or not a switch of the case's side, is an error
/// in the corpus.
fn switches(case: &Value) -> Result<Option<Vec<Tolerance>>, String> {
    let Some(list) = case.get("lenient") else {
        return Ok(None);
    };
    let side = case["side"].as_str().unwrap_or("?");
    let names = list.as_array().ok_or("lenient is not a list")?;
    let mut out = Vec::new();
    for name in names {
        let name = name.as_str().ok_or("lenient holds a non-string")?;
        let switch = Tolerance::from_name(name)
            .ok_or_else(|| format!("unknown leniency switch {name:?}"))?;
        let applies = if side == "request" {
            switch.applies_to_requests()
        } else {
            switch.applies_to_responses()
        };
        if !applies {
            return Err(format!("switch {name:?} does not apply to the {side} side"));
        }
        out.push(switch);
    }
    Ok(Some(out))
}

fn corpus_files() -> Vec<PathBuf> {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")];
    if let Some(extra) = std::env::var_os("H1PROTO_CORPUS_DIR") {
        dirs.push(PathBuf::from(extra));
    }
    let mut files = Vec::new();
    for dir in dirs {
        let mut here: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        here.sort();
        files.extend(here);
    }
    files
}

fn main() {
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut failures = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for file in corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let (mut p, mut f) = (0, 0);
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let case: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", file.display(), n + 1));
            let id = case["id"].as_str().unwrap_or("?").to_owned();
            let result = if !ids.insert(id.clone()) {
                Err("duplicate id".to_owned())
            } else {
                std::panic::catch_unwind(|| run_case(&case))
                    .unwrap_or_else(|_| Err("panicked".to_owned()))
            };
            match result {
                Ok(()) => p += 1,
                Err(why) => {
                    f += 1;
                    failures.push(format!("{id}: {why}"));
                }
            }
        }
        let name = file.file_name().unwrap().to_string_lossy();
        println!("corpus {name}: {p} passed, {f} failed");
        passed += p;
        failed += f;
    }
    for failure in &failures {
        println!("FAILED {failure}");
    }
    println!("corpus: {passed} passed, {failed} failed");
    if failed > 0 || passed == 0 {
        std::process::exit(1);
    }
}
