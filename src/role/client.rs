//! The client role: requests out, responses in. Everything the client does
//! differently is here: its connection's state and methods, and its part of
//! the one role trait (how a request head is planned and written, what a
//! response event does to the connection).

use bytes::{Bytes, BytesMut};
use http::StatusCode;
use http::request::Parts;
use http::{Method, Response, Version};

use super::{Client, EventAction, Role, expects_continue, length, offers_upgrade};
use crate::Config;
use crate::conn::{Connection, Input, Party, State};
use crate::decode::base::{DecoderBase, Event, InFlight};
use crate::decode::head::response_head;
use crate::encode::body::BodyEncoder;
use crate::encode::head::{
    Added, Ordered, TargetForm, form_of, target_form, version_bytes, write_fields,
    write_request_line,
};
use crate::encode::plan::{EncoderConfig, Plan};
use crate::error::{Error, ErrorKind, UsageError};
use crate::framing::{
    BodyKind, Declared, FramingFields, RequestKind, ResponseClass, connection_verdict_of,
    declared_framing, response_class,
};
use crate::grammar::is_host;
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::leniency::{ResponseLeniency, Rules};
use crate::segments::Segments;
use crate::wire::WireHead;

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
/// recycle the connection. A request that offers a protocol switch
/// (`Upgrade`, CONNECT) is the last sent until its response decides.
///
/// If a final response other than 2xx arrives while a request body is
/// still being sent, the client withdraws the rest: later
/// [`send_data`](crate::Sender::send_data) and [`finish`](crate::Sender::finish) calls for
/// that request queue nothing, and the connection closes after the
/// response (RFC 9112 section 9.5). A 2xx that arrives during the upload is a server
/// answering as it reads (an echo, a streamed upload): the body is sent to
/// its end and the connection stays reusable.
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

/// What a client connection keeps besides the skeleton's.
#[derive(Debug, Default)]
pub struct ClientState {
    /// The newest request sent. It is the one answered when it is the only
    /// one in flight; an older one never offers a protocol switch, since a
    /// request that does is the last sent until its answer decides. How
    /// many are in flight is the machine's count, and how each is framed
    /// the decoder's.
    newest: Option<Sent>,
    /// The request being sent was answered before it was sent whole: its
    /// rest is withdrawn (dropped).
    pub(crate) withdrawn: bool,
}

/// What the client remembers of a request whose response is due.
#[derive(Debug, Clone, Copy)]
struct Sent {
    kind: RequestKind,
    /// It offered a protocol switch (`Upgrade` with `Connection: upgrade`).
    upgrade: bool,
}

impl ClientConnection {
    /// Queues a request, whole (with `body`) or its head, then notes it.
    pub(crate) fn send_message(
        &mut self,
        parts: Parts,
        body: Option<Bytes>,
    ) -> Result<BodyKind, UsageError> {
        // A complete request that may be followed by another leaves the
        // client party Done: the next one is pipelined behind it.
        if !matches!(self.machine.client(), State::Idle | State::Done) || self.error.is_some() {
            return Err(UsageError::WrongState);
        }
        let sent = Sent {
            kind: RequestKind::of(&parts.method),
            upgrade: offers_upgrade(&parts.headers),
        };
        let method = parts.method.clone();
        let streamed = body.is_none();
        let expect = streamed && expects_continue(&parts.headers);
        let kind = self.encoder.send_message(parts, (), body)?;
        // The request's maps serve the response's head.
        self.recycle_maps();
        self.decoder.expect_response_to(&method);
        self.role.newest = Some(sent);
        self.role.withdrawn = false;
        // The head first, then what it says for the exchange: the request
        // is the newest in flight once its head has passed.
        self.machine.on(Party::Client, Input::head(streamed));
        self.machine.adopt(self.encoder.keep_alive());
        if sent.upgrade || sent.kind == RequestKind::Connect {
            self.machine.propose_switch();
        }
        if expect {
            self.machine.expect_continue();
        }
        self.sync();
        Ok(kind)
    }

