//! A client session and server sessions exchanging a plan's requests
//! through the simulated network, and the checks of what they did.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use h1proto::{ClientSession, Config, ErrorKind, ServerSession, Session, SessionError};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};

use super::plan::*;
use super::{Bounds, Endpoint, Failure, Side, Sim, Sizes, Socket, Timer};

// ------------------------------------------------------------ the record

/// One response as the client got it.
#[derive(Debug)]
struct Got {
    id: usize,
    conn: usize,
    close: bool,
}

/// How a server session ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Outcome {
    /// No more requests.
    #[default]
    Clean,
    /// The peer's error or a timeout.
    Failed(ErrorKind),
    /// The connection was reset.
    Reset,
}

/// One server connection, as it went.
#[derive(Debug, Default)]
struct ServerRecord {
    /// Request ids handed to the application, in order.
    handled: Vec<usize>,
    /// For each answer: its id, whether it was queued after the shutdown,
    /// and where its head starts in the stream of bytes written.
    answers: Vec<(usize, bool, u64)>,
    /// The id handed out last before the shutdown signal.
    last_before_shutdown: Option<usize>,
    /// The shutdown signal: when, and the bytes written by then.
    shutdown: Option<(Duration, u64)>,
    /// How the session ended.
    outcome: Outcome,
    /// Shutdown and close, with times.
    ends: Vec<(Duration, h1proto::Io)>,
    /// Timeouts that fired (not counting buffer release).
    fired: Vec<(Duration, Timer)>,
    done: bool,
}

#[derive(Debug, Default)]
pub struct Record {
    servers: Vec<ServerRecord>,
    got: Vec<Got>,
    /// Connections the client opened, and why each ended.
    conn_ends: Vec<&'static str>,
    /// The raw bytes the client read after its ending.
    tail: Vec<u8>,
    tail_eof: bool,
    client_fired: Vec<(Duration, Timer)>,
    client_error: Option<ErrorKind>,
}

type Shared = Rc<RefCell<Record>>;

fn id_of(headers: &HeaderMap) -> usize {
    headers["x-id"].to_str().unwrap().parse().unwrap()
}

fn has_close(headers: &HeaderMap) -> bool {
    headers
        .get_all("connection")
        .iter()
        .any(|v| v.as_bytes().eq_ignore_ascii_case(b"close"))
}

// ------------------------------------------------------------ the server

/// What the server does with the request id `plan.requests.len()` (the
/// ending's own request).
fn extra_request(plan: &Plan) -> ReqPlan {
    let (answer, resp_len, len) = match plan.ending {
        Ending::StallBody(a, _) => (a, 10, 1000),
        Ending::StopReading => (Answer::Whole, HUGE, 0),
        _ => (Answer::Whole, 3 * FLUSH, 0),
    };
    ReqPlan {
        method: if len > 0 { Method::POST } else { Method::GET },
        body: (len > 0).then_some(BodyPlan {
            len,
            chunked: false,
            trailers: false,
            pieces: vec![len],
        }),
        expect: false,
        close: false,
        answer,
        resp_len,
        resp_trailers: false,
        think: 0,
    }
}

fn bounds(plan: &Plan, config: &Config, side: Side) -> Bounds {
    let largest = plan
        .requests
        .iter()
        .map(|r| match side {
            Side::Server => r.response_len().max(r.resp_len),
            Side::Client => r.body.as_ref().map_or(0, |b| b.len),
        })
        .max()
        .unwrap_or(0);
    let held = config.limits.max_head_bytes + config.read_size;
    Bounds {
        held,
        // `BytesMut` doubles an allocation whose front it cannot reclaim
        // (body pieces still point into it): a small multiple.
        capacity: 4 * held,
        output: config.flush_threshold + largest + SLACK,
    }
}

