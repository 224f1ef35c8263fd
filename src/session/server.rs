//! The server session: a [`ServerConnection`](crate::ServerConnection) with its read buffer, timers
//! and closing policy.

use std::time::Instant;

use bytes::Bytes;
use http::Request;

use super::core::{Phase, SessionOf};
use super::timer::Waiting;
use super::{Io, SessionError, Step};
use crate::conn::State;
use crate::decode::Progress;
use crate::error::UsageError;
use crate::role::Server;

/// The server side of a connection, with every decision above the
/// protocol machine made: the session a driver runs.
///
/// The application asks for each request with
/// [`next_request`](Self::next_request), reads its body with
/// [`read_data`](Self::read_data) (or [`read_body`](Self::read_body)), and
/// answers with [`send_response`](crate::Sender::send_response) or
/// [`send_head`](crate::Sender::send_head), [`send_data`](crate::Sender::send_data) and
/// [`finish`](crate::Sender::finish). When the connection is over,
/// [`close`](Self::close) writes what is left and closes, lingering when
/// the peer may still be sending. Every call that may need I/O returns a
/// [`Step`]; see the [crate documentation](crate#sessions) for the loop
/// a driver runs around it, and the example below for the shortest such
/// driver.
///
/// ```
/// use std::time::Instant;
/// use bytes::Buf;
/// use h1proto::{Config, Io, ServerSession, Session, Step};
///
/// let mut session = ServerSession::new(Config::default(), Instant::now());
/// let mut input: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
/// let mut sent = Vec::new();
/// // A driver over an in-memory "socket": it does what the session asks.
/// let mut drive = |session: &mut ServerSession, io: Io| match io {
///     Io::Read => {
///         session.read_buf().extend_from_slice(input);
///         session.handle_read(input.len(), Instant::now()); // 0: the peer closed
///         input = &[];
///     }
///     Io::Write => {
///         let out = session.output();
///         let n = out.chunk().len(); // a socket write may take less
///         sent.extend_from_slice(&out.chunk()[..n]);
///         session.handle_write(n, Instant::now());
///     }
///     _ => {} // Io::Shutdown, Io::Close: nothing to do in memory
/// };
/// loop {
///     match session.next_request(Instant::now())? {
///         Step::Ready(Some(_request)) => {
///             session.sender().send_response(http::Response::new("hello")).unwrap();
///         }
///         Step::Ready(None) => break,
///         Step::Io(io) => drive(&mut session, io),
///     }
/// }
/// while let Step::Io(io) = session.close(Instant::now())? {
///     drive(&mut session, io);
/// }
/// assert!(sent.ends_with(b"connection: close\r\n\r\nhello"));
/// # Ok::<(), h1proto::SessionError>(())
/// ```
pub type ServerSession = SessionOf<Server>;

impl ServerSession {
    // ---- The application's side --------------------------------------

