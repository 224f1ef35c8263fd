//! The client side: requests out, responses in.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use http::header::{EXPECT, HeaderMap, UPGRADE};
use http::{Response, StatusCode, request};

use super::Config;
use super::state::{Input, State};
use crate::decode::{Event, ResponseDecoder};
use crate::encode::role::sealed;
use crate::encode::{IntoRequest, IntoRequestHead, RequestEncoder};
use crate::error::{Error, ErrorKind, UsageError};
use crate::framing::{BodyKind, RequestKind};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::segments::Segments;

/// What the client remembers of a request whose response is due.
#[derive(Debug, Clone, Copy)]
struct Sent {
    kind: RequestKind,
    /// It offered a protocol switch (`Upgrade` with `Connection: upgrade`).
    upgrade: bool,
}

impl Sent {
    fn of(req: &request::Parts) -> Self {
        Sent {
            kind: RequestKind::of(&req.method),
            upgrade: req.headers.contains_key(UPGRADE)
                && crate::framing::connection_has(&req.headers, b"upgrade"),
        }
    }
}

/// The client side of an HTTP/1.1 connection.
///
/// Sends requests with a [`RequestEncoder`] and decodes responses with a
/// [`ResponseDecoder`] that it tells the method of every request sent, so a
/// response to HEAD is read without a body and a 2xx to CONNECT switches to
/// a tunnel without the caller saying so. Several requests may be sent
/// before their responses are read (pipelining); each response is matched
/// to its request in order. Once a response is complete and the verdict
/// allows it, the next one is expected at once: nothing has to be called to
/// recycle the connection.
///
/// If a final response other than 2xx arrives while a request body is
/// still being sent, the client stops sending: later
/// [`send_data`](Self::send_data) and [`finish`](Self::finish) calls for
/// that request queue nothing, and the connection closes after the
/// response (RFC 9112 section 9.5). A 2xx that arrives early is a server
/// answering as it reads (an echo, a streamed upload): the body is sent to
/// its end and the connection stays reusable.
///
/// ```
/// use bytes::{Buf, BytesMut};
/// use h1proto::{ClientConnection, Config, Event};
///
/// let mut conn = ClientConnection::new(Config::default());
/// conn.send_request(http::Request::head("http://example.com/")).unwrap();
/// conn.send_request(http::Request::get("/next").header("host", "example.com")).unwrap();
/// let output = conn.output();
/// let written = output.remaining(); // write_vectored the segments here
/// output.advance(written);
///
/// // The two responses, as read from the socket:
/// let mut buf = BytesMut::from(
///     &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"[..],
/// );
/// let mut events = Vec::new();
/// while let Some(event) = conn.poll_event(&mut buf)? {
///     events.push(event);
/// }
/// // Head, End (the answer to HEAD has no body), Head, Data, End.
/// assert_eq!(events.len(), 5);
/// assert!(matches!(events[3], Event::Data(ref d) if d == "hello"));
/// # Ok::<(), h1proto::Error>(())
/// ```
#[derive(Debug)]
pub struct ClientConnection {
    decoder: ResponseDecoder,
    encoder: RequestEncoder,
    send: State,
    recv: State,
    /// Requests sent whose final response is not complete, oldest first.
    in_flight: VecDeque<Sent>,
    waiting_continue: bool,
    /// The request being sent was answered early: its rest is dropped.
    send_stopped: bool,
    close: Option<CloseReason>,
    error: Option<Error>,
    eof: bool,
}

impl ClientConnection {
    /// A connection with the given settings.
    pub fn new(config: Config) -> Self {
        ClientConnection {
            decoder: ResponseDecoder::new(config.limits.clone()),
            encoder: RequestEncoder::new(config.encoder.clone()),
            send: State::Idle,
            recv: State::Idle,
            in_flight: VecDeque::new(),
            waiting_continue: false,
            send_stopped: false,
            close: None,
            error: None,
            eof: false,
        }
    }

