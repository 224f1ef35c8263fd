//! Replays the fuzz targets' inputs through the same invariant checks the
//! fuzzers run (`test-support/src/fuzz`), without libFuzzer: seeds built from the
//! conformance corpus (`tests/corpus/*.jsonl`), fixed plans for the
//! `simulation` target (which runs `test-support/src/sim`), and every saved input
//! under `fuzz/regressions/<target>/` (crashes found by fuzzing, kept
//! forever).
//!
//! With `H1PROTO_FUZZ_SEEDS=DIR` set, the seeds are also written to
//! `DIR/<target>/`, which is how the fuzzers' starting corpora are built
//! (see docs/testing.md).

use h1proto_test_support::fuzz as harness;

use h1proto_test_support::differential;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use serde_json::Value;

const TARGETS: &[&str] = &[
    "request_decoder",
    "response_decoder",
    "chunked_body",
    "server_connection",
    "client_connection",
    "roundtrip",
    "differential",
    "lenient",
    "simulation",
];

fn run_target(target: &str, data: &[u8]) {
    match target {
        "request_decoder" => harness::request_decoder(data),
        "response_decoder" => harness::response_decoder(data),
        "chunked_body" => harness::chunked_body(data),
        "server_connection" => harness::server_connection(data),
        "client_connection" => harness::client_connection(data),
        "roundtrip" => harness::roundtrip(data),
        "lenient" => harness::lenient(data),
        "simulation" => harness::simulation(data),
        "differential" => {
            if let Err(difference) = differential::compare(data) {
                panic!("{difference}");
            }
        }
        other => panic!("unknown target {other}"),
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A corpus string: code points U+0000..U+00FF are bytes.
fn bytes_of(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).expect("code point above U+00FF"))
        .collect()
}

fn raw_of(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => bytes_of(s),
        Value::Array(parts) => {
            let mut out = Vec::new();
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
            }
            out
        }
        _ => vec![],
    }
}

/// Fuzz inputs for each target, named, built from the corpus cases.
fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/corpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            if line.trim().is_empty() {
                continue;
            }
            let case: Value = serde_json::from_str(line).unwrap();
            let id = case["id"].as_str().unwrap().to_owned();
            let raw = raw_of(&case["raw"]);
            // Inputs this large only test size limits; the fuzzers use
            // short inputs and small limits for that.
            if raw.len() > 256 * 1024 {
                continue;
            }
            let eof = if case["peer_closes"].as_bool() == Some(true) {
                2
            } else {
                0
            };
            let small = eof | 1 | (5 << 2);
            let with = |head: &[u8]| {
                let mut v = head.to_vec();
                v.extend_from_slice(&raw);
                v
            };
            if case["side"] == "request" {
                // `mask`: one switch on beside all and none (the
                // subset run), a different one for the small limits.
                out.push(("lenient", id.clone(), with(&[eof | 4, 0, 0b001])));
                out.push((
                    "lenient",
                    format!("{id}-small"),
                    with(&[small | 4, 0, 0b100]),
                ));
                out.push(("request_decoder", id.clone(), with(&[eof])));
                out.push(("request_decoder", format!("{id}-small"), with(&[small])));
                out.push(("server_connection", id.clone(), with(&[eof, 0])));
                out.push(("differential", id.clone(), raw.clone()));
                out.push((
                    "server_connection",
                    format!("{id}-streamed-split"),
                    with(&[eof | 4, 2, 0, 7, 0, 20]),
                ));
                out.push((
                    "server_connection",
                    format!("{id}-early-answer"),
                    with(&[eof | 8, 1, 0, 3]),
                ));
                let lower = raw.to_ascii_lowercase();
                let te = b"transfer-encoding: chunked\r\n";
                if let Some(at) = lower.windows(te.len()).position(|w| w == te) {
                    if let Some(end) = raw[at..].windows(4).position(|w| w == b"\r\n\r\n") {
                        let mut v = vec![eof];
                        v.extend_from_slice(&raw[at + end + 4..]);
                        out.push(("chunked_body", id.clone(), v));
                    }
                }
            } else {
                let names: Vec<&str> = case["request_methods"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let methods = harness::methods_byte(&names);
                let n = names.len().clamp(1, 4) as u8 - 1;
                out.push(("response_decoder", id.clone(), with(&[eof, methods])));
                out.push(("lenient", id.clone(), with(&[eof, methods, 0b0110])));
                out.push((
                    "lenient",
                    format!("{id}-small"),
                    with(&[small & !4, methods, 0b1000]),
                ));
                out.push((
                    "response_decoder",
                    format!("{id}-small"),
                    with(&[small, methods]),
                ));
                out.push((
                    "client_connection",
                    id.clone(),
                    with(&[eof | (n << 6), methods, 0]),
                ));
            }
        }
    }
    // The round trip reads a description, not a message: a spread of kinds
    // (request/response, HTTP/1.0, streamed, trailers) with short fields.
    for kind in 0u8..32 {
        out.push((
            "roundtrip",
            format!("kind-{kind}"),
            vec![
                kind, kind, kind, 7, b'a', b'/', 3, 2, 1, b'x', 40, 3, 9, 200, 17, 1, 2,
            ],
        ));
    }
    // A simulation plan is read byte by byte: the all-zero plan, one plan
    // per ending, and pseudo-random plans (a fixed xorshift sequence).
    out.push(("simulation", "zeros".into(), vec![0; 8]));
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for k in 0u8..24 {
        let mut plan: Vec<u8> = (0..96)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        plan[0] = k % 4; // up to four requests keeps the replay quick
        out.push(("simulation", format!("plan-{k}"), plan));
    }
    out
}

