//! The client session: a [`ClientConnection`](crate::ClientConnection) with its read buffer, timers
//! and pipelining.

use std::time::Instant;

use bytes::Bytes;
use http::{Response, StatusCode};

use super::core::{Phase, SessionOf};
use super::timer::Waiting;
use super::{InterimResponses, Io, Session, SessionError, Step};
use crate::conn::State;
use crate::decode::{Event, Progress};
use crate::error::ErrorKind;
use crate::role::Client;

/// The client side of a connection, with every decision above the
/// protocol machine made: the session a client driver runs.
///
/// Requests are queued with [`send_request`](crate::Sender::send_request) (or
/// [`send_head`](crate::Sender::send_head), [`send_data`](crate::Sender::send_data) and
/// [`finish`](crate::Sender::finish)); several may be queued before their responses
/// are read (pipelining). Responses are read in order with
/// [`next_response`](Self::next_response), which hands out interim (1xx)
/// heads too, then [`read_data`](Self::read_data) or
/// [`read_body`](Self::read_body); [`next_full_response`](Self::next_full_response)
/// does both and keeps interim heads and trailers in the response's
/// extensions ([`InterimResponses`], [`TrailerFields`](super::TrailerFields)). Queued requests
/// are written when the session next waits for the server.
///
/// Time: the response head must arrive within `Timeouts::head` of the
/// session starting to wait for it, each body read within
/// `Timeouts::body`; a connection with no request in flight is closed
/// after `Timeouts::idle` (the idle timeout of a connection pool), which a
/// pool notices through [`poll_timeout`](Self::poll_timeout) and
/// [`handle_timeout`](Self::handle_timeout).
pub type ClientSession = SessionOf<Client>;

impl ClientSession {
    // ---- The application's side --------------------------------------

    /// Backpressure for a streaming sender: [`Io::Write`] while more than
    /// `Config::flush_threshold` bytes are queued.
    ///
    /// # Errors
    ///
    /// [`SessionError::Peer`] with [`ErrorKind::WriteTimeout`] when the
    /// server stopped reading and the write timeout ended the wait, or
    /// with the server's protocol error when the answer it sent during
    /// the upload is malformed: the session is closed.
    pub fn poll_flush(&mut self, now: Instant) -> Result<Step<()>, SessionError> {
        self.look_ahead();
        self.flushed(now, self.flush_threshold)
    }

    /// Writes every queued request now, for a caller that wants them
    /// written before it waits for anything.
    ///
    /// # Errors
    ///
    /// As [`poll_flush`](Self::poll_flush).
    pub fn poll_write_all(&mut self, now: Instant) -> Result<Step<()>, SessionError> {
        self.look_ahead();
        self.flushed(now, 0)
    }

    /// The next response head: an interim (1xx other than 101) one, after
    /// which the final response to the same request follows, or a final
    /// one, whose body [`read_data`](Self::read_data) reads. What is left
    /// unread of the previous response's body is skipped. `Ready(None)`:
    /// no request is waiting for its response.
    ///
    /// # Errors
    ///
    /// [`SessionError::Peer`] for a response the server got wrong, one
    /// that did not come in time, or a connection closed before it came.
    pub fn next_response(
        &mut self,
        now: Instant,
    ) -> Result<Step<Option<Response<()>>>, SessionError> {
        self.failure()?;
        if self.phase != Phase::Open {
            return Ok(Step::Ready(None));
        }
        if let Some(held) = self.held.as_mut().filter(|held| !held.ahead.is_empty()) {
            let head = held.ahead.remove(0);
            self.head_since = None;
            if !is_interim(&head) {
                self.head_handed_out(false);
            }
            return Ok(Step::Ready(Some(head)));
        }
        loop {
            let due = self.conn.requests_in_flight() > 0;
            if !due && self.body_done {
                return Ok(Step::Ready(None));
            }
            match self.conn.poll(&mut self.read.buf) {
                // The head is built here, in the value returned.
                Ok(Progress::Head(bytes, body)) => {
                    let mut head = Response::default();
                    if let Err(err) = self.conn.take_head(bytes, body, &mut head, false) {
                        return Err(self.fail(err).into());
                    }
                    self.head_since = None;
                    if body.is_some() {
                        // A final response, not an interim one.
                        self.head_handed_out(false);
                    }
                    return Ok(Step::Ready(Some(head)));
                }
                Ok(Progress::End(_)) => {
                    self.body_done = true;
                    self.body_ended(now);
                }
                Ok(Progress::NeedMore) => {
                    // Nothing due with the body read returned at the top:
                    // no event came since.
                    if self.conn.is_switched() {
                        return Ok(Step::Ready(None));
                    }
                    if self.conn.peer_closed() || self.conn.is_closed() {
                        return Err(self.fail(ErrorKind::UnexpectedEof.into()).into());
                    }
                    return Ok(Step::Io(self.wait_for_head(now)));
                }
                Ok(_) => {}
                Err(err) => return Err(self.fail(err).into()),
            }
        }
    }