    /// Requests sent whose final response has not ended (one without a
    /// body ends with its head).
    pub fn requests_in_flight(&self) -> usize {
        self.machine.in_flight()
    }
}

impl Role for Client {
    type Recv = Response<()>;
    type Leniency = ResponseLeniency;
    type Pending = InFlight;

    fn rules(leniency: ResponseLeniency) -> Rules {
        Rules::of_responses(leniency)
    }

    #[inline]
    fn head(
        base: &mut DecoderBase,
        pending: &mut InFlight,
        head: Bytes,
    ) -> Result<Option<Event<Response<()>>>, Error> {
        response_head(base, pending, head)
    }

    type ConnState = ClientState;
    type Conn = ClientConnection;
    const PEER: Party = Party::Server;

    fn configured(config: &Config) -> (ResponseLeniency, ClientState) {
        (config.response_leniency, ClientState::default())
    }

    /// Whether to decode now: HTTP/1.1 has no unsolicited responses.
    fn ready(conn: &mut Connection<Self>, buf: &BytesMut) -> Result<bool, Error> {
        if conn.machine.in_flight() == 0 && conn.decoder.is_idle() && !buf.is_empty() {
            if conn.machine.server() == State::Idle {
                // One decoded anyway would answer the next request sent
                // (response queue poisoning).
                return Err(ErrorKind::UnsolicitedResponse.into());
            }
            return Ok(false);
        }
        Ok(true)
    }

    fn on_event(
        conn: &mut Connection<Self>,
        event: &Event<http::Response<()>>,
        _consumed: usize,
    ) -> Result<EventAction, Error> {
        match event {
            Event::Interim(res) => {
                conn.machine.on(Party::Server, Input::Interim);
                if res.status() == StatusCode::CONTINUE {
                    conn.machine.continue_sent();
                }
            }
            Event::Head { head, body } => {
                let sent = conn.role.newest.filter(|_| conn.machine.in_flight() == 1);
                let status = head.status();
                if status == StatusCode::SWITCHING_PROTOCOLS && !sent.is_some_and(|s| s.upgrade) {
                    // RFC 9110 section 7.8: no switch the client did not offer.
                    return Err(ErrorKind::UnexpectedSwitch.into());
                }
                if conn.machine.client() == State::Body && !status.is_success() {
                    // A refusal (or a redirect) before the request was sent:
                    // the server does not want the rest, so stop (RFC 9112
                    // section 9.5). A 2xx means it is taking the body as it
                    // answers (an echo, a streamed upload): sending goes on.
                    conn.role.withdrawn = true;
                    conn.machine.close(CloseReason::RequestWithdrawn);
                    conn.machine.on(Party::Client, Input::WithdrawBody);
                }
                let kind = sent.map_or(RequestKind::Other, |s| s.kind);
                if response_class(kind, status) == ResponseClass::Switch {
                    conn.machine.on(Party::Server, Input::Switch);
                } else {
                    // The server's own verdict: when it closes, nothing
                    // follows this response, whatever is still in flight.
                    conn.machine.adopt_response(conn.decoder.keep_alive());
                    conn.note_peer_head(!body.is_empty());
                    // A final answer came while waiting for `100 Continue`:
                    // it has left the server, so no `100` comes before it.
                    conn.machine.refuse_continue();
                }
            }
            _ => {}
        }
        Ok(EventAction::Return)
    }

    fn withdrawn(conn: &Connection<Self>) -> bool {
        conn.role.withdrawn
    }

    type Head = Parts;
    type Context = ();
    type Line = Target;