async fn serve(sock: Socket, plan: Rc<Plan>, shared: Shared, index: usize, sim: Sim) {
    let config = server_config(&plan);
    let mut ep = Endpoint::new(
        sock,
        Side::Server,
        &config,
        Sizes::new(plan.reads[1].clone()),
        Sizes::new(plan.writes[1].clone()),
        bounds(&plan, &config, Side::Server),
    );
    // While the server thinks or writes slowly it reads nothing, and the
    // client may be waiting for a head or blocked writing: think time and
    // link pauses together stay below the client's timeouts.
    ep.slow_writes(plan.pauses[1].clone(), SERVER_PAUSES);
    if index == 0 {
        if let Some(ms) = plan.shutdown_at {
            ep.shutdown_at = Some(sim.now() + Duration::from_millis(ms));
        }
    }
    let mut s = ServerSession::new(config, ep.now());
    let mut think = Think {
        sizes: Sizes::new(plan.server_think.iter().map(|&d| d as usize).collect()),
        budget: SERVER_THINK,
    };
    let result = serve_requests(&mut ep, &mut s, &plan, &shared, index, &sim, &mut think).await;
    shared.borrow_mut().servers[index].outcome = match result {
        Ok(()) => Outcome::Clean,
        Err(Failure::Session(SessionError::Peer(e))) => Outcome::Failed(e.kind()),
        Err(Failure::Session(e)) => panic!("server misuse: {e}"),
        Err(Failure::Socket) => Outcome::Reset,
    };
    if !ep.sock.is_closed() {
        let _ = ep.drive(&mut s, ServerSession::close).await;
        ep.sock.close();
    }
    let t0 = sim.now() - sim.elapsed();
    let mut rec = shared.borrow_mut();
    let record = &mut rec.servers[index];
    record.shutdown = ep.shutdown_done.map(|(t, w)| (t - t0, w));
    record.ends = ep.ends.iter().map(|&(t, io)| (t - t0, io)).collect();
    record.fired = ep
        .model
        .fired
        .iter()
        .filter(|(_, t)| *t != Timer::Release)
        .map(|&(at, t)| (at - t0, t))
        .collect();
    record.done = true;
}

