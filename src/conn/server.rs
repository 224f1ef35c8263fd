//! The server's part of the connection: what it keeps of the request
//! being answered, how a request event moves the machine, and the calls
//! only a server has (the response's queueing, `100 Continue`, the error
//! response, closing after the response).

use bytes::{Bytes, BytesMut};
use http::header::{CONNECTION, CONTENT_TYPE, HeaderValue};
use http::response::Parts;
use http::{Response, StatusCode, Version};

use super::core::{ConnRole, Connection};
use super::machine::{Input, State};
use super::{expects_continue, offers_upgrade};
use crate::config::Config;
use crate::decode::Exchange;
use crate::encode::ResponseContext;
use crate::error::{Error, UsageError};
use crate::framing::{BodyKind, RequestKind, ResponseClass, response_class};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::leniency::RequestLeniency;
use crate::role::{Party, Server};
use crate::segments::{Mark, Segments};

/// The server side of an HTTP/1.1 connection.
///
/// Decodes requests with a [`RequestDecoder`](crate::RequestDecoder),
/// answers them with a [`ResponseEncoder`](crate::ResponseEncoder), and
/// keeps what one direction learns for the other: a response to HEAD is
/// framed without a body, an HTTP/1.0 client gets no chunked body,
/// `Connection: close` is added when the exchange cannot be followed by
/// another. Requests are answered one at a time and in order: after a
/// request's `End`, [`poll_event`](Self::poll_event) returns `Ok(None)`
/// until its response is complete, then goes on with pipelined requests
/// already in the buffer. Once both the request and its response are
/// complete and the verdict is reusable, the next exchange starts by
/// itself: no call is needed to reuse the connection.
///
/// ```
/// use bytes::{Buf, BytesMut};
/// use h1proto::{Config, Event, ServerConnection};
///
/// let mut conn = ServerConnection::new(Config::default());
/// // 1. Bytes read from the socket (two pipelined requests).
/// let mut buf = BytesMut::from(
///     &b"GET / HTTP/1.1\r\nHost: a\r\n\r\nHEAD / HTTP/1.1\r\nHost: a\r\n\r\n"[..],
/// );
/// let mut out = Vec::new();
/// loop {
///     // 2. Poll events; answer each request.
///     while let Some(event) = conn.poll_event(&mut buf)? {
///         if let Event::End(_) = event {
///             let res = http::Response::new("Hello, World!");
///             conn.sender().send_response(res).unwrap();
///         }
///     }
///     // 3. Drain the output in one write (here: into a Vec).
///     let output = conn.output();
///     if output.is_empty() {
///         break; // wait for the socket to be readable, then go to 1
///     }
///     while output.has_remaining() {
///         let chunk = output.chunk();
///         out.extend_from_slice(chunk);
///         let n = chunk.len();
///         output.advance(n);
///     }
///     // 4. Close if the exchange said so.
///     if conn.is_closed() {
///         break;
///     }
/// }
/// let text = String::from_utf8(out).unwrap();
/// assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 2);
/// assert!(text.ends_with("content-length: 13\r\n\r\n")); // HEAD: no body
/// # Ok::<(), h1proto::Error>(())
/// ```
pub type ServerConnection = Connection<Server>;

/// What a server connection keeps besides the skeleton's.
#[derive(Debug, Default)]
pub struct ServerState {
    /// `Config::max_drain_bytes`.
    max_drain: u64,
    /// The request being answered (or last answered, while the server's
    /// party is `Idle`): the one exchange a server has in flight, since it
    /// reads the next request only once the response to this one is
    /// complete.
    pub(crate) exchange: Exchange,
    /// Bytes of an unread request body discarded after the response.
    drained: u64,
    /// The head of the final response to the current request in the
    /// output, or, between exchanges, of the last one's (pipelined answers
    /// leave together, so it may still be queued whole when a close is
    /// asked for); forgotten when the next request's head comes. While
    /// none of it has been drained it can be withdrawn (for an error
    /// response) or amended (`Connection: close`).
    response: Option<QueuedHead>,
}