    fn plan(
        parts: &Parts,
        (): &(),
        _config: &EncoderConfig,
        full: Option<u64>,
        _date: Option<&[u8; crate::date::LINE]>,
    ) -> Result<Plan<Target>, UsageError> {
        let version = version_bytes(parts.version)?;
        let http10 = parts.version == Version::HTTP_10;
        let form = target_form(&parts.method, &parts.uri)?;
        let headers = &parts.headers;
        // The caller's framing, Host and Connection fields, in one pass.
        let seen = FramingFields::of(headers);
        // A Host a server must refuse (RFC 9112 section 3.2) is not sent.
        let host = match seen.hosts {
            0 => match parts.uri.authority() {
                // The Host field never carries userinfo.
                Some(a) => {
                    let at = a.as_str().rfind('@').map_or(0, |at| at + 1);
                    if !is_host(&a.as_str().as_bytes()[at..]) {
                        return Err(UsageError::InvalidHead);
                    }
                    Some(at)
                }
                None if http10 => None,
                None => return Err(UsageError::InvalidHead),
            },
            1 if !seen.bad_host => None,
            _ => return Err(UsageError::InvalidHead),
        };
        let mut added = Added::default();
        let keep_alive = match connection_verdict_of(parts.version, &seen) {
            KeepAlive::Close(CloseReason::PeerClose) => KeepAlive::Close(CloseReason::LocalClose),
            other => other,
        };
        let body = if parts.method == Method::CONNECT {
            // RFC 9110 section 9.3.6: a CONNECT request has no content. What
            // the client sends after the head is tunnel data, so no framing
            // field may announce a body; the caller's own are refused, not
            // dropped.
            if seen.transfer_encoding || seen.content_length.is_some() {
                return Err(UsageError::InvalidFraming);
            }
            if full.is_some_and(|len| len > 0) {
                return Err(UsageError::BodyNotAllowed);
            }
            BodyEncoder::Empty
        } else {
            match declared_framing(false, &seen, headers).map_err(|_| UsageError::InvalidFraming)? {
                Declared::Length(n) => length(n, full)?,
                // No Transfer-Encoding in HTTP/1.0 (RFC 9112 section 6.1).
                Declared::Chunked if !http10 => BodyEncoder::Chunked,
                Declared::Chunked | Declared::CodedChunked | Declared::Close => {
                    return Err(UsageError::InvalidFraming);
                }
                Declared::None => match full {
                    Some(len)
                        if len > 0 || matches!(parts.method.as_str(), "POST" | "PUT" | "PATCH") =>
                    {
                        added.content_length = full;
                        length(len, full)?
                    }
                    Some(_) => BodyEncoder::Empty,
                    None if http10 => return Err(UsageError::InvalidFraming),
                    None => {
                        added.chunked = true;
                        BodyEncoder::Chunked
                    }
                },
            }
        };
        Ok(Plan {
            version,
            line: Target { form, host },
            added,
            body,
            verdict: Some(keep_alive),
        })
    }

    fn write_head(
        out: &mut Segments,
        parts: &Parts,
        plan: &Plan<Target>,
        config: &EncoderConfig,
        order: Option<Ordered<'_>>,
    ) {
        let raw = order
            .as_ref()
            .and_then(|_| received_target(parts, plan.line.form));
        let (method, uri) = (&parts.method, &parts.uri);
        write_request_line(out, method, uri, plan.line.form, raw, plan.version);
        let host = plan
            .line
            .host
            .and_then(|at| parts.uri.authority().map(|a| &a.as_str().as_bytes()[at..]));
        let title = config.title_case_fields;
        write_fields(out, &parts.headers, host, &plan.added, title, order);
    }
}

/// The request-line decisions of a plan.
pub struct Target {
    form: TargetForm,
    /// Where the `Host` value starts in the URI's authority, when the
    /// encoder writes `Host` itself.
    host: Option<usize>,
}

/// The request-target the request was received with, when its `Uri` still
/// equals it (`http::Uri`'s comparison with a string, which ignores the
/// case of the scheme and the host, and takes `http://a` for
/// `http://a/`) and it has the form the encoder would write: then it is
/// written as received.
fn received_target(parts: &Parts, form: TargetForm) -> Option<&[u8]> {
    let target = parts.extensions.get::<WireHead>()?.target()?;
    let text = std::str::from_utf8(target).ok()?;
    (form_of(target) == form && parts.uri == *text).then_some(target)
}
