//! The client's part of the connection: what it keeps of the requests
//! in flight, how a response event moves the machine, and the queueing of
//! a request.

use bytes::{Bytes, BytesMut};
use http::StatusCode;
use http::request::Parts;

use super::core::{ConnRole, Connection};
use super::machine::{Input, State};
use super::{expects_continue, offers_upgrade};
use crate::config::Config;
use crate::decode::Exchange;
use crate::error::{Error, ErrorKind, UsageError};
use crate::framing::{BodyKind, RequestKind, ResponseClass, response_class};
use crate::keep_alive::CloseReason;
use crate::leniency::ResponseLeniency;
use crate::role::{Client, Party};

/// The client side of an HTTP/1.1 connection.
///
/// Sends requests with a [`RequestEncoder`](crate::RequestEncoder) and
/// decodes responses with a [`ResponseDecoder`](crate::ResponseDecoder)
/// that it tells the method of every request sent, so a response to HEAD
/// is read without a body and a 2xx to CONNECT switches to a tunnel
/// without the caller saying so. Several requests may be sent before their
/// responses are read (pipelining); each response is matched to its
/// request in order. Once a response is complete and the verdict allows
/// it, the next one is expected at once: nothing has to be called to
/// reuse the connection. A request that offers a protocol switch
/// (`Upgrade`, CONNECT) is the last sent until its response decides.
///
/// If the final response to a request whose body is still being sent is
/// not a 2xx, the client withdraws the rest: later
/// [`send_data`](crate::Sender::send_data) and [`finish`](crate::Sender::finish) calls for
/// that request queue nothing, without an error, and the connection
/// closes after the response (RFC 9112 section 9.5). A 2xx that arrives
/// during the upload is a server answering as it reads (an echo, a
/// streamed upload): the body is sent to its end and the connection stays
/// reusable, unless the connection closes after that answer (it says
/// `Connection: close`, it came before an awaited `100 Continue`, or the
/// request itself said `close`, after which the client closes once it has
/// read the final response, RFC 9112 section 9.6): once it is complete,
/// the rest is dropped the same way. A 101 during the upload
/// lets the body finish: the new protocol begins after the request (RFC
/// 9110 section 7.8). The answer to an earlier, pipelined request refuses
/// nothing of the one being sent.
///
/// If the server closes ([`recv_eof`](Self::recv_eof)) before any byte of
/// a response due, [`poll_event`](Self::poll_event) fails with
/// [`UnexpectedEof`](crate::ErrorKind::UnexpectedEof); the requests still
/// in flight ([`requests_in_flight`](Self::requests_in_flight)) got no
/// answer, and a client may send an idempotent one again on a new
/// connection (RFC 9112 section 9.3.1). After an answer that closes the
/// connection, those behind it are simply not answered: the connection
/// [`is_closed`](Self::is_closed).
///
/// ```
/// use bytes::{Buf, BytesMut};
/// use h1proto::{ClientConnection, Config, Event};
///
/// let mut conn = ClientConnection::new(Config::default());
/// conn.sender().send_request(http::Request::head("http://example.com/")).unwrap();
/// conn.sender().send_request(http::Request::get("/next").header("host", "example.com")).unwrap();
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
pub type ClientConnection = Connection<Client>;

impl ClientConnection {
    /// Queues a request, whole (with `body`) or its head, then notes it.
    pub(crate) fn send_message(
        &mut self,
        parts: Parts,
        body: Option<Bytes>,
    ) -> Result<BodyKind, UsageError> {
        // A complete request that may be followed by another leaves the
        // client party Done: the next one is pipelined behind it.
        if !matches!(self.machine.client(), State::Idle | State::Done)
            || self.decoder.failure().is_some()
        {
            return Err(UsageError::WrongState);
        }
        let streamed = body.is_none();
        let exchange = Exchange {
            request: RequestKind::of(&parts.method),
            version: parts.version,
            expect: streamed && expects_continue(&parts.headers),
            upgrade: offers_upgrade(&parts.headers),
        };
        let (kind, _) = self.encoder.write_message(&parts, (), body)?;
        // The request's maps serve the response's head.
        self.pass_spare_maps(parts.headers, parts.extensions);
        self.decoder.expect_exchange(exchange);
        self.note_request(exchange, streamed);
        self.follow_machine();
        Ok(kind)
    }
}

impl ConnRole for Client {
    type ConnState = ();
    const PEER: Party = Party::Server;

    /// The requests in flight are its response decoder's, which frames
    /// each response by the request it answers.
    fn configured(config: &Config) -> (ResponseLeniency, ()) {
        (config.response_leniency, ())
    }

    #[inline]
    fn unanswered(conn: &Connection<Self>) -> usize {
        conn.decoder.unanswered()
    }

    /// Whether to decode now: HTTP/1.1 has no unsolicited responses.
    fn ready(conn: &mut Connection<Self>, buf: &BytesMut) -> Result<bool, Error> {
        if conn.decoder.unanswered() == 0 && conn.decoder.is_idle() && !buf.is_empty() {
            if conn.machine.server() == State::Idle {
                // One decoded anyway would answer the next request sent
                // (response queue poisoning).
                return Err(ErrorKind::UnsolicitedResponse.into());
            }
            return Ok(false);
        }
        Ok(true)
    }

    fn on_head(
        conn: &mut Connection<Self>,
        head: &http::Response<()>,
        body: Option<BodyKind>,
    ) -> Result<(), Error> {
        let status = head.status();
        let Some(body) = body else {
            conn.on(Party::Server, Input::Interim);
            if status == StatusCode::CONTINUE {
                conn.machine.continue_sent();
            }
            return Ok(());
        };
        // The decoder took the request it answers off its queue.
        let sent = conn.decoder.answered();
        if status == StatusCode::SWITCHING_PROTOCOLS && !sent.upgrade {
            // RFC 9110 section 7.8: no switch the client did not offer.
            return Err(ErrorKind::UnexpectedSwitch.into());
        }
        let class = response_class(sent.request, status);
        if conn.machine.client() == State::Body
            && class == ResponseClass::Final
            && !status.is_success()
            && conn.decoder.unanswered() == 0
        {
            // A refusal (or a redirect) of the request being sent, the
            // last one (an answer to one before it refuses nothing): the
            // server does not want the rest, so stop (RFC 9112 section
            // 9.5). A 2xx means it is taking the body as it answers (an
            // echo, a streamed upload), and a switch begins after the
            // request (RFC 9110 section 7.8): sending goes on.
            conn.close_for(CloseReason::RequestWithdrawn);
            conn.on(Party::Client, Input::WithdrawBody);
        }
        if class == ResponseClass::Switch {
            conn.on(Party::Server, Input::Switch);
        } else {
            // The server's own verdict, the decoder's: when it
            // closes, nothing follows this response, whatever is
            // still in flight.
            conn.body_open = !body.is_empty();
            conn.on(Party::Server, Input::head(conn.body_open));
            // A final answer came while waiting for `100 Continue`:
            // it has left the server, so no `100` comes before it.
            let facts = conn.facts();
            conn.machine.refuse_continue(facts);
        }
        Ok(())
    }
}
