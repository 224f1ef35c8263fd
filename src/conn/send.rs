//! The sending half of a connection, borrowed: the one set of send
//! methods, reached from a connection and from a session alike.

use bytes::Bytes;
use http::header::HeaderMap;

use super::core::ConnRole;
use super::core::Connection;
use super::machine::{Input, State};
use crate::chunk_ext::ChunkExtensions;
use crate::encode::{Encoder, IntoHead, IntoMessage};
use crate::error::UsageError;
use crate::framing::BodyKind;
use crate::role::{Client, Server};
use crate::wire::TrailerOrder;

/// What the local side sends, borrowed from a connection
/// ([`Connection::sender`]) or a session
/// ([`ServerSession::sender`](crate::ServerSession::sender),
/// [`ClientSession::sender`](crate::ClientSession::sender)): queue a
/// message whole, or its head, body pieces and end. Nothing leaves until
/// the output is drained (by the driver, for a session), so every call
/// is corked with the ones before it.
///
/// Taken from a session that is ending (after a timeout or a peer's
/// protocol error; for a client, also after `close` or, for new requests,
/// a shutdown), every call is refused with [`UsageError::WrongState`] and
/// queues nothing, so that a sender whose peer stopped reading stops
/// instead of waiting out the write timeout again and again.
///
/// ```
/// use h1proto::{Config, Event, ServerConnection};
///
/// let mut conn = ServerConnection::new(Config::default());
/// let mut buf = bytes::BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
/// while let Some(event) = conn.poll_event(&mut buf)? {
///     if let Event::Head { .. } = event {
///         let mut send = conn.sender();
///         send.send_head(http::Response::new(()))?; // chunked
///         send.send_data("hello")?;
///         send.finish(None)?;
///     }
/// }
/// assert!(conn.output().len() > 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Sender<'a, R: ConnRole> {
    conn: &'a mut Connection<R>,
    /// A new message may be queued.
    start: bool,
    /// The message being sent may go on.
    go_on: bool,
}

impl<R: ConnRole> Connection<R> {
    /// What the local side sends: its messages are queued through it
    /// ([`Sender`] has the methods).
    pub fn sender(&mut self) -> Sender<'_, R> {
        Sender::new(self, true, true)
    }
}

impl<'a, R: ConnRole> Sender<'a, R> {
    pub(crate) fn new(conn: &'a mut Connection<R>, start: bool, go_on: bool) -> Self {
        Sender { conn, start, go_on }
    }

    /// The encoder, for the body of the message being sent: `None` when
    /// the local side withdrew the rest of it, which is then dropped
    /// without an error.
    fn body(&mut self) -> Result<Option<&mut Encoder<R>>, UsageError> {
        allowed(self.go_on)?;
        if self.conn.withdrawn() {
            return Ok(None);
        }
        allowed(self.conn.send_state() == State::Body)?;
        Ok(Some(&mut self.conn.encoder))
    }

    /// Ends the body being sent with `finish` (`finish` and
    /// `finish_in_order`).
    fn end(
        &mut self,
        finish: impl FnOnce(&mut Encoder<R>) -> Result<(), UsageError>,
    ) -> Result<(), UsageError> {
        if let Some(encoder) = self.body()? {
            finish(encoder)?;
            self.conn.on(R::LOCAL, Input::EndOfMessage);
            self.conn.follow_machine();
        }
        Ok(())
    }

    /// Queues body bytes of the message being sent. A session's sender
    /// past `Config::flush_threshold` queued bytes: `poll_flush` asks for
    /// a write before more is queued. A client whose request the server
    /// refused while it was being sent, or whose connection the server's
    /// complete answer closed, drops the rest (withdrawn) without an
    /// error.
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] when no body is being sent; the errors of
    /// [`Encoder::send_data`](crate::Encoder::send_data).
    pub fn send_data(&mut self, data: impl Into<Bytes>) -> Result<(), UsageError> {
        self.body()?
            .map_or(Ok(()), |encoder| encoder.send_data(data))
    }

    /// Puts chunk extensions on the next chunk of the message being sent
    /// (or on its last-chunk, before [`finish`](Self::finish)): what a
    /// proxy read as [`Event::ChunkExtensions`](crate::Event::ChunkExtensions)
    /// or from a session's `chunk_extensions`, say.
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] when no body is being sent; the errors of
    /// [`Encoder::send_chunk_extensions`](crate::Encoder::send_chunk_extensions).
    pub fn send_chunk_extensions(&mut self, extensions: ChunkExtensions) -> Result<(), UsageError> {
        let encoder = self.body()?;
        encoder.map_or(Ok(()), |encoder| encoder.send_chunk_extensions(extensions))
    }

    /// Ends the message being sent, with trailers if it is chunked.
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] when no body is being sent; the errors of
    /// [`Encoder::finish`](crate::Encoder::finish).
    pub fn finish(&mut self, trailers: Option<HeaderMap>) -> Result<(), UsageError> {
        self.end(|encoder| encoder.finish(trailers))
    }

    /// Ends the message with trailers written in `order`: a
    /// [`FieldOrder`](crate::wire::FieldOrder), or the
    /// [`WireTrailers`](crate::wire::WireTrailers) of a trailer section
    /// received (a proxy's `wire_trailers` of the other side), whose order
    /// and spelling are kept. The map stays authoritative
    /// ([`Encoder::finish_in_order`](crate::Encoder::finish_in_order) has
    /// the rule).
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish).
    pub fn finish_in_order(
        &mut self,
        trailers: HeaderMap,
        order: &impl TrailerOrder,
    ) -> Result<(), UsageError> {
        self.end(|encoder| encoder.finish_in_order(trailers, order))
    }
}