async fn serve_requests(
    ep: &mut Endpoint,
    s: &mut ServerSession,
    plan: &Plan,
    shared: &Shared,
    index: usize,
    sim: &Sim,
    think: &mut Think,
) -> Result<(), Failure> {
    let extra = extra_request(plan);
    loop {
        let Some(req) = ep.drive(s, ServerSession::next_request).await? else {
            return Ok(());
        };
        ep.model.request_head();
        let id = id_of(req.headers());
        let rp = plan.requests.get(id).unwrap_or(&extra);
        assert_eq!(req.method(), rp.method);
        {
            let mut rec = shared.borrow_mut();
            let record = &mut rec.servers[index];
            record.handled.push(id);
            if ep.shutdown_done.is_none() {
                record.last_before_shutdown = Some(id);
            }
        }
        if id == plan.requests.len() {
            // The ending's answer may be larger than any other.
            ep.bounds.output += rp.resp_len;
            match plan.ending {
                Ending::ServerStallHead => {
                    ep.sock.until(Socket::peer_fin).await;
                    return Ok(());
                }
                Ending::ServerStallBody => {
                    s.sender().send_head(tagged(id, ())).unwrap();
                    s.sender().send_data(gen_body(id, rp.resp_len)).unwrap();
                    ep.drive(s, ServerSession::poll_flush).await?;
                    ep.sock.until(Socket::peer_fin).await;
                    return Ok(());
                }
                _ => {}
            }
        }
        // Answers to earlier pipelined requests may be queued: out with
        // them before working a while (they would otherwise wait for this
        // one).
        think.pause(ep, s, sim, rp.think).await?;
        let queued = |ep: &Endpoint, s: &mut ServerSession, shared: &Shared| {
            let offset = ep.sock.written() + s.output().len() as u64;
            let after = ep.shutdown_done.is_some();
            shared.borrow_mut().servers[index]
                .answers
                .push((id, after, offset));
        };
        let body = rp.body_bytes(id);
        match rp.answer {
            Answer::BeforeBody => {
                queued(ep, s, shared);
                s.sender()
                    .send_response(tagged(id, Bytes::from(gen_body(id, rp.resp_len))))
                    .unwrap();
            }
            Answer::Whole => {
                let got = ep.drive(s, ServerSession::read_body).await?;
                assert_eq!(got, body, "request {id}'s body, read whole");
                check_request_trailers(s.trailers(), rp, id);
                queued(ep, s, shared);
                let out = if rp.echoes() {
                    got
                } else {
                    Bytes::from(gen_body(id, rp.resp_len))
                };
                s.sender().send_response(tagged(id, out)).unwrap();
            }
            Answer::Stream => {
                // The natural order: the head, then the body. A client
                // waiting for `100 Continue` gets it ahead of the head
                // when the body is first read.
                queued(ep, s, shared);
                s.sender().send_head(tagged(id, ())).unwrap();
                let head = rp.method == Method::HEAD;
                if rp.has_body() {
                    let mut got = Vec::new();
                    while let Some(data) = ep.drive(s, ServerSession::read_data).await? {
                        got.extend_from_slice(&data);
                        s.sender().send_data(data).unwrap();
                        think.between_pieces(ep, s, sim).await?;
                    }
                    assert_eq!(got, body, "request {id}'s body, streamed");
                    check_request_trailers(s.trailers(), rp, id);
                } else if !head {
                    let out = gen_body(id, rp.resp_len);
                    for (at, n) in pieces(out.len(), &[1 + rp.resp_len / 3]) {
                        s.sender().send_data(out[at..at + n].to_vec()).unwrap();
                        think.between_pieces(ep, s, sim).await?;
                    }
                }
                let trailers = rp.response_trailers().then(|| {
                    let mut t = HeaderMap::new();
                    t.insert("x-len", rp.response_len().into());
                    t
                });
                s.sender().finish(trailers).unwrap();
            }
        }
    }
}

/// The server application's think time: before answering, and between
/// streamed pieces, within a budget per connection.
struct Think {
    sizes: Sizes,
    budget: Duration,
}

impl Think {
    /// Thinks `ms` (less if the budget is short), with what is queued
    /// written first.
    async fn pause(
        &mut self,
        ep: &mut Endpoint,
        s: &mut ServerSession,
        sim: &Sim,
        ms: u64,
    ) -> Result<(), Failure> {
        let d = Duration::from_millis(ms).min(self.budget);
        if !d.is_zero() {
            self.budget -= d;
            ep.drive(s, ServerSession::poll_write_all).await?;
            sim.sleep(d).await;
        }
        Ok(())
    }

    /// Between two streamed pieces: backpressure, then the next think
    /// time.
    async fn between_pieces(
        &mut self,
        ep: &mut Endpoint,
        s: &mut ServerSession,
        sim: &Sim,
    ) -> Result<(), Failure> {
        ep.drive(s, ServerSession::poll_flush).await?;
        let ms = self.sizes.take() as u64;
        self.pause(ep, s, sim, ms).await
    }
}

fn tagged<B>(id: usize, body: B) -> Response<B> {
    let mut res = Response::new(body);
    res.headers_mut().insert("x-id", HeaderValue::from(id));
    res
}

fn check_request_trailers(got: Option<&HeaderMap>, rp: &ReqPlan, id: usize) {
    let want = rp.body.as_ref().is_some_and(|b| b.trailers);
    match got {
        Some(t) if want => assert_eq!(t["x-req-trailer"], id.to_string().as_str()),
        Some(t) => assert!(t.is_empty(), "trailers nobody sent: {t:?}"),
        None => assert!(!want, "request {id}'s trailers are missing"),
    }
}

// ------------------------------------------------------------ the client

struct Client {
    sim: Sim,
    plan: Rc<Plan>,
    shared: Shared,
    depths: Sizes,
    thinks: Sizes,
    conns: usize,
}