    /// The next request head, once the previous exchange is answered.
    /// `Ready(None)`: no further request comes on this connection (call
    /// [`close`](Self::close)).
    ///
    /// # Errors
    ///
    /// [`SessionError::Peer`] for a request the peer got wrong or sent too
    /// slowly (the error response is queued; call
    /// [`close`](Self::close)); [`SessionError::Usage`] with
    /// [`UsageError::WrongState`] while the current request is not
    /// answered yet.
    #[inline]
    pub fn next_request(
        &mut self,
        now: Instant,
    ) -> Result<Step<Option<Request<()>>>, SessionError> {
        if std::mem::take(&mut self.write_then_read) && self.resume_read() {
            self.wait(Waiting::Read(now));
            return Ok(Step::Io(Io::Read));
        }
        self.failure()?;
        if self.phase != Phase::Open {
            return Ok(Step::Ready(None));
        }
        if self.response_due() {
            return Err(UsageError::WrongState.into());
        }
        // Answers to pipelined requests leave together, but past the
        // bound they are written before the next request is taken.
        if let Step::Io(io) = self.write_past(now, true, self.flush_threshold) {
            self.head_begun(now);
            return Ok(Step::Io(io));
        }
        loop {
            match self.conn.poll(&mut self.read.buf) {
                // The head is built here, in the value returned.
                Ok(Progress::Head(bytes, body)) => {
                    let mut head = Request::default();
                    // Nothing to read: the request ends with its head.
                    let end = body.is_some_and(|body| body.is_empty());
                    if let Err(err) = self.conn.take_head(bytes, body, &mut head, end) {
                        return Err(self.fail(err).into());
                    }
                    self.requests += 1;
                    self.head_since = None;
                    self.head_handed_out(end);
                    return Ok(Step::Ready(Some(head)));
                }
                Ok(Progress::NeedMore) => {
                    // After the peer's close nothing more comes (a head
                    // it cut short is the decoder's error): no wait for
                    // input could end, as on every call that reads.
                    let over = self.conn.is_closed() || self.conn.peer_closed();
                    if over || self.conn.is_switched() {
                        self.start_closing();
                        return Ok(Step::Ready(None));
                    }
                    if self.shutdown && self.is_between_requests() {
                        // An answer may have just been written, and the
                        // client may have pipelined more: closing with its
                        // bytes unread would reset the connection and
                        // destroy the answer. Only a connection that never
                        // answered closes without lingering.
                        self.phase = Phase::Closing {
                            linger: self.requests > 0,
                        };
                        return Ok(Step::Ready(None));
                    }
                    self.head_begun(now);
                    let io = self.wait_for_input(now);
                    self.write_then_read = io == Io::Write;
                    return Ok(Step::Io(io));
                }
                // The rest of a request already answered.
                Ok(_) => {}
                Err(err) => return Err(self.fail(err).into()),
            }
        }
    }

    /// After the write `next_request` asked for before waiting for the
    /// next request: `true` when nothing else happened since (the output
    /// all written, nothing read, no timeout, no shutdown), so that the
    /// call would end waiting for input, as it does after every answered
    /// keep-alive request. Going through the connection again to learn it
    /// costs more than the checks.
    #[inline]
    fn resume_read(&mut self) -> bool {
        self.output_len() == 0
            && self.read.buf.is_empty()
            && !self.conn.peer_closed()
            && !self.shutdown
            && self.failure.is_none()
            && self.phase == Phase::Open
    }

    /// The next request with its whole body: [`next_request`](Self::next_request)
    /// and [`read_body`](Self::read_body) in one call, for applications
    /// that answer complete requests. Its trailers, if any, are in its
    /// extensions as [`TrailerFields`](super::TrailerFields), and with
    /// [`Config::wire_view`](crate::Config::wire_view) on their wire view as [`WireTrailers`](crate::wire::WireTrailers).
    ///
    /// # Errors
    ///
    /// As [`next_request`](Self::next_request) and
    /// [`read_data`](Self::read_data).
    pub fn next_full_request(
        &mut self,
        now: Instant,
    ) -> Result<Step<Option<Request<Bytes>>>, SessionError> {
        if self.body_done {
            match ready!(self.next_request(now)?) {
                Some(head) => self.head = Some(Box::new(head)),
                None => return Ok(Step::Ready(None)),
            }
        }
        let body = ready!(self.read_body(now)?);
        let head = self.head.take().ok_or(UsageError::WrongState)?;
        let mut req = head.map(|()| body);
        self.trailers_into(req.extensions_mut());
        Ok(Step::Ready(Some(req)))
    }

    /// `true` once the current request's body was read to its end, and
    /// from [`next_request`](Self::next_request) on for a request without
    /// one. [`read_data`](Self::read_data) also returns `Ready(None)`
    /// once the session is ending, after reporting what ended it: a
    /// relay that forwards the body asks this before it ends the copy.
    pub fn is_request_body_read(&self) -> bool {
        self.body_done
    }

    /// Right after [`next_request`](Self::next_request): the length of the
    /// request's body when it is known (`Some(0)` without a body), `None`
    /// for a chunked one; and whether the request offers a protocol switch.
    /// What the tower bridge learns without looking the fields up again.
    #[cfg(feature = "tower")]
    pub(crate) fn request_framing(&self) -> (Option<u64>, bool) {
        let conn = &self.conn;
        (
            conn.decoder.remaining_body_len(),
            conn.role.exchange.offers_switch(),
        )
    }