fn regressions(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = root().join("fuzz/regressions").join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn write_seeds(dir: &Path, seeds: &[(&str, String, Vec<u8>)]) {
    for (target, id, data) in seeds {
        let d = dir.join(target);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(id), data).unwrap();
    }
}

fn replay(target: &str) {
    let all = seeds();
    if let Some(dir) = std::env::var_os("H1PROTO_FUZZ_SEEDS") {
        write_seeds(Path::new(&dir), &all);
    }
    let mut inputs: Vec<(String, Vec<u8>)> = all
        .into_iter()
        .filter(|(t, ..)| *t == target)
        .map(|(_, id, data)| (format!("seed {id}"), data))
        .collect();
    assert!(!inputs.is_empty(), "no seed for {target}");
    inputs.extend(
        regressions(target)
            .into_iter()
            .map(|(n, d)| (format!("regression {n}"), d)),
    );
    let mut failed = Vec::new();
    for (name, data) in &inputs {
        if catch_unwind(AssertUnwindSafe(|| run_target(target, data))).is_err() {
            failed.push(name.clone());
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs broke an invariant: {failed:?}",
        failed.len(),
        inputs.len()
    );
}

#[test]
fn request_decoder_inputs() {
    replay("request_decoder");
}

#[test]
fn response_decoder_inputs() {
    replay("response_decoder");
}

#[test]
fn chunked_body_inputs() {
    replay("chunked_body");
}

#[test]
fn server_connection_inputs() {
    replay("server_connection");
}

#[test]
fn client_connection_inputs() {
    replay("client_connection");
}

#[test]
fn roundtrip_inputs() {
    replay("roundtrip");
}

#[test]
fn differential_inputs() {
    replay("differential");
}

#[test]
fn lenient_inputs() {
    replay("lenient");
}

#[test]
fn simulation_inputs() {
    replay("simulation");
}

#[test]
fn every_target_has_a_replay() {
    let fuzz_targets = std::fs::read_dir(root().join("fuzz/fuzz_targets")).unwrap();
    for entry in fuzz_targets {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(TARGETS.contains(&name.as_str()), "{name} is not replayed");
    }
}
