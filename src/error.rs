//! Errors: what the peer got wrong ([`Error`]) versus what the local caller
//! got wrong ([`UsageError`]).

use std::fmt;

use http::StatusCode;

use crate::leniency::Tolerance;

/// A protocol error by the peer: malformed, ambiguous or oversized input.
///
/// After such an error the connection must be closed; the decoder stays in
/// its failed state and returns the same error again. [`Error::status`]
/// suggests the status code a server should answer with,
/// [`Error::tolerance`] names the leniency tolerance that would have accepted
/// the input, when there is one, and [`Error::offset`] and
/// [`Error::field`] say where decoding stopped.
///
/// It is two words: where it happened is boxed, so that results carrying
/// it stay small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    tolerance: Option<Tolerance>,
    at: Option<Box<Location>>,
}

/// Where in the stream an error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Location {
    /// Bytes of the stream before the fault (while a head is parsed: bytes
    /// of the head before it, until the decoder adds where the head began).
    offset: u64,
    /// The name of the field at fault, as received.
    field: Option<Box<[u8]>>,
}

/// Defines [`ErrorKind`]: each kind with its documentation, the status
/// code a server answers it with when it is not 400 (`[STATUS]`), and the
/// words [`Error`]'s `Display` gives it.
macro_rules! kinds {
    (@status) => { StatusCode::BAD_REQUEST };
    (@status $status:ident) => { StatusCode::$status };
    ($($(#[$doc:meta])* $kind:ident $([$status:ident])? => $text:literal,)+) => {
        /// What was wrong with the peer's input.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[$doc])* $kind,)+
        }

        impl ErrorKind {
            /// The status code a server should answer this error with.
            pub fn status(self) -> StatusCode {
                match self {
                    $(ErrorKind::$kind => kinds!(@status $($status)?),)+
                }
            }

            /// The words `Display` gives this kind.
            fn describe(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => $text,)+
                }
            }
        }
    };
}