    /// Backpressure for a streaming sender: [`Io::Write`] while more than
    /// `Config::flush_threshold` bytes are queued, `Ready` once fewer are.
    ///
    /// # Errors
    ///
    /// [`SessionError::Peer`] with
    /// [`ErrorKind::WriteTimeout`](crate::ErrorKind::WriteTimeout) when the
    /// client stopped reading and the write timeout ended the wait (the
    /// output is dropped and the session closes: call
    /// [`close`](Self::close)); likewise any other timeout not yet
    /// reported to a call.
    pub fn poll_flush(&mut self, now: Instant) -> Result<Step<()>, SessionError> {
        self.flushed(now, self.flush_threshold)
    }

    /// Writes everything queued: [`Io::Write`] while output is waiting,
    /// `Ready` once it is all written. For an application that is about to
    /// wait on something other than this peer (an upstream server, a
    /// queue, a timer) with part of a response queued: without it, output
    /// below `Config::flush_threshold` leaves only when the session next
    /// waits for the peer.
    ///
    /// # Errors
    ///
    /// As [`poll_flush`](Self::poll_flush).
    pub fn poll_write_all(&mut self, now: Instant) -> Result<Step<()>, SessionError> {
        self.flushed(now, 0)
    }

    /// Ends the connection: writes what is queued, then closes, lingering
    /// first (shut down the sending half, read and discard for a while)
    /// when the peer may still be sending, so that it reads the last
    /// response rather than a reset (RFC 9112 section 9.6). After a
    /// protocol switch, writes what is queued and returns `Ready` without
    /// closing: the socket and [`take_read_buf`](Self::take_read_buf)
    /// belong to the new protocol.
    ///
    /// # Errors
    ///
    /// None: the connection ends either way, and an error that ended it
    /// was reported to the call it happened in. The `Result` is the shape
    /// every call that may need I/O has, so that one driver call helper
    /// serves them all.
    pub fn close(&mut self, now: Instant) -> Result<Step<()>, SessionError> {
        Ok(loop {
            match self.phase {
                Phase::Open => self.start_closing(),
                Phase::Closing { linger } => {
                    if let Step::Io(io) = self.write_past(now, true, 0) {
                        break Step::Io(io);
                    }
                    if self.conn.is_switched() {
                        self.phase = Phase::Closed;
                        break Step::Ready(());
                    }
                    if linger && !self.conn.peer_closed() && !self.timeouts.linger.is_zero() {
                        self.read.buf.clear();
                        self.phase = Phase::Lingering {
                            until: now + self.timeouts.linger,
                            discarded: 0,
                        };
                        break Step::Io(Io::Shutdown);
                    }
                    self.phase = Phase::Closed;
                    break Step::Io(Io::Close);
                }
                // Ended by the peer's close or the bound here, by the
                // deadline in `expire`: either way the close comes next.
                Phase::Lingering { discarded, .. } => {
                    if !self.conn.peer_closed() && discarded < self.linger_bytes {
                        self.wait(Waiting::Read(now));
                        break Step::Io(Io::Read);
                    }
                    self.phase = Phase::Closing { linger: false };
                }
                Phase::Closed => break Step::Ready(()),
            }
        })
    }

    // ---- Queries -----------------------------------------------------

    /// `true` once the connection is over for HTTP and
    /// [`close`](Self::close) has closed it: the same meaning as
    /// [`ServerConnection::is_closed`](crate::ServerConnection::is_closed)
    /// and [`Decoder::is_closed`](crate::Decoder::is_closed). Never after
    /// a protocol switch: see [`is_switched`](Self::is_switched).
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed && !self.conn.is_switched()
    }

    // ---- Inside ------------------------------------------------------

    /// No exchange in progress and nothing of a next request received (a
    /// CR alone may be an empty line's, which no request holds).
    fn is_between_requests(&self) -> bool {
        self.conn.recv_state() == State::Idle && !self.conn.decoder.holds_head_bytes(&self.read.buf)
    }

    /// The session starts waiting with the first bytes of the next head
    /// in the buffer, read with an earlier request (pipelined, or after a
    /// body): the head's time runs from now, and later reads do not move
    /// it.
    fn head_begun(&mut self, now: Instant) {
        if self.head_since.is_none()
            && !self.read.buf.is_empty()
            && matches!(self.conn.recv_state(), State::Idle | State::Head)
        {
            self.head_since = Some(now);
        }
    }
}