/// A final response head in the output: where it starts and how long it
/// is, as the encoder wrote it, in one piece, the encoder's own
/// `Connection` field last.
#[derive(Debug, Clone, Copy)]
struct QueuedHead {
    at: Mark,
    len: usize,
}

impl QueuedHead {
    /// Adds `Connection: close` to the head, if none of it has been
    /// drained from `out`; returns whether it did. The `connection:
    /// keep-alive` the encoder gives an HTTP/1.0 client is replaced.
    fn amend_close(&mut self, out: &mut Segments) -> bool {
        const KEEP_ALIVE: &[u8] = b"connection: keep-alive\r\n";
        const CLOSE: &[u8] = b"connection: close\r\n";
        // The fields end before the empty line that ends the head.
        let end = self.len - 2;
        let Some(fields) = out.chunk_at(self.at).get(..end) else {
            return false;
        };
        // Amended already, or a `keep-alive` to replace.
        if fields.ends_with(CLOSE) {
            return true;
        }
        let at = fields.strip_suffix(KEEP_ALIVE).map_or(end, <[u8]>::len);
        let amended = out.splice(self.at.offset(at as u64), end - at, CLOSE);
        if amended {
            self.len = at + CLOSE.len() + 2;
        }
        amended
    }
}

/// After the last response: when its head said nothing of closing,
/// closing was decided after it was queued (its request's body refused or
/// too long to drain when it ended), and it is said in the head while none
/// of the head has left.
#[cold]
fn announce_close(conn: &mut ServerConnection) {
    if !conn.keep_alive().is_reusable() && conn.encoder.keep_alive().is_reusable() {
        if let Some(head) = &mut conn.role.response {
            head.amend_close(conn.encoder.output());
        }
    }
}

impl ServerConnection {
    /// Gives the connection the wall clock: the responses it queues from
    /// now on carry `Date` ([`ResponseEncoder::set_date`](crate::ResponseEncoder::set_date)
    /// has the rules). A connection is never given one by itself; a
    /// [`ServerSession`](crate::ServerSession) passes on the clock its
    /// driver hands it.
    #[inline]
    pub fn set_date(&mut self, now: Option<std::time::SystemTime>) {
        self.encoder.set_date(now);
    }

    /// `100 Continue` for a client waiting for it: at the end of the
    /// output, or, when the final response head is already queued, ahead
    /// of it while none of it has left (output is corked, so the client
    /// sees them in that order); otherwise the body is refused.
    pub(crate) fn queue_continue(&mut self) {
        const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
        let out = self.encoder.output();
        // A final head is queued from `response` on while the server's
        // party is in `Body` (in `Done` the client no longer waits).
        let head = (self.role.response.as_mut()).filter(|_| self.machine.server() == State::Body);
        match head {
            None => out.push_slice(CONTINUE),
            Some(head) if out.splice(head.at, 0, CONTINUE) => {
                head.at = head.at.offset(CONTINUE.len() as u64);
            }
            Some(_) => {
                let facts = self.facts();
                self.machine.refuse_continue(facts);
                self.follow_machine();
                return;
            }
        }
        self.machine.continue_sent();
    }