kinds! {
    /// The method is not a token.
    InvalidMethod => "invalid method",
    /// The request-target has a byte outside its grammar, or a form that
    /// does not fit the method (authority-form without CONNECT, `*` without
    /// OPTIONS).
    InvalidTarget => "invalid request-target",
    /// The start line is not `method SP target SP version` /
    /// `version SP status SP reason`.
    InvalidStartLine => "malformed start line",
    /// The HTTP-version is malformed (`HTTP/1.10`, `http/1.1`, ...).
    InvalidVersion => "invalid HTTP version",
    /// A well-formed version this implementation does not speak (HTTP/0.9,
    /// HTTP/2.0 in a request line).
    UnsupportedVersion [HTTP_VERSION_NOT_SUPPORTED] => "unsupported HTTP version",
    /// The status code is not three digits.
    InvalidStatus => "invalid status code",
    /// The reason phrase has a forbidden byte.
    InvalidReason => "invalid reason phrase",
    /// A field name is empty or has a byte that is not a tchar (in a head,
    /// anything but a colon or whitespace then a colon after the name).
    InvalidFieldName => "invalid field name",
    /// A field line has no colon (in a head: a name, maybe whitespace,
    /// then the line end).
    MissingColon => "field line without a colon",
    /// Whitespace between a field name and the colon (RFC 9112 section 5.1).
    WhitespaceBeforeColon => "whitespace before the colon of a field line",
    /// A field value has a forbidden byte (a control character, bare CR).
    InvalidFieldValue => "invalid field value",
    /// A line folded with obs-fold where it is not accepted.
    ObsFold => "obsolete line folding",
    /// A line ended with LF alone (every line must end with CRLF). A CR
    /// inside a line is reported by the element it is in (field value,
    /// target, reason phrase).
    BareLineFeed => "line not ended by CRLF",
    /// An HTTP/1.1 request without `Host`, or with more than one.
    InvalidHost => "missing or repeated Host",
    /// A `Host` value that is not `uri-host [ ":" port ]` (RFC 9112
    /// section 3.2, RFC 3986 section 3.2.2): a host name of bytes outside
    /// RFC 3986's reg-name (`#`, space, `@`, `/`, `?`, `\`, non-ASCII, a
    /// `%` not followed by two hex digits), a bracketed address that is
    /// not an IPv6 address or IPvFuture, a port that is not digits, or an
    /// empty host.
    InvalidHostValue => "Host value is not a host name or address and optional port",
    /// `Content-Length` is not 1*DIGIT, overflows, or appears more than once.
    InvalidContentLength => "invalid Content-Length",
    /// A request with both `Transfer-Encoding` and `Content-Length`.
    ContentLengthWithTransferEncoding => "both Transfer-Encoding and Content-Length",
    /// `Transfer-Encoding` in a request whose final coding is not `chunked`,
    /// or that applies `chunked` more than once.
    InvalidTransferEncoding => "Transfer-Encoding does not end in a single chunked",
    /// A transfer coding other than `chunked` in a request.
    UnsupportedTransferCoding [NOT_IMPLEMENTED] => "unsupported transfer coding",
    /// A CONNECT request with `Transfer-Encoding` or a non-zero
    /// `Content-Length`: a CONNECT request has no content (RFC 9110 section
    /// 9.3.6), and what follows its head is tunnel data, never a body.
    ConnectWithContent => "CONNECT request with content",
    /// `Transfer-Encoding` in an HTTP/1.0 message.
    TransferEncodingInHttp10 => "Transfer-Encoding in an HTTP/1.0 message",
    /// A chunk size that is not 1*HEXDIG or overflows 64 bits.
    InvalidChunkSize => "invalid chunk size",
    /// A chunk extension that does not follow its grammar.
    InvalidChunkExtension => "invalid chunk extension",
    /// Chunk data not followed by exactly CRLF.
    MissingChunkCrlf => "chunk data not followed by CRLF",
    /// A trailer field that is malformed or may not appear in a trailer
    /// section (framing, routing, connection control).
    InvalidTrailer => "invalid or forbidden trailer field",
    /// The head is larger than [`Limits::max_head_bytes`](crate::Limits::max_head_bytes).
    HeadTooLarge [REQUEST_HEADER_FIELDS_TOO_LARGE] => "head too large",
    /// More field lines than [`Limits::max_fields`](crate::Limits::max_fields).
    TooManyFields [REQUEST_HEADER_FIELDS_TOO_LARGE] => "too many field lines",
    /// The request-target is longer than [`Limits::max_target_bytes`](crate::Limits::max_target_bytes).
    TargetTooLong [URI_TOO_LONG] => "request-target too long",
    /// A chunk-size line longer than [`Limits::max_chunk_line_bytes`](crate::Limits::max_chunk_line_bytes).
    ChunkLineTooLong [PAYLOAD_TOO_LARGE] => "chunk-size line too long",
    /// A trailer section larger than [`Limits::max_trailer_bytes`](crate::Limits::max_trailer_bytes).
    TrailersTooLarge [REQUEST_HEADER_FIELDS_TOO_LARGE] => "trailer section too large",
    /// More 1xx responses than [`Limits::max_interim_responses`](crate::Limits::max_interim_responses).
    TooManyInterimResponses => "too many interim responses",
    /// The peer closed the connection in the middle of a message.
    UnexpectedEof => "connection closed inside a message",
    // Errors of a response: their status is what a gateway answers its own
    // client.
    /// A response arrived on a client connection with no request in flight.
    UnsolicitedResponse [BAD_GATEWAY] => "response with no request in flight",
    /// A 101 Switching Protocols answered a request that offered no
    /// `Upgrade` (RFC 9110 section 7.8).
    UnexpectedSwitch [BAD_GATEWAY] => "protocol switch the request did not offer",
    /// A request head did not arrive within its timeout
    /// ([`Timeouts::head`](crate::Timeouts::head)).
    HeadTimeout [REQUEST_TIMEOUT] => "request head not received in time",
    /// A body stopped arriving for longer than its timeout
    /// ([`Timeouts::body`](crate::Timeouts::body)).
    BodyTimeout [REQUEST_TIMEOUT] => "body stopped arriving",
    /// The peer took no output for longer than the write timeout
    /// ([`Timeouts::write`](crate::Timeouts::write)): it stopped reading.
    WriteTimeout [REQUEST_TIMEOUT] => "peer stopped reading",
    /// A response head did not arrive within its timeout
    /// ([`Timeouts::head`](crate::Timeouts::head), client side).
    ResponseTimeout [GATEWAY_TIMEOUT] => "response head not received in time",
    /// The chunk extensions of a chunked body add up to more than
    /// [`Limits::max_chunk_extension_bytes`](crate::Limits::max_chunk_extension_bytes).
    ChunkExtensionsTooLarge [PAYLOAD_TOO_LARGE] => "chunk extensions too large",
    /// The framing of a chunked body (chunk-size lines, extensions, line
    /// ends) ran further ahead of its data than
    /// [`Limits::max_chunk_overhead_bytes`](crate::Limits::max_chunk_overhead_bytes)
    /// allows: many tiny chunks, long extensions or padded sizes.
    ExcessiveChunkOverhead => "chunked framing out of proportion to its data",
    /// More empty lines before a request line than are skipped (RFC 9112
    /// section 2.2 asks a server to ignore at least one; h1proto ignores
    /// up to ten, as Apache httpd does).
    TooManyEmptyLines => "too many empty lines before the request line",
}