impl Client {
    fn connect(&mut self) -> (Endpoint, ClientSession) {
        let unbounded = usize::MAX / 4;
        let (c2s, s2c) = if self.plan.narrow_c2s {
            (self.plan.narrow_cap, unbounded)
        } else {
            (unbounded, self.plan.narrow_cap)
        };
        let (client, server) = self.sim.connect(c2s, s2c);
        let index = {
            let mut rec = self.shared.borrow_mut();
            rec.servers.push(ServerRecord::default());
            rec.servers.len() - 1
        };
        self.sim.spawn(serve(
            server,
            self.plan.clone(),
            self.shared.clone(),
            index,
            self.sim.clone(),
        ));
        self.conns += 1;
        let config = client_config(&self.plan);
        let mut ep = Endpoint::new(
            client,
            Side::Client,
            &config,
            Sizes::new(self.plan.reads[0].clone()),
            Sizes::new(self.plan.writes[0].clone()),
            bounds(&self.plan, &config, Side::Client),
        );
        // A client that sends slowly while the server has answered before the body
        // and lingers must be done within the linger time (it reads the
        // answer only after sending), so its pauses stay under it.
        ep.slow_writes(self.plan.pauses[0].clone(), Duration::from_millis(1500));
        let session = ClientSession::new(config, ep.now());
        (ep, session)
    }

    fn request_head(&self, id: usize, rp: &ReqPlan) -> Request<()> {
        let mut req = Request::builder()
            .method(rp.method.clone())
            .uri(format!("/{id}"))
            .header("host", "sim")
            .header("x-id", id);
        if let Some(b) = &rp.body {
            req = if b.chunked {
                req.header("transfer-encoding", "chunked")
            } else {
                req.header("content-length", b.len)
            };
        }
        if rp.expect {
            req = req.header("expect", "100-continue");
        }
        if rp.close {
            req = req.header("connection", "close");
        }
        req.body(()).unwrap()
    }

    /// Queues the body of request `id` piece by piece.
    async fn send_body(
        &self,
        ep: &mut Endpoint,
        s: &mut ClientSession,
        id: usize,
        rp: &ReqPlan,
    ) -> Result<(), Failure> {
        let body = rp.body_bytes(id);
        let plan = rp.body.as_ref().unwrap();
        for (at, n) in pieces(body.len(), &plan.pieces) {
            s.sender().send_data(body[at..at + n].to_vec()).unwrap();
            ep.drive(s, ClientSession::poll_flush).await?;
        }
        let trailers = plan.trailers.then(|| {
            let mut t = HeaderMap::new();
            t.insert("x-req-trailer", id.into());
            t
        });
        s.sender().finish(trailers).unwrap();
        Ok(())
    }

    /// Queues request `id` (only its head if its body waits for `100
    /// Continue`).
    async fn queue(
        &self,
        ep: &mut Endpoint,
        s: &mut ClientSession,
        id: usize,
    ) -> Result<(), Failure> {
        let rp = &self.plan.requests[id];
        let head = self.request_head(id, rp);
        let streamed = rp.body.as_ref().is_some_and(|b| b.chunked);
        if rp.waits() {
            s.sender().send_head(head).unwrap();
        } else if streamed {
            s.sender().send_head(head).unwrap();
            self.send_body(ep, s, id, rp).await?;
        } else {
            let (parts, ()) = head.into_parts();
            s.sender()
                .send_request(Request::from_parts(parts, Bytes::from(rp.body_bytes(id))))
                .unwrap();
        }
        ep.drive(s, ClientSession::poll_flush).await
    }