    /// Queues a response, whole (with `body`) or its head: checks that it
    /// may be sent now, moves the machine for it, and builds the context
    /// the encoder frames it by; the machine moves back if the encoder
    /// refuses it.
    pub(crate) fn send_message(
        &mut self,
        parts: Parts,
        body: Option<Bytes>,
    ) -> Result<BodyKind, UsageError> {
        let saved = self.machine.clone();
        let status = parts.status;
        if self.machine.server() != State::Head {
            return Err(UsageError::WrongState);
        }
        // A 1xx to an HTTP/1.0 client is the plan's to refuse.
        let exchange = self.role.exchange;
        let input = match response_class(exchange.request, status) {
            ResponseClass::Interim => Input::Interim,
            ResponseClass::Switch => {
                if status == StatusCode::SWITCHING_PROTOCOLS && !exchange.upgrade {
                    return Err(UsageError::InvalidHead);
                }
                if self.machine.client() != State::MightSwitch {
                    // The request (and its body) is read before switching.
                    return Err(UsageError::WrongState);
                }
                Input::Switch
            }
            ResponseClass::Final => {
                if exchange.request == RequestKind::Connect {
                    // The decoder stopped at the CONNECT head: what the
                    // client sent after it was meant for a tunnel that is
                    // not opened.
                    self.close_for(CloseReason::ConnectRefused);
                }
                if body.is_some() && self.unread_past_drain_bound() {
                    // The response ends now and the body it leaves unread
                    // is declared too long to drain: closing is already
                    // known. A streamed response decides at its end, since
                    // the application may still read the whole body.
                    self.close_for(CloseReason::UnreadBody);
                }
                Input::head(body.is_none())
            }
        };
        self.on(Party::Server, input);
        // The verdict so far is passed to the encoder, whose response
        // says `Connection: close` when it is to close.
        let ctx = ResponseContext {
            request: exchange.request,
            peer_version: exchange.version,
            keep_alive: self.keep_alive(),
        };
        let at = self.encoder.output().mark();
        let (kind, len) = self
            .encoder
            .write_message(&parts, ctx, body)
            .inspect_err(|_| self.machine = saved)?;
        // The response's maps serve the next request's head.
        self.pass_spare_maps(parts.headers, parts.extensions);
        if status == StatusCode::CONTINUE {
            self.machine.continue_sent();
        } else if !status.is_informational() {
            self.role.response = Some(QueuedHead { at, len });
            if !self.encoder.keep_alive().is_reusable() {
                // The response's own verdict, the encoder's (a
                // close-delimited body, the caller's `Connection: close`),
                // is known now: the rules read it again.
                let facts = self.facts();
                self.machine.settle(facts);
            }
        }
        self.follow_machine();
        Ok(kind)
    }

    /// Queues the response a protocol error calls for: its suggested
    /// status, a short text body and `Connection: close`.
    ///
    /// A response to the current request that was queued but not yet
    /// drained, not even in part, is withdrawn first and replaced: output
    /// is corked, so the peer never sees it. A response that has started
    /// to leave cannot be taken back; then nothing is queued.
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] when part of a response to the current
    /// request has already been drained.
    pub fn send_error_response(&mut self, error: &Error) -> Result<(), UsageError> {
        let started = matches!(self.machine.server(), State::Body | State::Done)
            || self.encoder.body_kind().is_some();
        if started {
            match self.role.response {
                Some(head) if self.encoder.output().truncate(head.at) => {
                    self.encoder.withdraw();
                    self.on(Party::Server, Input::WithdrawResponse);
                    self.role.response = None;
                }
                _ => return Err(UsageError::WrongState),
            }
        }
        if !matches!(self.machine.server(), State::Idle | State::Head) {
            return Err(UsageError::WrongState);
        }
        let mut res = Response::new(Bytes::from(format!("{error}\n")));
        *res.status_mut() = error.status();
        let headers = res.headers_mut();
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        // Between exchanges the error answers a request whose head was
        // not handed out, not the last one (a 400 after a HEAD keeps its
        // body).
        let exchange = match self.machine.server() {
            State::Idle => Exchange::default(),
            _ => self.role.exchange,
        };
        let ctx = ResponseContext {
            request: exchange.request,
            peer_version: exchange.version,
            keep_alive: KeepAlive::Close(CloseReason::ProtocolError),
        };
        // Its verdict, the encoder's, closes the connection.
        self.encoder.send_response(res, ctx)?;
        self.on(Party::Server, Input::HeadOnly);
        self.follow_machine();
        Ok(())
    }

    /// Asks for the connection to close after the current exchange: the
    /// response carries `Connection: close`. When its head is already
    /// queued but none of it has been drained, the field is added to the
    /// queued head; once the head has started to leave, the connection
    /// still closes after the response, without announcing it.
    ///
    /// Between exchanges, the response to the last request is amended the
    /// same way while none of it has been drained (answers to pipelined
    /// requests are queued before they leave together), and the
    /// connection then closes after it: a request received after it is not
    /// served. Otherwise the next exchange is the last.
    pub fn close_after_response(&mut self) {
        let between = self.machine.server() == State::Idle;
        let amended = self.encoder.keep_alive().is_reusable()
            && (self.role.response.as_mut())
                .is_some_and(|head| head.amend_close(self.encoder.output()));
        self.close_for(CloseReason::LocalClose);
        if between && amended {
            // The exchange before now ends the connection.
            self.on(Party::Client, Input::Close);
            self.on(Party::Server, Input::Close);
        }
        self.follow_machine();
    }

    /// `true` when the request body event just decoded (`consumed`: the
    /// bytes it took; `end`: the end of the body) is drained, not handed
    /// out: a response completed before the request body was read, so the
    /// rest is read and discarded, bounded by the bytes it takes off the wire
    /// (chunk framing included), not by its data alone. Past the bound the
    /// connection closes, which stops its decoder: nothing more is read.
    #[inline]
    pub(super) fn drains(&mut self, consumed: usize, end: bool) -> bool {
        if !self.body_open || self.machine.server() != State::Done {
            return false;
        }
        self.role.drained += consumed as u64;
        if end {
            self.role.drained = 0;
        } else if self.role.drained > self.role.max_drain {
            self.close_for(CloseReason::UnreadBody);
        }
        true
    }

    /// `true` while the request body is being received and the bytes its
    /// `Content-Length` still declares exceed what may be drained.
    fn unread_past_drain_bound(&self) -> bool {
        self.body_open
            && self
                .decoder
                .remaining_body_len()
                .is_some_and(|n| n > self.role.max_drain)
    }

    /// After a transition of the machine: a response complete before the
    /// request body was read leaves it to be drained, unless what the
    /// request still declares is more than may be; the last response says
    /// that the connection closes if it can.
    #[inline]
    pub(crate) fn after_transition(&mut self) {
        if self.machine.server() == State::Done && self.unread_past_drain_bound() {
            self.close_for(CloseReason::UnreadBody);
        }
        if self.machine.server() == State::MustClose {
            announce_close(self);
        }
    }
}