    /// The next final response with its whole body. The interim responses
    /// before it are in its extensions as [`InterimResponses`], its
    /// trailers as [`TrailerFields`](super::TrailerFields) (and with
    /// [`Config::wire_view`](crate::Config::wire_view) on their wire view as [`WireTrailers`](crate::wire::WireTrailers)).
    /// `Ready(None)`: no request is waiting
    /// for its response.
    ///
    /// # Errors
    ///
    /// As [`next_response`](Self::next_response) and
    /// [`read_data`](Self::read_data).
    pub fn next_full_response(
        &mut self,
        now: Instant,
    ) -> Result<Step<Option<Response<Bytes>>>, SessionError> {
        while self.head.is_none() {
            match ready!(self.next_response(now)?) {
                Some(head) if is_interim(&head) => {
                    self.held
                        .get_or_insert_with(Box::default)
                        .interim
                        .push(head);
                }
                Some(head) => self.head = Some(Box::new(head)),
                None => return Ok(Step::Ready(None)),
            }
        }
        let body = ready!(self.read_body(now)?);
        let Some(head) = self.head.take() else {
            return Ok(Step::Ready(None));
        };
        let mut res = head.map(|()| body);
        if let Some(held) = self.held.as_mut().filter(|held| !held.interim.is_empty()) {
            let interim = std::mem::take(&mut held.interim);
            res.extensions_mut().insert(InterimResponses(interim));
        }
        self.trailers_into(res.extensions_mut());
        Ok(Step::Ready(Some(res)))
    }

    /// Closes the connection: the driver closes the socket. Requests queued
    /// and not written are dropped; a client has nothing to linger for.
    ///
    /// # Errors
    ///
    /// None: the `Result` is the shape every call that may need I/O has,
    /// so that one driver call helper serves them all.
    pub fn close(&mut self, _now: Instant) -> Result<Step<()>, SessionError> {
        self.waiting = Waiting::No;
        Ok(
            if std::mem::replace(&mut self.phase, Phase::Closed) == Phase::Closed {
                Step::Ready(())
            } else {
                Step::Io(Io::Close)
            },
        )
    }

    // ---- Queries -----------------------------------------------------

    /// `true` while the connection may carry further requests: it is
    /// open, the server has not closed it nor sent bytes no request asked
    /// for, nothing said it must close, and no shutdown began. What a pool
    /// asks of a connection at rest; while a request is still being sent,
    /// or one that offers a protocol switch waits for its answer, a new
    /// one is refused until that is over (`send_request` says
    /// [`UsageError::WrongState`](crate::UsageError::WrongState)) even
    /// though this is `true`.
    pub fn is_reusable(&self) -> bool {
        self.phase == Phase::Open
            && !self.shutdown
            && !self.conn.peer_closed()
            && !self.conn.is_closed()
            && self.conn.keep_alive().is_reusable()
    }

    /// [`is_reusable`](Self::is_reusable) once the timeouts due by `now`
    /// (the idle timeout of a connection sitting in a pool) were applied:
    /// what a pool asks before it hands out a connection.
    pub fn is_reusable_at(&mut self, now: Instant) -> bool {
        self.handle_timeout(now);
        self.is_reusable()
    }

    /// `true` once the connection is over for HTTP (closed, failed, or
    /// its idle time ran out): the same meaning as
    /// [`ClientConnection::is_closed`](crate::ClientConnection::is_closed).
    /// Never after a protocol switch: see [`is_switched`](Self::is_switched).
    pub fn is_closed(&self) -> bool {
        self.phase != Phase::Open || self.conn.is_closed()
    }

    // ---- Inside ------------------------------------------------------

    /// `true` while a response head is still to be handed out for a
    /// request sent: one not read yet, or one read ahead and held. The
    /// response whose head was handed out and whose body is still being
    /// read does not count: the next call skips the rest of it.
    #[cfg(any(feature = "blocking", feature = "tokio"))]
    pub(crate) fn heads_due(&self) -> bool {
        <Client as crate::conn::ConnRole>::unanswered(&self.conn) > 0
            || (self.held.as_ref()).is_some_and(|held| !held.ahead.is_empty())
    }

    /// Reads the heads of the answer the server sent while the request is
    /// still being sent (a driver that reads while it writes brought them
    /// in), so that a final response during the upload is known at once: a
    /// refusal (not 2xx) withdraws the request, whose queued rest is dropped, and the
    /// sender's `poll_flush` no longer waits. Only between responses
    /// (the previous body read to its end): what is decoded here is heads
    /// alone, which `next_response` hands out first.
    fn look_ahead(&mut self) {
        let held = self.held.as_deref();
        if self.phase != Phase::Open
            || !self.body_done
            || self.read.buf.is_empty()
            || self.conn.send_state() != State::Body
            || held
                .and_then(|held| held.ahead.last())
                .is_some_and(|head| !is_interim(head))
        {
            return;
        }
        loop {
            match self.conn.poll_event(&mut self.read.buf) {
                Ok(Some(Event::Interim(head))) => {
                    self.held.get_or_insert_with(Box::default).ahead.push(head);
                }
                Ok(Some(Event::Head { head, .. })) => {
                    self.held.get_or_insert_with(Box::default).ahead.push(head);
                    break;
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(err) => {
                    self.fail_later(err);
                    break;
                }
            }
        }
        if self.conn.withdrawn() {
            self.drop_output();
        }
    }

    /// Queued requests are written before the session waits for an answer.
    fn wait_for_head(&mut self, now: Instant) -> Io {
        let pending = self.output_len() > 0;
        let conn = &self.conn;
        if !pending && conn.recv_state() != State::Body && conn.send_state() != State::Body {
            // Not while skipping the rest of the previous body: that is
            // the body's time, and the head's starts after it. Nor while
            // the request's body is still being sent: a server may read
            // all of it before it answers, so the head's time starts once
            // the request is out (until then each wait has the head
            // timeout from its own start).
            self.head_since.get_or_insert(now);
        }
        self.wait_for_input(now)
    }
}

/// `true` for a 1xx response after which the final one follows.
fn is_interim(head: &Response<()>) -> bool {
    head.status().is_informational() && head.status() != StatusCode::SWITCHING_PROTOCOLS
}