    /// Reads the response to `id` and checks it.
    async fn response(
        &self,
        ep: &mut Endpoint,
        s: &mut ClientSession,
        id: usize,
    ) -> Result<(), Failure> {
        let rp = &self.plan.requests[id];
        let mut interim = 0;
        let head = loop {
            let head = ep
                .drive(s, ClientSession::next_response)
                .await?
                .expect("a response is due");
            ep.model.response_head();
            if head.status() == StatusCode::CONTINUE {
                interim += 1;
                self.send_body(ep, s, id, rp).await?;
                continue;
            }
            assert!(!head.status().is_informational(), "{head:?}");
            break head;
        };
        let mut body = Vec::new();
        while let Some(data) = ep.drive(s, ClientSession::read_data).await? {
            body.extend_from_slice(&data);
        }
        let idle = s.connection().requests_in_flight() == 0;
        ep.model.response_end(ep.now(), idle);
        assert_eq!(head.status(), StatusCode::OK, "response to {id}: {head:?}");
        assert_eq!(id_of(head.headers()), id, "responses in order");
        assert_eq!(
            body,
            rp.response_body(id),
            "response {id}'s body ({:?})",
            rp.answer
        );
        if rp.method == Method::HEAD && rp.answer != Answer::Stream {
            assert_eq!(
                head.headers()["content-length"],
                rp.resp_len.to_string().as_str()
            );
        }
        let want_100 = usize::from(rp.waits() && rp.answer != Answer::BeforeBody);
        assert_eq!(interim, want_100, "100 Continue for {id}");
        match s.trailers() {
            Some(t) if rp.response_trailers() => {
                assert_eq!(t["x-len"], body.len().to_string().as_str());
            }
            Some(t) => assert!(t.is_empty(), "{t:?}"),
            None => assert!(!rp.response_trailers(), "response {id}'s trailers"),
        }
        self.shared.borrow_mut().got.push(Got {
            id,
            conn: self.conns - 1,
            close: has_close(head.headers()),
        });
        Ok(())
    }

    /// Sends every request, over as many connections as it takes; returns
    /// the last connection if it may still be used.
    async fn exchanges(&mut self) -> Option<(Endpoint, ClientSession)> {
        let n = self.plan.requests.len();
        let mut next = 0;
        while next < n {
            assert!(
                self.conns <= n + 2,
                "{} connections for {n} requests",
                self.conns
            );
            let (mut ep, mut s) = self.connect();
            let mut sent = next;
            let mut in_flight = VecDeque::new();
            let mut half_closed = false;
            let why = loop {
                if in_flight.is_empty() {
                    if sent == n {
                        break "done";
                    }
                    let think = self.thinks.take() as u64;
                    self.sim.sleep(Duration::from_millis(think)).await;
                    let depth = self.depths.take();
                    let mut failed = false;
                    while in_flight.len() < depth && sent < n && s.is_reusable() {
                        let rp = &self.plan.requests[sent];
                        if rp.waits() && !in_flight.is_empty() {
                            break;
                        }
                        in_flight.push_back(sent);
                        sent += 1;
                        if self.queue(&mut ep, &mut s, sent - 1).await.is_err() {
                            failed = true;
                            break;
                        }
                        if rp.waits() || rp.close {
                            break;
                        }
                    }
                    if failed {
                        break "reset";
                    }
                    let waits = in_flight.iter().any(|&i| self.plan.requests[i].waits());
                    if self.plan.half_close && sent == n && !waits {
                        if ep
                            .drive(&mut s, ClientSession::poll_write_all)
                            .await
                            .is_err()
                        {
                            break "reset";
                        }
                        ep.sock.shutdown_write();
                        half_closed = true;
                    }
                }
                let id = *in_flight.front().unwrap();
                match self.response(&mut ep, &mut s, id).await {
                    Ok(()) => {}
                    Err(Failure::Socket) => break "reset",
                    Err(Failure::Session(SessionError::Peer(e)))
                        if e.kind() == ErrorKind::UnexpectedEof =>
                    {
                        break "eof";
                    }
                    Err(e) => panic!("client, response to {id}: {e}"),
                }
                in_flight.pop_front();
                next = id + 1;
                if in_flight.is_empty() && !s.is_reusable() {
                    break "not reusable";
                }
            };
            self.shared.borrow_mut().conn_ends.push(why);
            // The ending goes on this connection only if the server is
            // known to keep it.
            let kept = self.plan.requests[n - 1].closes_after() == Some(false)
                && (self.conns > 1 || self.plan.shutdown_at.is_none());
            if why == "done" && !half_closed && kept {
                return Some((ep, s));
            }
            let _ = ep.drive(&mut s, ClientSession::close).await;
        }
        None
    }
}