impl ConnRole for Server {
    type ConnState = ServerState;
    const PEER: Party = Party::Client;

    fn configured(config: &Config) -> (RequestLeniency, ServerState) {
        let state = ServerState {
            max_drain: config.max_drain_bytes,
            ..ServerState::default()
        };
        (config.request_leniency, state)
    }

    /// The request being answered, while its response is due.
    #[inline]
    fn unanswered(conn: &Connection<Self>) -> usize {
        usize::from(conn.machine.server() == State::Head)
    }

    /// Whether to decode now: the current request's events always, the next
    /// request only once the response to this one is complete.
    #[inline]
    fn ready(conn: &mut Connection<Self>, _buf: &BytesMut) -> Result<bool, Error> {
        if conn.decoder.is_idle() && conn.machine.server() != State::Idle {
            return Ok(false);
        }
        if conn.machine.client() == State::Body && conn.machine.expects_continue() {
            // The application reads the body the client holds back.
            conn.queue_continue();
        }
        Ok(true)
    }

    #[inline]
    fn on_head(
        conn: &mut Connection<Self>,
        head: &http::Request<()>,
        body: Option<BodyKind>,
    ) -> Result<(), Error> {
        // Requests have no interim heads: `body` is always there.
        let has_body = body.is_some_and(|body| !body.is_empty());
        // An upgrade is offered by `Upgrade` with `Connection: upgrade`;
        // most requests have no Connection field.
        let upgrade = conn.decoder.framing_fields().connection && offers_upgrade(head.headers());
        let version = head.version();
        let exchange = Exchange {
            request: RequestKind::of(head.method()),
            version,
            expect: version == Version::HTTP_11 && has_body && expects_continue(head.headers()),
            upgrade,
        };
        conn.role.exchange = exchange;
        conn.role.response = None;
        conn.note_request(exchange, has_body);
        conn.body_open = has_body;
        Ok(())
    }

    #[inline(always)]
    fn as_server(conn: &mut Connection<Self>) -> Option<&mut ServerConnection> {
        Some(conn)
    }
}