    /// Queues a complete request (head and body): a `Request<B>` with any
    /// `B: Into<Bytes>`, or for a request without a body an `http` builder
    /// or `Parts` ([`IntoRequest`]).
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] when no request may be sent now; the
    /// errors of [`RequestEncoder::send_request`]. Nothing is queued.
    pub fn send_request(&mut self, req: impl IntoRequest) -> Result<(), UsageError> {
        self.ready_to_send()?;
        let (parts, body) = sealed::IntoRequest::into_message(req)?;
        let sent = Sent::of(&parts);
        let method = parts.method.clone();
        self.encoder.send_parts(parts, body)?;
        self.sent_head(sent, &method, true, false);
        Ok(())
    }

    /// Queues a request head; the body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish). With
    /// `Expect: 100-continue`, [`is_waiting_for_continue`](Self::is_waiting_for_continue)
    /// says whether the server has answered yet; how long to wait before
    /// sending the body anyway is the caller's decision. `req` is a
    /// `Request<()>`, an `http` builder or `Parts` ([`IntoRequestHead`]).
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] when no request may be sent now; the
    /// errors of [`RequestEncoder::send_head`]. Nothing is queued.
    pub fn send_head(&mut self, req: impl IntoRequestHead) -> Result<BodyKind, UsageError> {
        self.ready_to_send()?;
        let parts = sealed::IntoRequestHead::into_head(req)?;
        let sent = Sent::of(&parts);
        let method = parts.method.clone();
        let expect = parts
            .headers
            .get(EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        let body = self.encoder.send_head(parts)?;
        let finished = self.encoder.is_finished();
        self.sent_head(sent, &method, finished, expect && !finished);
        Ok(body)
    }

    /// Queues body bytes of the request being sent.
    pub fn send_data(&mut self, data: impl Into<Bytes>) -> Result<(), UsageError> {
        if self.send_stopped {
            return Ok(());
        }
        if self.send != State::Body {
            return Err(UsageError::WrongState);
        }
        self.encoder.send_data(data)
    }

    /// Ends the request being sent, with trailers if it is chunked.
    pub fn finish(&mut self, trailers: Option<HeaderMap>) -> Result<(), UsageError> {
        if self.send_stopped {
            return Ok(());
        }
        if self.send != State::Body {
            return Err(UsageError::WrongState);
        }
        self.encoder.finish(trailers)?;
        self.send.go(Input::BodyEnd);
        self.cycle_send();
        Ok(())
    }

    /// Decodes the next response event from `buf`, splitting off the bytes
    /// it uses. `Ok(None)`: read more bytes (or nothing is expected).
    pub fn poll_event(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Response<()>>>, Error> {
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        // A response without a body is complete with its head (`Done`), but
        // its `End` is still to be returned.
        let end_due = self.recv == State::Done && self.decoder.is_body_complete();
        if !matches!(self.recv, State::Head | State::Body | State::Idle) && !end_due {
            return Ok(None);
        }
        if self.recv == State::Idle && self.in_flight.is_empty() && !buf.is_empty() {
            // HTTP/1.1 has no unsolicited responses: one decoded anyway would
            // answer the next request sent (response queue poisoning).
            return Err(self.fail(ErrorKind::UnsolicitedResponse.into()));
        }
        let decoded = if self.eof {
            self.decoder.decode_eof(buf)
        } else {
            self.decoder.decode(buf)
        };
        // The event is looked at in place and returned as it is: moving it
        // out and wrapping it again would copy a whole response.
        let event = match &decoded {
            Ok(Some(event)) => event,
            Ok(None) => {
                if self.eof && self.decoder.is_closed() && self.recv == State::Idle {
                    self.recv.go(Input::Close);
                    self.send.try_go(Input::Close);
                }
                return Ok(None);
            }
            Err(err) => {
                let err = err.clone();
                return Err(self.fail(err));
            }
        };
        match event {
            Event::Interim(res) if res.status() == StatusCode::CONTINUE => {
                self.waiting_continue = false;
            }
            Event::Head { head, body } => {
                if head.status() == StatusCode::SWITCHING_PROTOCOLS
                    && !self.in_flight.front().is_some_and(|s| s.upgrade)
                {
                    // RFC 9110 section 7.8: no switch the client did not offer.
                    return Err(self.fail(ErrorKind::UnexpectedSwitch.into()));
                }
                self.waiting_continue = false;
                if self.send == State::Body && !head.status().is_success() {
                    // A refusal (or a redirect) before the request was
                    // sent: the server does not want the rest, so stop
                    // (RFC 9112 section 9.5). A 2xx means it is taking the
                    // body as it answers (an echo, a streamed upload), so
                    // sending goes on.
                    self.send_stopped = true;
                    self.close.get_or_insert(CloseReason::EarlyResponse);
                    self.send.go(Input::MustClose);
                }
                // A 101 or a 2xx to CONNECT is decoded with an empty body.
                let input = if body.is_empty() {
                    Input::HeadOnly
                } else {
                    Input::HeadWithBody
                };
                self.recv.go(input);
            }
            Event::End(verdict) => {
                self.in_flight.pop_front();
                self.recv.try_go(Input::BodyEnd);
                // After the answer to the last request sent, that request's
                // own `Connection: close` counts too, whatever the server said.
                let verdict = if self.in_flight.is_empty() {
                    verdict.and(self.encoder.keep_alive())
                } else {
                    *verdict
                };
                match verdict {
                    KeepAlive::Close(CloseReason::Upgraded) => {
                        self.recv.go(Input::Switch);
                        self.send.go(Input::Switch);
                    }
                    KeepAlive::Close(_) => {
                        self.recv.go(Input::MustClose);
                        self.send.try_go(Input::MustClose);
                    }
                    KeepAlive::Reusable if self.close.is_some() => {
                        self.recv.go(Input::MustClose);
                        self.send.try_go(Input::MustClose);
                    }
                    KeepAlive::Reusable => {
                        self.recv.go(Input::Reuse);
                        if !self.in_flight.is_empty() {
                            self.recv.go(Input::HeadDue);
                        } else if self.send == State::Done {
                            // The CONNECT held the send side back for a
                            // tunnel; it was refused, so requests may follow.
                            self.send.go(Input::Reuse);
                        }
                    }
                }
            }
            _ => {}
        }
        decoded
    }

    /// Tells the connection that the server closed its side: the bytes in
    /// the buffer are all there will be. Keep calling
    /// [`poll_event`](Self::poll_event) until it returns `Ok(None)`.
    pub fn recv_eof(&mut self) {
        self.eof = true;
    }

    /// `true` while a request sent with `Expect: 100-continue` has had
    /// neither `100 Continue` nor a final response.
    pub fn is_waiting_for_continue(&self) -> bool {
        self.waiting_continue
    }

    /// Requests sent whose final response has not been completely decoded.
    pub fn requests_in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The queued output: drain it with a vectored write, then `advance`.
    pub fn output(&mut self) -> &mut Segments {
        self.encoder.output()
    }

    /// The verdict on the connection so far: the requests', the responses'
    /// and any early response.
    pub fn keep_alive(&self) -> KeepAlive {
        let mut verdict = self.encoder.keep_alive().and(self.decoder.keep_alive());
        if let Some(reason) = self.close {
            verdict = verdict.and(KeepAlive::Close(reason));
        }
        verdict
    }

    /// The state of the requests direction.
    pub fn send_state(&self) -> State {
        self.send
    }

    /// The state of the responses direction.
    pub fn recv_state(&self) -> State {
        self.recv
    }

    /// `true` when no further request can be sent or response read: close
    /// the socket once the output is drained.
    pub fn is_closed(&self) -> bool {
        let over = |s: State| matches!(s, State::MustClose | State::Closed | State::Error);
        self.recv == State::Error || (over(self.recv) && over(self.send))
    }

    /// `true` once a 101 or a 2xx answer to CONNECT was decoded: the bytes
    /// left in the read buffer belong to the new protocol.
    pub fn is_switched(&self) -> bool {
        self.recv == State::Switched
    }

    fn ready_to_send(&self) -> Result<(), UsageError> {
        if self.send == State::Idle {
            Ok(())
        } else {
            Err(UsageError::WrongState)
        }
    }

    /// A protocol error: nothing more is sent or decoded.
    fn fail(&mut self, err: Error) -> Error {
        self.recv.try_go(Input::Fail);
        // No request may follow on a connection that must close.
        self.send.try_go(Input::Fail);
        self.error = Some(err.clone());
        err
    }

    fn sent_head(&mut self, sent: Sent, method: &http::Method, finished: bool, expect: bool) {
        // The request's field map serves the response's head.
        if let Some(map) = self.encoder.reclaim_fields() {
            self.decoder.recycle_fields(map);
        }
        self.decoder.expect_response_to(method);
        self.in_flight.push_back(sent);
        self.send_stopped = false;
        self.waiting_continue = expect;
        if self.recv == State::Idle {
            self.recv.go(Input::HeadDue);
        }
        self.send.go(if finished {
            Input::HeadOnly
        } else {
            Input::HeadWithBody
        });
        self.cycle_send();
    }

    /// After a request is complete: another may follow at once
    /// (pipelining) unless the request said the connection closes or opened
    /// a tunnel.
    fn cycle_send(&mut self) {
        if self.send != State::Done {
            return;
        }
        let tunnel = self
            .in_flight
            .back()
            .is_some_and(|s| s.kind == RequestKind::Connect);
        if !tunnel && self.encoder.keep_alive().is_reusable() {
            self.send.go(Input::Reuse);
        }
    }
}