async fn client(sim: Sim, plan: Rc<Plan>, shared: Shared) {
    let mut c = Client {
        depths: Sizes::new(plan.depths.clone()),
        thinks: Sizes::new(plan.client_think.iter().map(|&d| d as usize).collect()),
        sim: sim.clone(),
        plan: plan.clone(),
        shared: shared.clone(),
        conns: 0,
    };
    let last = c.exchanges().await;
    let (mut ep, mut s) = match (plan.ending, last) {
        (Ending::Close, None) => return,
        (_, Some(conn)) => conn,
        (_, None) => c.connect(),
    };
    let extra = plan.requests.len();
    let t0 = sim.now() - sim.elapsed();
    match plan.ending {
        Ending::Close => {
            let _ = ep.drive(&mut s, ClientSession::close).await;
        }
        Ending::Idle => {
            ep.pool(&mut s).await;
            shared.borrow_mut().client_fired = fired(&ep, t0);
            let _ = ep.drive(&mut s, ClientSession::close).await;
        }
        Ending::StallHead(n) => {
            let head = format!("GET /{extra} HTTP/1.1\r\nHost: sim\r\nX-Id: {extra}\r\n\r\n");
            ep.sock
                .write_all(&head.as_bytes()[..n.min(head.len() - 1)])
                .await;
            read_tail(&ep, &shared).await;
        }
        Ending::StallBody(_, n) => {
            let head = format!(
                "POST /{extra} HTTP/1.1\r\nHost: sim\r\nX-Id: {extra}\r\nContent-Length: 1000\r\n\r\n"
            );
            ep.sock.write_all(head.as_bytes()).await;
            let body = req_body(extra, n);
            ep.sock.write_all(&body).await;
            read_tail(&ep, &shared).await;
        }
        Ending::StopReading => {
            let head = format!("GET /{extra} HTTP/1.1\r\nHost: sim\r\nX-Id: {extra}\r\n\r\n");
            ep.sock.write_all(head.as_bytes()).await;
            ep.sock.until(Socket::peer_closed).await;
            ep.sock.close();
        }
        Ending::ServerStallHead | Ending::ServerStallBody => {
            let req = Request::get(format!("/{extra}"))
                .header("host", "sim")
                .header("x-id", extra)
                .body(Bytes::new())
                .unwrap();
            s.sender().send_request(req).unwrap();
            let err = match ep.drive(&mut s, ClientSession::next_full_response).await {
                Err(Failure::Session(SessionError::Peer(e))) => e.kind(),
                other => panic!("the stalled server was not timed out: {other:?}"),
            };
            {
                let mut rec = shared.borrow_mut();
                rec.client_error = Some(err);
                rec.client_fired = fired(&ep, t0);
            }
            let _ = ep.drive(&mut s, ClientSession::close).await;
        }
    }
}

fn fired(ep: &Endpoint, t0: std::time::Instant) -> Vec<(Duration, Timer)> {
    ep.model
        .fired
        .iter()
        .filter(|(_, t)| *t != Timer::Release)
        .map(|&(at, t)| (at - t0, t))
        .collect()
}

async fn read_tail(ep: &Endpoint, shared: &Shared) {
    let (bytes, eof) = ep.sock.read_to_end().await;
    ep.sock.close();
    let mut rec = shared.borrow_mut();
    rec.tail = bytes;
    rec.tail_eof = eof;
}

// ------------------------------------------------------------ the checks

