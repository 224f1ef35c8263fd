//! A simulation plan: the requests, how the server answers each, the
//! network and timing, and how the run ends; what each plan entails
//! (bodies, `Connection: close`, the connection kept or not).

use std::time::Duration;

use h1proto::{Config, Limits, Timeouts};
use http::Method;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Read the whole body, then answer with it.
    Whole,
    /// Answer with a chunked body while reading the request's (echo).
    Stream,
    /// Answer before reading the body (the session drains or refuses it).
    BeforeBody,
}

#[derive(Debug, Clone)]
pub struct BodyPlan {
    pub len: usize,
    pub chunked: bool,
    pub trailers: bool,
    /// Sizes of the pieces it is sent in, in turn.
    pub pieces: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct ReqPlan {
    pub method: Method,
    pub body: Option<BodyPlan>,
    pub expect: bool,
    pub close: bool,
    pub answer: Answer,
    /// Length of the generated response body (bodyless requests, answers
    /// before the body).
    pub resp_len: usize,
    pub resp_trailers: bool,
    /// Server think time before answering, in ms.
    pub think: u64,
}

#[derive(Debug, Clone, Copy)]
pub enum Ending {
    /// The client closes.
    Close,
    /// Both sides keep the connection idle: the server's idle timeout,
    /// then the client's pool timeout.
    Idle,
    /// The client sends this many bytes of a head and stops (0: nothing).
    StallHead(usize),
    /// The client sends a head and this many bytes of a 1000-byte body and
    /// stops; the server answers as given.
    StallBody(Answer, usize),
    /// The client asks for a large response and stops reading.
    StopReading,
    /// The server never answers the last request.
    ServerStallHead,
    /// The server sends part of the last response and stops.
    ServerStallBody,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub requests: Vec<ReqPlan>,
    /// Pipelining depths, in turn.
    pub depths: Vec<usize>,
    /// Client think time before each batch, in ms, in turn.
    pub client_think: Vec<u64>,
    /// Server think time between streamed pieces, in ms, in turn.
    pub server_think: Vec<u64>,
    /// Read and write sizes: client, server.
    pub reads: [Vec<usize>; 2],
    pub writes: [Vec<usize>; 2],
    /// A slow link: pauses before writes, in ms, in turn: client, server.
    pub pauses: [Vec<usize>; 2],
    pub read_size: usize,
    /// `Config::release_after`, in ms: often shorter than the delays (the
    /// buffers are given back mid-exchange), or longer than every timeout
    /// (each timeout is the deadline announced).
    pub release_after: u64,
    /// One direction of the socket holds this much (the other is
    /// unbounded): client to server if `true`.
    pub narrow_c2s: bool,
    pub narrow_cap: usize,
    pub half_close: bool,
    /// A graceful shutdown of the first server connection at this time
    /// (ms).
    pub shutdown_at: Option<u64>,
    pub ending: Ending,
}

pub const MAX_DRAIN: u64 = 4096;
pub const FLUSH: usize = 8192;
pub const MAX_HEAD: usize = 8 * 1024;
/// Room for a head, chunk framing and an error response.
pub const SLACK: usize = 1024;
/// What the server application may think, and pause before its writes,
/// on one connection: together below the client's head timeout.
pub const SERVER_THINK: Duration = Duration::from_secs(5);
pub const SERVER_PAUSES: Duration = Duration::from_secs(4);
/// The response body asked for by `Ending::StopReading`.
pub const HUGE: usize = 200_000;

pub fn server_config(plan: &Plan) -> Config {
    let mut timeouts = Timeouts::new();
    timeouts.head = Some(Duration::from_secs(10));
    timeouts.idle = Some(Duration::from_secs(30));
    timeouts.body = Some(Duration::from_secs(15));
    timeouts.write = Some(Duration::from_secs(12));
    timeouts.linger = Duration::from_secs(2);
    let mut limits = Limits::default();
    limits.max_head_bytes = MAX_HEAD;
    let mut config = Config::default();
    config.limits = limits;
    config.timeouts = timeouts;
    config.max_drain_bytes = MAX_DRAIN;
    config.read_size = plan.read_size;
    config.flush_threshold = FLUSH;
    config.release_after = Duration::from_millis(plan.release_after);
    config
}

pub fn client_config(plan: &Plan) -> Config {
    let mut config = server_config(plan);
    config.timeouts.idle = Some(Duration::from_secs(45));
    config
}

/// The first `len` bytes of request `id`'s body: the lower-case alphabet
/// from letter `7 * id`, over and over.
pub fn req_body(id: usize, len: usize) -> Vec<u8> {
    alphabet(b"abcdefghijklmnopqrstuvwxyz", id * 7, len)
}

/// Response body bytes generated for request `id`: the upper-case
/// alphabet from letter `13 * id`, over and over.
pub fn gen_body(id: usize, len: usize) -> Vec<u8> {
    alphabet(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", id * 13, len)
}

/// `len` bytes of `letters` repeated, from letter `from` (modulo 26): one
/// turn of the alphabet, then copies of what is built, doubling (the large
/// bodies are built in every run, the fuzz target's included).
fn alphabet(letters: &[u8; 26], from: usize, len: usize) -> Vec<u8> {
    let at = from % letters.len();
    let mut out = Vec::with_capacity(len.max(letters.len()));
    out.extend_from_slice(&letters[at..]);
    out.extend_from_slice(&letters[..at]);
    // Each copy starts a whole number of turns in, so the letters go on.
    while out.len() < len {
        out.extend_from_within(..out.len().min(len - out.len()));
    }
    out.truncate(len);
    out
}

impl ReqPlan {
    pub fn body_bytes(&self, id: usize) -> Vec<u8> {
        self.body
            .as_ref()
            .map_or_else(Vec::new, |b| req_body(id, b.len))
    }

    /// The body frames something (a chunked body always does).
    pub fn has_body(&self) -> bool {
        self.body.as_ref().is_some_and(|b| b.chunked || b.len > 0)
    }

    /// The client waits for `100 Continue` before the body.
    pub fn waits(&self) -> bool {
        self.expect && self.has_body()
    }

    pub fn echoes(&self) -> bool {
        self.has_body() && self.answer != Answer::BeforeBody
    }

    /// The length of [`response_body`](Self::response_body), without
    /// building it.
    pub fn response_len(&self) -> usize {
        if self.method == Method::HEAD {
            0
        } else if self.echoes() {
            self.body.as_ref().map_or(0, |b| b.len)
        } else {
            self.resp_len
        }
    }

    /// The response body the client must get.
    pub fn response_body(&self, id: usize) -> Vec<u8> {
        if self.method == Method::HEAD {
            Vec::new()
        } else if self.echoes() {
            self.body_bytes(id)
        } else {
            gen_body(id, self.resp_len)
        }
    }

    pub fn response_trailers(&self) -> bool {
        self.answer == Answer::Stream && self.resp_trailers && self.method != Method::HEAD
    }

    /// The answer's head must say `Connection: close`.
    pub fn announces_close(&self) -> bool {
        let unread = self.answer == Answer::BeforeBody && self.has_body();
        let long = self
            .body
            .as_ref()
            .is_some_and(|b| !b.chunked && b.len as u64 > MAX_DRAIN);
        self.close || (unread && (self.waits() || long))
    }

    /// Whether the connection must close after this exchange (`None`:
    /// either; the drain bound falls inside the last chunk's framing).
    pub fn closes_after(&self) -> Option<bool> {
        if self.close {
            return Some(true);
        }
        if self.answer != Answer::BeforeBody || !self.has_body() {
            return Some(false);
        }
        if self.waits() {
            return Some(true); // the body was refused
        }
        let body = self.body.as_ref().unwrap();
        if !body.chunked {
            return Some(body.len as u64 > MAX_DRAIN);
        }
        let wire = chunked_wire_len(body) as u64;
        if wire <= MAX_DRAIN {
            Some(false)
        } else if wire > MAX_DRAIN + 64 {
            Some(true)
        } else {
            None
        }
    }
}

/// The pieces of a body of `len` bytes, by the plan's sizes.
pub fn pieces(len: usize, sizes: &[usize]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < len {
        let n = sizes[i % sizes.len()].max(1).min(len - at);
        out.push((at, n));
        at += n;
        i += 1;
    }
    out
}

pub fn chunked_wire_len(body: &BodyPlan) -> usize {
    let framing: usize = pieces(body.len, &body.pieces)
        .iter()
        .map(|(_, n)| format!("{n:x}").len() + 4 + n)
        .sum();
    framing + 5 + if body.trailers { 24 } else { 0 }
}