impl Error {
    /// An error for input that `tolerance`, when given, would have accepted.
    pub(crate) fn refused(kind: ErrorKind, tolerance: Option<Tolerance>) -> Self {
        Error {
            kind,
            tolerance,
            at: None,
        }
    }

    /// The error found at `offset`, in the field named `field` if one was
    /// at fault.
    #[cold]
    pub(crate) fn at(mut self, offset: u64, field: Option<&[u8]>) -> Self {
        self.at = Some(Box::new(Location {
            offset,
            field: field.map(Box::from),
        }));
        self
    }

    /// Places an error found in a head that starts at `start` in the
    /// stream: an offset within the head becomes one in the stream, and an
    /// error without one is placed at the head's start.
    #[cold]
    pub(crate) fn in_head(mut self, start: u64) -> Self {
        match &mut self.at {
            Some(at) => {
                at.offset += start;
                self
            }
            None => self.at(start, None),
        }
    }

    /// Places an error that has no place yet at `offset`.
    #[cold]
    pub(crate) fn or_at(&mut self, offset: u64) {
        if self.at.is_none() {
            *self = self.clone().at(offset, None);
        }
    }

    /// What was wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The status code a server should answer with (400, 408, 413, 414,
    /// 431, 501 or 505); for a bad or late response on a client
    /// connection, the 502 or 504 a gateway would give its own client.
    pub fn status(&self) -> StatusCode {
        self.kind.status()
    }

    /// The leniency tolerance that would have accepted the input this error
    /// refuses, if one would (of the decoder's side only: a request error
    /// never names a response tolerance). Turning it on gets past this
    /// refusal; the rest of the message may still be refused for
    /// something else.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use h1proto::leniency::Tolerance;
    /// use h1proto::{Limits, ResponseDecoder, leniency::ResponseLeniency};
    ///
    /// let mut dec = ResponseDecoder::with_leniency(Limits::default(), ResponseLeniency::strict());
    /// let mut buf = BytesMut::from(&b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"[..]);
    /// let err = dec.decode(&mut buf).unwrap_err();
    /// assert_eq!(err.tolerance(), Some(Tolerance::NoSpaceAfterStatus));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "protocol error at byte 0: status line without SP after the code \
    ///      (enable `no_space_after_status` to accept)"
    /// );
    /// ```
    pub fn tolerance(&self) -> Option<Tolerance> {
        self.tolerance
    }

    /// Where decoding stopped: the number of bytes of the stream before
    /// the fault, counted from the first byte the decoder was given,
    /// across all its calls (empty lines skipped before a request line
    /// included).
    ///
    /// - In a head (refused at the first byte that proves it invalid, an
    ///   invalid field name where the name ends, or once the head is
    ///   complete for what only a whole head shows), the start
    ///   of the line at fault: the start line, or a field line. A fault of
    ///   the head as a whole, with no line to blame (a missing `Host`, a
    ///   head over [`Limits::max_head_bytes`](crate::Limits::max_head_bytes),
    ///   a head the peer closed the connection inside), is at the head's
    ///   first byte; an eleventh empty line before a request line at its
    ///   own start.
    /// - Anywhere else (a body, a chunk line, a trailer section, the end
    ///   of a body cut short), the first byte the decoder had not consumed
    ///   when it stopped.
    ///
    /// `None` for an error that is not about the bytes received: a
    /// timeout. Like everything about an error, it does not depend on how
    /// the input was split into reads.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use h1proto::{Event, Limits, RequestDecoder};
    ///
    /// let mut dec = RequestDecoder::new(Limits::default());
    /// let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
    /// assert!(matches!(dec.decode(&mut buf)?, Some(Event::Head { .. })));
    /// assert!(matches!(dec.decode(&mut buf)?, Some(Event::End(_))));
    /// // The second request: its second field line has a bare CR.
    /// buf.extend_from_slice(b"GET / HTTP/1.1\r\nHost: a\r\nX-Bad: a\rb\r\n\r\n");
    /// let err = dec.decode(&mut buf).unwrap_err();
    /// assert_eq!(err.offset(), Some(27 + 16 + 9));
    /// assert_eq!(err.field(), Some(&b"X-Bad"[..]));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "protocol error at byte 52, field `X-Bad`: invalid field value"
    /// );
    /// # Ok::<(), h1proto::Error>(())
    /// ```
    pub fn offset(&self) -> Option<u64> {
        self.at.as_ref().map(|at| at.offset)
    }