pub fn run(plan: Plan) -> Record {
    let sim = Sim::new();
    let plan = Rc::new(plan);
    let shared = Shared::default();
    sim.run(client(sim.clone(), plan.clone(), shared.clone()));
    Rc::try_unwrap(shared).unwrap().into_inner()
}

pub fn check(plan: &Plan, rec: &Record) {
    let n = plan.requests.len();
    // Every request answered once, in order, over all connections.
    let got: Vec<usize> = rec.got.iter().map(|g| g.id).collect();
    assert_eq!(got, (0..n).collect::<Vec<_>>(), "responses the client got");
    // The server handed out each exactly once, on the connection that
    // answered it (the ending's own request aside).
    for (conn, server) in rec.servers.iter().enumerate() {
        assert!(server.done, "server connection {conn} did not end");
        let handled: Vec<usize> = server.handled.iter().copied().filter(|&i| i < n).collect();
        let answered: Vec<usize> = rec
            .got
            .iter()
            .filter(|g| g.conn == conn)
            .map(|g| g.id)
            .collect();
        assert_eq!(
            handled, answered,
            "connection {conn}: handed out vs answered"
        );
    }
    // Each connection kept or closed as predicted.
    for (conn, server) in rec.servers.iter().enumerate() {
        let answered: Vec<&Got> = rec.got.iter().filter(|g| g.conn == conn).collect();
        let shut = server.shutdown.is_some();
        for (i, g) in answered.iter().enumerate() {
            let last = i + 1 == answered.len();
            let predicted = plan.requests[g.id].closes_after();
            if !last {
                assert_ne!(
                    predicted,
                    Some(true),
                    "connection {conn} went on after {}",
                    g.id
                );
                assert!(!g.close, "Connection: close on {} and more after it", g.id);
            }
            if g.close && !shut {
                assert_ne!(
                    predicted,
                    Some(false),
                    "unexpected Connection: close on {}",
                    g.id
                );
            }
            if plan.requests[g.id].announces_close() {
                assert!(g.close, "no Connection: close on {}", g.id);
            }
            if last && conn + 1 < rec.servers.len() && !shut {
                // The client moved on: this connection ended after g.
                let ended_by_server = rec.conn_ends.get(conn).is_some_and(|&w| w != "done");
                if ended_by_server {
                    assert_ne!(
                        predicted,
                        Some(false),
                        "connection {conn} closed after {}",
                        g.id
                    );
                }
            }
        }
    }
    // The shutdown: answers queued after it, and the answer in progress
    // if none of it had left, say Connection: close.
    if let Some(server) = rec.servers.first() {
        if let Some((_, written)) = server.shutdown {
            for &(id, after, offset) in &server.answers {
                let Some(g) = rec.got.iter().find(|g| g.id == id && g.conn == 0) else {
                    continue;
                };
                let in_progress = server.last_before_shutdown == Some(id) && offset >= written;
                if after || in_progress {
                    assert!(
                        g.close,
                        "answer {id} after the shutdown without Connection: close"
                    );
                }
            }
        }
    }
    check_ending(plan, rec);
}

