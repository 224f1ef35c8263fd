//! The server side: requests in, responses out.

use bytes::{Bytes, BytesMut};
use http::header::{CONNECTION, CONTENT_TYPE, EXPECT, HeaderMap, HeaderValue, UPGRADE};
use http::{Request, Response, StatusCode, Version};

use super::Config;
use super::state::{Input, State};
use crate::decode::{Event, RequestDecoder};
use crate::encode::{ResponseContext, ResponseEncoder};
use crate::error::{Error, UsageError};
use crate::framing::{BodyKind, RequestKind, ResponseClass, response_class};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::segments::{Mark, Segments};

/// What the server knows about the request it is answering.
#[derive(Debug, Clone, Copy)]
struct Exchange {
    kind: RequestKind,
    version: Version,
    /// The request's own verdict (version, `Connection`, framing).
    verdict: KeepAlive,
    upgrade: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Continue {
    /// The client did not ask, or it no longer matters.
    None,
    /// The client waits for `100 Continue` before sending the body.
    Waiting,
    /// `100 Continue` was queued.
    Sent,
}

/// The server side of an HTTP/1.1 connection.
///
/// Decodes requests with a [`RequestDecoder`], answers them with a
/// [`ResponseEncoder`], and keeps what one direction learns for the other:
/// a response to HEAD is framed without a body, an HTTP/1.0 client gets no
/// chunked body, `Connection: close` is added when the exchange cannot be
/// followed by another. Requests are answered one at a time and in order:
/// after a request's `End`, [`poll_event`](Self::poll_event) returns
/// `Ok(None)` until its response is complete, then goes on with pipelined
/// requests already in the buffer. Once both the request and its response
/// are complete and the verdict is reusable, the next exchange starts by
/// itself: no call is needed to recycle the connection.
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
///             conn.send_response(res).unwrap();
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
#[derive(Debug)]
pub struct ServerConnection {
    config: Config,
    decoder: RequestDecoder,
    encoder: ResponseEncoder,
    recv: State,
    send: State,
    exchange: Option<Exchange>,
    expect: Continue,
    /// Bytes of an unread request body discarded after the response.
    drained: u64,
    /// A reason to close decided locally or by an early response.
    close: Option<CloseReason>,
    /// Where the final response to the current request starts in the
    /// output: while none of it has been drained it can be withdrawn (for
    /// an error response) or amended (`Connection: close`).
    response: Option<Mark>,
    /// The same for the response of the exchange before, once the
    /// connection has moved on: pipelined answers leave together, so it
    /// may still be queued whole when a close is asked for.
    previous: Option<Mark>,
    error: Option<Error>,
    eof: bool,
}

impl ServerConnection {
    /// A connection with the given settings.
    pub fn new(config: Config) -> Self {
        ServerConnection {
            decoder: RequestDecoder::new(config.limits.clone()),
            encoder: ResponseEncoder::new(config.encoder.clone()),
            config,
            recv: State::Idle,
            send: State::Idle,
            exchange: None,
            expect: Continue::None,
            drained: 0,
            close: None,
            response: None,
            previous: None,
            error: None,
            eof: false,
        }
    }