    /// The name of the field at fault, as received, when the error is
    /// about one field line: its name, value or line end
    /// (`InvalidFieldName` names the whole name: the bytes before the
    /// colon without the whitespace before it, or the line up to its end
    /// when it has no colon; a head is refused where the name ends, so
    /// that the name does not depend on the reads), or a
    /// framing or `Host` field the
    /// decoder refused (`InvalidContentLength`, `InvalidHost` for a second
    /// `Host`, `InvalidHostValue`, the `Transfer-Encoding` errors). `None` otherwise, including
    /// for errors in trailer sections.
    pub fn field(&self) -> Option<&[u8]> {
        self.at.as_ref().and_then(|at| at.field.as_deref())
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error::refused(kind, None)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("protocol error")?;
        if let Some(offset) = self.offset() {
            write!(f, " at byte {offset}")?;
        }
        if let Some(field) = self.field() {
            write!(f, ", field `{}`", field.escape_ascii())?;
        }
        match self.tolerance {
            Some(tolerance) => write!(
                f,
                ": {} (enable `{tolerance}` to accept)",
                tolerance.refusal()
            ),
            None => write!(f, ": {}", self.kind.describe()),
        }
    }
}

impl std::error::Error for Error {}

/// A mistake by the local caller, never caused by what the peer sent.
///
/// The message being sent is left as it was before the call that failed,
/// so nothing malformed reaches the peer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageError {
    /// More body bytes than the declared `Content-Length`.
    BodyTooLong {
        /// The declared length.
        declared: u64,
        /// The bytes that would have been sent in all.
        attempted: u64,
    },
    /// The message was finished before the declared `Content-Length` was sent.
    BodyTooShort {
        /// The declared length.
        declared: u64,
        /// The bytes sent.
        sent: u64,
    },
    /// Body data or trailers for a message whose framing has no body.
    BodyNotAllowed,
    /// Trailers on a message that is not chunked.
    TrailersNotAllowed,
    /// A trailer field that may not be sent in a trailer section.
    ForbiddenTrailer,
    /// The caller-supplied framing fields contradict each other or the
    /// message (two `Content-Length` values, `Transfer-Encoding` to an
    /// HTTP/1.0 peer, a `Transfer-Encoding` not ending in `chunked`, ...).
    InvalidFraming,
    /// A head, data or end was sent when the state does not allow it (data
    /// before a head, a second head, anything after the end).
    WrongState,
    /// A start-line element that cannot be written (a reason phrase or
    /// version that HTTP/1.1 cannot carry), or a request's `Host` that a
    /// server must refuse: missing (HTTP/1.1, no authority in the URI),
    /// repeated, or not `uri-host [ ":" port ]` (RFC 9112 section 3.2).
    InvalidHead,
    /// An interim (1xx) response to an HTTP/1.0 peer, which cannot read one
    /// (RFC 9110 section 15.2).
    InterimToHttp10,
    /// A field name that is not a token, given for a
    /// [`FieldOrder`](crate::wire::FieldOrder).
    InvalidFieldName,
    /// An `http` builder given as the message held an error (an invalid
    /// method, URI, status, field name or value): its text.
    Builder(String),
    /// Chunk extensions for a body that is not chunked.
    ChunkExtensionsNotAllowed,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::BodyTooLong {
                declared,
                attempted,
            } => write!(
                f,
                "body longer than its Content-Length ({attempted} > {declared})"
            ),
            UsageError::BodyTooShort { declared, sent } => write!(
                f,
                "message finished before its Content-Length ({sent} < {declared})"
            ),
            UsageError::BodyNotAllowed => f.write_str("this message cannot have a body"),
            UsageError::TrailersNotAllowed => f.write_str("trailers need a chunked body"),
            UsageError::ForbiddenTrailer => f.write_str("field not allowed in a trailer section"),
            UsageError::InvalidFraming => f.write_str("contradictory framing fields"),
            UsageError::WrongState => f.write_str("call not allowed in the current state"),
            UsageError::InvalidHead => f.write_str("head cannot be written as HTTP/1.1"),
            UsageError::InterimToHttp10 => f.write_str("no 1xx response to an HTTP/1.0 peer"),
            UsageError::InvalidFieldName => f.write_str("field name is not a token"),
            UsageError::Builder(err) => write!(f, "invalid message: {err}"),
            UsageError::ChunkExtensionsNotAllowed => {
                f.write_str("chunk extensions need a chunked body")
            }
        }
    }
}

impl std::error::Error for UsageError {}