fn check_ending(plan: &Plan, rec: &Record) {
    let last = rec.servers.last().unwrap();
    let tail = String::from_utf8_lossy(&rec.tail);
    let closes_only = |what: &str| {
        assert_eq!(
            last.ends.iter().map(|e| e.1).collect::<Vec<_>>(),
            [h1proto::Io::Close],
            "{what}: closed at once, no lingering"
        );
    };
    match plan.ending {
        Ending::Close => {
            if rec.servers.len() == 1 || rec.conn_ends.last() == Some(&"done") {
                assert_eq!(last.outcome, Outcome::Clean);
            }
        }
        Ending::Idle => {
            if last.shutdown.is_none() {
                // A fresh connection that sent nothing has the head timeout.
                let timer = if last.handled.is_empty() {
                    Timer::Head
                } else {
                    Timer::Idle
                };
                assert_eq!(last.fired.last().map(|f| f.1), Some(timer), "server idle");
                closes_only("idle");
                assert_eq!(last.outcome, Outcome::Clean);
            }
            assert_eq!(
                rec.client_fired.last().map(|f| f.1),
                Some(Timer::Idle),
                "pool idle"
            );
        }
        Ending::StallHead(n) => {
            if last.shutdown.is_some() {
                return;
            }
            assert_eq!(
                last.fired.last().map(|f| f.1),
                Some(if n == 0 && !last.handled.is_empty() {
                    Timer::Idle
                } else {
                    Timer::Head
                })
            );
            assert!(rec.tail_eof, "the server ends with FIN, not a reset");
            if n == 0 {
                assert_eq!(tail, "", "nothing to answer");
                closes_only("nothing received");
                assert_eq!(last.outcome, Outcome::Clean);
            } else {
                assert!(
                    tail.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
                    "{tail}"
                );
                assert!(tail.contains("connection: close\r\n"), "{tail}");
                assert_eq!(last.outcome, Outcome::Failed(ErrorKind::HeadTimeout));
            }
        }
        Ending::StallBody(answer, _) => {
            if last.shutdown.is_some() {
                return;
            }
            assert_eq!(last.fired.last().map(|f| f.1), Some(Timer::Body));
            assert_eq!(last.outcome, Outcome::Failed(ErrorKind::BodyTimeout));
            assert!(rec.tail_eof);
            let statuses: Vec<&str> = tail
                .match_indices("HTTP/1.1 ")
                .map(|(at, _)| &tail[at + 9..at + 12])
                .filter(|code| code.bytes().all(|b| b.is_ascii_digit()))
                .collect();
            match answer {
                Answer::Whole => assert_eq!(statuses, ["408"], "{tail}"),
                Answer::Stream | Answer::BeforeBody => {
                    assert_eq!(statuses, ["200"], "no 408 after an answer left: {tail}");
                }
            }
        }
        Ending::StopReading => {
            if last.shutdown.is_some() {
                return;
            }
            assert_eq!(last.fired.last().map(|f| f.1), Some(Timer::Write));
            assert_eq!(last.outcome, Outcome::Failed(ErrorKind::WriteTimeout));
            closes_only("write timeout");
        }
        Ending::ServerStallHead => {
            assert_eq!(rec.client_error, Some(ErrorKind::ResponseTimeout));
            assert_eq!(rec.client_fired.last().map(|f| f.1), Some(Timer::Head));
        }
        Ending::ServerStallBody => {
            assert_eq!(rec.client_error, Some(ErrorKind::BodyTimeout));
            assert_eq!(rec.client_fired.last().map(|f| f.1), Some(Timer::Body));
        }
    }
}

/// With `SIM_STATS=1`, one line per run: what it exercised.
pub fn stats(plan: &Plan, rec: &Record) {
    if std::env::var_os("SIM_STATS").is_none() {
        return;
    }
    let server_fired: Vec<String> = rec
        .servers
        .iter()
        .flat_map(|s| s.fired.iter().map(|f| format!("{:?}", f.1)))
        .collect();
    let shutdown = rec.servers.first().and_then(|s| s.shutdown).is_some();
    let pipelined = plan.depths.iter().any(|&d| d > 1) && plan.requests.len() > 1;
    let expect = plan.requests.iter().filter(|r| r.waits()).count();
    eprintln!(
        "stats ending={:?} conns={} ends={:?} shutdown={shutdown} pipelined={pipelined} expect={expect} \
         half_close={} server_fired={server_fired:?} client_fired={:?} outcomes={:?}",
        plan.ending,
        rec.servers.len(),
        rec.conn_ends,
        plan.half_close,
        rec.client_fired.iter().map(|f| f.1).collect::<Vec<_>>(),
        rec.servers.iter().map(|s| s.outcome).collect::<Vec<_>>(),
    );
}