impl Sender<'_, Server> {
    /// Queues `100 Continue` for a client that waits for it. Does nothing
    /// otherwise (in particular, never to an HTTP/1.0 client). Reading the
    /// request body does the same, so this is needed only to let the client
    /// send its body before the application asks for it.
    ///
    /// A streamed final response head queued before the body was asked
    /// for does not refuse it: `100 Continue` goes out ahead of that head
    /// as long as none of the head has been drained. Once part of it has,
    /// the body is refused and the connection closes after the response
    /// ([`CloseReason::RejectedContinue`](crate::CloseReason::RejectedContinue)),
    /// as after a complete response.
    pub fn send_continue(&mut self) {
        if self.conn.machine.expects_continue() {
            self.conn.queue_continue();
        }
    }

    /// Queues a complete response (head and body) to the current request.
    /// `Content-Length` is set from the body; a response to HEAD keeps it
    /// and sends no body bytes. `res` is a `Response<B>` with any
    /// `B: Into<Bytes>`, or for a response without a body an `http`
    /// builder or `Parts`.
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] when no response is due (or the session
    /// is ending); [`UsageError::InvalidHead`] for a 101 to a request that
    /// offered no upgrade; [`UsageError::InterimToHttp10`] for a 1xx to an
    /// HTTP/1.0 client; the errors of
    /// [`ResponseEncoder::send_response`](crate::ResponseEncoder::send_response).
    /// Nothing is queued.
    pub fn send_response(
        &mut self,
        res: impl IntoMessage<http::response::Parts>,
    ) -> Result<(), UsageError> {
        allowed(self.start)?;
        let (parts, body) = res.into_message()?;
        self.conn.send_message(parts, Some(body)).map(drop)
    }

    /// Queues a response head; the body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish). Returns
    /// the framing chosen for the body. `res` is a `Response<()>`, an
    /// `http` builder or `Parts`.
    ///
    /// # Errors
    ///
    /// As [`send_response`](Self::send_response), with the errors of
    /// [`ResponseEncoder::send_head`](crate::ResponseEncoder::send_head).
    pub fn send_head(
        &mut self,
        res: impl IntoHead<http::response::Parts>,
    ) -> Result<BodyKind, UsageError> {
        allowed(self.start)?;
        self.conn.send_message(res.into_head()?, None)
    }
}

impl Sender<'_, Client> {
    /// Queues a complete request. `req` is a `Request<B>` with any
    /// `B: Into<Bytes>`, or for a request without a body an `http`
    /// builder or `Parts`. Requests may be queued while
    /// earlier responses are still due (pipelining).
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] while a request is being sent, after one
    /// that closes the connection or offers a protocol switch whose
    /// answer has not come, once the connection is over, or once the
    /// session is closed or shutting down; the errors of
    /// [`RequestEncoder::send_request`](crate::RequestEncoder::send_request).
    /// Nothing is queued.
    pub fn send_request(
        &mut self,
        req: impl IntoMessage<http::request::Parts>,
    ) -> Result<(), UsageError> {
        allowed(self.start)?;
        let (parts, body) = req.into_message()?;
        self.conn.send_message(parts, Some(body)).map(drop)
    }

    /// Queues a request head; the body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish). With
    /// `Expect: 100-continue`, the connection's
    /// [`is_waiting_for_continue`](Connection::is_waiting_for_continue)
    /// says whether the server has answered yet; how long to wait before
    /// sending the body anyway is the caller's decision.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Self::send_request), with the errors of
    /// [`RequestEncoder::send_head`](crate::RequestEncoder::send_head).
    pub fn send_head(
        &mut self,
        req: impl IntoHead<http::request::Parts>,
    ) -> Result<BodyKind, UsageError> {
        allowed(self.start)?;
        self.conn.send_message(req.into_head()?, None)
    }
}

/// `Ok` when the call is allowed now; [`UsageError::WrongState`] otherwise.
#[inline]
fn allowed(now: bool) -> Result<(), UsageError> {
    now.then_some(()).ok_or(UsageError::WrongState)
}