    /// Decodes the next request event from `buf`, splitting off the bytes
    /// it uses. `Ok(None)`: read more bytes, or (after a request's `End`)
    /// send its response first.
    ///
    /// A client that sent `Expect: 100-continue` is sent `100 Continue`
    /// automatically when the application polls for the body before
    /// answering; answer with a final response first to refuse the body.
    /// After an error, queue [`send_error_response`](Self::send_error_response)
    /// and close.
    pub fn poll_event(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Request<()>>>, Error> {
        loop {
            if let Some(err) = &self.error {
                return Err(err.clone());
            }
            match self.recv {
                State::Idle | State::Head | State::Body => {}
                // A request without a body is complete with its head, but
                // its `End` is still to be returned.
                State::Done if self.decoder.is_body_complete() => {}
                _ => return Ok(None),
            }
            if self.recv == State::Body && self.expect == Continue::Waiting {
                self.send_continue_inner();
            }
            // After an early response the rest of the request is read and
            // discarded, bounded by the bytes it takes off the wire (chunk
            // framing included), not by its data alone.
            let draining = self.send == State::Done;
            let before = buf.len();
            let decoded = if self.eof {
                self.decoder.decode_eof(buf)
            } else {
                self.decoder.decode(buf)
            };
            if draining {
                self.drained += (before - buf.len()) as u64;
                let ended = matches!(decoded, Ok(Some(Event::End(_))));
                if self.drained > self.config.max_drain_bytes && decoded.is_ok() && !ended {
                    // The body did not end in time: close (cycle moves Body
                    // to MustClose through the table).
                    self.close = Some(CloseReason::UnreadBody);
                    self.cycle();
                    return Ok(None);
                }
            }
            // The event is looked at in place and returned as it is: moving
            // it out and wrapping it again would copy a whole request.
            let event = match &decoded {
                Ok(Some(event)) => event,
                Ok(None) => {
                    if self.decoder.is_closed() && self.recv == State::Idle {
                        // The peer closed between requests.
                        self.recv.go(Input::Close);
                        self.send.go(Input::Close);
                    } else if self.recv == State::Idle && !buf.is_empty() {
                        self.recv.go(Input::HeadDue);
                    }
                    return Ok(None);
                }
                Err(err) => {
                    self.recv.go(Input::Fail);
                    self.error = Some(err.clone());
                    return decoded;
                }
            };
            match event {
                Event::Head { head, body } => {
                    // An upgrade is offered by `Upgrade` with `Connection:
                    // upgrade`; most requests have no Connection field.
                    let upgrade = self.decoder.fields_seen().connection
                        && head.headers().contains_key(UPGRADE)
                        && crate::framing::connection_has(head.headers(), b"upgrade");
                    self.exchange = Some(Exchange {
                        kind: RequestKind::of(head.method()),
                        version: head.version(),
                        verdict: self.decoder.keep_alive(),
                        upgrade,
                    });
                    let waits = head.version() == Version::HTTP_11
                        && !body.is_empty()
                        && head
                            .headers()
                            .get(EXPECT)
                            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
                    self.expect = if waits {
                        Continue::Waiting
                    } else {
                        Continue::None
                    };
                    let input = if body.is_empty() {
                        Input::HeadOnly
                    } else {
                        Input::HeadWithBody
                    };
                    self.recv.go(input);
                    self.send.go(Input::HeadDue);
                }
                Event::Data(_) | Event::Trailers(_) if draining => continue,
                Event::End(_) => {
                    self.recv.try_go(Input::BodyEnd);
                    self.cycle();
                    if draining {
                        continue;
                    }
                }
                _ => {}
            }
            return decoded;
        }
    }

    /// Tells the connection that the peer closed its side: the bytes in the
    /// buffer are all there will be. Keep calling
    /// [`poll_event`](Self::poll_event) until it returns `Ok(None)`.
    pub fn recv_eof(&mut self) {
        self.eof = true;
    }

    /// `true` when the client sent `Expect: 100-continue` and is waiting for
    /// `100 Continue` (or a final response) before sending the body.
    pub fn is_waiting_for_continue(&self) -> bool {
        self.expect == Continue::Waiting
    }

    /// Queues `100 Continue` for a client that waits for it. Does nothing
    /// otherwise (in particular, never to an HTTP/1.0 client).
    pub fn send_continue(&mut self) {
        if self.expect == Continue::Waiting {
            self.send_continue_inner();
        }
    }

    fn send_continue_inner(&mut self) {
        let mut res = Response::new(());
        *res.status_mut() = StatusCode::CONTINUE;
        if self.encoder.send_head(res, self.context()).is_ok() {
            self.expect = Continue::Sent;
        }
    }

    /// Queues a complete response (head and body) to the current request.
    /// `Content-Length` is set from the body; a response to HEAD keeps it
    /// and sends no body bytes.
    pub fn send_response<B: Into<Bytes>>(&mut self, res: Response<B>) -> Result<(), UsageError> {
        let status = res.status();
        let ctx = self.prepare(status, true)?;
        let mark = self.encoder.output().mark();
        self.encoder.send_response(res, ctx)?;
        self.after_head(status, true, mark);
        Ok(())
    }

    /// Queues a response head; the body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish). Returns
    /// the framing chosen for the body.
    pub fn send_head(&mut self, res: Response<()>) -> Result<BodyKind, UsageError> {
        let status = res.status();
        let ctx = self.prepare(status, false)?;
        let mark = self.encoder.output().mark();
        let kind = self.encoder.send_head(res, ctx)?;
        self.after_head(status, self.encoder.is_finished(), mark);
        Ok(kind)
    }

    /// Queues body bytes of the response being sent.
    pub fn send_data(&mut self, data: impl Into<Bytes>) -> Result<(), UsageError> {
        if self.send != State::Body {
            return Err(UsageError::WrongState);
        }
        self.encoder.send_data(data)
    }

    /// Ends the response being sent, with trailers if it is chunked.
    pub fn finish(&mut self, trailers: Option<HeaderMap>) -> Result<(), UsageError> {
        if self.send != State::Body {
            return Err(UsageError::WrongState);
        }
        self.encoder.finish(trailers)?;
        self.send.go(Input::BodyEnd);
        self.cycle();
        Ok(())
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
        let started = !matches!(self.send, State::Idle | State::Head | State::Error)
            || self.encoder.body_kind().is_some();
        if started {
            match self.response {
                Some(mark) if self.encoder.output().truncate(mark) => {
                    self.encoder.abandon();
                    self.send.go(Input::Withdraw);
                    self.response = None;
                }
                _ => return Err(UsageError::WrongState),
            }
        }
        let status = error.status();
        let mut res = Response::new(Bytes::from(format!("{error}\n")));
        *res.status_mut() = status;
        res.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        res.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        let mut ctx = self
            .exchange
            .map_or_else(ResponseContext::default, |ex| ResponseContext {
                request: ex.kind,
                peer_version: ex.version,
                keep_alive: KeepAlive::Close(CloseReason::ProtocolError),
            });
        ctx.keep_alive = KeepAlive::Close(CloseReason::ProtocolError);
        self.encoder.send_response(res, ctx)?;
        self.send.try_go(Input::MustClose);
        self.recv.try_go(Input::Fail);
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
    /// served.
    pub fn close_after_response(&mut self) {
        self.close.get_or_insert(CloseReason::LocalClose);
        let between = self.send == State::Idle;
        let mark = if between {
            self.previous
        } else {
            self.response
        };
        if let Some(mark) = mark {
            if self.encoder.keep_alive().is_reusable() && self.amend_close(mark) && between {
                // The exchange before now ends the connection.
                if self.recv.try_go(Input::MustClose) {
                    self.decoder.close();
                    self.send.go(Input::MustClose);
                }
            }
        }
        if self.send == State::Done {
            self.cycle();
        }
    }

    /// Adds `Connection: close` to the head queued at `mark`, if none of it
    /// has been drained; returns whether it did. The `connection:
    /// keep-alive` the encoder gives an HTTP/1.0 client is replaced.
    fn amend_close(&mut self, mark: Mark) -> bool {
        const KEEP_ALIVE: &[u8] = b"connection: keep-alive\r\n";
        let out = self.encoder.output();
        // The head was written here, in one piece: it ends at the first
        // empty line after its start, and the encoder's own `Connection`
        // field is its last.
        let head = out.chunk_at(mark);
        let Some(end) = memchr::memmem::find(head, b"\r\n\r\n").map(|e| e + 2) else {
            return false;
        };
        let (at, remove) = if head[..end].ends_with(KEEP_ALIVE) {
            (end - KEEP_ALIVE.len(), KEEP_ALIVE.len())
        } else {
            (end, 0)
        };
        out.splice(mark.offset(at as u64), remove, b"connection: close\r\n")
    }

    /// The queued output: drain it with a vectored write, then `advance`.
    pub fn output(&mut self) -> &mut Segments {
        self.encoder.output()
    }

    /// The verdict for the current exchange: the request's, the response's
    /// and any local decision. Final once both messages are complete.
    pub fn keep_alive(&self) -> KeepAlive {
        if self.error.is_some() {
            // The request's verdict was decided before its body failed.
            return KeepAlive::Close(CloseReason::ProtocolError);
        }
        let mut verdict = match self.exchange {
            Some(ex) => ex.verdict,
            None => self.decoder.keep_alive(),
        };
        if let Some(reason) = self.close {
            verdict = verdict.and(KeepAlive::Close(reason));
        }
        verdict.and(self.encoder.keep_alive())
    }

    /// The state of the requests direction.
    pub fn recv_state(&self) -> State {
        self.recv
    }

    /// The state of the responses direction.
    pub fn send_state(&self) -> State {
        self.send
    }

    /// `true` when the connection must be closed once the output is drained
    /// (the verdict was to close, the peer closed, or an error occurred).
    pub fn is_closed(&self) -> bool {
        let over = |s: State| matches!(s, State::MustClose | State::Closed);
        self.recv == State::Error
            || self.send == State::Error
            || (over(self.recv) && over(self.send))
    }

    /// `true` once a 101 or a 2xx to CONNECT was sent: once the output is
    /// drained, the socket and the bytes left in the read buffer belong to
    /// the new protocol.
    pub fn is_switched(&self) -> bool {
        self.send == State::Switched
    }

    /// Checks that a response with `status` may be sent now, and builds the
    /// context the encoder frames it by.
    /// `complete`: the response's body is given with its head, so the
    /// response ends with this call.
    fn prepare(
        &mut self,
        status: StatusCode,
        complete: bool,
    ) -> Result<ResponseContext, UsageError> {
        if self.send != State::Head {
            return Err(UsageError::WrongState);
        }
        let ex = self.exchange.ok_or(UsageError::WrongState)?;
        let class = response_class(ex.kind, status);
        if status.is_informational() && ex.version == Version::HTTP_10 {
            // RFC 9110 section 15.2: no 1xx to an HTTP/1.0 client.
            return Err(UsageError::InterimToHttp10);
        }
        if class == ResponseClass::Switch {
            if status == StatusCode::SWITCHING_PROTOCOLS && !ex.upgrade {
                return Err(UsageError::InvalidHead);
            }
            if self.recv != State::Done {
                // The request (and its body) is read before switching.
                return Err(UsageError::WrongState);
            }
        }
        if class != ResponseClass::Interim {
            if self.expect == Continue::Waiting {
                // The client held its body back and was refused.
                self.close.get_or_insert(CloseReason::RejectedContinue);
                self.expect = Continue::None;
            } else if complete && self.unread_past_drain_bound() {
                // The response ends now and the body it leaves unread is
                // declared too long to drain: closing is already known.
                // A streamed response decides at its end instead, since
                // the application may still read the whole body.
                self.close.get_or_insert(CloseReason::UnreadBody);
            }
        }
        Ok(self.context_for(ex))
    }

    fn context(&self) -> ResponseContext {
        self.exchange
            .map_or_else(ResponseContext::default, |ex| self.context_for(ex))
    }

    fn context_for(&self, ex: Exchange) -> ResponseContext {
        let mut verdict = ex.verdict;
        if let Some(reason) = self.close {
            verdict = verdict.and(KeepAlive::Close(reason));
        }
        ResponseContext {
            request: ex.kind,
            peer_version: ex.version,
            keep_alive: verdict,
        }
    }

    /// `true` while the request body is being received and the bytes its
    /// `Content-Length` still declares exceed what may be drained.
    fn unread_past_drain_bound(&self) -> bool {
        self.recv == State::Body
            && self
                .decoder
                .remaining_body_len()
                .is_some_and(|n| n > self.config.max_drain_bytes)
    }

    fn after_head(&mut self, status: StatusCode, finished: bool, mark: Mark) {
        // The response's field map serves the next request's head.
        if let Some(map) = self.encoder.reclaim_fields() {
            self.decoder.recycle_fields(map);
        }
        let kind = self.exchange.map_or(RequestKind::Other, |ex| ex.kind);
        let class = response_class(kind, status);
        if class != ResponseClass::Interim {
            self.response = Some(mark);
        }
        match class {
            ResponseClass::Interim => {
                self.send.go(Input::Interim);
                if status == StatusCode::CONTINUE {
                    self.expect = Continue::Sent;
                }
            }
            ResponseClass::Switch => {
                self.send.go(Input::Switch);
                self.recv.go(Input::Switch);
                self.decoder.close();
            }
            ResponseClass::Final if finished => {
                self.send.go(Input::HeadOnly);
                self.cycle();
            }
            ResponseClass::Final => self.send.go(Input::HeadWithBody),
        }
    }

    /// Starts the next exchange once both directions are done, or closes.
    /// A response completed before its request leaves the request body to
    /// be drained by `poll_event`, unless the verdict is already to close.
    fn cycle(&mut self) {
        if self.send != State::Done {
            return;
        }
        if self.unread_past_drain_bound() {
            // The response is complete; what the request still declares
            // is more than may be drained.
            self.close.get_or_insert(CloseReason::UnreadBody);
        }
        match (self.recv, self.keep_alive()) {
            (State::Done, KeepAlive::Reusable) => {
                self.recv.go(Input::Reuse);
                self.send.go(Input::Reuse);
                self.exchange = None;
                self.expect = Continue::None;
                self.drained = 0;
                self.previous = self.response.take();
            }
            (_, KeepAlive::Close(_)) if self.recv.try_go(Input::MustClose) => {
                self.decoder.close();
                self.send.go(Input::MustClose);
            }
            // Early response: poll_event drains the rest of the request.
            _ => {}
        }
    }
}
